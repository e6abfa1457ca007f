// tests/test_layer_modules.cpp: the layers of ember/nn/conv_modules.h and norm_modules.h, and
// EmbeddingBag, Bilinear and Embedding's max_norm: PyTorch's state-dict names and shapes and
// printed form (one table, written from torch 1.13's own output), init bounds, each layer equal
// to its F:: function, running statistics, transposed convolution as conv2d's adjoint, and the
// errors. The functions' values and gradients are checked against PyTorch in
// test_math_fixtures.cpp.
#include <cmath>
#include <memory>

#include "test_util.h"

namespace ember {
namespace {

namespace F = nn::functional;
using testing::tensor_equal;
using testing::throws_error;

class LayerModulesTest : public testing::DeviceTest {};

struct LayerCase {
  std::shared_ptr<nn::Module> module;
  std::string repr;                                  // PyTorch's repr of the same layer
  std::vector<std::pair<std::string, Shape>> state;  // and its state dict
};

std::string repr_of(const nn::Module& m) {
  return m.name() + "(" + m.extra_repr() + ")";
}

TEST_P(LayerModulesTest, NamesShapesAndPrintedFormArePyTorchs) {
  const std::vector<LayerCase> cases = {
      {nn::Conv1d(2, 4, 3, {.stride = 2, .padding = 1}).ptr(),
       "Conv1d(2, 4, kernel_size=(3,), stride=(2,), padding=(1,))",
       {{"weight", {4, 2, 3}}, {"bias", {4}}}},
      {nn::Conv1d(4, 6, 3, {.dilation = 2, .groups = 2, .bias = false}).ptr(),
       "Conv1d(4, 6, kernel_size=(3,), stride=(1,), dilation=(2,), groups=2, bias=False)",
       {{"weight", {6, 2, 3}}}},
      {nn::Conv3d(2, 4, {2, 3, 3}, {.stride = {1, 2, 2}, .padding = 1}).ptr(),
       "Conv3d(2, 4, kernel_size=(2, 3, 3), stride=(1, 2, 2), padding=(1, 1, 1))",
       {{"weight", {4, 2, 2, 3, 3}}, {"bias", {4}}}},
      {nn::ConvTranspose1d(4, 6, 3, {.stride = 2, .output_padding = 1, .groups = 2}).ptr(),
       "ConvTranspose1d(4, 6, kernel_size=(3,), stride=(2,), output_padding=(1,), groups=2)",
       {{"weight", {4, 3, 3}}, {"bias", {6}}}},
      {nn::ConvTranspose2d(2, 3, {2, 3}, {.stride = 2, .padding = 1, .output_padding = 1}).ptr(),
       "ConvTranspose2d(2, 3, kernel_size=(2, 3), stride=(2, 2), padding=(1, 1), "
       "output_padding=(1, 1))",
       {{"weight", {2, 3, 2, 3}}, {"bias", {3}}}},
      {nn::Unfold({2, 3}, {.padding = 1, .stride = 2}).ptr(),
       "Unfold(kernel_size=(2, 3), dilation=1, padding=1, stride=2)",
       {}},
      {nn::Fold({3, 4}, 2).ptr(),
       "Fold(output_size=(3, 4), kernel_size=2, dilation=1, padding=0, stride=1)",
       {}},
      {nn::MaxPool1d(3, {.stride = 2, .padding = 1, .ceil_mode = true}).ptr(),
       "MaxPool1d(kernel_size=3, stride=2, padding=1, dilation=1, ceil_mode=True)",
       {}},
      {nn::AvgPool1d(3, {.stride = 2, .padding = 1}).ptr(),
       "AvgPool1d(kernel_size=(3,), stride=(2,), padding=(1,))",
       {}},
      {nn::AdaptiveAvgPool1d(3).ptr(), "AdaptiveAvgPool1d(output_size=3)", {}},
      {nn::AdaptiveMaxPool1d(3).ptr(), "AdaptiveMaxPool1d(output_size=3)", {}},
      {nn::AdaptiveMaxPool2d(2, 3).ptr(), "AdaptiveMaxPool2d(output_size=(2, 3))", {}},
      {nn::Upsample(F::InterpolateFuncOptions{.scale_factor = {2}, .mode = "bilinear"}).ptr(),
       "Upsample(scale_factor=2.0, mode=bilinear)",
       {}},
      {nn::Upsample(F::InterpolateFuncOptions{.size = {5, 7}}).ptr(),
       "Upsample(size=(5, 7), mode=nearest)",
       {}},
      {nn::PixelShuffle(2).ptr(), "PixelShuffle(upscale_factor=2)", {}},
      {nn::PixelUnshuffle(2).ptr(), "PixelUnshuffle(downscale_factor=2)", {}},
      {nn::ChannelShuffle(3).ptr(), "ChannelShuffle(groups=3)", {}},
      {nn::EmbeddingBag(10, 3, {.mode = "sum", .padding_idx = 0}).ptr(),
       "EmbeddingBag(10, 3, mode=sum, padding_idx=0)",
       {{"weight", {10, 3}}}},
      {nn::EmbeddingBag(10, 3, {.max_norm = 1.0}).ptr(),
       "EmbeddingBag(10, 3, max_norm=1.0, mode=mean)",
       {{"weight", {10, 3}}}},
      {nn::Embedding(10, 3, std::nullopt, 1.5).ptr(),
       "Embedding(10, 3, max_norm=1.5)",
       {{"weight", {10, 3}}}},
      {nn::Bilinear(2, 4, 5).ptr(),
       "Bilinear(in1_features=2, in2_features=4, out_features=5, bias=True)",
       {{"weight", {5, 2, 4}}, {"bias", {5}}}},
      {nn::GroupNorm(2, 4).ptr(),
       "GroupNorm(2, 4, eps=1e-05, affine=True)",
       {{"weight", {4}}, {"bias", {4}}}},
      {nn::InstanceNorm2d(4, {.affine = true, .track_running_stats = true}).ptr(),
       "InstanceNorm2d(4, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)",
       {{"weight", {4}},
        {"bias", {4}},
        {"running_mean", {4}},
        {"running_var", {4}},
        {"num_batches_tracked", {}}}},
      {nn::InstanceNorm1d(3).ptr(),
       "InstanceNorm1d(3, eps=1e-05, momentum=0.1, affine=False, track_running_stats=False)",
       {}},
      {nn::LocalResponseNorm(3).ptr(), "LocalResponseNorm(3, alpha=0.0001, beta=0.75, k=1.0)", {}},
  };
  for (const LayerCase& c : cases) {
    SCOPED_TRACE(c.repr);
    EXPECT_EQ(repr_of(*c.module), c.repr);
    nn::StateDict state = c.module->state_dict();
    ASSERT_EQ(state.size(), c.state.size());
    for (size_t i = 0; i < state.size(); ++i) {
      EXPECT_EQ(state[i].first, c.state[i].first);
      EXPECT_EQ(state[i].second.sizes(), c.state[i].second) << state[i].first;
    }
  }
}

// kaiming_uniform_(a = sqrt(5)) and the bias both stay within 1 / sqrt(fan_in), fan_in from the
// weight's dim 1 and kernel (for the transposed layers, out_channels / groups).
TEST_P(LayerModulesTest, ConvolutionsInitAsPyTorch) {
  // Weights (hundreds of draws) also reach past half the bound; biases only stay within it.
  auto within = [](const Tensor& t, double bound) {
    return t.abs().max().item<double>() <= bound && t.abs().max().item<double>() > 0.5 * bound;
  };
  auto below = [](const Tensor& t, double bound) { return t.abs().max().item<double>() <= bound; };
  nn::Conv1d c1(4, 40, 5);
  EXPECT_TRUE(within(c1->weight, 1 / std::sqrt(20.0)));
  EXPECT_TRUE(below(c1->bias, 1 / std::sqrt(20.0)));
  nn::ConvTranspose2d t2(6, 4, 3, {.groups = 2});  // weight (6, 2, 3, 3): fan_in 18
  EXPECT_TRUE(within(t2->weight, 1 / std::sqrt(18.0)));
  EXPECT_TRUE(below(t2->bias, 1 / std::sqrt(18.0)));
  nn::Conv3d c3(2, 8, 3);  // fan_in 54
  EXPECT_TRUE(within(c3->weight, 1 / std::sqrt(54.0)));
  nn::Bilinear b(4, 3, 16);
  EXPECT_TRUE(within(b->weight, 0.5));
  EXPECT_TRUE(below(b->bias, 0.5));
}

TEST_P(LayerModulesTest, EachLayerIsItsFunction) {
  nn::Conv1d c1(2, 4, 3, {.padding = 1});
  c1->to(device());
  Tensor x1 = randn({2, 2, 7}, on());
  EXPECT_TRUE(tensor_equal(c1(x1), F::conv1d(x1, c1->weight, c1->bias, {.padding = 1})));
  // A 1-D convolution is conv2d over an image one row high.
  EXPECT_TRUE(testing::tensor_close(
      c1(x1),
      F::conv2d(x1.unsqueeze(2), c1->weight.unsqueeze(2), c1->bias, {.padding = {0, 1}}).squeeze(2),
      1e-6, 1e-6));
  nn::Conv3d c3(2, 3, {1, 3, 3}, {.padding = {0, 1, 1}});
  c3->to(device());
  Tensor x3 = randn({1, 2, 4, 5, 5}, on());
  // kernel depth 1: each depth slice is its own conv2d.
  Tensor slice = F::conv2d(x3.select(2, 2), c3->weight.select(2, 0), c3->bias, {.padding = 1});
  EXPECT_TRUE(testing::tensor_close(c3(x3).select(2, 2), slice, 1e-5, 1e-5));
  nn::EmbeddingBag bag(10, 3, {.mode = "sum"});
  bag->to(device());
  Tensor ids = tensor({1, 2, 3, 4}, on()).to(kInt64), off = tensor({0, 1}, on()).to(kInt64);
  EXPECT_TRUE(tensor_equal(bag->forward(ids, off),
                           F::embedding_bag(ids, bag->weight, {.offsets = off, .mode = "sum"})));
  nn::Bilinear bil(2, 3, 4);
  bil->to(device());
  Tensor a = randn({5, 2}, on()), c = randn({5, 3}, on());
  // y[n, o] = sum_ij a[n, i] W[o, i, j] c[n, j] + b[o]
  Tensor want =
      (a.view({5, 1, 2, 1}) * bil->weight.unsqueeze(0) * c.view({5, 1, 1, 3})).sum({2, 3}) +
      bil->bias;
  EXPECT_TRUE(testing::tensor_close(bil(a, c), want, 1e-5, 1e-5));
  nn::PixelShuffle ps(2);
  nn::PixelUnshuffle pu(2);
  Tensor img = randn({2, 8, 3, 5}, on());
  EXPECT_TRUE(tensor_equal(pu(ps(img)), img));
  nn::Upsample up(F::InterpolateFuncOptions{.scale_factor = {2}});
  Tensor small = tensor({{{{1.0f, 2.0f}, {3.0f, 4.0f}}}}, on());
  EXPECT_TRUE(tensor_equal(up(small), tensor({{{{1.0f, 1.0f, 2.0f, 2.0f},
                                                {1.0f, 1.0f, 2.0f, 2.0f},
                                                {3.0f, 3.0f, 4.0f, 4.0f},
                                                {3.0f, 3.0f, 4.0f, 4.0f}}}},
                                             on())));
}

// conv_transpose2d is conv2d's adjoint: <conv2d(x, w), y> = <x, conv_transpose2d(y, w)>, with
// stride, padding, dilation and groups.
TEST_P(LayerModulesTest, TransposedConvolutionIsTheAdjoint) {
  const auto f64 = TensorOptions{.dtype = kFloat64, .device = device()};
  Tensor x = randn({2, 4, 9, 8}, f64), w = randn({6, 2, 3, 2}, f64);
  F::Conv2dFuncOptions o{.stride = {2, 3}, .padding = {1, 0}, .dilation = {1, 2}, .groups = 2};
  Tensor y = F::conv2d(x, w, Tensor(), o);
  Tensor r = randn(y.sizes(), f64);
  // output_padding recovers the input size the stride rounded away.
  const int64_t oph = 9 - ((y.size(2) - 1) * 2 - 2 + 2 + 1);
  const int64_t opw = 8 - ((y.size(3) - 1) * 3 + 2 * 1 + 1);
  Tensor back = F::conv_transpose2d(r, w, Tensor(),
                                    {.stride = {2, 3},
                                     .padding = {1, 0},
                                     .output_padding = {oph, opw},
                                     .groups = 2,
                                     .dilation = {1, 2}});
  ASSERT_EQ(back.sizes(), x.sizes());
  EXPECT_NEAR((y * r).sum().item<double>(), (x * back).sum().item<double>(), 1e-9);
}

TEST_P(LayerModulesTest, EmbeddingMaxNormRescalesLookedUpRowsInPlace) {
  nn::Embedding emb(5, 4, std::nullopt, 1.0);
  emb->to(device());
  {
    NoGradGuard no_grad;
    emb->weight.mul_(10);  // every row far above the norm
  }
  Tensor before = emb->weight.detach().clone();
  Tensor out = emb(tensor({1, 3, 1}, on()).to(kInt64));
  Tensor norms = linalg::vector_norm(emb->weight.detach(), 2, {1});
  EXPECT_NEAR(norms.select(0, 1).item<double>(), 1.0, 1e-5);
  EXPECT_NEAR(norms.select(0, 3).item<double>(), 1.0, 1e-5);
  EXPECT_TRUE(tensor_equal(emb->weight.detach().select(0, 0), before.select(0, 0)));
  EXPECT_TRUE(tensor_equal(out.select(0, 0), emb->weight.detach().select(0, 1)));
}

// With track_running_stats, training updates the running statistics with the mean over the batch
// of each instance's statistics (unbiased variance), and eval normalizes with them.
TEST_P(LayerModulesTest, InstanceNormRunningStatistics) {
  nn::InstanceNorm1d norm(2, {.momentum = 0.5, .track_running_stats = true});
  norm->to(device());
  Tensor x =
      tensor({{{1.0f, 3.0f}, {0.0f, 4.0f}}, {{5.0f, 7.0f}, {2.0f, 2.0f}}}, on());  // (2, 2, 2)
  Tensor y = norm(x);
  EXPECT_TRUE(testing::tensor_close(y, F::instance_norm(x), 1e-5, 1e-6));
  // instance means (2, 6) and (2, 2); unbiased variances (2, 2) and (8, 0)
  EXPECT_TRUE(testing::tensor_close(norm->running_mean, tensor({2.0f, 1.0f}, on()), 1e-6, 1e-6));
  EXPECT_TRUE(testing::tensor_close(norm->running_var, tensor({1.5f, 2.5f}, on()), 1e-6, 1e-6));
  EXPECT_EQ(norm->num_batches_tracked.item<int64_t>(), 1);
  norm->eval();
  Tensor z = norm(x);
  Tensor want = (x - tensor({2.0f, 1.0f}, on()).view({1, 2, 1})) /
                sqrt(tensor({1.5f, 2.5f}, on()).view({1, 2, 1}) + 1e-5);
  EXPECT_TRUE(testing::tensor_close(z, want, 1e-5, 1e-6));
}

// The loss and distance modules are their functions with the module's arguments.
TEST_P(LayerModulesTest, LossModulesAreTheirFunctions) {
  Tensor a = randn({4, 3}, on()), b = randn({4, 3}, on()), c = randn({4, 3}, on());
  Tensor sign = tensor({1.0f, -1.0f, 1.0f, -1.0f}, on()), var = rand({4, 3}, on()) + 0.1;
  Tensor labels = (rand({4, 3}, on()) > 0.5).to(kFloat32), rates = rand({4, 3}, on()) * 3;
  using R = F::Reduction;
  EXPECT_TRUE(
      tensor_equal(nn::SmoothL1Loss(R::Sum, 0.5)(a, b), F::smooth_l1_loss(a, b, R::Sum, 0.5)));
  EXPECT_TRUE(tensor_equal(nn::HuberLoss(R::None, 0.7)(a, b), F::huber_loss(a, b, R::None, 0.7)));
  Tensor logp = log_softmax(a, 1), p = softmax(b, 1);
  EXPECT_TRUE(tensor_equal(nn::KLDivLoss(R::Sum)(logp, p), F::kl_div(logp, p, R::Sum)));
  EXPECT_TRUE(tensor_equal(nn::PoissonNLLLoss(false, true)(rates + 0.1, rates),
                           F::poisson_nll_loss(rates + 0.1, rates, false, true)));
  EXPECT_TRUE(
      tensor_equal(nn::GaussianNLLLoss(true)(a, b, var), F::gaussian_nll_loss(a, b, var, true)));
  EXPECT_TRUE(tensor_equal(nn::MarginRankingLoss(0.3)(a.select(1, 0), b.select(1, 0), sign),
                           F::margin_ranking_loss(a.select(1, 0), b.select(1, 0), sign, 0.3)));
  EXPECT_TRUE(tensor_equal(nn::HingeEmbeddingLoss(0.5)(a, labels * 2 - 1),
                           F::hinge_embedding_loss(a, labels * 2 - 1, 0.5)));
  EXPECT_TRUE(tensor_equal(nn::CosineEmbeddingLoss(0.2)(a, b, sign),
                           F::cosine_embedding_loss(a, b, sign, 0.2)));
  EXPECT_TRUE(tensor_equal(nn::TripletMarginLoss(0.5, 1.0, 1e-6, true)(a, b, c),
                           F::triplet_margin_loss(a, b, c, 0.5, 1.0, 1e-6, true)));
  EXPECT_TRUE(tensor_equal(nn::MultiLabelSoftMarginLoss()(a, labels),
                           F::multilabel_soft_margin_loss(a, labels)));
  EXPECT_TRUE(tensor_equal(nn::CosineSimilarity(0)(a, b), F::cosine_similarity(a, b, 0)));
  EXPECT_TRUE(tensor_equal(nn::PairwiseDistance(3.0, 1e-6, true)(a, b),
                           F::pairwise_distance(a, b, 3.0, 1e-6, true)));
}

TEST_P(LayerModulesTest, BadInputIsAClearError) {
  Tensor x = zeros({1, 3, 8}, on());
  EXPECT_TRUE(throws_error(
      [&] {
        (void)F::conv1d(x, zeros({4, 2, 3}, on()));
      },
      ErrorKind::Shape, {"[conv1d]", "to have 2 channels", "got 3"}));
  EXPECT_TRUE(throws_error(
      [&] {
        (void)F::conv1d(x, zeros({4, 3, 11}, on()));
      },
      ErrorKind::Shape, {"[conv1d]", "smaller than the dilated kernel"}));
  Tensor img = zeros({1, 2, 4, 4}, on());
  EXPECT_TRUE(throws_error(
      [&] {
        (void)F::conv_transpose2d(img, zeros({2, 3, 3, 3}, on()), Tensor(),
                                  {.stride = 2, .output_padding = 2});
      },
      ErrorKind::Value, {"[conv_transpose2d]", "output padding must be smaller"}));
  EXPECT_TRUE(throws_error(
      [&] {
        (void)F::interpolate(img, {.size = {8, 8}, .align_corners = true});
      },
      ErrorKind::Value, {"[interpolate]", "align_corners"}));
  EXPECT_TRUE(throws_error(
      [&] {
        (void)F::interpolate(img, {.size = {8, 8}, .scale_factor = {2}});
      },
      ErrorKind::Value, {"[interpolate]", "exactly one of size and scale_factor"}));
  EXPECT_TRUE(throws_error([&] { (void)F::interpolate(img, {.size = {8}, .mode = "linear"}); },
                           ErrorKind::Shape, {"[interpolate]", "'linear' expects a 3-D input"}));
  EXPECT_TRUE(throws_error([&] { (void)F::pixel_shuffle(img, 2); }, ErrorKind::Shape,
                           {"[pixel_shuffle]", "divisible"}));
  EXPECT_TRUE(throws_error(
      [&] {
        (void)F::fold(zeros({1, 8, 5}, on()), {3, 4}, 2);
      },
      ErrorKind::Shape, {"[fold]", "sliding blocks", "2 * 3 = 6"}));
  Tensor table = zeros({5, 2}, on()), ids = tensor({0, 1, 2}, on()).to(kInt64);
  EXPECT_TRUE(throws_error(
      [&] {
        (void)F::embedding_bag(ids, table,
                               {.offsets = tensor({1, 2}, on()).to(kInt64), .mode = "sum"});
      },
      ErrorKind::Index, {"[embedding_bag]", "offsets[0] has to be 0"}));
  EXPECT_TRUE(throws_error(
      [&] {
        (void)F::embedding_bag(
            ids, table,
            {.offsets = tensor({0}, on()).to(kInt64), .per_sample_weights = ones({3}, on())});
      },
      ErrorKind::Value, {"[embedding_bag]", "only supported for mode='sum'"}));
  EXPECT_TRUE(throws_error([&] { (void)F::embedding_bag(ids, table); }, ErrorKind::Value,
                           {"[embedding_bag]", "offsets has to be a 1D Tensor"}));
  EXPECT_TRUE(
      throws_error([&] { nn::GroupNorm(3, 4); }, ErrorKind::Value, {"[GroupNorm]", "divisible"}));
  EXPECT_TRUE(throws_error(
      [&] {
        (void)F::adaptive_max_pool2d(img, {0, 2});
      },
      ErrorKind::Value, {"[adaptive_max_pool2d]", "positive"}));
}

EMBER_INSTANTIATE_DEVICE_TESTS(LayerModulesTest);

}  // namespace
}  // namespace ember
