// tests/test_nn.cpp: nn::Module and the built-in layers -- registration, parameters and buffers
// with PyTorch's dotted names, children, moving to devices and dtypes in place, train/eval,
// zero_grad, state dicts, printing the module tree as PyTorch does, each layer's forward values,
// Linear's default initialisation, and the nn::init functions.
//
// Numbers not computed by hand in a comment were printed by tests/reference/nn_reference.py
// (numpy float64, from the formulas in PyTorch's documentation).
#include <cmath>
#include <numbers>
#include <sstream>

#include "test_util.h"

namespace ember {
namespace {

namespace F = nn::functional;
using testing::tensor_close;
using testing::tensor_equal;
using testing::throws_error;

// A module with its own parameter and buffers besides a child: forward(x) = fc(x) * scale + shift.
class BlockImpl : public nn::Module {
 public:
  BlockImpl() : Module("Block") {
    fc = register_module("fc", nn::Linear(3, 2).ptr());
    scale = register_parameter("scale", ones({2}));
    shift = register_buffer("shift", zeros({2}));
    count = register_buffer("count", zeros({}, {.dtype = kInt64}));
  }
  Tensor forward(const Tensor& x) override { return fc->forward(x) * scale + shift; }
  std::shared_ptr<nn::LinearImpl> fc;
  Tensor scale, shift, count;
};
EMBER_MODULE(Block);

// Two levels of nesting: a Sequential and a Block.
class NetImpl : public nn::Module {
 public:
  NetImpl() : Module("Net") {
    features = register_module("features", nn::Sequential(nn::Linear(4, 3), nn::ReLU()).ptr());
    block = register_module("block", Block().ptr());
  }
  Tensor forward(const Tensor& x) override { return block->forward(features->forward(x)); }
  std::shared_ptr<nn::SequentialImpl> features;
  std::shared_ptr<BlockImpl> block;
};
EMBER_MODULE(Net);

std::vector<std::string> names_of(const nn::StateDict& dict) {
  std::vector<std::string> names;
  for (const auto& [name, t] : dict) names.push_back(name);
  return names;
}

nn::Sequential mlp() {
  return nn::Sequential(nn::Linear(4, 3), nn::ReLU(), nn::Linear(3, 2));
}

class ModuleTest : public testing::DeviceTest {
 protected:
  // Where tensors moved to device() end up ("cuda" becomes "cuda:0").
  Device placed() const { return zeros({1}, on()).device(); }
};

// --- registration and traversal

TEST(ModuleRegistration, SequentialNamesAsPyTorch) {
  nn::Sequential model = mlp();
  EXPECT_EQ(names_of(model->named_parameters()),
            (std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"}));
  auto params = model->parameters();
  ASSERT_EQ(params.size(), 4u);
  auto first = std::dynamic_pointer_cast<nn::LinearImpl>((*model)[0]);
  ASSERT_TRUE(first);
  EXPECT_TRUE(params[0].is_same(first->weight));
  EXPECT_TRUE(params[1].is_same(first->bias));
  for (const Tensor& p : params) {
    EXPECT_TRUE(p.requires_grad());
    EXPECT_TRUE(p.is_leaf());
  }
  EXPECT_EQ(params[0].sizes(), (Shape{3, 4}));
  EXPECT_EQ(params[3].sizes(), (Shape{2}));
  EXPECT_EQ(model->size(), 3u);
  EXPECT_TRUE(model->buffers().empty());
  EXPECT_TRUE(model->parameters(/*recurse=*/false).empty());
}

TEST(ModuleRegistration, NestedNamesParametersBuffersChildren) {
  Net net;
  EXPECT_EQ(names_of(net->named_parameters()),
            (std::vector<std::string>{"features.0.weight", "features.0.bias", "block.scale",
                                      "block.fc.weight", "block.fc.bias"}));
  EXPECT_EQ(names_of(net->named_buffers()),
            (std::vector<std::string>{"block.shift", "block.count"}));
  EXPECT_EQ(net->buffers().size(), 2u);
  EXPECT_TRUE(net->buffers()[0].is_same(net->block->shift));
  EXPECT_FALSE(net->block->shift.requires_grad());
  EXPECT_EQ(names_of(net->block->named_parameters(/*recurse=*/false)),
            (std::vector<std::string>{"scale"}));

  auto children = net->named_children();
  ASSERT_EQ(children.size(), 2u);
  EXPECT_EQ(children[0].first, "features");
  EXPECT_EQ(children[1].first, "block");
  EXPECT_EQ(net->children()[1].get(), net->block.get());
  EXPECT_EQ(net->features->children().size(), 2u);

  // modules(): the module itself, then every descendant depth first, as PyTorch.
  std::vector<std::string> kinds;
  for (const auto& m : net->modules()) kinds.push_back(m->name());
  EXPECT_EQ(kinds,
            (std::vector<std::string>{"Net", "Sequential", "Linear", "ReLU", "Block", "Linear"}));
  EXPECT_EQ(net->modules()[0].get(), net.ptr().get());
}

TEST(ModuleRegistration, SharedParametersAreListedOnce) {
  // The same Linear registered twice: parameters() lists its tensors once (first name), as
  // PyTorch's named_parameters does; the state dict keeps both names.
  nn::Linear shared(2, 2);
  nn::Sequential model(shared, nn::ReLU(), shared);
  EXPECT_EQ(names_of(model->named_parameters()), (std::vector<std::string>{"0.weight", "0.bias"}));
  EXPECT_EQ(names_of(model->state_dict()),
            (std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"}));
}

TEST(ModuleRegistration, InvalidNamesAndMissingForward) {
  struct BadImpl : nn::Module {
    BadImpl() : Module("Bad") {}
    void add(const std::string& name) { register_parameter(name, zeros({1})); }
  };
  BadImpl bad;
  EXPECT_TRUE(
      throws_error([&] { bad.add("a.b"); }, ErrorKind::Value, {"can't be empty or contain"}));
  EXPECT_TRUE(throws_error([&] { bad.add(""); }, ErrorKind::Value, {"can't be empty"}));
  EXPECT_TRUE(throws_error([&] { bad.forward(zeros({1})); }, ErrorKind::NotImplemented, {"Bad"}));
}

// --- devices, dtypes, modes, gradients

TEST_P(ModuleTest, ToDeviceMovesParametersInPlace) {
  Net net;
  auto params = net->parameters();
  auto buffers = net->buffers();
  std::vector<std::vector<double>> before;
  for (const Tensor& p : params) before.push_back(testing::values_of(p));
  // Gradients move with their parameters.
  net(ones({2, 4})).sum().backward();
  ASSERT_TRUE(params[0].grad().defined());

  net->to(device());
  for (size_t i = 0; i < params.size(); ++i) {
    // The tensors handed out before the move see the new device (optimizers hold them).
    EXPECT_EQ(params[i].device(), placed());
    EXPECT_TRUE(params[i].is_same(net->parameters()[i]));
    EXPECT_EQ(testing::values_of(params[i]), before[i]);
    EXPECT_TRUE(params[i].requires_grad());
    EXPECT_TRUE(params[i].is_leaf());
    ASSERT_TRUE(params[i].grad().defined());
    EXPECT_EQ(params[i].grad().device(), placed());
  }
  for (const Tensor& b : buffers) EXPECT_EQ(b.device(), placed());
  EXPECT_TRUE(net->block->scale.is_same(params[2]));
  EXPECT_EQ(net->block->count.dtype(), kInt64);

  // The moved model computes on the device.
  Tensor y = net(ones({5, 4}, on()));
  EXPECT_EQ(y.device(), placed());
  EXPECT_EQ(y.sizes(), (Shape{5, 2}));
  // And back.
  net->to(Device(kCPU));
  EXPECT_TRUE(params[0].is_cpu());
}

TEST_P(ModuleTest, HolderToIsChainable) {
  auto model = nn::Linear(10, 1).to(device());
  EXPECT_EQ(model->weight.device(), placed());
  Tensor y = model(rand({32, 10}, on()));
  EXPECT_EQ(y.sizes(), (Shape{32, 1}));
  auto model64 = nn::Linear(3, 2).to(kFloat64);
  EXPECT_EQ(model64->weight.dtype(), kFloat64);
}

TEST_P(ModuleTest, OptimizerBuiltBeforeTheMoveStillWorks) {
  nn::Sequential model = mlp();
  optim::SGD opt(model->parameters(), {.lr = 0.1});
  model->to(device());
  Tensor loss = model(ones({3, 4}, on())).pow(2).sum();
  opt.zero_grad();
  loss.backward();
  Tensor w = model->parameters()[0];
  std::vector<double> before = testing::values_of(w);
  std::vector<double> g = testing::values_of(w.grad());
  opt.step();
  EXPECT_EQ(w.device(), placed());
  std::vector<double> after = testing::values_of(w);
  for (size_t i = 0; i < after.size(); ++i) EXPECT_NEAR(after[i], before[i] - 0.1 * g[i], 1e-6);
}

TEST_P(ModuleTest, ToDtypeConvertsFloatingTensorsOnly) {
  Block block;
  auto params = block->parameters();
  block->to(kFloat64);
  for (const Tensor& p : params) EXPECT_EQ(p.dtype(), kFloat64);
  EXPECT_EQ(block->shift.dtype(), kFloat64);
  EXPECT_EQ(block->count.dtype(), kInt64);
  Tensor y = block(ones({1, 3}, {.dtype = kFloat64}));
  EXPECT_EQ(y.dtype(), kFloat64);
  block->to(device(), kFloat32);
  for (const Tensor& p : params) {
    EXPECT_EQ(p.dtype(), kFloat32);
    EXPECT_EQ(p.device(), placed());
  }
  EXPECT_EQ(block->count.dtype(), kInt64);
  EXPECT_EQ(block->count.device(), placed());
}

TEST(ModuleModes, TrainEvalPropagateToChildren) {
  Net net;
  EXPECT_TRUE(net->is_training());
  net->eval();
  for (const auto& m : net->modules()) EXPECT_FALSE(m->is_training()) << m->name();
  net->train();
  for (const auto& m : net->modules()) EXPECT_TRUE(m->is_training()) << m->name();
  net->train(false);
  EXPECT_FALSE(net->block->fc->is_training());
  // A child switched alone does not touch its parent.
  net->train();
  net->block->eval();
  EXPECT_TRUE(net->is_training());
  EXPECT_FALSE(net->block->fc->is_training());
}

TEST_P(ModuleTest, ZeroGrad) {
  nn::Sequential model = mlp();
  model->to(device());
  model(ones({2, 4}, on())).sum().backward();
  for (const Tensor& p : model->parameters()) ASSERT_TRUE(p.grad().defined());
  // set_to_none=false keeps zero tensors.
  model->zero_grad(false);
  for (const Tensor& p : model->parameters()) {
    ASSERT_TRUE(p.grad().defined());
    EXPECT_TRUE(tensor_equal(p.grad(), zeros_like(p)));
  }
  // The default (PyTorch 2) sets them to undefined.
  model(ones({2, 4}, on())).sum().backward();
  model->zero_grad();
  for (const Tensor& p : model->parameters()) EXPECT_FALSE(p.grad().defined());
  // Backward after zero_grad gives fresh gradients (no accumulation of old ones).
  Tensor x = ones({2, 4}, on());
  model(x).sum().backward();
  Tensor g1 = model->parameters()[0].grad().clone();
  model->zero_grad();
  model(x).sum().backward();
  EXPECT_TRUE(tensor_equal(model->parameters()[0].grad(), g1));
}

// --- state dicts

TEST_P(ModuleTest, StateDictNamesAndRoundTrip) {
  Net a, b;
  // PyTorch's order: each module's parameters, then its buffers, then its children.
  EXPECT_EQ(
      names_of(a->state_dict()),
      (std::vector<std::string>{"features.0.weight", "features.0.bias", "block.scale",
                                "block.shift", "block.count", "block.fc.weight", "block.fc.bias"}));
  {
    NoGradGuard no_grad;
    a->block->shift.fill_(0.5);
    a->block->count.fill_(7);
    a->block->scale.mul_(3.0);
  }
  b->to(device());
  Tensor x = rand({3, 4});
  EXPECT_FALSE(tensor_close(b(x.to(device())).cpu(), a(x)));
  b->load_state_dict(a->state_dict());  // across devices
  for (auto& [name, t] : b->state_dict()) EXPECT_EQ(t.device(), placed()) << name;
  auto sa = a->state_dict(), sb = b->state_dict();
  for (size_t i = 0; i < sa.size(); ++i)
    EXPECT_TRUE(tensor_equal(sb[i].second.cpu(), sa[i].second)) << sa[i].first;
  EXPECT_TRUE(tensor_close(b(x.to(device())).cpu(), a(x)));
  // Loading copies values: the parameters stay the same tensors, leaves requiring grad.
  EXPECT_TRUE(b->block->fc->weight.requires_grad());
  EXPECT_TRUE(b->block->fc->weight.is_leaf());
}

TEST(ModuleStateDict, ValuesShareStorageWithoutGradient) {
  // As PyTorch's state_dict (keep_vars=False): detached tensors viewing the parameters' data.
  nn::Linear lin(2, 2);
  auto sd = lin->state_dict();
  ASSERT_EQ(sd.size(), 2u);
  EXPECT_FALSE(sd[0].second.requires_grad());
  EXPECT_EQ(sd[0].second.storage(), lin->weight.storage());
  sd[0].second.fill_(2.0);  // in place on a state-dict value, as in checkpoint averaging
  EXPECT_TRUE(tensor_equal(lin->weight.detach(), full({2, 2}, 2.0)));
}

TEST(ModuleStateDict, MissingUnexpectedAndMismatchedKeys) {
  nn::Sequential model = mlp();
  auto full_dict = model->state_dict();

  nn::StateDict missing(full_dict.begin(), full_dict.end() - 1);  // no "2.bias"
  EXPECT_TRUE(throws_error([&] { model->load_state_dict(missing); }, ErrorKind::Value,
                           {"Error(s) in loading state_dict for Sequential",
                            "Missing key(s) in state_dict: \"2.bias\""}));

  nn::StateDict unexpected = full_dict;
  unexpected.emplace_back("3.weight", zeros({1}));
  EXPECT_TRUE(throws_error([&] { model->load_state_dict(unexpected); }, ErrorKind::Value,
                           {"Unexpected key(s) in state_dict: \"3.weight\""}));

  // Non-strict loading takes what matches and skips the rest.
  nn::Sequential other = mlp();
  nn::StateDict partial(full_dict.begin(), full_dict.begin() + 2);  // 0.weight, 0.bias
  partial.emplace_back("extra", zeros({5}));
  Tensor untouched = other->parameters()[2].detach().clone();
  other->load_state_dict(partial, /*strict=*/false);
  EXPECT_TRUE(tensor_equal(other->parameters()[0].detach(), full_dict[0].second.detach()));
  EXPECT_TRUE(tensor_equal(other->parameters()[2].detach(), untouched));

  // A shape mismatch is an error either way.
  nn::StateDict wrong = full_dict;
  wrong[0].second = zeros({4, 3});
  for (bool strict : {true, false}) {
    EXPECT_TRUE(throws_error([&] { model->load_state_dict(wrong, strict); }, ErrorKind::Shape,
                             {"size mismatch for 0.weight", "[4, 3]", "[3, 4]"}));
  }
}

// --- printing

TEST(ModulePrinting, SequentialAsPyTorch) {
  nn::Sequential model(nn::Linear(784, 256), nn::ReLU(), nn::Linear(256, 10));
  const char* expected =
      "Sequential(\n"
      "  (0): Linear(in_features=784, out_features=256, bias=True)\n"
      "  (1): ReLU()\n"
      "  (2): Linear(in_features=256, out_features=10, bias=True)\n"
      ")";
  EXPECT_EQ(model->str(), expected);
  std::ostringstream os;
  os << model;
  EXPECT_EQ(os.str(), expected);
}

TEST(ModulePrinting, EveryLayerAndNesting) {
  nn::Sequential zoo(nn::Flatten(), nn::Linear(12, 8, false), nn::LeakyReLU(0.2), nn::GELU("tanh"),
                     nn::Dropout(0.25), nn::LayerNorm(Shape{8}), nn::Sigmoid(), nn::Tanh(),
                     nn::Softmax(1), nn::Embedding(10, 3, 0), nn::Identity(), nn::GELU(),
                     nn::LeakyReLU());
  EXPECT_EQ(zoo->str(),
            "Sequential(\n"
            "  (0): Flatten(start_dim=1, end_dim=-1)\n"
            "  (1): Linear(in_features=12, out_features=8, bias=False)\n"
            "  (2): LeakyReLU(negative_slope=0.2)\n"
            "  (3): GELU(approximate='tanh')\n"
            "  (4): Dropout(p=0.25, inplace=False)\n"
            "  (5): LayerNorm((8,), eps=1e-05, elementwise_affine=True)\n"
            "  (6): Sigmoid()\n"
            "  (7): Tanh()\n"
            "  (8): Softmax(dim=1)\n"
            "  (9): Embedding(10, 3, padding_idx=0)\n"
            "  (10): Identity()\n"
            "  (11): GELU(approximate='none')\n"
            "  (12): LeakyReLU(negative_slope=0.01)\n"
            ")");
  EXPECT_EQ(nn::LayerNorm(Shape{2, 3}, 1e-6, false)->str(),
            "LayerNorm((2, 3), eps=1e-06, elementwise_affine=False)");
  EXPECT_EQ(nn::Embedding(5, 4)->str(), "Embedding(5, 4)");

  Net net;
  EXPECT_EQ(net->str(),
            "Net(\n"
            "  (features): Sequential(\n"
            "    (0): Linear(in_features=4, out_features=3, bias=True)\n"
            "    (1): ReLU()\n"
            "  )\n"
            "  (block): Block(\n"
            "    (fc): Linear(in_features=3, out_features=2, bias=True)\n"
            "  )\n"
            ")");
  nn::Sequential nested(nn::Sequential(nn::Linear(2, 2)), nn::ReLU());
  EXPECT_EQ(nested->str(),
            "Sequential(\n"
            "  (0): Sequential(\n"
            "    (0): Linear(in_features=2, out_features=2, bias=True)\n"
            "  )\n"
            "  (1): ReLU()\n"
            ")");
}

// --- layers' forward values

class LayerTest : public testing::DeviceTest {
 protected:
  Tensor f32(const NestedValues& v) const { return tensor(v, on(kFloat32)); }
  Tensor f64(const NestedValues& v, bool requires_grad = false) const {
    return tensor(v, {.dtype = kFloat64, .device = device(), .requires_grad = requires_grad});
  }
  ::testing::AssertionResult grad_ok(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                                     const std::vector<Tensor>& inputs) const {
    try {
      if (!autograd::gradcheck(f, inputs)) return ::testing::AssertionFailure() << "false";
    } catch (const std::exception& e) {
      return ::testing::AssertionFailure() << e.what();
    }
    return ::testing::AssertionSuccess();
  }
};

TEST_P(LayerTest, LinearComputesXWtPlusB) {
  nn::Linear lin(3, 2);
  {
    NoGradGuard no_grad;
    lin->weight.copy_(tensor({{1.0, 0.0, -1.0}, {0.5, 0.5, 0.5}}));
    lin->bias.copy_(tensor({0.1, -0.2}));
  }
  lin->to(device());
  // By hand: [1, 2, 3] -> [1 - 3 + 0.1, 3 - 0.2]; [0, -2, 4] -> [-4 + 0.1, 1 - 0.2].
  EXPECT_TRUE(
      tensor_close(lin(f32({{1.0, 2.0, 3.0}, {0.0, -2.0, 4.0}})), f32({{-1.9, 2.8}, {-3.9, 0.8}})));
  // Any leading dims, and a 1-D input.
  Tensor y3 = lin(f32({{{1.0, 2.0, 3.0}}, {{0.0, -2.0, 4.0}}}));
  EXPECT_TRUE(tensor_close(y3, f32({{{-1.9, 2.8}}, {{-3.9, 0.8}}})));
  EXPECT_TRUE(tensor_close(lin(f32({1.0, 2.0, 3.0})), f32({-1.9, 2.8})));
  EXPECT_TRUE(throws_error([&] { lin(f32({{1.0, 2.0}})); }, ErrorKind::Shape, {"in_features=3"}));

  nn::Linear no_bias(3, 2, false);
  EXPECT_EQ(no_bias->parameters().size(), 1u);
  EXPECT_FALSE(no_bias->bias.defined());
  no_bias->to(device());
  EXPECT_TRUE(tensor_close(no_bias(zeros({1, 3}, on())), zeros({1, 2}, on())));
  // The gradient of sum(Linear(x)) w.r.t. the weight is x summed over the batch (by hand).
  lin(f32({{1.0, 2.0, 3.0}, {0.0, -2.0, 4.0}})).sum().backward();
  EXPECT_TRUE(tensor_close(lin->weight.grad(), f32({{1.0, 0.0, 7.0}, {1.0, 0.0, 7.0}})));
  EXPECT_TRUE(tensor_close(lin->bias.grad(), f32({2.0, 2.0})));
}

TEST_P(LayerTest, Activations) {
  Tensor x = f32({-2.0, -0.5, 0.0, 0.5, 3.0});
  EXPECT_TRUE(tensor_equal(nn::ReLU()(x), f32({0.0, 0.0, 0.0, 0.5, 3.0})));
  EXPECT_TRUE(tensor_close(nn::LeakyReLU()(x), f32({-0.02, -0.005, 0.0, 0.5, 3.0})));
  EXPECT_TRUE(tensor_close(nn::LeakyReLU(0.2)(x), f32({-0.4, -0.1, 0.0, 0.5, 3.0})));
  // By hand with <cmath>: sigmoid = 1 / (1 + e^-x), tanh.
  std::vector<double> xs = {-2.0, -0.5, 0.0, 0.5, 3.0}, sig, th;
  for (double v : xs) {
    sig.push_back(1 / (1 + std::exp(-v)));
    th.push_back(std::tanh(v));
  }
  EXPECT_TRUE(tensor_close(nn::Sigmoid()(x), from_vector(sig, std::nullopt, on(kFloat32))));
  EXPECT_TRUE(tensor_close(nn::Tanh()(x), from_vector(th, std::nullopt, on(kFloat32))));
  EXPECT_TRUE(tensor_equal(nn::Identity()(x), x));
  EXPECT_TRUE(nn::Identity()(x).is_same(x));
}

TEST_P(LayerTest, GeluExactAndTanh) {
  Tensor x = f64({-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0});
  EXPECT_TRUE(tensor_close(nn::GELU()(x),
                           f64({-0.00404969409489031, -0.15865525393145707, -0.15426876936299344,
                                0.0, 0.34573123063700656, 0.8413447460685429, 1.9544997361036416}),
                           1e-10, 1e-12));
  EXPECT_TRUE(tensor_close(nn::GELU("tanh")(x),
                           f64({-0.0036373920817729943, -0.15880800939172324, -0.15428599017485606,
                                0.0, 0.34571400982514394, 0.8411919906082768, 1.954597694087775}),
                           1e-10, 1e-12));
}

TEST_P(LayerTest, SoftmaxAlongItsDim) {
  Tensor x = f32({{1.0, 2.0, 3.0}, {1.0, 1.0, 1.0}});
  // By hand: e^k / (e + e^2 + e^3) for row 0; 1/3 each for row 1.
  double s = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  EXPECT_TRUE(tensor_close(nn::Softmax(1)(x),
                           f32({{std::exp(1.0) / s, std::exp(2.0) / s, std::exp(3.0) / s},
                                {1.0 / 3, 1.0 / 3, 1.0 / 3}})));
  // dim 0: columns; by hand (e^1, e^1) -> 1/2, (e^2, e^1) -> e/(e+1), (e^3, e^1) -> e^2/(e^2+1).
  double e = std::exp(1.0);
  EXPECT_TRUE(tensor_close(nn::Softmax(0)(x), f32({{0.5, e / (e + 1), e * e / (e * e + 1)},
                                                   {0.5, 1 / (e + 1), 1 / (e * e + 1)}})));
  EXPECT_TRUE(tensor_close(nn::Softmax(-1)(x).sum({1}), f32({1.0, 1.0})));
}

TEST_P(LayerTest, DropoutTrainScalesAndZeroes) {
  manual_seed(7);
  nn::Dropout drop(0.3);
  Tensor x = ones({200000}, on());
  Tensor y = drop(x);
  std::vector<double> v = testing::values_of(y);
  const double kept = static_cast<double>(1.0f * static_cast<float>(1.0 / 0.7));
  int64_t zeros_count = 0, other = 0;
  for (double e : v) {
    if (e == 0)
      ++zeros_count;
    else if (e != kept)
      ++other;
  }
  EXPECT_EQ(other, 0) << "kept elements must be scaled by exactly 1 / (1 - p)";
  double frac = static_cast<double>(zeros_count) / static_cast<double>(v.size());
  EXPECT_NEAR(frac, 0.3, 0.01);
  EXPECT_NEAR(y.mean().item<double>(), 1.0, 0.015);  // unbiased in expectation
  // The gradient is the same mask and scale.
  Tensor xg = ones({1000}, on()).requires_grad_();
  Tensor yg = drop(xg);
  yg.sum().backward();
  EXPECT_TRUE(tensor_equal(xg.grad(), yg.detach()));
  // The same seed gives the same mask.
  manual_seed(7);
  EXPECT_TRUE(tensor_equal(drop(x), y));
}

TEST_P(LayerTest, DropoutEvalAndEdgeProbabilities) {
  Tensor x = f32({1.0, -2.0, 3.0, 4.0});
  nn::Dropout drop(0.5);
  drop->eval();
  EXPECT_TRUE(tensor_equal(drop(x), x));
  nn::Dropout none(0.0);
  EXPECT_TRUE(tensor_equal(none(x), x));
  nn::Dropout all(1.0);
  EXPECT_TRUE(tensor_equal(all(x), zeros({4}, on())));
  all->eval();
  EXPECT_TRUE(tensor_equal(all(x), x));
  // Inside a Sequential, eval() reaches it.
  nn::Sequential seq(nn::Identity(), nn::Dropout(0.9));
  seq->eval();
  EXPECT_TRUE(tensor_equal(seq(x), x));
  EXPECT_TRUE(throws_error([] { nn::Dropout(1.5); }, ErrorKind::Value, {"between 0 and 1"}));
  EXPECT_TRUE(throws_error([] { nn::Dropout(-0.1); }, ErrorKind::Value, {"between 0 and 1"}));
  EXPECT_TRUE(throws_error([&] { F::dropout(x, 2.0); }, ErrorKind::Value, {"between 0 and 1"}));
}

TEST_P(LayerTest, Flatten) {
  Tensor x = arange(24, on(kFloat32)).reshape({2, 3, 4});
  Tensor y = nn::Flatten()(x);
  EXPECT_EQ(y.sizes(), (Shape{2, 12}));
  EXPECT_TRUE(tensor_equal(y, arange(24, on(kFloat32)).reshape({2, 12})));
  EXPECT_EQ(nn::Flatten(0)(x).sizes(), (Shape{24}));
  EXPECT_EQ(nn::Flatten(0, 1)(x).sizes(), (Shape{6, 4}));
  EXPECT_EQ(nn::Flatten(1, 2)(x.reshape({2, 3, 2, 2})).sizes(), (Shape{2, 6, 2}));
}

TEST_P(LayerTest, LayerNormMatchesItsDefinition) {
  Tensor x = f64({{1.0, 2.0, 3.0, 4.0}, {-1.0, 0.0, 2.0, 5.0}});
  nn::LayerNorm ln(Shape{4});
  EXPECT_EQ(names_of(ln->named_parameters()), (std::vector<std::string>{"weight", "bias"}));
  EXPECT_TRUE(tensor_equal(ln->weight.detach(), ones({4})));
  EXPECT_TRUE(tensor_equal(ln->bias.detach(), zeros({4})));
  ln->to(device(), kFloat64);
  // (x - mean) / sqrt(biased var + 1e-5), per row.
  EXPECT_TRUE(tensor_close(
      ln(x),
      f64({{-1.3416354199689269, -0.447211806656309, 0.447211806656309, 1.3416354199689269},
           {-1.0910884120486357, -0.6546530472291815, 0.21821768240972714, 1.52752377686809}}),
      1e-10, 1e-12));
  {
    NoGradGuard no_grad;
    ln->weight.copy_(tensor({1.0, 0.5, 2.0, -1.0}, {.dtype = kFloat64}));
    ln->bias.copy_(tensor({0.0, 0.1, -0.2, 0.3}, {.dtype = kFloat64}));
  }
  EXPECT_TRUE(tensor_close(
      ln(x),
      f64({{-1.3416354199689269, -0.12360590332815449, 0.694423613312618, -1.0416354199689268},
           {-1.0910884120486357, -0.22732652361459074, 0.23643536481945426, -1.22752377686809}}),
      1e-10, 1e-12));
  // Over the last two dims, without affine parameters, eps 0.1.
  nn::LayerNorm ln2(Shape{2, 2}, 0.1, false);
  EXPECT_TRUE(ln2->parameters().empty());
  EXPECT_TRUE(tensor_close(
      ln2(x.reshape({2, 2, 2})),
      f64({{{-1.2909944487358056, -0.4303314829119352}, {0.4303314829119352, 1.2909944487358056}},
           {{-1.0808442529177924, -0.6485065517506754},
            {0.21616885058355848, 1.5131819540849094}}}),
      1e-10, 1e-12));
  EXPECT_TRUE(throws_error(
      [&] {
        ln(f64({{1.0, 2.0, 3.0}}));
      },
      ErrorKind::Shape, {"normalized_shape"}));
}

TEST_P(LayerTest, LayerNormGradcheck) {
  Tensor x = f64({{1.0, 2.0, 3.0, 4.0}, {-1.0, 0.0, 2.0, 5.0}, {0.3, -0.7, 0.1, 0.2}}, true);
  Tensor w = f64({1.0, 0.5, 2.0, -1.0}, true), b = f64({0.0, 0.1, -0.2, 0.3}, true);
  EXPECT_TRUE(
      grad_ok([](const std::vector<Tensor>& in) { return F::layer_norm(in[0], {4}, in[1], in[2]); },
              {x, w, b}));
  EXPECT_TRUE(grad_ok(
      [](const std::vector<Tensor>& in) {
        return F::layer_norm(in[0].reshape({3, 2, 2}), {2, 2}, Tensor(), Tensor(), 0.1);
      },
      {x}));
}

TEST_P(LayerTest, LinearIsOneNodeWithPyTorchsGradients) {
  // F::linear on 2-D input is one AddmmBackward0 node (MmBackward0 without bias); its gradients
  // must match finite differences and the composite x @ w^T + b, for every subset of inputs that
  // requires grad.
  Tensor x = f64({{0.5, -1.0, 2.0}, {1.5, 0.25, -0.75}, {0.0, 1.0, 1.0}, {-2.0, 0.5, 0.125}}, true);
  Tensor w = f64({{0.1, -0.2, 0.3}, {0.4, 0.5, -0.6}}, true), b = f64({0.7, -0.8}, true);
  Tensor y = F::linear(x, w, b);
  ASSERT_NE(y.grad_fn(), nullptr);
  EXPECT_EQ(y.grad_fn()->name(), "AddmmBackward0");
  EXPECT_EQ(F::linear(x, w, Tensor()).grad_fn()->name(), "MmBackward0");
  EXPECT_TRUE(tensor_close(y, matmul(x, w.t()) + b, 1e-12, 1e-12));
  EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return F::linear(in[0], in[1], in[2]); },
                      {x, w, b}));
  EXPECT_TRUE(grad_ok(
      [](const std::vector<Tensor>& in) { return F::linear(in[0], in[1], Tensor()); }, {x, w}));
  // Only the weight requires grad: x and b get none, w gets g^T x.
  Tensor xc = x.detach(), bc = b.detach();
  Tensor g = f64({{1.0, 2.0}, {0.5, -1.0}, {0.0, 3.0}, {-1.0, 1.0}});
  Tensor wl = w.detach().requires_grad_();
  F::linear(xc, wl, bc).backward(g);
  EXPECT_TRUE(tensor_close(wl.grad(), mm(g.t(), xc), 1e-12, 1e-12));
  EXPECT_FALSE(xc.grad().defined());
  // Higher-rank input goes through matmul and still broadcasts the bias.
  Tensor x3 = x.detach().reshape({2, 2, 3}).requires_grad_();
  EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return F::linear(in[0], in[1], in[2]); },
                      {x3, w, b}));
  EXPECT_TRUE(throws_error(
      [&] {
        F::linear(f64({{1.0, 2.0}}), w, b);
      },
      ErrorKind::Shape, {"cannot be multiplied", "1x2 and 3x2"}));
}

