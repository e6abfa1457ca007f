// tests/test_optim.cpp: the optimizers and learning-rate schedules of ember/optim -- SGD (plain,
// momentum, dampening, Nesterov, weight decay, maximize), Adam, AdamW and amsgrad reproducing
// PyTorch's parameters step by step; parameter groups, zero_grad, state dicts that resume
// exactly, option checks; StepLR, MultiStepLR, ExponentialLR, CosineAnnealingLR, LinearLR and
// OneCycleLR (which also cycles SGD's momentum and Adam's beta1).
//
// Every expected trajectory and learning-rate sequence below was printed by
// tests/reference/optim_reference.py, a numpy implementation of PyTorch's documented update rules
// and schedule formulas, independent of ember. The parameter starts at [1, -2, 3] and before each
// step gets the gradient 0.2 p^3 + p - [0.5, -1, 2] of its current value.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "test_util.h"

namespace ember {
namespace {

using testing::tensor_close;
using testing::tensor_equal;
using testing::throws_error;
using Trajectory = std::vector<std::vector<double>>;

class OptimTest : public testing::DeviceTest {
 public:
  Tensor initial(DType dtype = kFloat64) const {
    return tensor({1.0, -2.0, 3.0}, on(dtype)).requires_grad_();
  }
  // The reference gradient, as optim_reference.py's grad_of: 0.2 p^3 + p - C.
  void set_grad(const Tensor& p) const {
    NoGradGuard no_grad;
    Tensor d = p.detach();
    Tensor c = tensor({0.5, -1.0, 2.0}, on(p.dtype())).view(p.sizes());
    const_cast<Tensor&>(p).mutable_grad() = 0.2 * d * d * d + d - c;
  }
  // The parameter after each of `steps` steps of `opt` over `params` (all updated alike).
  Trajectory run(optim::Optimizer& opt, const Tensor& p, int steps = 4) const {
    Trajectory out;
    for (int i = 0; i < steps; ++i) {
      set_grad(p);
      opt.step();
      out.push_back(testing::values_of(p));
    }
    return out;
  }
  static ::testing::AssertionResult same_trajectory(const Trajectory& actual,
                                                    const Trajectory& expected, double rtol) {
    if (actual.size() != expected.size()) return ::testing::AssertionFailure() << "length";
    for (size_t s = 0; s < actual.size(); ++s)
      for (size_t i = 0; i < actual[s].size(); ++i)
        if (!(std::abs(actual[s][i] - expected[s][i]) <= rtol * std::abs(expected[s][i]) + 1e-12))
          return ::testing::AssertionFailure() << "step " << s + 1 << " element " << i << ": "
                                               << actual[s][i] << " vs expected " << expected[s][i];
    return ::testing::AssertionSuccess();
  }
};

// --- SGD

struct SgdCase {
  const char* name;
  optim::SGDOptions options;
  Trajectory expected;
};

const std::vector<SgdCase>& sgd_cases() {
  static const std::vector<SgdCase> cases = {
      {"plain",
       {.lr = 0.1},
       {{0.93, -1.74, 2.36},
        {0.87091286, -1.56063952, 2.06111488},
        {0.8206100138617877, -1.428553829561375, 1.8798830520566685},
        {0.7774970237636769, -1.327391563658638, 1.7590261057569427}}},
      {"momentum",
       {.lr = 0.1, .momentum = 0.9},
       {{0.93, -1.74, 2.36},
        {0.8079128600000001, -1.3266395199999998, 1.4851148799999998},
        {0.6566962788260238, -0.8752541567758049, 0.6836964001491999},
        {0.4992677224475056, -0.4680717979779595, 0.08765837686705269}}},
      {"dampening",
       {.lr = 0.1, .momentum = 0.9, .dampening = 0.5},
       {{0.93, -1.74, 2.36},
        {0.83745643, -1.41631976, 1.6345574399999998},
        {0.7314210349166643, -1.0757807245950466, 0.9562595175176453},
        {0.6205051952583696, -0.7530565013429017, 0.3892340658438298}}},
      {"nesterov",
       {.lr = 0.1, .momentum = 0.9, .nesterov = true},
       {{0.867, -1.506, 1.7839999999999998},
        {0.715804854206, -1.069464835792, 1.0908813844479996},
        {0.5695502165336342, -0.7239249690461815, 0.6732380406157594},
        {0.4437099602697268, -0.4792462372876779, 0.4793947415610791}}},
      {"weight_decay",
       {.lr = 0.1, .momentum = 0.9, .weight_decay = 0.1},
       {{0.92, -1.72, 2.33},
        {0.7812262400000001, -1.2770310399999998, 1.41771326},
        {0.6108590965266626, -0.7962337057964877, 0.583717189065194},
        {0.43577533956847625, -0.36583434326296616, -0.03506591519344959}}},
      {"maximize",
       {.lr = 0.01, .momentum = 0.5, .maximize = true},
       {{1.007, -2.026, 3.064},
        {1.0176122946859998, -2.0658921471519998, 3.164170252288},
        {1.0302021108279389, -2.1141312272096053, 3.289256257660851},
        {1.0439857807759139, -2.1682905135401835, 3.4358661097935763}}},
      // maximize negates the gradient before weight decay is added (torch/optim/sgd.py).
      {"maximize_weight_decay",
       {.lr = 0.01, .weight_decay = 0.1, .maximize = true},
       {{1.006, -2.024, 3.061},
        {1.012090216432, -2.048798939648, 3.125910431962},
        {1.0182724502530147, -2.0744381131079064, 3.19513214326556},
        {1.02454855250314, -2.100961888160699, 3.269125706170249}}},
  };
  return cases;
}

TEST_P(OptimTest, SgdMatchesPyTorch) {
  for (const SgdCase& c : sgd_cases()) {
    SCOPED_TRACE(c.name);
    Tensor p = initial();
    optim::SGD opt({p}, c.options);
    EXPECT_TRUE(same_trajectory(run(opt, p), c.expected, 1e-12));
  }
}

TEST_P(OptimTest, SgdMatchesPyTorchInFloat32) {
  for (const SgdCase& c : sgd_cases()) {
    SCOPED_TRACE(c.name);
    Tensor p = initial(kFloat32);
    optim::SGD opt({p}, c.options);
    EXPECT_TRUE(same_trajectory(run(opt, p), c.expected, 1e-5));
    EXPECT_EQ(p.dtype(), kFloat32);
  }
}

// --- Adam and AdamW

struct AdamCase {
  const char* name;
  optim::AdamOptions options;
  Trajectory expected;
};

const std::vector<AdamCase>& adam_cases() {
  static const std::vector<AdamCase> cases = {
      {"default",
       {.lr = 0.1},
       {{0.9000000014285714, -1.9000000003846154, 2.90000000015625},
        {0.8013978404672779, -1.8005765763073918, 2.800396290786451},
        {0.7055460677313004, -1.7021666870717018, 2.7014778663198205},
        {0.614170180664483, -1.6052410369266876, 2.6035488458065945}}},
      {"betas_eps",
       {.lr = 0.1, .betas = {0.8, 0.99}, .eps = 1e-3},
       {{0.9001426533523538, -1.9000384467512494, 2.9000156225589753},
        {0.8023564108119523, -1.8010181501490905, 2.800703578508549},
        {0.7085097539802089, -1.7036268717288654, 2.702540279289083},
        {0.6208413561272756, -1.6085772817296453, 2.606010633420053}}},
      {"weight_decay",
       {.lr = 0.1, .weight_decay = 0.5},
       {{0.9000000008333333, -1.9000000002777777, 2.900000000126582},
        {0.8009124053892821, -1.800441915337017, 2.8003300020448845},
        {0.7035505768921202, -1.7016507438881028, 2.7012258990086613},
        {0.6089114888311739, -1.6039709453823903, 2.6029328595795014}}},
      // beta2 = 0.5 lets exp_avg_sq fall below its running maximum, so amsgrad changes the result.
      {"amsgrad",
       {.lr = 0.5, .betas = {0.9, 0.5}, .amsgrad = true},
       {{0.5000000071428571, -1.5000000019230768, 2.50000000078125},
        {0.19841809481722522, -1.0642734626318326, 2.027375387271426},
        {0.0974832992768373, -0.73863602869868, 1.640653935306307},
        {0.13781194899666022, -0.513423775622208, 1.340460864746567}}},
      {"amsgrad_weight_decay",
       {.lr = 0.5, .betas = {0.9, 0.5}, .weight_decay = 0.5, .amsgrad = true},
       {{0.5000000041666666, -1.5000000013888888, 2.5000000006329115},
        {0.13606814183810872, -1.037587191150243, 2.0110403982031504},
        {-0.051889638810139055, -0.6695595915820278, 1.5961254424211626},
        {-0.09400159317624038, -0.3958268503631892, 1.261103626586693}}},
      {"maximize",
       {.lr = 0.1, .maximize = true},
       {{1.0999999985714286, -2.0999999996153846, 3.09999999984375},
        {1.1999918123429094, -2.200129439295995, 3.2001352730389536},
        {1.300064995526805, -2.300478758911407, 3.3004942255245426},
        {1.4003330384768735, -2.401138811590679, 3.4011630528210164}}},
  };
  return cases;
}

TEST_P(OptimTest, AdamMatchesPyTorch) {
  for (const AdamCase& c : adam_cases()) {
    SCOPED_TRACE(c.name);
    Tensor p = initial();
    optim::Adam opt({p}, c.options);
    EXPECT_TRUE(same_trajectory(run(opt, p), c.expected, 1e-12));
  }
}

TEST_P(OptimTest, AdamMatchesPyTorchInFloat32) {
  for (const AdamCase& c : adam_cases()) {
    SCOPED_TRACE(c.name);
    Tensor p = initial(kFloat32);
    optim::Adam opt({p}, c.options);
    EXPECT_TRUE(same_trajectory(run(opt, p), c.expected, 2e-5));
  }
}

TEST_P(OptimTest, AmsgradDiffersFromPlainAdam) {
  // The reference trajectories with and without amsgrad differ, and so do ember's.
  Tensor a = initial(), b = initial();
  optim::Adam with({a}, {.lr = 0.5, .betas = {0.9, 0.5}, .amsgrad = true});
  optim::Adam without({b}, {.lr = 0.5, .betas = {0.9, 0.5}});
  Trajectory ta = run(with, a), tb = run(without, b);
  EXPECT_EQ(ta[0], tb[0]);
  EXPECT_NE(ta[3], tb[3]);
}

TEST_P(OptimTest, AdamWDecouplesWeightDecay) {
  {
    Tensor p = initial();
    optim::AdamW opt({p}, {.lr = 0.1});  // default weight_decay 0.01
    EXPECT_TRUE(same_trajectory(run(opt, p),
                                {{0.8990000014285714, -1.8980000003846154, 2.89700000015625},
                                 {0.7995219934629267, -1.7966951462774, 2.794515519173495},
                                 {0.7029412748889505, -1.6965343943545816, 2.6928470436292757},
                                 {0.6110119179504259, -1.5980008344099355, 2.5923104750659087}},
                                1e-12));
  }
  {
    Tensor p = initial();
    optim::AdamW opt({p}, {.lr = 0.5, .betas = {0.9, 0.5}, .weight_decay = 0.5, .amsgrad = true});
    EXPECT_TRUE(same_trajectory(run(opt, p),
                                {{0.2500000071428571, -1.0000000019230768, 1.75000000078125},
                                 {0.011097606966798679, -0.4351364424899558, 0.981039571405047},
                                 {0.058563752844854114, -0.16323510717438952, 0.5415294097249543},
                                 {0.20634108385416275, -0.06668575058051249, 0.3079266484624813}},
                                1e-12));
  }
}

TEST_P(OptimTest, EveryParameterOfAGroupIsUpdated) {
  // Parameters of different shapes in one optimizer follow the same element-wise rule.
  Tensor a = initial(), b = initial().detach().view({3, 1}).clone().requires_grad_();
  optim::Adam opt({a, b}, {.lr = 0.1});
  for (int i = 0; i < 4; ++i) {
    set_grad(a);
    set_grad(b);
    opt.step();
  }
  std::vector<double> expected = {0.614170180664483, -1.6052410369266876, 2.6035488458065945};
  EXPECT_TRUE(same_trajectory({testing::values_of(a)}, {expected}, 1e-12));
  EXPECT_TRUE(same_trajectory({testing::values_of(b)}, {expected}, 1e-12));
  EXPECT_EQ(b.sizes(), (Shape{3, 1}));
}

TEST_P(OptimTest, AdamTrainsThroughBackward) {
  // Gradients from backward rather than set by hand: minimise sum((p - 2)^2) from 0.
  Tensor p = zeros({3}, on()).requires_grad_();
  optim::Adam opt({p}, {.lr = 0.1});
  for (int i = 0; i < 300; ++i) {
    opt.zero_grad();
    (p - 2.0).pow(2).sum().backward();
    opt.step();
  }
  EXPECT_TRUE(tensor_close(p, full({3}, 2.0, on()), 0, 0.02));
}

// --- groups, zero_grad

TEST_P(OptimTest, ParamGroupsHaveTheirOwnOptions) {
  Tensor a = initial(), b = initial();
  optim::SGD opt(std::vector<optim::ParamGroup<optim::SGDOptions>>{
      {.params = {a}, .options = {.lr = 0.1}}, {.params = {b}, .options = {.lr = 0.01}}});
  ASSERT_EQ(opt.num_param_groups(), 2u);
  EXPECT_EQ(opt.lr(0), 0.1);
  EXPECT_EQ(opt.lr(1), 0.01);
  set_grad(a);
  set_grad(b);
  opt.step();
  // By hand: g0 = 0.2 p^3 + p - C = (0.7, -2.6, 6.4).
  EXPECT_TRUE(tensor_close(a, tensor({1 - 0.07, -2 + 0.26, 3 - 0.64}, on(kFloat64)), 1e-12));
  EXPECT_TRUE(tensor_close(b, tensor({1 - 0.007, -2 + 0.026, 3 - 0.064}, on(kFloat64)), 1e-12));

  // add_param_group, and Adam groups.
  Tensor c = initial(), d = initial();
  optim::Adam adam({c}, {.lr = 0.1});
  adam.add_param_group({.params = {d}, .options = {.lr = 0.01}});
  EXPECT_EQ(adam.num_param_groups(), 2u);
  set_grad(c);
  set_grad(d);
  adam.step();
  // Adam's first step moves each element by lr * g / (|g| + eps) ~ lr against the gradient.
  EXPECT_TRUE(tensor_close(c, tensor({0.9, -1.9, 2.9}, on(kFloat64)), 1e-7));
  EXPECT_TRUE(tensor_close(d, tensor({0.99, -1.99, 2.99}, on(kFloat64)), 1e-7));
  adam.set_lr(1, 0.5);
  EXPECT_EQ(adam.param_groups()[1].options.lr, 0.5);
}

TEST_P(OptimTest, ZeroGradAndParametersWithoutGradients) {
  Tensor a = initial(), b = initial();
  optim::SGD opt({a, b}, {.lr = 0.1, .momentum = 0.9});
  set_grad(a);
  set_grad(b);
  opt.zero_grad(/*set_to_none=*/false);
  ASSERT_TRUE(a.grad().defined());
  EXPECT_TRUE(tensor_equal(a.grad(), zeros({3}, on(kFloat64))));
  opt.zero_grad();  // PyTorch 2's default: undefined
  EXPECT_FALSE(a.grad().defined());
  EXPECT_FALSE(b.grad().defined());
  // A step skips parameters without a gradient and gives them no state.
  set_grad(a);
  opt.step();
  EXPECT_TRUE(tensor_close(a, tensor({0.93, -1.74, 2.36}, on(kFloat64)), 1e-12));
  EXPECT_TRUE(tensor_equal(b.detach(), initial().detach()));
  std::vector<std::string> keys;
  for (auto& [k, v] : opt.state_dict()) keys.push_back(k);
  EXPECT_EQ(std::count(keys.begin(), keys.end(), "state.0.momentum_buffer"), 1);
  EXPECT_EQ(std::count(keys.begin(), keys.end(), "state.1.momentum_buffer"), 0);
}

// --- state dicts

TEST_P(OptimTest, AdamStateNeverHoldsSubnormals) {
  // exp_avg of a weight whose gradient stops decays by beta1 each step. Without flushing it would
  // reach float32's subnormal range (below 1.18e-38; 1e-31 * 0.9^200 = 7e-41) and make every
  // later step slow; with subnormals flushed it stays 0 or normal (the decrement beta1's lerp
  // subtracts flushes to 0 first, so it settles just above the subnormal range).
  if (!device().is_cpu()) GTEST_SKIP() << "the flush is the CPU backend's; GPUs keep subnormals";
  Tensor p = tensor({1.0f}, on()).requires_grad_();
  optim::Adam opt({p}, {.lr = 1e-3});
  p.mutable_grad() = tensor({1e-30f}, on());
  opt.step();
  for (int i = 0; i < 200; ++i) {
    p.mutable_grad() = tensor({0.0f}, on());
    opt.step();
  }
  auto sd = opt.state_dict();
  ASSERT_EQ(sd[1].first, "state.0.exp_avg");
  float m = sd[1].second.cpu().item<float>();
  EXPECT_TRUE(m == 0.0f || std::fpclassify(m) == FP_NORMAL) << m;
  EXPECT_LT(m, 1e-36f);
  // Normal values are untouched: one more step with a gradient of 1 gives exp_avg = 0.1 + 0.9 m.
  p.mutable_grad() = tensor({1.0f}, on());
  opt.step();
  EXPECT_FLOAT_EQ(opt.state_dict()[1].second.cpu().item<float>(), 0.1f);
}

TEST_P(OptimTest, StateDictContents) {
  Tensor p = initial();
  optim::Adam opt({p}, {.lr = 0.1, .amsgrad = true});
  set_grad(p);
  opt.step();
  set_grad(p);
  opt.step();
  auto sd = opt.state_dict();
  std::vector<std::string> keys;
  for (auto& [k, v] : sd) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"state.0.step", "state.0.exp_avg", "state.0.exp_avg_sq",
                                            "state.0.max_exp_avg_sq", "param_groups.0.lr",
                                            "param_groups.0.beta1", "param_groups.0.beta2",
                                            "param_groups.0.eps", "param_groups.0.weight_decay",
                                            "param_groups.0.amsgrad", "param_groups.0.maximize"}));
  EXPECT_EQ(sd[0].second.item<double>(), 2.0);
  EXPECT_EQ(sd[1].second.device(), p.device());
  EXPECT_EQ(sd[4].second.item<double>(), 0.1);
  // A snapshot: later steps don't change it.
  Tensor saved = sd[1].second.clone();
  set_grad(p);
  opt.step();
  EXPECT_TRUE(tensor_equal(sd[1].second, saved));
}

