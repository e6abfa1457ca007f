// nn/rnn.cpp: the recurrent layers and cells of ember/nn/rnn.h as compositions of differentiable
// ops. A layer-direction projects the whole sequence's input with one matmul, then each step is
// one matmul with W_hh and the pointwise gate math; autograd records the steps.
#include "ember/nn/rnn.h"

#include <cmath>

#include "ember/nn/functional.h"
#include "ember/nn/init.h"
#include "ember/ops.h"
#include "nn/format.h"
#include "ops/op_helpers.h"

namespace ember::nn {

namespace {

using Mode = RNNImplBase::Mode;

int64_t gates_of(Mode mode) {
  switch (mode) {
    case Mode::LSTM:
      return 4;
    case Mode::GRU:
      return 3;
    default:
      return 1;
  }
}

// PyTorch's initialization of every recurrent weight and bias: uniform in +-1/sqrt(hidden).
void init_uniform(const std::vector<Tensor>& params, int64_t hidden) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(hidden));
  for (Tensor p : params) init::uniform_(p, -bound, bound);
}

// The pointwise math of one step, shared by the layers and the cells. pre, gates: the input's
// and the hidden state's projections summed with both biases, (N, G * hidden).
Tensor rnn_math(const Tensor& pre, bool relu_act) {
  return relu_act ? relu(pre) : tanh(pre);
}

// -> (o * tanh(c'), c') with c' = f * c + i * g.
std::pair<Tensor, Tensor> lstm_math(const Tensor& gates, const Tensor& c) {
  std::vector<Tensor> q = gates.chunk(4, 1);
  Tensor c_next = sigmoid(q[1]) * c + sigmoid(q[0]) * tanh(q[2]);
  return {sigmoid(q[3]) * tanh(c_next), c_next};
}

// gi_rz (N, 2 hidden), gi_n (N, hidden): the input's projections with bias_ih; gh (N, 3 hidden):
// the hidden state's with bias_hh; h (N, hidden) -> h'.
Tensor gru_math(const Tensor& gi_rz, const Tensor& gi_n, const Tensor& gh, const Tensor& h) {
  const int64_t hidden = h.size(1);
  std::vector<Tensor> gh_parts = gh.split_with_sizes({2 * hidden, hidden}, 1);
  std::vector<Tensor> rz = sigmoid(gi_rz + gh_parts[0]).chunk(2, 1);
  Tensor n = tanh(gi_n + rz[0] * gh_parts[1]);
  return n + rz[1] * (h - n);
}

// Throws unless t shares the input's dtype and device; what: "h0", "the parameters", ...
void check_like(const char* op, const Tensor& input, const Tensor& t, const char* what) {
  EMBER_CHECK_KIND(DType, t.dtype() == input.dtype(), "[", op, "] input dtype ", input.dtype(),
                   " does not match the dtype of ", what, ", ", t.dtype());
  EMBER_CHECK_KIND(Device, t.device() == input.device(), "[", op, "] input is on ", input.device(),
                   " but ", what, " on ", t.device());
}

// The state `what` (h0, c0, hx) as given, with the batch dim (shape's second to last) added
// when the input has none, or zeros of `shape` when undefined.
Tensor state_or_zeros(const char* op, const char* what, const Tensor& state, const Tensor& input,
                      bool unbatched, const Shape& shape) {
  if (!state.defined()) return zeros(shape, {.dtype = input.dtype(), .device = input.device()});
  const size_t batch_dim = shape.size() - 2;
  Shape expected;
  for (size_t i = 0; i < shape.size(); ++i)
    if (!unbatched || i != batch_dim) expected.push_back(shape[i]);
  EMBER_CHECK_KIND(Shape, state.dim() == static_cast<int64_t>(expected.size()), "[", op, "] for ",
                   unbatched ? "unbatched " : "batched ", input.dim(), "-D input, ", what,
                   " should be ", expected.size(), "-D, got shape ", shape_str(state.sizes()));
  EMBER_CHECK_KIND(Shape, state.sizes() == expected, "[", op, "] expected ", what, " of shape ",
                   shape_str(expected), ", got ", shape_str(state.sizes()));
  check_like(op, input, state, what);
  return unbatched ? state.unsqueeze(static_cast<int64_t>(batch_dim)) : state;
}

