// tests/test_rnn.cpp: RNN, LSTM, GRU and their cells (ember/nn/rnn.h) against PyTorch's
// outputs, final states and gradients (tests/reference/rnn_reference.txt, written by
// rnn_reference.py with PyTorch), loaded through strict state dicts so that the parameter names,
// order and shapes are PyTorch's; on every device, in float64. By hand: the errors, printing,
// dropout between layers, a float32 run, and gradcheck of small GRU and LSTM layers.
#include "case_fixtures.h"
#include "test_util.h"

namespace ember {
namespace {

using testing::Fixture;
using testing::tensor_close;

// The fixture's module, as ember builds it from the same options.
std::shared_ptr<nn::Module> make_module(const Fixture& f) {
  const std::string mode = f.options.at("mode");
  const int64_t in = f.num("input_size", 0), hidden = f.num("hidden_size", 0);
  const bool bias = f.num("bias", 1) != 0;
  auto act = f.options.count("nonlinearity") ? f.options.at("nonlinearity") : "tanh";
  if (mode == "RNNCell") return nn::RNNCell(in, hidden, bias, act).ptr();
  if (mode == "LSTMCell") return nn::LSTMCell(in, hidden, bias).ptr();
  if (mode == "GRUCell") return nn::GRUCell(in, hidden, bias).ptr();
  nn::RNNOptions o{.num_layers = f.num("num_layers", 1),
                   .nonlinearity = act,
                   .bias = bias,
                   .batch_first = f.num("batch_first", 0) != 0,
                   .bidirectional = f.num("bidirectional", 0) != 0,
                   .proj_size = f.num("proj_size", 0)};
  if (mode == "RNN") return nn::RNN(in, hidden, o).ptr();
  if (mode == "LSTM") return nn::LSTM(in, hidden, o).ptr();
  return nn::GRU(in, hidden, o).ptr();
}

// Runs module (made by make_module) on input and the states (none, h0, or h0 and c0) ->
// {output, h_n, c_n}; a cell's output is its new h and h_n is left undefined.
std::vector<Tensor> run_module(nn::Module& module, const Tensor& input,
                               const std::vector<Tensor>& states) {
  Tensor h0 = states.empty() ? Tensor() : states[0];
  std::optional<std::tuple<Tensor, Tensor>> hc;
  if (states.size() == 2) hc = std::make_tuple(states[0], states[1]);
  if (auto* m = dynamic_cast<nn::RNNImpl*>(&module)) {
    auto [y, h] = m->forward(input, h0);
    return {y, h, Tensor()};
  }
  if (auto* m = dynamic_cast<nn::GRUImpl*>(&module)) {
    auto [y, h] = m->forward(input, h0);
    return {y, h, Tensor()};
  }
  if (auto* m = dynamic_cast<nn::LSTMImpl*>(&module)) {
    auto [y, h_c] = m->forward(input, hc);
    return {y, std::get<0>(h_c), std::get<1>(h_c)};
  }
  if (auto* m = dynamic_cast<nn::RNNCellImpl*>(&module))
    return {m->forward(input, h0), Tensor(), Tensor()};
  if (auto* m = dynamic_cast<nn::GRUCellImpl*>(&module))
    return {m->forward(input, h0), Tensor(), Tensor()};
  auto [h, c] = dynamic_cast<nn::LSTMCellImpl&>(module).forward(input, hc);
  return {h, Tensor(), c};
}

class RNNTest : public testing::DeviceTest {};

TEST_P(RNNTest, MatchesPyTorch) {
  std::vector<Fixture> cases = testing::read_case_fixtures("rnn_reference.txt");
  ASSERT_EQ(cases.size(), 18u);
  for (const Fixture& f : cases) {
    SCOPED_TRACE(f.name);
    std::shared_ptr<nn::Module> module = make_module(f);
    module->to(kFloat64);
    // PyTorch's parameter list, in its order, with its shapes: a strict load takes it.
    nn::StateDict state;
    for (const auto& [key, t] : f.tensors)
      if (key.rfind("param.", 0) == 0) state.emplace_back(key.substr(6), t);
    nn::StateDict params = module->named_parameters();
    ASSERT_EQ(params.size(), state.size());
    for (size_t i = 0; i < params.size(); ++i) {
      EXPECT_EQ(params[i].first, state[i].first);
      EXPECT_EQ(params[i].second.sizes(), state[i].second.sizes()) << state[i].first;
    }
    module->load_state_dict(state);
    module->to(device());

    Tensor input = f.get("input").to(device()).requires_grad_();
    std::vector<Tensor> states;
    for (const char* key : {"h0", "c0"})
      if (f.has(key)) states.push_back(f.get(key).to(device()).requires_grad_());
    std::vector<Tensor> result = run_module(*module, input, states);
    const Tensor &y = result[0], &h_n = result[1].defined() ? result[1] : result[0];
    Tensor loss = sum(y * f.get("w_out").to(device())) + sum(h_n * f.get("w_h").to(device()));
    if (f.has("w_c")) loss = loss + sum(result[2] * f.get("w_c").to(device()));
    loss.backward();

    EXPECT_TRUE(tensor_close(y, f.get("output"), 1e-6, 1e-8));
    for (const auto& [key, i] : {std::pair{"h_n", 1}, std::pair{"c_n", 2}})
      if (f.has(key)) {
        EXPECT_TRUE(tensor_close(result[i], f.get(key), 1e-6, 1e-8)) << key;
      }
    EXPECT_TRUE(tensor_close(input.grad(), f.get("grad.input"), 1e-6, 1e-8));
    const char* state_names[] = {"grad.h0", "grad.c0"};
    for (size_t i = 0; i < states.size(); ++i)
      EXPECT_TRUE(tensor_close(states[i].grad(), f.get(state_names[i]), 1e-6, 1e-8));
    for (const auto& [name, p] : module->named_parameters()) {
      SCOPED_TRACE(name);
      ASSERT_TRUE(p.grad().defined());
      EXPECT_TRUE(tensor_close(p.grad(), f.get("grad.param." + name), 1e-6, 1e-8));
    }
  }
}

TEST_P(RNNTest, Float32MatchesFloat64) {
  nn::LSTM lstm(5, 6, {.num_layers = 2, .bidirectional = true});
  lstm->to(device());
  Tensor x = randn({7, 3, 5}, on());
  auto [y, hc] = lstm(x);
  EXPECT_EQ(y.dtype(), kFloat32);
  EXPECT_EQ(y.sizes(), (Shape{7, 3, 12}));
  lstm->to(kFloat64);
  auto [y64, hc64] = lstm(x.to(kFloat64));
  EXPECT_TRUE(tensor_close(y, y64, 1e-4, 1e-5));
  EXPECT_TRUE(tensor_close(std::get<1>(hc), std::get<1>(hc64), 1e-4, 1e-5));
}

// Gradients of output and h_n with respect to the input, h0 and every parameter against finite
// differences. The parameters are gradcheck's inputs too: its probes are copied into them.
::testing::AssertionResult gradcheck_layer(
    nn::Module& module, const Tensor& x, const Tensor& h0,
    const std::function<Tensor(const Tensor&, const Tensor&)>& run) {
  std::vector<Tensor> params = module.parameters();
  std::vector<Tensor> inputs{x, h0};
  inputs.insert(inputs.end(), params.begin(), params.end());
  auto f = [&](const std::vector<Tensor>& in) {
    for (size_t i = 0; i < params.size(); ++i)
      if (!in[i + 2].is_same(params[i])) {
        NoGradGuard no_grad;
        params[i].copy_(in[i + 2]);
      }
    return run(in[0], in[1]);
  };
  try {
    if (!autograd::gradcheck(f, inputs, {.eps = 1e-6, .atol = 1e-6, .rtol = 1e-4}))
      return ::testing::AssertionFailure() << "gradcheck returned false";
  } catch (const Error& e) {
    return ::testing::AssertionFailure() << e.what();
  }
  return ::testing::AssertionSuccess();
}

TEST_P(RNNTest, GradcheckGRUAndLSTM) {
  nn::GRU gru(2, 3, {.bidirectional = true});
  gru->to(device(), kFloat64);
  Tensor x = randn({3, 2, 2}, on(kFloat64)).requires_grad_();
  Tensor h0 = randn({2, 2, 3}, on(kFloat64)).requires_grad_();
  EXPECT_TRUE(gradcheck_layer(*gru, x, h0, [&](const Tensor& in, const Tensor& h) {
    auto [y, h_n] = gru(in, h);
    return cat({y.reshape({-1}), h_n.reshape({-1})}, 0);
  }));
  nn::LSTM lstm(2, 3, {.num_layers = 2, .proj_size = 2});
  lstm->to(device(), kFloat64);
  Tensor lh0 = randn({2, 2, 2}, on(kFloat64)).requires_grad_();
  Tensor c0 = randn({2, 2, 3}, on(kFloat64));
  EXPECT_TRUE(gradcheck_layer(*lstm, x, lh0, [&](const Tensor& in, const Tensor& h) {
    auto [y, hc] = lstm(in, std::make_tuple(h, c0));
    return cat({y.reshape({-1}), std::get<1>(hc).reshape({-1})}, 0);
  }));
}

TEST_P(RNNTest, StatesDefaultToZerosAndShapesFollowTheOptions) {
  nn::GRU gru(3, 4, {.num_layers = 2, .batch_first = true});
  gru->to(device());
  Tensor x = randn({2, 5, 3}, on());  // (N, L, in)
  auto [y, h] = gru(x);
  EXPECT_EQ(y.sizes(), (Shape{2, 5, 4}));
  EXPECT_EQ(h.sizes(), (Shape{2, 2, 4}));
  auto [y0, h_0] = gru(x, zeros({2, 2, 4}, on()));
  EXPECT_TRUE(testing::tensor_equal(y, y0));
  // The last step's output is the last layer's final state.
  EXPECT_TRUE(testing::tensor_equal(y.select(1, 4), h.select(0, 1)));
  nn::RNN rnn(3, 4, {.nonlinearity = "relu"});
  rnn->to(device());
  auto [ry, rh] = rnn(randn({6, 3}, on()));  // unbatched (L, in)
  EXPECT_EQ(ry.sizes(), (Shape{6, 4}));
  EXPECT_EQ(rh.sizes(), (Shape{1, 4}));
  EXPECT_GE(min(ry).item<double>(), 0.0);
}

TEST_P(RNNTest, DropoutActsBetweenLayersWhileTraining) {
  nn::GRU gru(3, 8, {.num_layers = 2, .dropout = 0.5});
  nn::GRU plain(3, 8, {.num_layers = 2});
  plain->load_state_dict(gru->state_dict());
  gru->to(device());
  plain->to(device());
  Tensor x = randn({4, 2, 3}, on());
  auto [y_plain, h_plain] = plain(x);
  auto [y_train, h_train] = gru(x);
  EXPECT_FALSE(tensor_close(y_train, y_plain));
  gru->eval();
  auto [y_eval, h_eval] = gru(x);
  EXPECT_TRUE(tensor_close(y_eval, y_plain));
  // A single layer has no layer to drop between.
  nn::LSTM one(3, 4, {.dropout = 0.5});
  nn::LSTM one_plain(3, 4);
  one_plain->load_state_dict(one->state_dict());
  EXPECT_TRUE(tensor_close(std::get<0>(one(x.cpu())), std::get<0>(one_plain(x.cpu()))));
}

TEST_P(RNNTest, ErrorsNameTheOpAndTheShapes) {
  nn::LSTM lstm(3, 4, {.num_layers = 2});
  lstm->to(device());
  EXPECT_TRUE(testing::throws_error(
      [&] {
        lstm(randn({5, 2, 6}, on()));
      },
      ErrorKind::Shape, {"[LSTM]", "input_size. Expected 3, got 6", "[5, 2, 6]"}));
  EXPECT_TRUE(testing::throws_error([&] { lstm(randn({5}, on())); }, ErrorKind::Shape,
                                    {"[LSTM]", "2-D (unbatched) or 3-D"}));
  Tensor x = randn({5, 2, 3}, on());
  EXPECT_TRUE(testing::throws_error(
      [&] {
        lstm(x, std::make_tuple(zeros({1, 2, 4}, on()), zeros({2, 2, 4}, on())));
      },
      ErrorKind::Shape, {"[LSTM] expected h0 of shape [2, 2, 4], got [1, 2, 4]"}));
  EXPECT_TRUE(testing::throws_error(
      [&] {
        lstm(x, std::make_tuple(zeros({2, 2, 4}, on()), zeros({2, 4}, on())));
      },
      ErrorKind::Shape, {"[LSTM] for batched 3-D input, c0 should be 3-D"}));
  EXPECT_TRUE(testing::throws_error([&] { lstm(x.to(kFloat64)); }, ErrorKind::DType,
                                    {"[LSTM]", "float64", "float32"}));
  nn::GRU gru(3, 4);
  gru->to(device());
  EXPECT_TRUE(testing::throws_error(
      [&] {
        gru(randn({5, 3}, on()), zeros({1, 2, 4}, on()));
      },
      ErrorKind::Shape, {"[GRU] for unbatched 2-D input, h0"}));
  EXPECT_TRUE(testing::throws_error(
      [&] {
        gru(x, zeros({1, 2, 4}, on(kFloat64)));
      },
      ErrorKind::DType, {"[GRU]", "h0"}));
  nn::GRUCell cell(3, 4);
  cell->to(device());
  EXPECT_TRUE(testing::throws_error(
      [&] {
        cell(randn({2, 5}, on()));
      },
      ErrorKind::Shape, {"[GRUCell]", "got 5 expected 3"}));
  EXPECT_TRUE(testing::throws_error(
      [&] {
        cell(randn({2, 3}, on()), zeros({3, 4}, on()));
      },
      ErrorKind::Shape, {"[GRUCell] expected hx of shape [2, 4]"}));
  EXPECT_TRUE(testing::throws_error([] { nn::GRU(3, 4, {.proj_size = 2}); }, ErrorKind::Value,
                                    {"proj_size argument is only supported for LSTM"}));
  EXPECT_TRUE(testing::throws_error([] { nn::RNN(3, 4, {.nonlinearity = "gelu"}); },
                                    ErrorKind::Value, {"[RNN] Unknown nonlinearity 'gelu'"}));
  EXPECT_TRUE(testing::throws_error([] { nn::LSTM(3, 4, {.dropout = 1.5}); }, ErrorKind::Value,
                                    {"[LSTM] dropout should be a number in range [0, 1]"}));
  EXPECT_TRUE(testing::throws_error([] { nn::LSTM(3, 4, {.proj_size = 4}); }, ErrorKind::Value,
                                    {"proj_size 4 has to be smaller than hidden_size 4"}));
}

TEST_P(RNNTest, DevicesMustMatch) {
  if (device().type() == kCPU) GTEST_SKIP() << "needs a second device";
  nn::GRU gru(3, 4);
  gru->to(device());
  EXPECT_TRUE(testing::throws_error(
      [&] {
        gru(randn({5, 2, 3}));
      },
      ErrorKind::Device, {"[GRU] input is on cpu"}));
}

TEST(RNNPrinting, AsPyTorch) {
  EXPECT_EQ(nn::RNN(3, 4, {.nonlinearity = "relu"})->str(), "RNN(3, 4)");
  EXPECT_EQ(nn::LSTM(3, 4,
                     {.num_layers = 2,
                      .bias = false,
                      .batch_first = true,
                      .dropout = 0.5,
                      .bidirectional = true,
                      .proj_size = 2})
                ->str(),
            "LSTM(3, 4, proj_size=2, num_layers=2, bias=False, batch_first=True, dropout=0.5, "
            "bidirectional=True)");
  EXPECT_EQ(nn::RNNCell(3, 4, false, "relu")->str(),
            "RNNCell(3, 4, bias=False, nonlinearity=relu)");
  EXPECT_EQ(nn::GRUCell(3, 4)->str(), "GRUCell(3, 4)");
  EXPECT_EQ(nn::LSTMCell(3, 4)->str(), "LSTMCell(3, 4)");
}

TEST(RNNInit, UniformWithinOneOverSqrtHidden) {
  nn::GRU gru(8, 16, {.num_layers = 2, .bidirectional = true});
  for (const auto& [name, p] : gru->named_parameters()) {
    SCOPED_TRACE(name);
    EXPECT_LE(max(abs(p)).item<double>(), 0.25);
    EXPECT_GT(max(abs(p)).item<double>(), 0.2);  // spread over the range, not all zero
  }
}

EMBER_INSTANTIATE_DEVICE_TESTS(RNNTest);

}  // namespace
}  // namespace ember
