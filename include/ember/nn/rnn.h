// ember/nn/rnn.h: PyTorch's recurrent layers -- RNN (tanh or relu), LSTM (with proj_size) and
// GRU over whole sequences, stacked and bidirectional, and their one-step cells RNNCell,
// LSTMCell and GRUCell -- with PyTorch's parameter names, gate order, initialization and
// shapes. They are compositions of differentiable ops, so autograd gives their gradients and
// they run on any device.
#pragma once

#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "ember/nn/module.h"

namespace ember::nn {

// What RNN, LSTM and GRU take besides input_size and hidden_size (PyTorch's keyword arguments):
//   nn::GRU gru(256, 128, {.num_layers = 2, .batch_first = true, .bidirectional = true});
// nonlinearity ("tanh" or "relu") is RNN's only; proj_size (0: none) LSTM's only. dropout is
// applied to each layer's output but the last while training.
struct RNNOptions {
  int64_t num_layers = 1;
  std::string nonlinearity = "tanh";
  bool bias = true;
  bool batch_first = false;
  double dropout = 0.0;
  bool bidirectional = false;
  int64_t proj_size = 0;
};

// The shared machinery of RNN, LSTM and GRU. Parameters, per layer k and direction (suffix
// "_reverse" for the backward one), as PyTorch registers them: weight_ih_l{k} (G * hidden,
// in), weight_hh_l{k} (G * hidden, out), bias_ih_l{k}, bias_hh_l{k} (G * hidden), and for an
// LSTM with proj_size weight_hr_l{k} (proj_size, hidden); G is 1 (RNN), 4 (LSTM: gates i, f, g,
// o) or 3 (GRU: r, z, n); in is input_size for layer 0 and D * out above it, out is proj_size
// if set, else hidden_size; D is 2 when bidirectional. All start uniform in
// +-1/sqrt(hidden_size).
class RNNImplBase : public Module {
 public:
  enum class Mode { RNNTanh, RNNRelu, LSTM, GRU };

  std::string extra_repr() const override;
  void reset_parameters();

  int64_t input_size, hidden_size;
  RNNOptions options;

  // One layer-direction's parameters (undefined where absent).
  struct Weights {
    Tensor w_ih, w_hh, b_ih, b_hh, w_hr;
    auto members() { return std::tie(w_ih, w_hh, b_ih, b_hh, w_hr); }
  };
  // Per layer, then direction: index layer * D + direction.
  std::vector<Weights> all_weights;

 protected:
  RNNImplBase(const char* name, Mode mode, int64_t input_size, int64_t hidden_size,
              const RNNOptions& options);
  // input: (L, N, in), (N, L, in) with batch_first, or (L, in) unbatched; h0 (and c0 for an
  // LSTM): (D * num_layers, N, out) ((.., hidden) for c0), without N when unbatched; undefined:
  // zeros. Returns output (L, N, D * out) (batch_first: (N, L, ..); unbatched: (L, ..)), h_n
  // and c_n (undefined unless LSTM) shaped as h0 and c0.
  std::tuple<Tensor, Tensor, Tensor> run(const Tensor& input, const Tensor& h0, const Tensor& c0);