// Runs 5 steps straight with one optimizer, and 3 steps + state_dict + load into a fresh
// optimizer (built with other options) + 2 steps with another; the parameters must match exactly.
template <class Opt, class Options>
void expect_exact_resume(const OptimTest& t, const Options& options, const Options& fresh_options) {
  Tensor a = t.initial(), b = t.initial();
  Opt straight({a}, options);
  for (int i = 0; i < 5; ++i) {
    t.set_grad(a);
    straight.step();
  }
  Opt first({b}, options);
  for (int i = 0; i < 3; ++i) {
    t.set_grad(b);
    first.step();
  }
  auto sd = first.state_dict();
  Opt resumed({b}, fresh_options);
  resumed.load_state_dict(sd);
  EXPECT_EQ(resumed.lr(0), options.lr);  // options come back from the state dict
  for (int i = 0; i < 2; ++i) {
    t.set_grad(b);
    resumed.step();
  }
  EXPECT_TRUE(tensor_equal(b.detach(), a.detach()));
}

class OptimResumeTest : public OptimTest {};

TEST_P(OptimResumeTest, StateDictResumesExactly) {
  {
    SCOPED_TRACE("SGD nesterov");
    expect_exact_resume<optim::SGD>(*this,
                                    optim::SGDOptions{.lr = 0.1, .momentum = 0.9, .nesterov = true},
                                    optim::SGDOptions{.lr = 0.5});
  }
  {
    SCOPED_TRACE("SGD dampening weight_decay");
    expect_exact_resume<optim::SGD>(
        *this,
        optim::SGDOptions{.lr = 0.05, .momentum = 0.5, .dampening = 0.3, .weight_decay = 0.1},
        optim::SGDOptions{.lr = 0.5, .momentum = 0.1});
  }
  {
    SCOPED_TRACE("Adam amsgrad");
    expect_exact_resume<optim::Adam>(
        *this, optim::AdamOptions{.lr = 0.5, .betas = {0.9, 0.5}, .amsgrad = true},
        optim::AdamOptions{.lr = 0.01, .amsgrad = true});
  }
  {
    SCOPED_TRACE("AdamW");
    expect_exact_resume<optim::AdamW>(*this, optim::AdamWOptions{.lr = 0.1, .weight_decay = 0.3},
                                      optim::AdamWOptions{.lr = 0.2});
  }
}