// One direction of one layer. x: (L, N, in); h, c: (N, out), (N, hidden) (c: LSTM only) ->
// (output (L, N, out), h_last, c_last).
std::tuple<Tensor, Tensor, Tensor> run_direction(Mode mode, const RNNImplBase::Weights& w,
                                                 const Tensor& x, Tensor h, Tensor c,
                                                 bool reverse) {
  const int64_t L = x.size(0), N = x.size(1), gh_size = w.w_hh.size(0);
  // The input projection for all steps at once. RNN and LSTM add both biases there; GRU keeps
  // bias_hh with the hidden projection, where r multiplies its n part.
  Tensor bias = w.b_ih;
  if (mode != Mode::GRU && w.b_ih.defined()) bias = w.b_ih + w.b_hh;
  Tensor gi = F::linear(x.reshape({L * N, x.size(2)}), w.w_ih, bias).view({L, N, gh_size});
  std::vector<Tensor> gi_steps, gi_n_steps;
  if (mode == Mode::GRU) {
    std::vector<Tensor> parts = gi.split_with_sizes({2 * h.size(1), h.size(1)}, 2);
    gi_steps = parts[0].unbind(0);
    gi_n_steps = parts[1].unbind(0);
  } else {
    gi_steps = gi.unbind(0);
  }
  const Tensor w_hh_t = w.w_hh.t();
  const Tensor w_hr_t = w.w_hr.defined() ? w.w_hr.t() : Tensor();
  std::vector<Tensor> out(static_cast<size_t>(L));
  for (int64_t i = 0; i < L; ++i) {
    const size_t t = static_cast<size_t>(reverse ? L - 1 - i : i);
    switch (mode) {
      case Mode::RNNTanh:
      case Mode::RNNRelu:
        h = rnn_math(gi_steps[t] + mm(h, w_hh_t), mode == Mode::RNNRelu);
        break;
      case Mode::LSTM: {
        auto [h_next, c_next] = lstm_math(gi_steps[t] + mm(h, w_hh_t), c);
        h = w_hr_t.defined() ? mm(h_next, w_hr_t) : h_next;
        c = c_next;
        break;
      }
      case Mode::GRU:
        h = gru_math(gi_steps[t], gi_n_steps[t], F::linear(h, w.w_hh, w.b_hh), h);
        break;
    }
    out[t] = h;
  }
  return {stack(out, 0), h, c};
}

}  // namespace

