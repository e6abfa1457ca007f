// ember/nn/losses.h: the losses as modules (nn.MSELoss and friends), wrapping nn/functional.h.
#pragma once

#include "ember/nn/functional.h"
#include "ember/nn/module.h"

namespace ember::nn {

using functional::Reduction;

class MSELossImpl : public Module {
 public:
  explicit MSELossImpl(Reduction reduction = Reduction::Mean)
      : Module("MSELoss"), reduction(reduction) {}
  Tensor forward(const Tensor& input, const Tensor& target) const;
  Reduction reduction;
};
EMBER_BUILTIN_MODULE(MSELoss);

class L1LossImpl : public Module {
 public:
  explicit L1LossImpl(Reduction reduction = Reduction::Mean)
      : Module("L1Loss"), reduction(reduction) {}
  Tensor forward(const Tensor& input, const Tensor& target) const;
  Reduction reduction;
};
EMBER_BUILTIN_MODULE(L1Loss);

class CrossEntropyLossImpl : public Module {
 public:
  explicit CrossEntropyLossImpl(functional::CrossEntropyOptions options = {})
      : Module("CrossEntropyLoss"), options(std::move(options)) {}
  Tensor forward(const Tensor& input, const Tensor& target) const;
  functional::CrossEntropyOptions options;
};
EMBER_BUILTIN_MODULE(CrossEntropyLoss);

class NLLLossImpl : public Module {
 public:
  explicit NLLLossImpl(functional::NllLossOptions options = {})
      : Module("NLLLoss"), options(std::move(options)) {}
  Tensor forward(const Tensor& input, const Tensor& target) const;
  functional::NllLossOptions options;
};
EMBER_BUILTIN_MODULE(NLLLoss);

class BCELossImpl : public Module {
 public:
  explicit BCELossImpl(Reduction reduction = Reduction::Mean)
      : Module("BCELoss"), reduction(reduction) {}
  Tensor forward(const Tensor& input, const Tensor& target) const;
  Reduction reduction;
};
EMBER_BUILTIN_MODULE(BCELoss);

class BCEWithLogitsLossImpl : public Module {
 public:
  explicit BCEWithLogitsLossImpl(Reduction reduction = Reduction::Mean,
                                 Tensor pos_weight = Tensor())
      : Module("BCEWithLogitsLoss"), reduction(reduction), pos_weight(std::move(pos_weight)) {}
  Tensor forward(const Tensor& input, const Tensor& target) const;
  Reduction reduction;
  Tensor pos_weight;
};
EMBER_BUILTIN_MODULE(BCEWithLogitsLoss);

// nn.CTCLoss; forward(log_probs, targets, input_lengths, target_lengths) is F::ctc_loss.
class CTCLossImpl : public Module {
 public:
  explicit CTCLossImpl(int64_t blank = 0, Reduction reduction = Reduction::Mean,
                       bool zero_infinity = false)
      : Module("CTCLoss"), blank(blank), reduction(reduction), zero_infinity(zero_infinity) {}
  Tensor forward(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                 const Tensor& target_lengths) const;
  int64_t blank;
  Reduction reduction;
  bool zero_infinity;
};
EMBER_BUILTIN_MODULE(CTCLoss);

}  // namespace ember::nn
