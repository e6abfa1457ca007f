// ember/nn.h: neural-network modules, functional forms, losses and initialisation, and
// data-parallel training.
#pragma once

#include "ember/nn/activations.h"
#include "ember/nn/bert.h"
#include "ember/nn/causal_lm.h"
#include "ember/nn/generation.h"
#include "ember/nn/kv_cache.h"
#include "ember/nn/gpt2.h"
#include "ember/nn/llama.h"
#include "ember/nn/conv_modules.h"
#include "ember/nn/functional.h"
#include "ember/nn/init.h"
#include "ember/nn/losses.h"
#include "ember/nn/module.h"
#include "ember/nn/modules.h"
#include "ember/nn/more_losses.h"
#include "ember/nn/norm_modules.h"
#include "ember/nn/parallel.h"
#include "ember/nn/rnn.h"
#include "ember/nn/transformer.h"
#include "ember/nn/utils.h"
