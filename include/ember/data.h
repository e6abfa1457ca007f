// ember/data.h: data loading -- datasets, MNIST / Fashion-MNIST, samplers and the DataLoader.
#pragma once

#include "ember/data/bpe.h"
#include "ember/data/dataloader.h"
#include "ember/data/dataset.h"
#include "ember/data/mnist.h"
#include "ember/data/sampler.h"
#include "ember/data/wordpiece.h"