TEST_P(LayerTest, EmbeddingLooksUpRows) {
  manual_seed(3);
  nn::Embedding emb(10, 3);
  EXPECT_EQ(emb->weight.sizes(), (Shape{10, 3}));
  emb->to(device());
  Tensor idx = tensor({{1, 2}, {4, 1}}, on(kInt64));
  Tensor out = emb(idx);
  EXPECT_EQ(out.sizes(), (Shape{2, 2, 3}));
  Tensor w = emb->weight.detach();
  EXPECT_TRUE(tensor_equal(out[0][0].detach(), w[1]));
  EXPECT_TRUE(tensor_equal(out[0][1].detach(), w[2]));
  EXPECT_TRUE(tensor_equal(out[1][0].detach(), w[4]));
  EXPECT_TRUE(tensor_equal(out[1][1].detach(), w[1]));
  EXPECT_TRUE(tensor_equal(emb(tensor({4, 1}, on(kInt32))).detach(), out[1].detach()));
  // Gradients accumulate per row (row 1 is used twice).
  out.sum().backward();
  EXPECT_TRUE(tensor_equal(emb->weight.grad(), f32({{0.0, 0.0, 0.0},
                                                    {2.0, 2.0, 2.0},
                                                    {1.0, 1.0, 1.0},
                                                    {0.0, 0.0, 0.0},
                                                    {1.0, 1.0, 1.0},
                                                    {0.0, 0.0, 0.0},
                                                    {0.0, 0.0, 0.0},
                                                    {0.0, 0.0, 0.0},
                                                    {0.0, 0.0, 0.0},
                                                    {0.0, 0.0, 0.0}})));
  // Weight ~ N(0, 1) (PyTorch's default): a rough check over a large table.
  nn::Embedding big(1000, 100);
  EXPECT_NEAR(big->weight.detach().mean().item<double>(), 0.0, 0.01);
  EXPECT_NEAR(big->weight.detach().std().item<double>(), 1.0, 0.01);
  EXPECT_TRUE(throws_error([&] { emb(f32({1.0})); }, ErrorKind::DType, {"int64"}));
}

