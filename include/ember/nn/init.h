// ember/nn/init.h: parameter initialisation (torch.nn.init), in place and without recording
// gradients. Fans are computed as PyTorch does: fan_in = size(1) * receptive field.
#pragma once

#include <string>

#include "ember/tensor.h"

namespace ember::nn::init {

enum class FanMode { FanIn, FanOut };
enum class Nonlinearity { Linear, Sigmoid, Tanh, ReLU, LeakyReLU };

// torch.nn.init.calculate_gain.
double calculate_gain(Nonlinearity nonlinearity, double param = 0.01);

Tensor uniform_(Tensor tensor, double a = 0.0, double b = 1.0);
Tensor normal_(Tensor tensor, double mean = 0.0, double std = 1.0);
Tensor constant_(Tensor tensor, double value);
Tensor zeros_(Tensor tensor);
Tensor ones_(Tensor tensor);
Tensor kaiming_uniform_(Tensor tensor, double a = 0, FanMode mode = FanMode::FanIn,
                        Nonlinearity nonlinearity = Nonlinearity::LeakyReLU);
Tensor kaiming_normal_(Tensor tensor, double a = 0, FanMode mode = FanMode::FanIn,
                       Nonlinearity nonlinearity = Nonlinearity::LeakyReLU);
Tensor xavier_uniform_(Tensor tensor, double gain = 1.0);
Tensor xavier_normal_(Tensor tensor, double gain = 1.0);

// While one is alive on this thread, the initialisers above leave tensors as they are: modules
// built to receive loaded weights (a pretrained model) skip drawing random values for every
// parameter first, as transformers' no_init_weights. Their parameters hold whatever the
// allocation held until the weights are loaded.
class SkipInitGuard {
 public:
  SkipInitGuard();
  ~SkipInitGuard();
  SkipInitGuard(const SkipInitGuard&) = delete;
  SkipInitGuard& operator=(const SkipInitGuard&) = delete;
  static bool active();
};

}  // namespace ember::nn::init
