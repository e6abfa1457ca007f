// tests/test_parallel.cpp: Module::clone (deep copies of every built-in layer with state, from
// a table; tied weights, modules of one's own with EMBER_CLONE, the refusals), DataParallel over
// the two devices of the fake CUDA backend (outputs and gradients of the whole batch, a
// transformer layer, dim, parameters refreshed each forward, errors), and DistributedDataParallel
// in a world of one process (its buckets against PyTorch's assignment from
// tests/reference/distributed_reference.json, and gradients as without it). Multi-process tests are
// in tests/distributed/.
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "ember/nn.h"
#include "ember/optim.h"
#include "test_util.h"

namespace ember {
namespace {

using testing::tensor_close;
using testing::tensor_equal;
using testing::throws_error;

nn::Sequential small_cnn() {
  return nn::Sequential(nn::Conv2d(1, 3, 3), nn::BatchNorm2d(3), nn::ReLU(), nn::Flatten(),
                        nn::Linear(3 * 4 * 4, 4));
}

TEST(CloneTest, DeepCopiesBuiltInLayers) {
  manual_seed(1);
  nn::Sequential model = small_cnn();
  model->forward(randn({2, 1, 6, 6}));  // running statistics away from their initial values
  std::shared_ptr<nn::Module> copy = model->clone();
  EXPECT_EQ(copy->str(), model->str());
  auto a = model->state_dict(), b = copy->state_dict();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].first, b[i].first);
    EXPECT_TRUE(tensor_equal(a[i].second, b[i].second)) << a[i].first;
    EXPECT_NE(a[i].second.storage(), b[i].second.storage()) << a[i].first << " is shared";
  }
  for (const Tensor& p : copy->parameters()) EXPECT_TRUE(p.requires_grad());
  EXPECT_EQ(copy->is_training(), model->is_training());
  // The copy's layers compute with its own tensors: zeroing its last weight makes its output
  // that layer's bias and leaves the original's output as it was.
  model->eval();
  copy->eval();
  Tensor x = randn({2, 1, 6, 6});
  Tensor before = model->forward(x);
  EXPECT_TRUE(tensor_equal(copy->forward(x), before));
  auto linear = std::dynamic_pointer_cast<nn::LinearImpl>(copy->children().back());
  ASSERT_NE(linear, nullptr);
  {
    NoGradGuard no_grad;
    linear->weight.fill_(0.0);
  }
  EXPECT_TRUE(tensor_equal(copy->forward(x), linear->bias.detach().unsqueeze(0).expand({2, 4})));
  EXPECT_TRUE(tensor_equal(model->forward(x), before));
}

// A module of one's own: a shared (tied) weight, a child through a member, a frozen parameter.
class TiedImpl : public nn::Module {
  EMBER_CLONE(TiedImpl, &TiedImpl::embed, &TiedImpl::head_bias, &TiedImpl::proj)
 public:
  TiedImpl() : Module("Tied") {
    embed = register_module("embed", nn::Embedding(5, 3).ptr());
    proj = register_module("proj", nn::Linear(3, 3).ptr());
    head_bias = register_parameter("head_bias", zeros({5}), false);
  }
  Tensor forward(const Tensor& idx) override {
    return nn::F::linear(proj->forward(embed->forward(idx)), embed->weight, head_bias);
  }
  std::shared_ptr<nn::EmbeddingImpl> embed;
  std::shared_ptr<nn::LinearImpl> proj;
  Tensor head_bias;
};

TEST(CloneTest, ModulesOfOnesOwnWithEmberCloneKeepTiesAndFlags) {
  auto model = std::make_shared<TiedImpl>();
  auto copy = std::dynamic_pointer_cast<TiedImpl>(model->clone());
  ASSERT_NE(copy, nullptr);
  EXPECT_NE(copy->embed, model->embed);
  EXPECT_EQ(copy->children()[0], copy->embed);  // the member and the registry agree
  EXPECT_FALSE(copy->head_bias.requires_grad());
  Tensor idx = tensor({{0, 4, 2}}).to(kInt64);
  EXPECT_TRUE(tensor_equal(copy->forward(idx), model->forward(idx)));
  copy->forward(idx).sum().backward();
  EXPECT_TRUE(copy->embed->weight.grad().defined());
  EXPECT_FALSE(model->embed->weight.grad().defined());
}