TEST_P(OptimResumeTest, ResumeAModelAcrossDevices) {
  // Trained on the CPU for 3 steps, resumed on the test device for 2; matches 5 on the CPU.
  auto make = [] {
    manual_seed(21);
    return nn::Sequential(nn::Linear(3, 4), nn::Tanh(), nn::Linear(4, 1));
  };
  Tensor x = tensor({{0.5, -1.0, 2.0}, {1.0, 0.0, -0.5}}), y = tensor({{1.0}, {-1.0}});
  auto train = [&](nn::Sequential& m, optim::Adam& opt, int steps, Device d) {
    for (int i = 0; i < steps; ++i) {
      opt.zero_grad();
      nn::functional::mse_loss(m(x.to(d)), y.to(d)).backward();
      opt.step();
    }
  };
  nn::Sequential a = make();
  optim::Adam opt_a(a->parameters(), {.lr = 0.05});
  train(a, opt_a, 5, Device(kCPU));

  nn::Sequential b = make();
  optim::Adam opt_b(b->parameters(), {.lr = 0.05});
  train(b, opt_b, 3, Device(kCPU));
  auto model_state = b->state_dict();
  auto opt_state = opt_b.state_dict();
  nn::Sequential c = make();
  c->to(device());
  c->load_state_dict(model_state);
  optim::Adam opt_c(c->parameters(), {.lr = 0.05});
  opt_c.load_state_dict(opt_state);
  train(c, opt_c, 2, device());
  // Bit-equal on the CPU; a GPU's tanh, fused multiply-adds and GEMM order differ from the CPU's
  // in the last bits (an H200 gave -0.089363314 for the CPU's -0.089363307).
  auto pa = a->parameters(), pc = c->parameters();
  for (size_t i = 0; i < pa.size(); ++i) {
    if (device().is_cpu())
      EXPECT_TRUE(tensor_equal(pc[i].detach().cpu(), pa[i].detach()));
    else
      EXPECT_TRUE(tensor_close(pc[i].detach().cpu(), pa[i].detach(), 1e-5, 1e-6));
  }
}