 private:
  Mode mode_;
};

// Elman RNN: h_t = act(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh), act tanh or relu.
class RNNImpl : public RNNImplBase {
  EMBER_CLONE(RNNImpl, &RNNImpl::all_weights)
 public:
  RNNImpl(int64_t input_size, int64_t hidden_size, const RNNOptions& options = {});
  // -> (output, h_n); shapes as RNNImplBase::run.
  std::tuple<Tensor, Tensor> forward(const Tensor& input, const Tensor& h0 = Tensor());
};
EMBER_BUILTIN_MODULE_WITH(
    RNN, RNN(int64_t input_size, int64_t hidden_size, const RNNOptions& options = {})
    : ModuleHolder(std::make_shared<RNNImpl>(input_size, hidden_size, options)){});

// LSTM: gates i, f, o = sigmoid(..), g = tanh(..) of x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh;
// c_t = f * c_{t-1} + i * g; h_t = o * tanh(c_t), times W_hr^T with proj_size.
class LSTMImpl : public RNNImplBase {
  EMBER_CLONE(LSTMImpl, &LSTMImpl::all_weights)
 public:
  LSTMImpl(int64_t input_size, int64_t hidden_size, const RNNOptions& options = {});
  // -> (output, (h_n, c_n)); shapes as RNNImplBase::run. hx: (h0, c0), both or neither.
  std::tuple<Tensor, std::tuple<Tensor, Tensor>> forward(
      const Tensor& input, const std::optional<std::tuple<Tensor, Tensor>>& hx = std::nullopt);
};
EMBER_BUILTIN_MODULE_WITH(
    LSTM, LSTM(int64_t input_size, int64_t hidden_size, const RNNOptions& options = {})
    : ModuleHolder(std::make_shared<LSTMImpl>(input_size, hidden_size, options)){});

// GRU: r, z = sigmoid(..) of x_t W_i^T + b_i + h_{t-1} W_h^T + b_h; n = tanh(x_t W_in^T + b_in +
// r * (h_{t-1} W_hn^T + b_hn)); h_t = (1 - z) * n + z * h_{t-1}.
class GRUImpl : public RNNImplBase {
  EMBER_CLONE(GRUImpl, &GRUImpl::all_weights)
 public:
  GRUImpl(int64_t input_size, int64_t hidden_size, const RNNOptions& options = {});
  // -> (output, h_n); shapes as RNNImplBase::run.
  std::tuple<Tensor, Tensor> forward(const Tensor& input, const Tensor& h0 = Tensor());
};
EMBER_BUILTIN_MODULE_WITH(
    GRU, GRU(int64_t input_size, int64_t hidden_size, const RNNOptions& options = {})
    : ModuleHolder(std::make_shared<GRUImpl>(input_size, hidden_size, options)){});

// The cells: one step of the layers above. Parameters weight_ih (G * hidden, input_size),
// weight_hh (G * hidden, hidden), bias_ih and bias_hh (G * hidden), uniform in
// +-1/sqrt(hidden_size). input: (N, input_size) or (input_size); hx: (N, hidden) or (hidden),
// zeros when undefined.
class RNNCellImplBase : public Module {
 public:
  std::string extra_repr() const override;
  void reset_parameters();

  int64_t input_size, hidden_size;
  bool bias;
  std::string nonlinearity;  // RNNCell's; "tanh" for the others
  Tensor weight_ih, weight_hh, bias_ih, bias_hh;

 protected:
  RNNCellImplBase(const char* name, int64_t gates, int64_t input_size, int64_t hidden_size,
                  bool bias, std::string nonlinearity);
  // Checks input and the states (undefined ones become zeros) and adds the batch dim when
  // unbatched; returns whether it was added.
  bool prepare(Tensor& input, std::vector<Tensor*> states) const;
};

class RNNCellImpl : public RNNCellImplBase {
  EMBER_CLONE(RNNCellImpl, &RNNCellImpl::weight_ih, &RNNCellImpl::weight_hh, &RNNCellImpl::bias_ih,
              &RNNCellImpl::bias_hh)
 public:
  RNNCellImpl(int64_t input_size, int64_t hidden_size, bool bias = true,
              std::string nonlinearity = "tanh");
  Tensor forward(const Tensor& input, const Tensor& hx = Tensor());  // -> h'
};
EMBER_BUILTIN_MODULE(RNNCell);

class LSTMCellImpl : public RNNCellImplBase {
  EMBER_CLONE(LSTMCellImpl, &LSTMCellImpl::weight_ih, &LSTMCellImpl::weight_hh,
              &LSTMCellImpl::bias_ih, &LSTMCellImpl::bias_hh)
 public:
  LSTMCellImpl(int64_t input_size, int64_t hidden_size, bool bias = true);
  // hx: (h, c), both or neither -> (h', c').
  std::tuple<Tensor, Tensor> forward(
      const Tensor& input, const std::optional<std::tuple<Tensor, Tensor>>& hx = std::nullopt);
};
EMBER_BUILTIN_MODULE(LSTMCell);

class GRUCellImpl : public RNNCellImplBase {
  EMBER_CLONE(GRUCellImpl, &GRUCellImpl::weight_ih, &GRUCellImpl::weight_hh, &GRUCellImpl::bias_ih,
              &GRUCellImpl::bias_hh)
 public:
  GRUCellImpl(int64_t input_size, int64_t hidden_size, bool bias = true);
  Tensor forward(const Tensor& input, const Tensor& hx = Tensor());  // -> h'
};
EMBER_BUILTIN_MODULE(GRUCell);

}  // namespace ember::nn
