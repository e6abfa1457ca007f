// ember/ember.h: everything a program needs, in one include.
#pragma once

#include "ember/autocast.h"
#include "ember/autograd.h"
#include "ember/creation.h"
#include "ember/cuda.h"
#include "ember/data.h"
#include "ember/device.h"
#include "ember/distributed.h"
#include "ember/dtype.h"
#include "ember/error.h"
#include "ember/nn.h"
#include "ember/ops.h"
#include "ember/optim.h"
#include "ember/quantized.h"
#include "ember/scalar.h"
#include "ember/tensor.h"
