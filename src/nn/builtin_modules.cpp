// nn/builtin_modules.cpp: the copy cloners of ember's own modules (EMBER_BUILTIN_MODULE in
// ember/nn/module.h), compiled here once instead of in every file that includes ember.h.
#define EMBER_DEFINE_BUILTIN_MODULES
#include "ember/nn/activations.h"
#include "ember/nn/bert.h"
#include "ember/nn/conv_modules.h"
#include "ember/nn/functional.h"
#include "ember/nn/gpt2.h"
#include "ember/nn/init.h"
#include "ember/nn/llama.h"
#include "ember/nn/losses.h"
#include "ember/nn/module.h"
#include "ember/nn/modules.h"
#include "ember/nn/more_losses.h"
#include "ember/nn/norm_modules.h"
#include "ember/nn/parallel.h"
#include "ember/nn/rnn.h"
#include "ember/nn/transformer.h"
#include "ember/nn/utils.h"