TEST_P(OptimTest, LoadStateDictErrors) {
  Tensor p = initial();
  optim::Adam opt({p}, {.lr = 0.1});
  set_grad(p);
  opt.step();
  auto sd = opt.state_dict();

  Tensor q = tensor({1.0, 2.0}, on(kFloat64)).requires_grad_();
  optim::Adam other({q});
  EXPECT_TRUE(
      throws_error([&] { other.load_state_dict(sd); }, ErrorKind::Shape, {"state.0.exp_avg"}));

  optim::Adam none(std::vector<Tensor>{});
  EXPECT_TRUE(
      throws_error([&] { none.load_state_dict(sd); }, ErrorKind::Value, {"state for parameter 0"}));

  nn::StateDict bad = sd;
  bad.emplace_back("momentum.0.x", zeros({}));
  EXPECT_TRUE(
      throws_error([&] { opt.load_state_dict(bad); }, ErrorKind::Value, {"unexpected key"}));

  nn::StateDict unknown_option = {{"param_groups.0.momentum", scalar_tensor(0.9)}};
  EXPECT_TRUE(throws_error([&] { opt.load_state_dict(unknown_option); }, ErrorKind::Value,
                           {"unknown option \"momentum\""}));
}

// --- option checks

TEST_P(OptimTest, InvalidOptionsAreErrors) {
  Tensor p = initial();
  using optim::SGD, optim::Adam, optim::AdamW;
  EXPECT_TRUE(
      throws_error([&] { SGD({p}, {.lr = -0.1}); }, ErrorKind::Value, {"Invalid learning rate"}));
  EXPECT_TRUE(throws_error([&] { SGD({p}, {.momentum = -0.5}); }, ErrorKind::Value,
                           {"Invalid momentum value"}));
  EXPECT_TRUE(throws_error([&] { SGD({p}, {.weight_decay = -1}); }, ErrorKind::Value,
                           {"Invalid weight_decay value"}));
  EXPECT_TRUE(throws_error([&] { SGD({p}, {.nesterov = true}); }, ErrorKind::Value, {"Nesterov"}));
  EXPECT_TRUE(throws_error([&] { SGD({p}, {.momentum = 0.9, .dampening = 0.1, .nesterov = true}); },
                           ErrorKind::Value, {"Nesterov"}));
  EXPECT_TRUE(
      throws_error([&] { Adam({p}, {.lr = -1}); }, ErrorKind::Value, {"Invalid learning rate"}));
  EXPECT_TRUE(
      throws_error([&] { Adam({p}, {.eps = -1e-8}); }, ErrorKind::Value, {"Invalid epsilon"}));
  EXPECT_TRUE(throws_error(
      [&] {
        Adam({p}, {.betas = {1.0, 0.999}});
      },
      ErrorKind::Value, {"Invalid beta parameter at index 0"}));
  EXPECT_TRUE(throws_error(
      [&] {
        Adam({p}, {.betas = {0.9, -0.1}});
      },
      ErrorKind::Value, {"Invalid beta parameter at index 1"}));
  EXPECT_TRUE(throws_error([&] { Adam({p}, {.weight_decay = -0.1}); }, ErrorKind::Value,
                           {"Invalid weight_decay value"}));
  EXPECT_TRUE(throws_error([&] { AdamW({p}, {.lr = -1}); }, ErrorKind::Value, {"[AdamW]"}));
  // Only leaves that require grad can be optimized.
  Tensor plain = tensor({1.0}, on());
  EXPECT_TRUE(throws_error([&] { SGD({plain}); }, ErrorKind::Value, {"not a leaf requiring grad"}));
  Tensor non_leaf = p * 2.0;
  EXPECT_TRUE(
      throws_error([&] { Adam({non_leaf}); }, ErrorKind::Value, {"not a leaf requiring grad"}));
  // A gradient of the wrong shape.
  optim::SGD opt({p}, {.lr = 0.1});
  p.mutable_grad() = zeros({2}, on(kFloat64));
  EXPECT_TRUE(throws_error([&] { opt.step(); }, ErrorKind::Shape, {"gradient of shape"}));
}

