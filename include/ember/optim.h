// ember/optim.h: optimizers and learning-rate schedules.
#pragma once

#include "ember/optim/adam.h"
#include "ember/optim/grad_scaler.h"
#include "ember/optim/lr_scheduler.h"
#include "ember/optim/optimizer.h"
#include "ember/optim/sgd.h"
