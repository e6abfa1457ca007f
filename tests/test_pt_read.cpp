// Tests of io::load_pt against files Debian's torch 1.13 wrote (tests/reference/pt_reference.py):
// every dtype ember has in the zip and legacy containers and pickle protocols 2, 4 and 5; views
// and shared storages; nested values; a state_dict loaded strict into a module; an Adam, AdamW
// and SGD checkpoint continued for one step in ember and compared with PyTorch's next step; and
// files that must be refused with one clear error each.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "ember/io/pt.h"
#include "test_util.h"

namespace {

using namespace ember;
using io::PtValue;

std::string fixture(const std::string& name) {
  return std::string(EMBER_REFERENCE_DIR) + "/fixtures/pt/" + name;
}

std::vector<double> values(const Tensor& t) {
  Tensor d = t.to(kFloat64).contiguous();
  const double* p = d.data_ptr<double>();
  return std::vector<double>(p, p + d.numel());
}

std::string error_of(const std::string& path) {
  try {
    io::load_pt(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

std::string write_bytes(const std::string& name, const std::string& bytes) {
  std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(PtRead, EveryDtypeEveryContainerAndProtocol) {
  const std::vector<std::pair<std::string, DType>> want = {
      {"float64", kFloat64}, {"float32", kFloat32}, {"float16", kFloat16}, {"bfloat16", kBFloat16},
      {"int64", kInt64},     {"int32", kInt32},     {"uint8", kUInt8},     {"bool", kBool}};
  for (const char* file : {"dtypes_zip_p2.pt", "dtypes_zip_p4.pt", "dtypes_zip_p5.pt",
                           "dtypes_legacy_p2.pt", "dtypes_legacy_p4.pt"}) {
    SCOPED_TRACE(file);
    PtValue v = io::load_pt(fixture(file));
    ASSERT_TRUE(v.is_dict());
    EXPECT_TRUE(v.ordered());
    ASSERT_EQ(v.items().size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(v.items()[i].first.to_str(), want[i].first);
      const Tensor& t = v.items()[i].second.to_tensor();
      EXPECT_EQ(t.dtype(), want[i].second);
      EXPECT_EQ(t.sizes(), Shape({2, 3}));
      std::vector<double> expect = {0, 1, 2, 3, 4, 5};
      if (want[i].second == kBool) expect = {0, 1, 0, 1, 0, 1};
      EXPECT_EQ(values(t), expect);
    }
  }
}

TEST(PtRead, ViewsKeepStridesOffsetsAndShareStorage) {
  for (const char* file : {"views_zip.pt", "views_legacy.pt"}) {
    SCOPED_TRACE(file);
    PtValue v = io::load_pt(fixture(file));
    const Tensor& base = v.at("base").to_tensor();
    const Tensor& row = v.at("row_slice").to_tensor();
    const Tensor& tr = v.at("transpose").to_tensor();
    const Tensor& step = v.at("step").to_tensor();
    EXPECT_EQ(base.sizes(), Shape({4, 6}));
    EXPECT_EQ(row.storage_offset(), 6);
    EXPECT_EQ(row.sizes(), Shape({2, 6}));
    EXPECT_EQ(tr.strides(), Shape({1, 6}));
    EXPECT_EQ(step.strides(), Shape({6, 2}));
    EXPECT_EQ(step.storage_offset(), 1);
    for (const Tensor* t : {&row, &tr, &step}) EXPECT_EQ(t->storage(), base.storage());
    std::vector<double> b = values(base), r, t, s;
    for (int i = 6; i < 18; ++i) r.push_back(i);
    for (int j = 0; j < 6; ++j)
      for (int i = 0; i < 4; ++i) t.push_back(i * 6 + j);
    for (int i = 0; i < 4; ++i)
      for (int j = 1; j < 6; j += 2) s.push_back(i * 6 + j);
    EXPECT_EQ(values(row), r);
    EXPECT_EQ(values(tr), t);
    EXPECT_EQ(values(step), s);
    // the tied pair is one tensor: an in-place change shows through both
    Tensor emb = v.at("emb").to_tensor();
    EXPECT_EQ(emb.storage(), v.at("tied").to_tensor().storage());
    emb.add_(1.0);
    EXPECT_EQ(values(v.at("tied").to_tensor()), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  }
}

TEST(PtRead, NestedValues) {
  PtValue v = io::load_pt(fixture("nested.pt"));
  EXPECT_EQ(v.at("s").to_str(), "text");
  const auto& list = v.at(int64_t{7}).elements();
  ASSERT_EQ(list.size(), 5u);
  EXPECT_EQ(v.at(int64_t{7}).kind(), PtValue::Kind::List);
  EXPECT_EQ(list[0].to_int(), 1);
  EXPECT_EQ(list[1].to_int(), -2);
  EXPECT_EQ(list[2].to_double(), 3.5);
  EXPECT_TRUE(list[3].to_bool());
  EXPECT_TRUE(list[4].is_none());
  const PtValue& t = v.at("t");
  ASSERT_EQ(t.kind(), PtValue::Kind::Tuple);
  EXPECT_EQ(values(t.elements()[0].to_tensor()), (std::vector<double>{1, 2}));
  EXPECT_EQ(t.elements()[1].to_str(), "x");
  EXPECT_EQ(t.elements()[2].elements()[1].to_int(), 2);
  const PtValue& size = v.at("size");  // torch.Size: a tuple of ints
  ASSERT_EQ(size.kind(), PtValue::Kind::Tuple);
  EXPECT_EQ(size.elements()[0].to_int(), 2);
  EXPECT_EQ(size.elements()[1].to_int(), 3);
  EXPECT_EQ(v.at("big").to_int(), int64_t{1} << 40);
  EXPECT_EQ(v.at("neg").to_int(), -(int64_t{1} << 33));
  EXPECT_EQ(v.at("bytes").kind(), PtValue::Kind::Bytes);
  EXPECT_EQ(v.at("bytes").to_str(), std::string("\x00\xff"
                                                "ab",
                                                4));
  // lookups and conversions that do not fit say what is there
  try {
    v.at("missing");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no key 'missing' in the dict; its keys: 's', 7, 't'"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(v.at("s").to_int(), Error);
  EXPECT_THROW(v.to_named_tensors(), Error);
}

nn::Sequential fixture_model() {
  return nn::Sequential(nn::Linear(3, 4), nn::LayerNorm(std::vector<int64_t>{4}), nn::Linear(4, 2));
}

TEST(PtRead, StateDictLoadsStrictIntoAModule) {
  PtValue v = io::load_pt(fixture("state_dict.pt"));
  io::NamedTensors sd = v.to_named_tensors();
  ASSERT_EQ(sd.size(), 6u);
  EXPECT_EQ(sd[0].first, "0.weight");
  EXPECT_EQ(sd[5].first, "2.bias");
  auto model = fixture_model();
  model->load_state_dict(sd);
  EXPECT_EQ(values(model->state_dict()[2].second), (std::vector<double>{1, 1, 1, 1}));
  EXPECT_EQ(values(model->state_dict()[0].second), values(sd[0].second));
  // a module that does not match: PyTorch's strict message
  auto other = nn::Sequential(nn::Linear(3, 4));
  try {
    other->load_state_dict(sd);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Unexpected key(s)"), std::string::npos) << e.what();
  }
}

TEST(PtRead, ParameterKeepsRequiresGrad) {
  PtValue v = io::load_pt(fixture("parameter.pt"));
  EXPECT_TRUE(v.is_parameter());
  EXPECT_TRUE(v.to_tensor().requires_grad());
  EXPECT_EQ(values(v.to_tensor()), (std::vector<double>{0.25, -0.5}));
}

// The checkpoint after three steps in PyTorch, one more step in ember, against PyTorch's fourth.
template <class Opt, class Options>
void continue_training(const std::string& name, Options options) {
  SCOPED_TRACE(name);
  PtValue ckpt = io::load_pt(fixture("optim_" + name + ".pt"));
  auto model = fixture_model();
  model->load_state_dict(ckpt.at("model").to_named_tensors());
  Opt opt(model->parameters(), options);
  opt.load_state_dict(io::optimizer_state_from_pt(ckpt.at("optim")));
  Tensor x = linspace(-1.0, 1.0, 15).reshape({5, 3});
  Tensor y = linspace(0.5, -0.5, 10).reshape({5, 2});
  opt.zero_grad();
  nn::functional::mse_loss(model->forward(x), y).backward();
  opt.step();
  io::NamedTensors next = io::load_pt(fixture("optim_" + name + "_next.pt")).to_named_tensors();
  io::NamedTensors ours = model->state_dict();
  ASSERT_EQ(ours.size(), next.size());
  for (size_t i = 0; i < ours.size(); ++i) {
    EXPECT_EQ(ours[i].first, next[i].first);
    std::vector<double> a = values(ours[i].second), b = values(next[i].second);
    for (size_t k = 0; k < a.size(); ++k) EXPECT_NEAR(a[k], b[k], 2e-6) << ours[i].first;
  }
}

TEST(PtRead, OptimizerCheckpointsContinueAsInPyTorch) {
  // The options given here are deliberately not the checkpoint's: load_state_dict restores them.
  continue_training<optim::Adam>("adam", optim::AdamOptions{});
  continue_training<optim::AdamW>("adamw", optim::AdamWOptions{});
  continue_training<optim::SGD>("sgd", optim::SGDOptions{.lr = 1.0, .momentum = 0.5});
}

TEST(PtRead, OptimizerStateOfAnotherKindIsRefusedByName) {
  PtValue ckpt = io::load_pt(fixture("optim_sgd.pt"));
  auto model = fixture_model();
  optim::Adam opt(model->parameters());
  try {
    opt.load_state_dict(io::optimizer_state_from_pt(ckpt.at("optim")));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown option"), std::string::npos) << e.what();
  }
}

void expect_refused(const std::string& path, const std::string& needle) {
  std::string what = error_of(path);
  EXPECT_NE(what.find(needle), std::string::npos) << what;
  EXPECT_NE(what.find("load_pt"), std::string::npos) << what;
}

TEST(PtRead, DtypesEmberLacksAreNamed) {
  expect_refused(fixture("complex.pt"), "a complex64 tensor (torch.ComplexFloatStorage)");
  expect_refused(fixture("int16.pt"), "ember has no int16 dtype");
  expect_refused(fixture("int8.pt"), "ember has no int8 dtype");
}

TEST(PtRead, MaliciousGlobalIsRefusedAndNothingRuns) {
  expect_refused(fixture("malicious.pt"), "global 'posix.system' is not allowed");
}

TEST(PtRead, HostileFilesAreRefused) {
  const std::string zip = read_bytes(fixture("views_zip.pt"));
  const std::string legacy = read_bytes(fixture("views_legacy.pt"));
  expect_refused(write_bytes("empty.pt", ""), "not a PyTorch checkpoint");
  expect_refused(write_bytes("text.pt", "hello, this is not a checkpoint"),
                 "not a PyTorch checkpoint");
  // truncated anywhere: each cut gives an error, never a crash
  for (const std::string* whole : {&zip, &legacy}) {
    for (size_t cut :
         {size_t{3}, size_t{40}, whole->size() / 2, whole->size() - 30, whole->size() - 1}) {
      SCOPED_TRACE(cut);
      EXPECT_NE(error_of(write_bytes("cut.pt", whole->substr(0, cut))), "no error");
    }
  }
  // the legacy file's first storage claiming more elements than the file holds
  std::string big = legacy;
  const std::string keys_end = "e.";  // APPENDS then STOP ends the storage-key list
  size_t at = big.find(keys_end, big.size() - 24 * 4 - 6 * 4 - 40);
  ASSERT_NE(at, std::string::npos);
  at += 2;
  for (int b = 0; b < 8; ++b) big[at + static_cast<size_t>(b)] = b == 6 ? '\x7f' : '\0';
  expect_refused(write_bytes("big.pt", big), "claims");
}

// ember -> file -> ember: structure, values, strides, offsets and shared storages survive.
TEST(PtRead, RoundTripsWhatSavePtWrites) {
  Tensor base = arange(24, {.dtype = kFloat32}).reshape({4, 6});
  Tensor half = arange(5, {.dtype = kBFloat16});
  PtValue value = PtValue::dict(
      {{"base", PtValue(base)},
       {"t", PtValue(base.t())},
       {"rows", PtValue(base.slice(0, 1, 3))},
       {"half", PtValue(half, true)},
       {int64_t{3}, PtValue::list({PtValue(1.5), PtValue(int64_t{1} << 50), PtValue(true),
                                   PtValue(), PtValue::tuple({PtValue("x")})})},
       {"raw", PtValue::bytes(std::string("\0\xff", 2))}},
      true);
  const std::string path = ::testing::TempDir() + "round_trip.pt";
  io::save_pt(path, value);
  PtValue back = io::load_pt(path);
  ASSERT_TRUE(back.ordered());
  ASSERT_EQ(back.items().size(), 6u);
  const Tensor& b = back.at("base").to_tensor();
  const Tensor& t = back.at("t").to_tensor();
  const Tensor& rows = back.at("rows").to_tensor();
  EXPECT_EQ(values(b), values(base));
  EXPECT_EQ(t.strides(), Shape({1, 6}));
  EXPECT_EQ(rows.storage_offset(), 6);
  EXPECT_EQ(t.storage(), b.storage());
  EXPECT_EQ(rows.storage(), b.storage());
  EXPECT_EQ(values(t), values(base.t()));
  EXPECT_TRUE(back.at("half").is_parameter());
  EXPECT_EQ(back.at("half").to_tensor().dtype(), kBFloat16);
  EXPECT_EQ(values(back.at("half").to_tensor()), values(half));
  const auto& list = back.at(int64_t{3}).elements();
  EXPECT_EQ(list[0].to_double(), 1.5);
  EXPECT_EQ(list[1].to_int(), int64_t{1} << 50);
  EXPECT_TRUE(list[2].to_bool());
  EXPECT_TRUE(list[3].is_none());
  EXPECT_EQ(list[4].elements()[0].to_str(), "x");
  EXPECT_EQ(back.at("raw").to_str(), std::string("\0\xff", 2));
}

// map_location: every storage moves once to the device, and the views keep sharing it there.
class PtDeviceTest : public ember::testing::DeviceTest {};

TEST_P(PtDeviceTest, LoadsOntoTheDeviceKeepingSharedStorage) {
  PtValue v = io::load_pt(fixture("views_zip.pt"), device());
  const Tensor& base = v.at("base").to_tensor();
  const Tensor& tr = v.at("transpose").to_tensor();
  EXPECT_EQ(base.device(), resolve_device(device()));
  EXPECT_EQ(tr.storage(), base.storage());
  EXPECT_EQ(tr.strides(), Shape({1, 6}));
  EXPECT_EQ(values(tr.cpu()), values(base.cpu().t()));
}

EMBER_INSTANTIATE_DEVICE_TESTS(PtDeviceTest);

}  // namespace