// --- schedules

class SchedulerTest : public testing::DeviceTest {
 protected:
  Tensor param() const { return zeros({2}, on()).requires_grad_(); }
  // The lr after construction and after each of n step() calls.
  static std::vector<double> lrs(optim::LRScheduler& s, const optim::Optimizer& opt, int n,
                                 size_t group = 0) {
    std::vector<double> out = {opt.lr(group)};
    EXPECT_EQ(s.get_last_lr()[group], opt.lr(group));
    for (int i = 0; i < n; ++i) {
      s.step();
      out.push_back(opt.lr(group));
      EXPECT_EQ(s.get_last_lr()[group], opt.lr(group));
    }
    return out;
  }
  static ::testing::AssertionResult same(const std::vector<double>& actual,
                                         const std::vector<double>& expected) {
    if (actual.size() != expected.size())
      return ::testing::AssertionFailure()
             << actual.size() << " values, expected " << expected.size();
    for (size_t i = 0; i < actual.size(); ++i)
      if (!(std::abs(actual[i] - expected[i]) <= 1e-12 * std::abs(expected[i]) + 1e-15))
        return ::testing::AssertionFailure()
               << "epoch " << i << ": " << actual[i] << " vs expected " << expected[i];
    return ::testing::AssertionSuccess();
  }
};

