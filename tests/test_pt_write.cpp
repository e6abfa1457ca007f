// Tests of save_pt (ember/io/pt.h), the writer of PyTorch checkpoint files: the archive's members
// and their alignment, the pickle decoded with ember's own reader (io/pickle.h) and compared byte
// for byte with what torch 1.13's torch.save wrote for the same values (the committed fixtures),
// storages shared by views and tied tensors written once, tensors on other devices, atomic writes
// and the values that cannot be written. PyTorch itself loads ember's files in interop.pytorch.
#include <zip.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "ember/error.h"
#include "ember/io/pt.h"
#include "io/pickle.h"
#include "io_test_util.h"

namespace ember::testing {
namespace {

using io::PtValue;
using io::detail::PickleRef;
using Kind = io::detail::PickleValue::Kind;

struct Member {
  std::string name;
  std::string data;
  bool stored = false;
  uint64_t data_offset = 0;  // where the member's data starts in the file
};

// The members of a zip archive in file order, read with libzip; their data offsets from the
// local headers.
std::vector<Member> members_of(const std::string& path) {
  int err = 0;
  zip_t* za = zip_open(path.c_str(), ZIP_RDONLY, &err);
  EXPECT_NE(za, nullptr) << path << ": libzip error " << err;
  std::vector<Member> out;
  if (!za) return out;
  std::ifstream in(path, std::ios::binary);
  const std::string raw((std::istreambuf_iterator<char>(in)), {});
  for (zip_int64_t i = 0; i < zip_get_num_entries(za, 0); ++i) {
    zip_stat_t st;
    zip_stat_index(za, static_cast<zip_uint64_t>(i), 0, &st);
    Member m;
    m.name = st.name;
    m.stored = st.comp_method == ZIP_CM_STORE;
    m.data.resize(st.size);
    zip_file_t* f = zip_fopen_index(za, static_cast<zip_uint64_t>(i), 0);
    EXPECT_EQ(zip_fread(f, m.data.data(), st.size), static_cast<zip_int64_t>(st.size));
    zip_fclose(f);
    out.push_back(std::move(m));
  }
  zip_close(za);
  // local headers: 30 bytes, then name and extra field, then the data (stored), then a data
  // descriptor where flag bit 3 says so (torch's writer; libzip writes none)
  uint64_t at = 0;
  for (auto& m : out) {
    auto u16 = [&](uint64_t o) {
      return static_cast<uint64_t>(static_cast<uint8_t>(raw[o])) |
             static_cast<uint64_t>(static_cast<uint8_t>(raw[o + 1])) << 8;
    };
    EXPECT_EQ(raw.compare(at, 4, "PK\x03\x04"), 0) << m.name;
    const bool descriptor = (u16(at + 6) & 8) != 0;
    m.data_offset = at + 30 + u16(at + 26) + u16(at + 28);
    at = m.data_offset + m.data.size();
    if (descriptor) at += (raw.compare(at, 4, "PK\x07\x08") == 0 ? 4 : 0) + 12;
  }
  return out;
}

::testing::AssertionResult has(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' lacks '" << part << "'";
}

const Member* find_member(const std::vector<Member>& members, const std::string& name) {
  for (const auto& m : members)
    if (m.name == name) return &m;
  return nullptr;
}

std::string pickle_of(const std::vector<Member>& members) {
  for (const auto& m : members)
    if (m.name.ends_with("/data.pkl")) return m.data;
  ADD_FAILURE() << "no data.pkl";
  return "";
}

std::string bytes_of(const Tensor& t) {
  Tensor c = t.cpu().contiguous();
  return std::string(static_cast<const char*>(c.raw_data_ptr()), c.nbytes());
}

class PtWriteTest : public IoTest {
 protected:
  // Saves `value`, returns the archive's members.
  std::vector<Member> save(const PtValue& value, const std::string& name = "model.pt") {
    io::save_pt(path(name), value);
    return members_of(path(name));
  }
  PickleRef decoded(const std::vector<Member>& members) {
    return io::detail::read_pickle(pickle_of(members), "data.pkl");
  }
  std::string error_of(const PtValue& value, const std::string& name = "bad.pt") {
    try {
      io::save_pt(path(name), value);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  }
};

// The fields of _rebuild_tensor_v2(pid, offset, size, stride, requires_grad, hooks).
struct Rebuilt {
  std::string storage_class, key, location;
  int64_t numel = -1, offset = -1;
  std::vector<int64_t> sizes, strides;
  bool requires_grad = false;
};

std::vector<int64_t> ints_of(const PickleRef& tuple) {
  EXPECT_EQ(tuple->kind, Kind::Tuple);
  std::vector<int64_t> out;
  for (const auto& i : tuple->items) out.push_back(i->integer);
  return out;
}

Rebuilt rebuilt(const PickleRef& call) {
  Rebuilt r;
  EXPECT_EQ(call->kind, Kind::Call);
  if (call->kind != Kind::Call) return r;
  EXPECT_EQ(call->items[0]->text, "torch._utils._rebuild_tensor_v2");
  const auto& args = call->items[1]->items;
  EXPECT_EQ(args.size(), 6u);
  EXPECT_EQ(args[0]->kind, Kind::PersistentId);
  const auto& pid = args[0]->items[0]->items;
  EXPECT_EQ(pid.size(), 5u);
  EXPECT_EQ(pid[0]->text, "storage");
  r.storage_class = pid[1]->text;
  r.key = pid[2]->text;
  r.location = pid[3]->text;
  r.numel = pid[4]->integer;
  r.offset = args[1]->integer;
  r.sizes = ints_of(args[2]);
  r.strides = ints_of(args[3]);
  r.requires_grad = args[4]->boolean;
  EXPECT_EQ(args[5]->kind, Kind::Call);
  EXPECT_EQ(args[5]->items[0]->text, "collections.OrderedDict");
  return r;
}

// The value stored under a str key of a decoded dict.
PickleRef at(const PickleRef& dict, const std::string& key) {
  const size_t first = dict->kind == Kind::Call ? 2 : 0;  // an OrderedDict: callable, args, ...
  for (size_t i = first; i + 1 < dict->items.size(); i += 2)
    if (dict->items[i]->kind == Kind::Str && dict->items[i]->text == key) return dict->items[i + 1];
  ADD_FAILURE() << "no key " << key;
  return std::make_shared<io::detail::PickleValue>();
}

TEST_P(PtWriteTest, MembersAreTorchsStoredAndAligned) {
  Tensor w = tensor({{1.0, 2.0}, {3.0, 4.0}}, on());
  const auto members = save(PtValue::dict({{"w", w}}), "my.model.pt");
  ASSERT_EQ(members.size(), 4u);
  // torch.save names the folder after the file (up to its last dot)
  EXPECT_EQ(members[0].name, "my.model/data.pkl");
  EXPECT_EQ(members[1].name, "my.model/byteorder");
  EXPECT_EQ(members[2].name, "my.model/data/0");
  EXPECT_EQ(members[3].name, "my.model/version");
  EXPECT_EQ(members[1].data, "little");
  EXPECT_EQ(members[3].data, "3\n");
  EXPECT_EQ(members[2].data, bytes_of(w));
  for (const auto& m : members) {
    EXPECT_TRUE(m.stored) << m.name;
    EXPECT_EQ(m.data_offset % 64, 0u) << m.name << " starts at " << m.data_offset;
  }
  EXPECT_EQ(pickle_of(members).substr(0, 2), std::string("\x80\x02", 2));  // PROTO 2
  EXPECT_EQ(pickle_of(members).back(), '.');
  // a name with nothing printable to keep falls back to torch's stream name
  EXPECT_EQ(save(PtValue(), ".pt")[0].name, "archive/data.pkl");
  // the same value, the same bytes (no time stamps)
  io::save_pt(path("again.pt"), PtValue::dict({{"w", w}}));
  const std::string first = read(path("again.pt"));
  io::save_pt(path("again.pt"), PtValue::dict({{"w", w}}));
  EXPECT_EQ(read(path("again.pt")), first);
}

// torch.save's pickle for the same values, byte for byte: the fixtures torch 1.13 wrote.
TEST_P(PtWriteTest, PickleIsTorchsByteForByte) {
  if (device() != Device(kCPU)) GTEST_SKIP() << "the pickle does not depend on the device";
  const std::string fixtures = std::string(EMBER_REFERENCE_DIR) + "/fixtures/pt/";
  {
    // torch.nn.Parameter(torch.tensor([0.25, -0.5]))
    Tensor p = tensor({0.25, -0.5});
    p.requires_grad_(true);
    const auto ours = save(PtValue(p, true), "parameter.pt");
    const auto torchs = members_of(fixtures + "parameter.pt");
    EXPECT_EQ(pickle_of(ours), pickle_of(torchs));
    EXPECT_EQ(find_member(ours, "parameter/data/0")->data,
              find_member(torchs, "parameter/data/0")->data);
  }
  {
    // views(): base, row slice, transpose, step view, and a tied pair (the same tensor twice)
    Tensor base = arange(24, {.dtype = kFloat32}).reshape({4, 6});
    Tensor emb = arange(6, {.dtype = kFloat32}).reshape({3, 2});
    const auto value = PtValue::dict({{"base", base},
                                      {"row_slice", base.slice(0, 1, 3)},
                                      {"transpose", base.t()},
                                      {"step", base.slice(1, 1, std::nullopt, 2)},
                                      {"emb", emb},
                                      {"tied", emb}});
    const auto ours = save(value, "views_zip.pt");
    const auto torchs = members_of(fixtures + "views_zip.pt");
    EXPECT_EQ(pickle_of(ours), pickle_of(torchs));
    for (const char* key : {"views_zip/data/0", "views_zip/data/1"}) {
      ASSERT_NE(find_member(ours, key), nullptr) << key;
      EXPECT_EQ(find_member(ours, key)->data, find_member(torchs, key)->data) << key;
    }
  }
}

TEST_P(PtWriteTest, ValuesDecodeAsWritten) {
  const int64_t i64_min = std::numeric_limits<int64_t>::min();
  const int64_t i64_max = std::numeric_limits<int64_t>::max();
  const std::vector<int64_t> ints = {0,         1,
                                     255,       256,
                                     65535,     65536,
                                     -1,        -2,
                                     INT32_MAX, INT32_MIN,
                                     1LL << 31, -(1LL << 31) - 1,
                                     1LL << 40, -(1LL << 33),
                                     i64_min,   i64_max};
  std::vector<PtValue> int_values(ints.begin(), ints.end());
  const std::string long_bytes(300, '\xff');
  const auto value = PtValue::dict({
      {"none", PtValue()},
      {"yes", true},
      {"no", false},
      {"ints", PtValue::list(int_values)},
      {"floats", PtValue::tuple({3.5, -0.0, 1e300})},
      {"text", "h\xc3\xa9llo \xe2\x82\xac"},
      {"short_bytes", PtValue::bytes(std::string("\x00\x01", 2))},
      {"long_bytes", PtValue::bytes(long_bytes)},
      {"tuples", PtValue::list({PtValue::tuple({}), PtValue::tuple({1}), PtValue::tuple({1, 2}),
                                PtValue::tuple({1, 2, 3}), PtValue::tuple({1, 2, 3, 4, 5})})},
      {"int_keys", PtValue::dict({{0, "a"}, {7, PtValue::list({})}})},
      {"ordered", PtValue::dict({{"b", 2}, {"a", 1}}, true)},
      {"empty_ordered", PtValue::dict({}, true)},
      {"one", PtValue::dict({{"k", PtValue::list({1})}})},
  });
  const auto members = save(value);
  const std::string pickle = pickle_of(members);
  // protocol 2 throughout: no FRAME, SHORT_BINUNICODE, MEMOIZE or STACK_GLOBAL of protocol 4
  const auto v = decoded(members);
  ASSERT_EQ(v->kind, Kind::Dict);
  EXPECT_EQ(at(v, "none")->kind, Kind::None);
  EXPECT_TRUE(at(v, "yes")->boolean);
  EXPECT_FALSE(at(v, "no")->boolean);
  const auto decoded_ints = at(v, "ints");
  ASSERT_EQ(decoded_ints->items.size(), ints.size());
  for (size_t i = 0; i < ints.size(); ++i) EXPECT_EQ(decoded_ints->items[i]->integer, ints[i]) << i;
  const auto floats = at(v, "floats");
  ASSERT_EQ(floats->items.size(), 3u);
  EXPECT_EQ(floats->items[0]->floating, 3.5);
  EXPECT_TRUE(std::signbit(floats->items[1]->floating));
  EXPECT_EQ(floats->items[2]->floating, 1e300);
  EXPECT_EQ(at(v, "text")->text, "h\xc3\xa9llo \xe2\x82\xac");
  EXPECT_EQ(at(v, "short_bytes")->kind, Kind::Bytes);
  EXPECT_EQ(at(v, "short_bytes")->text, std::string("\x00\x01", 2));
  EXPECT_EQ(at(v, "long_bytes")->text, long_bytes);
  const auto tuples = at(v, "tuples");
  ASSERT_EQ(tuples->items.size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(tuples->items[i]->kind, Kind::Tuple);
    EXPECT_EQ(tuples->items[i]->items.size(), i < 4 ? i : 5);
  }
  const auto int_keys = at(v, "int_keys");
  ASSERT_EQ(int_keys->items.size(), 4u);
  EXPECT_EQ(int_keys->items[2]->integer, 7);
  EXPECT_EQ(int_keys->items[3]->kind, Kind::List);
  const auto ordered = at(v, "ordered");
  ASSERT_EQ(ordered->kind, Kind::Call);
  EXPECT_EQ(ordered->items[0]->text, "collections.OrderedDict");
  ASSERT_EQ(ordered->items.size(), 6u);
  EXPECT_EQ(ordered->items[2]->text, "b");  // file order kept
  EXPECT_EQ(ordered->items[5]->integer, 1);
  EXPECT_EQ(at(v, "empty_ordered")->items.size(), 2u);
  EXPECT_EQ(at(at(v, "one"), "k")->items.size(), 1u);
  // Python's encodings: 2**40 as LONG1 of 6 bytes, -2**33 of 5, 2**31 as LONG1 too
  EXPECT_NE(pickle.find(std::string("\x8a\x06\x00\x00\x00\x00\x00\x01", 8)), std::string::npos);
  EXPECT_NE(pickle.find(std::string("\x8a\x05\x00\x00\x00\x00\xfe", 7)), std::string::npos);
  EXPECT_NE(pickle.find(std::string("\x8a\x05\x00\x00\x00\x80\x00", 7)), std::string::npos);
  EXPECT_NE(pickle.find(std::string("C\x02\x00\x01", 4)), std::string::npos);      // SHORT_BINBYTES
  EXPECT_NE(pickle.find(std::string("B\x2c\x01\x00\x00", 5)), std::string::npos);  // BINBYTES
}

TEST_P(PtWriteTest, LongContainersAreBatchedAndMemoIndicesGrow) {
  // more than 1000 items (APPENDS/SETITEMS in batches) and more than 256 memo entries
  std::vector<PtValue> list;
  std::vector<PtValue::Item> items;
  for (int i = 0; i < 2500; ++i) {
    list.emplace_back("s" + std::to_string(i));
    items.emplace_back(i, PtValue::list({}));
  }
  const PtValue shared = PtValue::list({1, 2});
  items.emplace_back(-1, shared);
  items.emplace_back(-2, shared);
  const auto v = decoded(save(PtValue::tuple({PtValue::list(list), PtValue::dict(items)})));
  const auto& l = v->items[0]->items;
  ASSERT_EQ(l.size(), 2500u);
  EXPECT_EQ(l[2499]->text, "s2499");
  const auto& d = v->items[1]->items;
  ASSERT_EQ(d.size(), 2 * 2502u);
  EXPECT_EQ(d[2 * 1999]->integer, 1999);
  // a PtValue used twice is pickled once and fetched from the memo, as Python would
  EXPECT_EQ(d[2 * 2500 + 1].get(), d[2 * 2501 + 1].get());
}

TEST_P(PtWriteTest, SharedStoragesAreWrittenOnce) {
  Tensor base = arange(24, {.dtype = kFloat32, .device = device()}).reshape({4, 6});
  Tensor other = arange(5, {.dtype = kInt64, .device = device()});
  Tensor tied = tensor({1.0, 2.0}, on(kFloat16));
  const auto value = PtValue::dict({{"base", base},
                                    {"col", base.slice(1, 2, 3)},
                                    {"other", other},
                                    {"t", base.t()},
                                    {"tied_a", tied},
                                    {"tied_b", tied},
                                    {"step", base.slice(0, 1, std::nullopt, 2)}},
                                   true);
  const auto members = save(value, "shared.pt");
  std::vector<std::string> names;
  for (const auto& m : members) names.push_back(m.name);
  EXPECT_EQ(names, (std::vector<std::string>{"shared/data.pkl", "shared/byteorder", "shared/data/0",
                                             "shared/data/1", "shared/data/2", "shared/version"}));
  EXPECT_EQ(members[2].data, bytes_of(base));
  EXPECT_EQ(members[3].data, bytes_of(other));
  EXPECT_EQ(members[4].data, bytes_of(tied));
  const auto v = decoded(members);
  const auto b = rebuilt(at(v, "base")), col = rebuilt(at(v, "col")), t = rebuilt(at(v, "t"));
  const auto step = rebuilt(at(v, "step")), o = rebuilt(at(v, "other"));
  EXPECT_EQ(b.storage_class, "torch.FloatStorage");
  EXPECT_EQ(b.location, "cpu");  // copied to the host, whatever the device
  EXPECT_EQ(b.numel, 24);
  EXPECT_EQ(o.storage_class, "torch.LongStorage");
  EXPECT_EQ(o.key, "1");
  for (const auto& r : {col, t, step}) {
    EXPECT_EQ(r.key, "0");
    EXPECT_EQ(r.numel, 24);
  }
  EXPECT_EQ(col.offset, 2);
  EXPECT_EQ(col.sizes, (std::vector<int64_t>{4, 1}));
  EXPECT_EQ(col.strides, (std::vector<int64_t>{6, 1}));
  EXPECT_EQ(t.sizes, (std::vector<int64_t>{6, 4}));
  EXPECT_EQ(t.strides, (std::vector<int64_t>{1, 6}));
  EXPECT_EQ(step.offset, 6);
  EXPECT_EQ(step.strides, (std::vector<int64_t>{12, 1}));
  // the same tensor twice is one object in the pickle (BINGET), as torch.save writes it
  EXPECT_EQ(at(v, "tied_a").get(), at(v, "tied_b").get());
  EXPECT_EQ(rebuilt(at(v, "tied_a")).storage_class, "torch.HalfStorage");
}

TEST_P(PtWriteTest, ViewsWriteTheirWholeStorage) {
  Tensor base = arange(10, {.dtype = kInt32, .device = device()});
  const auto members = save(PtValue::list({base.slice(0, 7, 9)}));
  EXPECT_EQ(members[2].data, bytes_of(base));  // all 10 elements, as torch.save does
  const auto r = rebuilt(decoded(members)->items[0]);
  EXPECT_EQ(r.numel, 10);
  EXPECT_EQ(r.offset, 7);
  EXPECT_EQ(r.sizes, std::vector<int64_t>{2});
}

TEST_P(PtWriteTest, EveryDtypeAndParameters) {
  const std::vector<std::pair<DType, std::string>> dtypes = {
      {kBool, "BoolStorage"},     {kUInt8, "ByteStorage"},    {kInt32, "IntStorage"},
      {kInt64, "LongStorage"},    {kFloat16, "HalfStorage"},  {kBFloat16, "BFloat16Storage"},
      {kFloat32, "FloatStorage"}, {kFloat64, "DoubleStorage"}};
  std::vector<PtValue::Item> items;
  for (const auto& [dt, name] : dtypes) items.emplace_back(name, tensor({1, 0, 1}, on(dt)));
  Tensor w = tensor({0.5, 1.5}, on());
  w.requires_grad_(true);
  items.emplace_back("param", PtValue(w, true));
  items.emplace_back("param_again", PtValue(w, true));
  items.emplace_back("frozen", PtValue(tensor({1.0}, on()), true));
  items.emplace_back("scalar", tensor(2.0, on(kFloat64)));
  items.emplace_back("empty", zeros({0, 3}, on()));
  const auto members = save(PtValue::dict(items));
  const auto v = decoded(members);
  for (size_t i = 0; i < dtypes.size(); ++i) {
    const auto r = rebuilt(at(v, dtypes[i].second));
    EXPECT_EQ(r.storage_class, "torch." + dtypes[i].second);
    EXPECT_EQ(find_member(members, "model/data/" + r.key)->data,
              bytes_of(tensor({1, 0, 1}, on(dtypes[i].first))));
  }
  const auto param = at(v, "param");
  ASSERT_EQ(param->kind, Kind::Call);
  EXPECT_EQ(param->items[0]->text, "torch._utils._rebuild_parameter");
  const auto& args = param->items[1]->items;
  ASSERT_EQ(args.size(), 3u);
  EXPECT_FALSE(rebuilt(args[0]).requires_grad);  // the parameter's .data
  EXPECT_TRUE(args[1]->boolean);
  EXPECT_EQ(param.get(), at(v, "param_again").get());
  EXPECT_FALSE(at(v, "frozen")->items[1]->items[1]->boolean);
  const auto scalar = rebuilt(at(v, "scalar"));
  EXPECT_TRUE(scalar.sizes.empty());
  EXPECT_TRUE(scalar.strides.empty());
  const auto empty = rebuilt(at(v, "empty"));
  EXPECT_EQ(empty.numel, 0);
  EXPECT_EQ(find_member(members, "model/data/" + empty.key)->data, "");
}

TEST_P(PtWriteTest, StateDictIsAnOrderedDict) {
  io::NamedTensors named = {{"layer.weight", tensor({{1.0, 2.0}}, on())},
                            {"layer.bias", tensor({3.0}, on())}};
  const auto v = decoded(save(PtValue::state_dict(named)));
  ASSERT_EQ(v->kind, Kind::Call);
  EXPECT_EQ(v->items[0]->text, "collections.OrderedDict");
  EXPECT_EQ(v->items[2]->text, "layer.weight");
  EXPECT_EQ(rebuilt(v->items[5]).sizes, std::vector<int64_t>{1});
}

TEST_P(PtWriteTest, RefusesWhatPythonCouldNotLoad) {
  auto error = [&](const PtValue& v) { return error_of(v); };
  EXPECT_THROW(PtValue{Tensor{}}, Error);  // PtValue itself refuses an undefined tensor
  EXPECT_TRUE(has(error(PtValue::list({1, std::string("\xff\xfe")})),
                  "value[1] is a str that is not valid UTF-8"));
  EXPECT_TRUE(has(error(PtValue::list({std::string("\xc0\x80")})), "not valid UTF-8"));  // overlong
  EXPECT_TRUE(
      has(error(PtValue::list({std::string("\xe2\x82")})), "not valid UTF-8"));  // cut short
  EXPECT_TRUE(has(error(PtValue::dict({{PtValue::list({}), 1}})),
                  "the root value has a key that is a list, which Python cannot hash"));
  EXPECT_TRUE(has(error(PtValue::dict({{PtValue::tuple({PtValue::dict({})}), 1}})), "cannot hash"));
  EXPECT_TRUE(has(error(PtValue::dict({{"a", PtValue::dict({{"k", 1}, {"k", 2}})}})),
                  "value['a'] has the key ['k'] twice"));
  // as deep as ember's reader goes: a Parameter (7 levels of pickle) under 992 lists loads
  // again; one list more is refused
  Tensor p = tensor({1.0}, on());
  p.requires_grad_(true);
  PtValue deep(p, true);
  for (int i = 0; i < 992; ++i) deep = PtValue::list({deep});
  EXPECT_EQ(decoded(save(deep))->kind, Kind::List);
  EXPECT_TRUE(has(error(PtValue::list({deep})), "nested more than 992 levels"));
  EXPECT_TRUE(has(error(PtValue()), "no error"));
  // each message starts with the op and names the file
  EXPECT_EQ(
      error(PtValue::list({std::string("\xff")})).rfind("[save_pt] '" + path("bad.pt") + "': ", 0),
      0u);
}

TEST_P(PtWriteTest, WritesAtomically) {
  // a value that cannot be written leaves an existing file as it was, and no temporaries
  const std::string p = path("keep.pt");
  io::save_pt(p, PtValue::dict({{"w", tensor({1.0}, on())}}));
  const std::string before = read(p);
  const PtValue bad = PtValue::list({tensor({2.0}, on()), std::string("\xff")});
  EXPECT_THROW(io::save_pt(p, bad), Error);
  EXPECT_EQ(read(p), before);
  EXPECT_THROW(io::save_pt(path("new.pt"), bad), Error);
  EXPECT_FALSE(std::filesystem::exists(path("new.pt")));
  // a directory that does not exist: an IO error naming the path, nothing written
  try {
    io::save_pt(path("missing/x.pt"), PtValue(1));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::IO);
    EXPECT_TRUE(has(e.what(), "missing/x.pt"));
  }
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
    EXPECT_EQ(entry.path().filename(), "keep.pt");
    ++files;
  }
  EXPECT_EQ(files, 1u);
}

EMBER_INSTANTIATE_DEVICE_TESTS(PtWriteTest);

}  // namespace
}  // namespace ember::testing