TEST_P(LayerTest, EmbeddingPaddingRowGetsNoGradient) {
  nn::Embedding emb(5, 2, 0);
  EXPECT_TRUE(tensor_equal(emb->weight.detach()[0], zeros({2})));
  emb->to(device());
  Tensor idx = tensor({{0, 1}, {1, 4}, {0, 0}}, on(kInt64));
  Tensor out = emb(idx);
  EXPECT_TRUE(tensor_equal(out[0][0].detach(), zeros({2}, on())));
  (out * 3.0).sum().backward();
  EXPECT_TRUE(tensor_equal(emb->weight.grad(),
                           f32({{0.0, 0.0}, {6.0, 6.0}, {0.0, 0.0}, {0.0, 0.0}, {3.0, 3.0}})));
  // A negative padding_idx counts from the end.
  nn::Embedding last(5, 2, -1);
  EXPECT_EQ(last->padding_idx, 4);
  EXPECT_TRUE(tensor_equal(last->weight.detach()[4], zeros({2})));
  EXPECT_TRUE(throws_error([] { nn::Embedding(5, 2, 5); }, ErrorKind::Value, {"padding_idx"}));
}

TEST_P(LayerTest, SequentialRunsChildrenInOrder) {
  nn::Linear a(2, 2), b(2, 1);
  {
    NoGradGuard no_grad;
    a->weight.copy_(tensor({{1.0, -1.0}, {2.0, 0.0}}));
    a->bias.copy_(tensor({0.0, -5.0}));
    b->weight.copy_(tensor({{1.0, 1.0}}));
    b->bias.copy_(tensor({0.5}));
  }
  nn::Sequential seq(a, nn::ReLU(), b);
  seq->to(device());
  // By hand: x = [3, 1] -> a: [2, 1] -> relu: [2, 1] -> b: 3.5; x = [1, 2] -> [-1, -3] -> 0 -> 0.5.
  EXPECT_TRUE(tensor_close(seq(f32({{3.0, 1.0}, {1.0, 2.0}})), f32({{3.5}, {0.5}})));
  nn::Sequential empty;
  EXPECT_TRUE(tensor_equal(empty(f32({1.0})), f32({1.0})));
  empty->push_back(nn::ReLU());
  EXPECT_EQ(empty->size(), 1u);
  EXPECT_TRUE(tensor_equal(empty(f32({-1.0})), f32({0.0})));
}