TEST_P(SchedulerTest, StepLRPerGroup) {
  Tensor a = param(), b = param();
  optim::SGD opt(std::vector<optim::ParamGroup<optim::SGDOptions>>{
      {.params = {a}, .options = {.lr = 0.1}}, {.params = {b}, .options = {.lr = 0.01}}});
  optim::StepLR s(opt, 3, 0.5);
  std::vector<double> g0 = {opt.lr(0)}, g1 = {opt.lr(1)};
  for (int i = 0; i < 10; ++i) {
    s.step();
    g0.push_back(opt.lr(0));
    g1.push_back(opt.lr(1));
  }
  EXPECT_TRUE(same(g0, {0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.025, 0.025, 0.025, 0.0125, 0.0125}));
  EXPECT_TRUE(
      same(g1, {0.01, 0.01, 0.01, 0.005, 0.005, 0.005, 0.0025, 0.0025, 0.0025, 0.00125, 0.00125}));
  EXPECT_EQ(s.last_epoch(), 10);
  EXPECT_EQ(s.get_last_lr().size(), 2u);
}

TEST_P(SchedulerTest, MultiStepLR) {
  Tensor p = param();
  optim::SGD opt({p}, {.lr = 0.1});
  optim::MultiStepLR s(opt, {8, 2, 5, 5}, 0.1);  // unsorted, 5 twice: gamma^2 there
  EXPECT_TRUE(same(lrs(s, opt, 10),
                   {0.1, 0.1, 0.010000000000000002, 0.010000000000000002, 0.010000000000000002,
                    0.00010000000000000005, 0.00010000000000000005, 0.00010000000000000005,
                    1.0000000000000006e-05, 1.0000000000000006e-05, 1.0000000000000006e-05}));
}