RNNImplBase::RNNImplBase(const char* name, Mode mode, int64_t input, int64_t hidden,
                         const RNNOptions& opts)
    : Module(name), input_size(input), hidden_size(hidden), options(opts), mode_(mode) {
  EMBER_CHECK(input > 0 && hidden > 0, "[", name,
              "] input_size and hidden_size must be positive, got ", input, " and ", hidden);
  EMBER_CHECK(opts.num_layers >= 1, "[", name, "] num_layers must be at least 1, got ",
              opts.num_layers);
  EMBER_CHECK(opts.dropout >= 0 && opts.dropout <= 1, "[", name,
              "] dropout should be a number in range [0, 1] representing the probability of an "
              "element being zeroed, got ",
              opts.dropout);
  EMBER_CHECK(opts.proj_size >= 0, "[", name, "] proj_size should be a positive integer or zero ",
              "to disable projections, got ", opts.proj_size);
  EMBER_CHECK(opts.proj_size == 0 || mode == Mode::LSTM, "[", name,
              "] proj_size argument is only supported for LSTM, not RNN or GRU");
  EMBER_CHECK(opts.proj_size < hidden, "[", name, "] proj_size ", opts.proj_size,
              " has to be smaller than hidden_size ", hidden);
  EMBER_CHECK(mode == Mode::RNNTanh || mode == Mode::RNNRelu || opts.nonlinearity == "tanh", "[",
              name, "] takes no nonlinearity (only RNN does), got '", opts.nonlinearity, "'");
  const int64_t gates = gates_of(mode) * hidden;
  const int64_t out = opts.proj_size ? opts.proj_size : hidden;
  const int64_t dirs = opts.bidirectional ? 2 : 1;
  for (int64_t layer = 0; layer < opts.num_layers; ++layer) {
    for (int64_t dir = 0; dir < dirs; ++dir) {
      const std::string sfx = "_l" + std::to_string(layer) + (dir ? "_reverse" : "");
      const int64_t in = layer == 0 ? input : out * dirs;
      Weights w;
      w.w_ih = register_parameter("weight_ih" + sfx, empty({gates, in}));
      w.w_hh = register_parameter("weight_hh" + sfx, empty({gates, out}));
      if (opts.bias) {
        w.b_ih = register_parameter("bias_ih" + sfx, empty({gates}));
        w.b_hh = register_parameter("bias_hh" + sfx, empty({gates}));
      }
      if (opts.proj_size) w.w_hr = register_parameter("weight_hr" + sfx, empty({out, hidden}));
      all_weights.push_back(w);
    }
  }
  reset_parameters();
}

void RNNImplBase::reset_parameters() {
  init_uniform(parameters(), hidden_size);
}

std::string RNNImplBase::extra_repr() const {
  std::string s = std::to_string(input_size) + ", " + std::to_string(hidden_size);
  if (options.proj_size) s += ", proj_size=" + std::to_string(options.proj_size);
  if (options.num_layers != 1) s += ", num_layers=" + std::to_string(options.num_layers);
  if (!options.bias) s += ", bias=False";
  if (options.batch_first) s += ", batch_first=True";
  if (options.dropout != 0) s += ", dropout=" + fmt_double(options.dropout);
  if (options.bidirectional) s += ", bidirectional=True";
  return s;
}

std::tuple<Tensor, Tensor, Tensor> RNNImplBase::run(const Tensor& input, const Tensor& h0,
                                                    const Tensor& c0) {
  const char* op = name().c_str();
  EMBER_CHECK_KIND(Shape, input.dim() == 2 || input.dim() == 3, "[", op,
                   "] expected input to be 2-D (unbatched) or 3-D, got shape ",
                   shape_str(input.sizes()));
  EMBER_CHECK_KIND(Shape, input.size(-1) == input_size, "[", op,
                   "] input.size(-1) must be equal to input_size. Expected ", input_size, ", got ",
                   input.size(-1), " (input of shape ", shape_str(input.sizes()), ")");
  check_like(op, input, all_weights[0].w_ih, "the parameters");
  // 16-bit layers compute in float32 (weights, states and gates) and round their results once.
  const bool reduced = is_reduced_float(input.dtype());
  std::vector<Weights> weights = all_weights;
  if (reduced)
    for (Weights& w : weights)
      w = {to_opmath(w.w_ih), to_opmath(w.w_hh), to_opmath(w.b_ih), to_opmath(w.b_hh),
           to_opmath(w.w_hr)};
  const bool unbatched = input.dim() == 2;
  Tensor x = to_opmath(input);
  x = unbatched ? x.unsqueeze(1) : options.batch_first ? x.transpose(0, 1) : x;
  const int64_t dirs = options.bidirectional ? 2 : 1, batch = x.size(1);
  const int64_t out = options.proj_size ? options.proj_size : hidden_size;
  const bool lstm = mode_ == Mode::LSTM;
  const Shape h_shape{options.num_layers * dirs, batch, out};
  std::vector<Tensor> h =
      to_opmath(state_or_zeros(op, "h0", h0, input, unbatched, h_shape)).unbind(0);
  std::vector<Tensor> c;
  if (lstm)
    c = to_opmath(state_or_zeros(op, "c0", c0, input, unbatched, {h_shape[0], batch, hidden_size}))
            .unbind(0);
  std::vector<Tensor> h_n, c_n;
  for (int64_t layer = 0; layer < options.num_layers; ++layer) {
    std::vector<Tensor> outs;
    for (int64_t dir = 0; dir < dirs; ++dir) {
      const size_t k = static_cast<size_t>(layer * dirs + dir);
      auto [y, h_last, c_last] =
          run_direction(mode_, weights[k], x, h[k], lstm ? c[k] : Tensor(), dir == 1);
      outs.push_back(y);
      h_n.push_back(h_last);
      if (lstm) c_n.push_back(c_last);
    }
    x = dirs == 2 ? cat(outs, 2) : outs[0];
    if (options.dropout > 0 && is_training() && layer + 1 < options.num_layers)
      x = F::dropout(x, options.dropout, true);
  }
  Tensor hn = stack(h_n, 0), cn = lstm ? stack(c_n, 0) : Tensor();
  if (reduced) {
    x = x.to(input.dtype());
    hn = hn.to(input.dtype());
    if (lstm) cn = cn.to(input.dtype());
  }
  if (unbatched) {
    x = x.squeeze(1);
    hn = hn.squeeze(1);
    if (lstm) cn = cn.squeeze(1);
  } else if (options.batch_first) {
    x = x.transpose(0, 1);
  }
  return {x, hn, cn};
}