// --- initialisation

class InitTest : public testing::DeviceTest {
 protected:
  struct Stats {
    double min, max, mean, var;
  };
  static Stats stats(const Tensor& t) {
    std::vector<double> v = testing::values_of(t);
    Stats s{v[0], v[0], 0, 0};
    for (double e : v) {
      s.min = std::min(s.min, e);
      s.max = std::max(s.max, e);
      s.mean += e;
    }
    s.mean /= static_cast<double>(v.size());
    for (double e : v) s.var += (e - s.mean) * (e - s.mean);
    s.var /= static_cast<double>(v.size());
    return s;
  }
  // Uniform in [-bound, bound]: every value inside, mean ~0, variance ~bound^2 / 3, and half
  // the values within bound / 2.
  static void expect_uniform(const Tensor& t, double bound) {
    Stats s = stats(t);
    EXPECT_GE(s.min, -bound);
    EXPECT_LE(s.max, bound);
    EXPECT_GT(s.max, 0.99 * bound);
    EXPECT_LT(s.min, -0.99 * bound);
    EXPECT_NEAR(s.mean, 0.0, 0.02 * bound);
    EXPECT_NEAR(s.var, bound * bound / 3, 0.03 * bound * bound / 3);
    double inner = (abs(t) < bound / 2).to(kFloat64).mean().item<double>();
    EXPECT_NEAR(inner, 0.5, 0.02);
  }
  static void expect_normal(const Tensor& t, double mean, double std) {
    Stats s = stats(t);
    EXPECT_NEAR(s.mean, mean, 0.03 * std);
    EXPECT_NEAR(std::sqrt(s.var), std, 0.03 * std);
    double within = (abs(t - mean) < std).to(kFloat64).mean().item<double>();
    EXPECT_NEAR(within, 0.6827, 0.02);  // P(|z| < 1) for a normal
  }
};