TEST_P(SchedulerTest, ExponentialLR) {
  Tensor p = param();
  optim::Adam opt({p}, {.lr = 0.1});
  optim::ExponentialLR s(opt, 0.9);
  EXPECT_TRUE(
      same(lrs(s, opt, 6), {0.1, 0.09000000000000001, 0.08100000000000002, 0.07290000000000002,
                            0.06561000000000002, 0.05904900000000002, 0.05314410000000002}));
}

TEST_P(SchedulerTest, CosineAnnealingLR) {
  Tensor p = param();
  optim::SGD opt({p}, {.lr = 0.1});
  optim::CosineAnnealingLR s(opt, 5, 0.001);
  // Past T_max the schedule rises again, as PyTorch's.
  EXPECT_TRUE(same(
      lrs(s, opt, 12),
      {0.1, 0.0905463412215599, 0.06579634122155989, 0.035203658778440096, 0.010453658778440105,
       0.001, 0.010453658778440102, 0.03520365877844012, 0.06579634122155993, 0.09054634122155995,
       0.10000000000000005, 0.09054634122155998, 0.06579634122155995}));
}

TEST_P(SchedulerTest, LinearLR) {
  {
    Tensor p = param();
    optim::SGD opt({p}, {.lr = 0.1});
    optim::LinearLR s(opt);  // start 1/3, end 1, 5 iterations
    optim::SGD opt2({param()}, {.lr = 0.1});
    optim::LinearLR s2(opt2, 1.0 / 3, 1.0, 4);
    EXPECT_TRUE(same(lrs(s2, opt2, 7), {0.03333333333333333, 0.05, 0.06666666666666668,
                                        0.08333333333333334, 0.1, 0.1, 0.1, 0.1}));
    EXPECT_NEAR(opt.lr(0), 0.1 / 3, 1e-15);
  }
  Tensor p = param();
  optim::SGD opt({p}, {.lr = 0.1});
  optim::LinearLR s(opt, 1.0, 0.25, 3);
  EXPECT_TRUE(
      same(lrs(s, opt, 5), {0.1, 0.07500000000000001, 0.05000000000000001, 0.025000000000000005,
                            0.025000000000000005, 0.025000000000000005}));
}