class NoCloneImpl : public nn::Module {
 public:
  NoCloneImpl() : Module("NoClone") { w = register_parameter("w", zeros({2})); }
  Tensor w;
};

class DerivedLinearImpl : public nn::LinearImpl {
 public:
  DerivedLinearImpl() : LinearImpl(2, 2) {}
};

TEST(CloneTest, RefusesModulesItCannotCopy) {
  EXPECT_TRUE(throws_error([] { NoCloneImpl().clone(); }, ErrorKind::NotImplemented,
                           {"[clone]", "NoClone", "EMBER_CLONE"}));
  EXPECT_TRUE(throws_error([] { DerivedLinearImpl().clone(); }, ErrorKind::NotImplemented,
                           {"[clone]", "no clone_impl() of its own"}));
  // Parameterless layers copy themselves, options included.
  nn::LeakyReLU leaky(0.3);
  EXPECT_EQ(leaky->clone()->str(), leaky->str());
}

// Every built-in layer with parameters, buffers or children clones (a row per layer: how to make
// it and a forward on fixed inputs, in eval mode, reduced to one tensor). The copy is the same
// type, prints the same, has the same state under the same names in storage of its own, and
// computes the same; its forward reads its own tensors only: moving every copied parameter moves
// the copy's output and not the original's, and moving the original's the same way gives the
// copy's output back.
struct CloneCase {
  std::string name;
  std::function<std::shared_ptr<nn::Module>()> make;
  std::function<Tensor(nn::Module&)> run;
};

template <class Impl, class F>
std::function<Tensor(nn::Module&)> run_as(F f) {
  return [f](nn::Module& m) {
    manual_seed(11);
    return f(dynamic_cast<Impl&>(m));
  };
}

nn::BertConfig tiny_bert() {
  return {.vocab_size = 20,
          .hidden_size = 8,
          .num_hidden_layers = 2,
          .num_attention_heads = 2,
          .intermediate_size = 12,
          .max_position_embeddings = 16};
}

std::vector<CloneCase> clone_cases() {
  using namespace nn;
  auto seq = [](const Shape& in) {
    return run_as<Module>([in](Module& m) { return m.forward(randn(in)); });
  };
  const TransformerLayerOptions layer{.dim_feedforward = 12, .dropout = 0.1};
  return {
      {"Linear", [] { return Linear(4, 3).ptr(); }, seq({2, 4})},
      {"Conv2d+BatchNorm2d", [] { return small_cnn().ptr(); }, seq({2, 1, 6, 6})},
      {"Embedding+LayerNorm", [] { return Sequential(Embedding(9, 4), LayerNorm(Shape{4})).ptr(); },
       run_as<Module>([](Module& m) {
         return m.forward(tensor({{1, 8, 3}}).to(kInt64));
       })},
      {"PReLU", [] { return PReLU(3).ptr(); }, seq({2, 3})},
      {"RNN", [] { return RNN(3, 4, {.num_layers = 2, .bidirectional = true}).ptr(); },
       run_as<RNNImpl>([](RNNImpl& m) {
         return std::get<0>(m.forward(randn({5, 2, 3})));
       })},
      {"LSTM", [] { return LSTM(3, 4, {.num_layers = 2, .proj_size = 2}).ptr(); },
       run_as<LSTMImpl>([](LSTMImpl& m) {
         return std::get<0>(m.forward(randn({5, 2, 3})));
       })},
      {"GRU", [] { return GRU(3, 4, {.bias = false, .batch_first = true}).ptr(); },
       run_as<GRUImpl>([](GRUImpl& m) {
         return std::get<0>(m.forward(randn({2, 5, 3})));
       })},
      {"RNNCell", [] { return RNNCell(3, 4).ptr(); }, run_as<RNNCellImpl>([](RNNCellImpl& m) {
         return m.forward(randn({2, 3}));
       })},
      {"LSTMCell", [] { return LSTMCell(3, 4).ptr(); }, run_as<LSTMCellImpl>([](LSTMCellImpl& m) {
         return std::get<1>(m.forward(randn({2, 3})));
       })},
      {"GRUCell", [] { return GRUCell(3, 4).ptr(); }, run_as<GRUCellImpl>([](GRUCellImpl& m) {
         return m.forward(randn({2, 3}));
       })},
      {"MultiheadAttention",
       [] { return MultiheadAttention(8, 2, {.add_bias_kv = true, .kdim = 5, .vdim = 3}).ptr(); },
       run_as<MultiheadAttentionImpl>([](MultiheadAttentionImpl& m) {
         auto [out, weights] = m.forward(randn({4, 2, 8}), randn({6, 2, 5}), randn({6, 2, 3}));
         return cat({out.flatten(), weights.flatten()});
       })},
      {"TransformerEncoderLayer", [layer] { return TransformerEncoderLayer(8, 2, layer).ptr(); },
       seq({5, 2, 8})},
      {"TransformerDecoderLayer", [layer] { return TransformerDecoderLayer(8, 2, layer).ptr(); },
       run_as<TransformerDecoderLayerImpl>([](TransformerDecoderLayerImpl& m) {
         return m.forward(randn({4, 2, 8}), randn({5, 2, 8}));
       })},
      {"TransformerEncoder",
       [layer] {
         return TransformerEncoder(TransformerEncoderLayer(8, 2, layer), 2, LayerNorm(Shape{8}))
             .ptr();
       },
       seq({5, 2, 8})},
      {"Transformer",
       [layer] {
         return Transformer({.d_model = 8,
                             .nhead = 2,
                             .num_encoder_layers = 2,
                             .num_decoder_layers = 1,
                             .layer = layer})
             .ptr();
       },
       run_as<TransformerImpl>([](TransformerImpl& m) {
         return m.forward(randn({5, 2, 8}), randn({4, 2, 8}));
       })},
      {"BertModel", [] { return BertModel(tiny_bert()).ptr(); },
       run_as<BertModelImpl>([](BertModelImpl& m) {
         BertOutput out = m.forward(tensor({{2, 7, 19, 4}, {3, 3, 0, 0}}).to(kInt64),
                                    tensor({{1, 1, 1, 1}, {1, 1, 0, 0}}));
         return cat({out.last_hidden_state.flatten(), out.pooler_output.flatten()});
       })},
  };
}