TEST_P(InitTest, LinearDefaultInitIsKaimingUniformWithASqrt5) {
  // PyTorch's nn.Linear.reset_parameters: kaiming_uniform_(weight, a=sqrt(5)), whose gain
  // sqrt(2 / (1 + 5)) times sqrt(3) / sqrt(fan_in) makes the bound 1/sqrt(in_features); the bias is
  // uniform(-1/sqrt(in_features), 1/sqrt(in_features)).
  manual_seed(11);
  nn::Linear lin(1000, 400);
  lin->to(device());
  double bound = 1 / std::sqrt(1000.0);
  expect_uniform(lin->weight.detach(), bound);
  Stats b = stats(lin->bias.detach());
  EXPECT_GE(b.min, -bound);
  EXPECT_LE(b.max, bound);
  EXPECT_NEAR(b.var, bound * bound / 3, 0.25 * bound * bound / 3);  // only 400 values
  // A small layer's bound is larger: 1/sqrt(4).
  nn::Linear small(4, 3);
  Stats s = stats(small->weight.detach());
  EXPECT_LE(std::max(-s.min, s.max), 0.5);
  // Two layers differ (fresh random draws).
  nn::Linear other(1000, 400);
  EXPECT_FALSE(tensor_equal(other->weight.detach(), lin->weight.detach().cpu()));
}