RNNImpl::RNNImpl(int64_t input, int64_t hidden, const RNNOptions& opts)
    : RNNImplBase("RNN", opts.nonlinearity == "relu" ? Mode::RNNRelu : Mode::RNNTanh, input, hidden,
                  opts) {
  EMBER_CHECK(opts.nonlinearity == "tanh" || opts.nonlinearity == "relu",
              "[RNN] Unknown nonlinearity '", opts.nonlinearity, "' (expected 'tanh' or 'relu')");
}
std::tuple<Tensor, Tensor> RNNImpl::forward(const Tensor& input, const Tensor& h0) {
  auto [y, h, c] = run(input, h0, Tensor());
  return {y, h};
}

LSTMImpl::LSTMImpl(int64_t input, int64_t hidden, const RNNOptions& opts)
    : RNNImplBase("LSTM", Mode::LSTM, input, hidden, opts) {}
std::tuple<Tensor, std::tuple<Tensor, Tensor>> LSTMImpl::forward(
    const Tensor& input, const std::optional<std::tuple<Tensor, Tensor>>& hx) {
  Tensor h0, c0;
  if (hx) std::tie(h0, c0) = *hx;
  EMBER_CHECK(h0.defined() == c0.defined(), "[LSTM] hx needs both h0 and c0, or neither");
  auto [y, h, c] = run(input, h0, c0);
  return {y, {h, c}};
}

GRUImpl::GRUImpl(int64_t input, int64_t hidden, const RNNOptions& opts)
    : RNNImplBase("GRU", Mode::GRU, input, hidden, opts) {}
std::tuple<Tensor, Tensor> GRUImpl::forward(const Tensor& input, const Tensor& h0) {
  auto [y, h, c] = run(input, h0, Tensor());
  return {y, h};
}

RNNCellImplBase::RNNCellImplBase(const char* name, int64_t gates, int64_t input, int64_t hidden,
                                 bool with_bias, std::string act)
    : Module(name),
      input_size(input),
      hidden_size(hidden),
      bias(with_bias),
      nonlinearity(std::move(act)) {
  EMBER_CHECK(input > 0 && hidden > 0, "[", name,
              "] input_size and hidden_size must be positive, got ", input, " and ", hidden);
  weight_ih = register_parameter("weight_ih", empty({gates * hidden, input}));
  weight_hh = register_parameter("weight_hh", empty({gates * hidden, hidden}));
  if (with_bias) {
    bias_ih = register_parameter("bias_ih", empty({gates * hidden}));
    bias_hh = register_parameter("bias_hh", empty({gates * hidden}));
  }
  reset_parameters();
}