class CloneTable : public ::testing::TestWithParam<CloneCase> {};

TEST_P(CloneTable, CopiesStateAndComputesWithItsOwnTensors) {
  const CloneCase& c = GetParam();
  manual_seed(2);
  std::shared_ptr<nn::Module> model = c.make();
  std::shared_ptr<nn::Module> copy = model->clone();
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(typeid(*copy), typeid(*model));
  EXPECT_EQ(copy->str(), model->str());
  auto a = model->state_dict(), b = copy->state_dict();
  ASSERT_EQ(a.size(), b.size());
  ASSERT_FALSE(a.empty());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].first, b[i].first);
    EXPECT_TRUE(tensor_equal(a[i].second, b[i].second)) << a[i].first;
    EXPECT_NE(a[i].second.storage(), b[i].second.storage()) << a[i].first << " is shared";
  }
  model->eval();
  copy->eval();
  Tensor before = c.run(*model);
  ASSERT_TRUE(tensor_equal(c.run(*copy), before));
  NoGradGuard no_grad;
  for (Tensor& p : copy->parameters()) p.add_(0.25);
  Tensor moved = c.run(*copy);
  EXPECT_FALSE(tensor_close(moved, before, 1e-6, 1e-6)) << "the copy computes with other tensors";
  EXPECT_TRUE(tensor_equal(c.run(*model), before)) << "moving the copy moved the original";
  for (Tensor& p : model->parameters()) p.add_(0.25);
  EXPECT_TRUE(tensor_close(c.run(*model), moved, 1e-6, 1e-6));
}

INSTANTIATE_TEST_SUITE_P(Layers, CloneTable, ::testing::ValuesIn(clone_cases()),
                         [](const auto& info) {
                           std::string name = info.param.name;
                           for (char& ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name;
                         });

class DataParallelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda::device_count() < 2) GTEST_SKIP() << "DataParallel needs two CUDA devices";
  }
  Device cuda0{kCUDA, 0}, cuda1{kCUDA, 1};
};