TEST_P(InitTest, UniformNormalConstant) {
  manual_seed(5);
  Tensor t = empty({300, 400}, on());
  nn::init::uniform_(t, -2.0, 3.0);
  Stats s = stats(t);
  EXPECT_GE(s.min, -2.0);
  EXPECT_LT(s.max, 3.0);
  EXPECT_NEAR(s.mean, 0.5, 0.02);
  EXPECT_NEAR(s.var, 25.0 / 12, 0.03 * 25.0 / 12);
  nn::init::normal_(t, 1.0, 2.0);
  expect_normal(t, 1.0, 2.0);
  nn::init::zeros_(t);
  EXPECT_TRUE(tensor_equal(t, zeros({300, 400}, on())));
  nn::init::ones_(t);
  EXPECT_TRUE(tensor_equal(t, ones({300, 400}, on())));
  nn::init::constant_(t, -1.5);
  EXPECT_TRUE(tensor_equal(t, full({300, 400}, -1.5, on())));
  // The default uniform_ range is [0, 1).
  nn::init::uniform_(t);
  s = stats(t);
  EXPECT_GE(s.min, 0.0);
  EXPECT_LT(s.max, 1.0);
}

TEST_P(InitTest, SkipInitGuardLeavesValuesAsTheyAre) {
  Tensor t = full({4, 5}, 7.0, on());
  {
    nn::init::SkipInitGuard skip;
    EXPECT_TRUE(nn::init::SkipInitGuard::active());
    nn::init::kaiming_uniform_(t);
    nn::init::normal_(t);
    nn::init::zeros_(t);
    EXPECT_TRUE(tensor_equal(t, full({4, 5}, 7.0, on())));
  }
  EXPECT_FALSE(nn::init::SkipInitGuard::active());
  nn::init::zeros_(t);
  EXPECT_TRUE(tensor_equal(t, zeros({4, 5}, on())));
}