TEST_P(SchedulerTest, OneCycleLRCyclesAdamBeta1) {
  Tensor p = param();
  optim::Adam opt({p}, {.lr = 0.5});
  optim::OneCycleLR s(opt, {.max_lr = 0.1, .total_steps = 10});
  std::vector<double> lr = {opt.lr(0)}, beta1 = {opt.param_groups()[0].options.betas.first};
  // total_steps step() calls after construction, as a training loop stepping once per batch
  // makes; PyTorch raises only on the one after.
  for (int i = 0; i < 10; ++i) {
    s.step();
    lr.push_back(opt.lr(0));
    beta1.push_back(opt.param_groups()[0].options.betas.first);
  }
  EXPECT_TRUE(same(lr, {0.0040000000000000036, 0.052000000000000005, 0.1, 0.09504846320134738,
                        0.0811745653949763, 0.06112620219362893, 0.03887419780637107,
                        0.0188258346050237, 0.004951936798652629, 4e-07, 0.004951936798652624}));
  EXPECT_TRUE(same(beta1, {0.95, 0.8999999999999999, 0.85, 0.854951556604879, 0.8688255099070633,
                           0.8888739533021842, 0.9111260466978157, 0.9311744900929366,
                           0.945048443395121, 0.95, 0.945048443395121}));
  EXPECT_EQ(opt.param_groups()[0].options.betas.second, 0.999);  // beta2 untouched
  EXPECT_TRUE(throws_error([&] { s.step(); }, ErrorKind::Value, {"Tried to step"}));
}

TEST_P(SchedulerTest, OneCycleLRThreePhaseLinearCyclesSgdMomentum) {
  Tensor p = param();
  optim::SGD opt({p}, {.lr = 0.5, .momentum = 0.9});
  optim::OneCycleLR s(opt,
                      {.max_lr = 0.1, .total_steps = 10, .cos_anneal = false, .three_phase = true});
  std::vector<double> lr = {opt.lr(0)}, momentum = {opt.momentum(0)};
  for (int i = 0; i < 10; ++i) {
    s.step();
    lr.push_back(opt.lr(0));
    momentum.push_back(opt.param_groups()[0].options.momentum);
  }
  EXPECT_TRUE(same(lr, {0.004, 0.052000000000000005, 0.1, 0.052000000000000005,
                        0.0040000000000000036, 0.00320008, 0.00240016, 0.0016002400000000002,
                        0.0008003200000000002, 4.0000000000022656e-07, -0.0007995199999999997}));
  EXPECT_TRUE(same(momentum, {0.95, 0.8999999999999999, 0.85, 0.8999999999999999, 0.95, 0.95, 0.95,
                              0.95, 0.95, 0.95, 0.95}));
  // cycle_momentum off leaves it alone.
  optim::SGD opt2({param()}, {.lr = 0.5, .momentum = 0.7});
  optim::OneCycleLR s2(opt2, {.max_lr = 0.1, .total_steps = 10, .cycle_momentum = false});
  s2.step();
  EXPECT_EQ(opt2.momentum(0), 0.7);
}

TEST_P(SchedulerTest, TheOptimizerUsesTheScheduledLr) {
  // By hand: a constant gradient of 1 and lr 0.1 halved every step moves p by
  // -(0.1 + 0.05 + 0.025).
  Tensor p = param();
  optim::SGD opt({p}, {.lr = 0.1});
  optim::StepLR s(opt, 1, 0.5);
  for (int i = 0; i < 3; ++i) {
    p.mutable_grad() = ones({2}, on());
    opt.step();
    s.step();
  }
  EXPECT_TRUE(tensor_close(p, full({2}, -0.175, on())));
}

TEST_P(SchedulerTest, InvalidSchedules) {
  Tensor p = param();
  optim::SGD opt({p}, {.lr = 0.1});
  EXPECT_TRUE(throws_error([&] { optim::StepLR(opt, 0); }, ErrorKind::Value, {"step_size"}));
  EXPECT_TRUE(throws_error([&] { optim::CosineAnnealingLR(opt, 0); }, ErrorKind::Value, {"T_max"}));
  EXPECT_TRUE(throws_error([&] { optim::LinearLR(opt, 0.0); }, ErrorKind::Value,
                           {"Starting multiplicative factor"}));
  EXPECT_TRUE(throws_error([&] { optim::LinearLR(opt, 0.5, 1.5); }, ErrorKind::Value,
                           {"Ending multiplicative factor"}));
  EXPECT_TRUE(throws_error([&] { optim::OneCycleLR(opt, {.max_lr = 0.1, .total_steps = 0}); },
                           ErrorKind::Value, {"total_steps"}));
  EXPECT_TRUE(throws_error(
      [&] { optim::OneCycleLR(opt, {.max_lr = 0.1, .total_steps = 10, .pct_start = 1.5}); },
      ErrorKind::Value, {"pct_start"}));
}

EMBER_INSTANTIATE_DEVICE_TESTS(OptimTest);
EMBER_INSTANTIATE_DEVICE_TESTS(OptimResumeTest);
EMBER_INSTANTIATE_DEVICE_TESTS(SchedulerTest);

}  // namespace
}  // namespace ember