TEST_F(DataParallelTest, WholeBatchOutputsAndGradients) {
  manual_seed(3);
  nn::Sequential model(nn::Linear(6, 8), nn::Tanh(), nn::Linear(8, 3));
  model->to(cuda0, kFloat64);
  auto reference = model->clone();
  nn::parallel::DataParallel dp(model.ptr(), {.device_ids = {cuda0, cuda1}});
  Tensor x = randn({7, 6}, {.dtype = kFloat64});  // chunks of 4 and 3
  Tensor out = dp(x);
  EXPECT_EQ(out.device(), cuda0);
  Tensor ref = reference->forward(x.to(cuda0));
  EXPECT_TRUE(tensor_close(out, ref, 1e-12, 1e-12));
  (out * out).sum().backward();
  (ref * ref).sum().backward();
  auto p = model->parameters(), q = reference->parameters();
  for (size_t i = 0; i < p.size(); ++i) {
    ASSERT_TRUE(p[i].grad().defined());
    EXPECT_EQ(p[i].grad().device(), cuda0);
    EXPECT_TRUE(tensor_close(p[i].grad(), q[i].grad(), 1e-12, 1e-12)) << i;
  }
  // After a step the next forward's replica uses the new weights.
  optim::SGD(model->parameters(), {.lr = 0.1}).step();
  optim::SGD(reference->parameters(), {.lr = 0.1}).step();
  EXPECT_TRUE(tensor_close(dp(x), reference->forward(x.to(cuda0)), 1e-12, 1e-12));
  // Under no_grad nothing is recorded and outputs still match.
  NoGradGuard no_grad;
  EXPECT_FALSE(dp(x).requires_grad());
}

TEST_F(DataParallelTest, ReplicatesATransformerLayer) {
  manual_seed(6);
  nn::TransformerEncoderLayer layer(8, 2, {.dim_feedforward = 12, .batch_first = true});
  layer->to(cuda0, kFloat64);
  layer->eval();  // no dropout: the replicas' outputs are the reference's
  auto reference = layer->clone();
  nn::parallel::DataParallel dp(layer.ptr(), {.device_ids = {cuda0, cuda1}});
  Tensor x = randn({5, 3, 8}, {.dtype = kFloat64});  // chunks of 3 and 2 sequences
  Tensor out = dp(x);
  Tensor ref = reference->forward(x.to(cuda0));
  EXPECT_TRUE(tensor_close(out, ref, 1e-12, 1e-12));
  (out * out).sum().backward();
  (ref * ref).sum().backward();
  auto p = layer->named_parameters(), q = reference->named_parameters();
  ASSERT_EQ(p.size(), q.size());
  for (size_t i = 0; i < p.size(); ++i) {
    ASSERT_TRUE(p[i].second.grad().defined()) << p[i].first;
    EXPECT_TRUE(tensor_close(p[i].second.grad(), q[i].second.grad(), 1e-12, 1e-12)) << p[i].first;
  }
}

TEST_F(DataParallelTest, SplitsAlongDimAndGathersOnTheOutputDevice) {
  manual_seed(4);
  nn::Linear lin(5, 2);
  lin->to(cuda0);
  nn::parallel::DataParallel dp(lin.ptr(),
                                {.device_ids = {cuda0, cuda1}, .output_device = cuda1, .dim = 1});
  Tensor x = randn({3, 4, 5});
  Tensor out = dp(x);
  EXPECT_EQ(out.device(), cuda1);
  EXPECT_TRUE(tensor_close(out.cpu(), lin->forward(x.to(cuda0)).cpu(), 1e-6, 1e-6));
  // A batch of one runs on one device only.
  EXPECT_EQ(dp(randn({3, 1, 5})).sizes(), Shape({3, 1, 2}));
}

TEST_F(DataParallelTest, BatchNormKeepsTheFirstDevicesStatistics) {
  manual_seed(5);
  nn::Sequential model = small_cnn();
  model->to(cuda0);
  auto reference = model->clone();
  nn::parallel::DataParallel dp(model.ptr(), {.device_ids = {cuda0, cuda1}});
  Tensor x = randn({4, 1, 6, 6});
  dp(x);
  reference->forward(x.narrow(0, 0, 2).to(cuda0));  // what device 0 saw
  auto a = model->buffers(), b = reference->buffers();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(tensor_close(a[i], b[i], 1e-6, 1e-6)) << i;
  model->eval();
  reference->eval();
  EXPECT_TRUE(tensor_close(dp(x), reference->forward(x.to(cuda0)), 1e-5, 1e-5));
}