TEST_P(InitTest, InitOfAParameterRecordsNoGraph) {
  Tensor p = empty({20, 30}, on()).requires_grad_();
  nn::init::kaiming_uniform_(p);
  nn::init::zeros_(p);
  nn::init::xavier_normal_(p);
  EXPECT_TRUE(p.is_leaf());
  EXPECT_TRUE(p.requires_grad());
  EXPECT_EQ(p.grad_fn(), nullptr);
  EXPECT_FALSE(p.grad().defined());
}

TEST_P(InitTest, KaimingUsesGainOverSqrtFan) {
  manual_seed(17);
  // (out=400, in=250): fan_in 250, fan_out 400. Default: leaky_relu with a = 0, gain sqrt(2):
  // std = sqrt(2 / fan_in), uniform bound = sqrt(3) * std.
  Tensor w = empty({400, 250}, on());
  nn::init::kaiming_uniform_(w);
  expect_uniform(w, std::sqrt(3.0) * std::sqrt(2.0) / std::sqrt(250.0));
  nn::init::kaiming_uniform_(w, std::sqrt(5.0));
  expect_uniform(w, 1 / std::sqrt(250.0));
  nn::init::kaiming_normal_(w);
  expect_normal(w, 0, std::sqrt(2.0 / 250));
  nn::init::kaiming_normal_(w, 0, nn::init::FanMode::FanOut, nn::init::Nonlinearity::ReLU);
  expect_normal(w, 0, std::sqrt(2.0) / std::sqrt(400.0));
  nn::init::kaiming_normal_(w, 0, nn::init::FanMode::FanIn, nn::init::Nonlinearity::Tanh);
  expect_normal(w, 0, (5.0 / 3) / std::sqrt(250.0));
  // Conv-shaped (out=64, in=16, 3, 3): fan_in = 16 * 9, fan_out = 64 * 9.
  Tensor conv = empty({64, 16, 3, 3}, on());
  nn::init::kaiming_normal_(conv);
  expect_normal(conv, 0, std::sqrt(2.0 / 144));
  nn::init::kaiming_uniform_(conv, 0, nn::init::FanMode::FanOut);
  expect_uniform(conv, std::sqrt(3.0) * std::sqrt(2.0 / 576));
}