void RNNCellImplBase::reset_parameters() {
  init_uniform(parameters(), hidden_size);
}

std::string RNNCellImplBase::extra_repr() const {
  std::string s = std::to_string(input_size) + ", " + std::to_string(hidden_size);
  if (!bias) s += ", bias=False";
  if (nonlinearity != "tanh") s += ", nonlinearity=" + nonlinearity;
  return s;
}

bool RNNCellImplBase::prepare(Tensor& input, std::vector<Tensor*> states) const {
  const char* op = name().c_str();
  EMBER_CHECK_KIND(Shape, input.dim() == 1 || input.dim() == 2, "[", op,
                   "] Expected input to be 1-D or 2-D, got shape ", shape_str(input.sizes()));
  EMBER_CHECK_KIND(Shape, input.size(-1) == input_size, "[", op,
                   "] input has inconsistent input_size: got ", input.size(-1), " expected ",
                   input_size, " (input of shape ", shape_str(input.sizes()), ")");
  check_like(op, input, weight_ih, "the parameters");
  const bool unbatched = input.dim() == 1;
  const Shape shape{unbatched ? 1 : input.size(0), hidden_size};
  for (Tensor* s : states) *s = state_or_zeros(op, "hx", *s, input, unbatched, shape);
  if (unbatched) input = input.unsqueeze(0);
  return unbatched;
}

RNNCellImpl::RNNCellImpl(int64_t input, int64_t hidden, bool with_bias, std::string act)
    : RNNCellImplBase("RNNCell", 1, input, hidden, with_bias, std::move(act)) {
  EMBER_CHECK(nonlinearity == "tanh" || nonlinearity == "relu", "[RNNCell] Unknown nonlinearity '",
              nonlinearity, "' (expected 'tanh' or 'relu')");
}
Tensor RNNCellImpl::forward(const Tensor& input, const Tensor& hx) {
  Tensor x = input, h = hx;
  const bool unbatched = prepare(x, {&h});
  Tensor y = rnn_math(F::linear(x, weight_ih, bias_ih) + F::linear(h, weight_hh, bias_hh),
                      nonlinearity == "relu");
  return unbatched ? y.squeeze(0) : y;
}

LSTMCellImpl::LSTMCellImpl(int64_t input, int64_t hidden, bool with_bias)
    : RNNCellImplBase("LSTMCell", 4, input, hidden, with_bias, "tanh") {}
std::tuple<Tensor, Tensor> LSTMCellImpl::forward(
    const Tensor& input, const std::optional<std::tuple<Tensor, Tensor>>& hx) {
  Tensor x = input, h, c;
  if (hx) std::tie(h, c) = *hx;
  EMBER_CHECK(h.defined() == c.defined(), "[LSTMCell] hx needs both h and c, or neither");
  const bool unbatched = prepare(x, {&h, &c});
  auto [h_next, c_next] =
      lstm_math(F::linear(x, weight_ih, bias_ih) + F::linear(h, weight_hh, bias_hh), c);
  if (unbatched) return {h_next.squeeze(0), c_next.squeeze(0)};
  return {h_next, c_next};
}

GRUCellImpl::GRUCellImpl(int64_t input, int64_t hidden, bool with_bias)
    : RNNCellImplBase("GRUCell", 3, input, hidden, with_bias, "tanh") {}
Tensor GRUCellImpl::forward(const Tensor& input, const Tensor& hx) {
  Tensor x = input, h = hx;
  const bool unbatched = prepare(x, {&h});
  std::vector<Tensor> gi =
      F::linear(x, weight_ih, bias_ih).split_with_sizes({2 * hidden_size, hidden_size}, 1);
  Tensor y = gru_math(gi[0], gi[1], F::linear(h, weight_hh, bias_hh), h);
  return unbatched ? y.squeeze(0) : y;
}

}  // namespace ember::nn