TEST_F(DataParallelTest, Errors) {
  nn::Linear lin(2, 2);  // on the CPU
  nn::parallel::DataParallel dp(lin.ptr(), {.device_ids = {cuda0, cuda1}});
  EXPECT_TRUE(throws_error(
      [&] {
        dp(zeros({4, 2}));
      },
      ErrorKind::Device, {"[DataParallel]", "cuda:0 (device_ids[0])", "'weight'", "cpu"}));
  EXPECT_TRUE(throws_error(
      [&] {
        nn::parallel::DataParallel(lin.ptr(), {.device_ids = {cuda0, cuda0}});
      },
      ErrorKind::Device, {"[DataParallel]", "listed twice"}));
  auto custom = std::make_shared<NoCloneImpl>();
  custom->to(cuda0);
  nn::parallel::DataParallel no_clone(custom, {.device_ids = {cuda0, cuda1}});
  EXPECT_TRUE(throws_error(
      [&] {
        no_clone(zeros({4, 2}, {.device = cuda0}));
      },
      ErrorKind::NotImplemented, {"[clone]", "NoClone"}));
}

// A world of one process (a file store in a fresh directory), for the single-process behaviour.
class SingleProcessGroup : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!distributed::is_gloo_available()) GTEST_SKIP() << "built without Gloo";
    dir_ = std::filesystem::temp_directory_path() / ("ember-pg-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    distributed::init_process_group({.backend = "gloo",
                                     .init_method = "file://" + (dir_ / "store").string(),
                                     .world_size = 1,
                                     .rank = 0});
  }
  void TearDown() override {
    distributed::destroy_process_group();
    std::filesystem::remove_all(dir_);
  }
  std::filesystem::path dir_;
};

TEST_F(SingleProcessGroup, BucketsArePyTorchsAssignment) {
  std::ifstream in(std::string(EMBER_REFERENCE_DIR) + "/distributed_reference.json");
  auto cases = nlohmann::json::parse(in).at("buckets");
  ASSERT_GE(cases.size(), 9u);
  for (const auto& c : cases) {
    auto model = std::make_shared<nn::ModuleListImpl>();
    // One module per parameter shape, parameters in the fixture's order.
    class Holder : public nn::Module {
     public:
      explicit Holder(const Shape& shape) : Module("P") { register_parameter("p", zeros(shape)); }
    };
    for (const auto& shape : c.at("shapes"))
      model->push_back_module(std::make_shared<Holder>(shape.get<std::vector<int64_t>>()));
    nn::parallel::DistributedDataParallel ddp(
        model, {.bucket_cap_mb = c.at("bucket_cap_mb").get<double>()});
    auto want = c.at("buckets").get<std::vector<std::vector<size_t>>>();
    EXPECT_EQ(ddp->bucket_indices(), want) << c.dump();
  }
}

TEST_F(SingleProcessGroup, GradientsAsWithoutIt) {
  manual_seed(9);
  nn::Sequential model(nn::Linear(4, 3), nn::ReLU(), nn::Linear(3, 2));
  auto reference = model->clone();
  nn::parallel::DistributedDataParallel ddp(model.ptr(), {.gradient_as_bucket_view = true});
  Tensor x = randn({5, 4});
  ddp(x).sum().backward();
  reference->forward(x).sum().backward();
  auto p = model->parameters(), q = reference->parameters();
  for (size_t i = 0; i < p.size(); ++i) EXPECT_TRUE(tensor_close(p[i].grad(), q[i].grad()));
  EXPECT_EQ(ddp->state_dict().front().first, "module.0.weight");
  // A second backward through the same forward accumulates locally, as PyTorch's does.
  model->zero_grad();
  Tensor y = ddp(x).sum();
  y.backward(Tensor(), true);
  y.backward();
  for (size_t i = 0; i < p.size(); ++i) EXPECT_TRUE(tensor_close(p[i].grad(), q[i].grad() * 2.0));
}

TEST_F(SingleProcessGroup, Errors) {
  nn::Sequential empty;
  EXPECT_TRUE(throws_error([&] { nn::parallel::DistributedDataParallel ddp(empty.ptr()); },
                           ErrorKind::Value, {"[DistributedDataParallel]", "no parameters"}));
  nn::Linear frozen(2, 2);
  for (Tensor p : frozen->parameters()) p.requires_grad_(false);
  EXPECT_TRUE(throws_error([&] { nn::parallel::DistributedDataParallel ddp(frozen.ptr()); },
                           ErrorKind::Value, {"[DistributedDataParallel]", "requires grad"}));
}

}  // namespace
}  // namespace ember