TEST_P(InitTest, XavierUsesBothFans) {
  manual_seed(19);
  // (300, 200): fan_in 200, fan_out 300. bound = gain sqrt(6 / (in + out)); std = gain
  // sqrt(2 / (in + out)).
  Tensor w = empty({300, 200}, on());
  nn::init::xavier_uniform_(w);
  expect_uniform(w, std::sqrt(6.0 / 500));
  nn::init::xavier_uniform_(w, 2.0);
  expect_uniform(w, 2.0 * std::sqrt(6.0 / 500));
  nn::init::xavier_normal_(w);
  expect_normal(w, 0, std::sqrt(2.0 / 500));
  nn::init::xavier_normal_(w, nn::init::calculate_gain(nn::init::Nonlinearity::Tanh));
  expect_normal(w, 0, 5.0 / 3 * std::sqrt(2.0 / 500));
  Tensor conv = empty({64, 16, 3, 3}, on());
  nn::init::xavier_uniform_(conv);
  expect_uniform(conv, std::sqrt(6.0 / (144 + 576)));
}

TEST_P(InitTest, FansNeedTwoDims) {
  Tensor v = empty({10}, on());
  for (auto f : {+[](Tensor t) { nn::init::kaiming_uniform_(t); },
                 +[](Tensor t) { nn::init::kaiming_normal_(t); },
                 +[](Tensor t) { nn::init::xavier_uniform_(t); },
                 +[](Tensor t) { nn::init::xavier_normal_(t); }}) {
    EXPECT_TRUE(
        throws_error([&] { f(v); }, ErrorKind::Shape, {"Fan in and fan out can not be computed"}));
  }
}

TEST(Init, CalculateGainAsPyTorch) {
  using nn::init::calculate_gain;
  using nn::init::Nonlinearity;
  EXPECT_DOUBLE_EQ(calculate_gain(Nonlinearity::Linear), 1.0);
  EXPECT_DOUBLE_EQ(calculate_gain(Nonlinearity::Sigmoid), 1.0);
  EXPECT_DOUBLE_EQ(calculate_gain(Nonlinearity::Tanh), 5.0 / 3);
  EXPECT_DOUBLE_EQ(calculate_gain(Nonlinearity::ReLU), std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(calculate_gain(Nonlinearity::LeakyReLU), std::sqrt(2.0 / (1 + 0.01 * 0.01)));
  EXPECT_DOUBLE_EQ(calculate_gain(Nonlinearity::LeakyReLU, 0.2), std::sqrt(2.0 / 1.04));
  EXPECT_DOUBLE_EQ(calculate_gain(Nonlinearity::LeakyReLU, std::sqrt(5.0)), std::sqrt(1.0 / 3));
}

EMBER_INSTANTIATE_DEVICE_TESTS(ModuleTest);
EMBER_INSTANTIATE_DEVICE_TESTS(LayerTest);
EMBER_INSTANTIATE_DEVICE_TESTS(InitTest);

}  // namespace
}  // namespace ember
