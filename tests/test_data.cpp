// tests/test_data.cpp: data loading -- TensorDataset, map, the default get_batch, DataLoader
// batching, shuffling, drop_last, seed determinism across worker counts, early exit, worker
// errors and the device option; MNIST IDX files (synthetic, gzip and raw, and corrupt ones) and,
// when installed, the real Fashion-MNIST.
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "ember/data.h"
#include "test_util.h"

namespace ember {
namespace {

namespace fs = std::filesystem;
using data::DataLoader;
using data::DataLoaderOptions;
using data::Dataset;
using data::Example;
using data::MNIST;
using data::TensorDataset;
using testing::tensor_equal;
using testing::throws_error;

// Example i is data [i, 10 i] (float32) with target i (int64).
std::shared_ptr<TensorDataset> counting_dataset(int64_t n) {
  Tensor i = arange(n);
  return std::make_shared<TensorDataset>(stack({i, i * 10}, 1).to(kFloat32), i);
}

// The targets of every batch of one epoch, batch by batch.
std::vector<std::vector<int64_t>> epoch_targets(DataLoader& loader) {
  std::vector<std::vector<int64_t>> out;
  for (const Example& batch : loader) out.push_back(batch.target.cpu().to_vector<int64_t>());
  return out;
}

// A dataset built from a function of the index, counting get calls; the default get_batch.
class FunctionDataset : public Dataset {
 public:
  FunctionDataset(size_t n, std::function<Example(size_t)> fn) : n_(n), fn_(std::move(fn)) {}
  size_t size() const override { return n_; }
  Example get(size_t index) const override {
    ++calls;
    return fn_(index);
  }
  mutable std::atomic<int> calls{0};

 private:
  size_t n_;
  std::function<Example(size_t)> fn_;
};

TEST(TensorDatasetTest, SizeGetAndBatch) {
  auto ds = counting_dataset(5);
  EXPECT_EQ(ds->size(), 5u);
  Example e = ds->get(3);
  EXPECT_TRUE(tensor_equal(e.data, tensor({3.0f, 30.0f})));
  EXPECT_TRUE(tensor_equal(e.target, tensor(3)));
  Example b = ds->get_batch({4, 0, 4});
  EXPECT_TRUE(tensor_equal(b.data, tensor({{4.0f, 40.0f}, {0.0f, 0.0f}, {4.0f, 40.0f}})));
  EXPECT_TRUE(tensor_equal(b.target, tensor({4, 0, 4})));
  EXPECT_TRUE(throws_error([&] { ds->get(5); }, ErrorKind::Index, {"index 5", "size 5"}));
  EXPECT_TRUE(throws_error([&] { ds->get_batch({1, 7}); }, ErrorKind::Index, {"7"}));
}

TEST(TensorDatasetTest, FirstDimsMustMatch) {
  EXPECT_TRUE(throws_error(
      [] {
        TensorDataset(zeros({4, 2}), zeros({3}));
      },
      ErrorKind::Shape, {"TensorDataset", "4", "3", "[4, 2]"}));
  EXPECT_TRUE(throws_error([] { TensorDataset(scalar_tensor(1), zeros({1})); }, ErrorKind::Shape,
                           {"TensorDataset", "first"}));
}

TEST(DatasetTest, DefaultGetBatchStacksExamples) {
  FunctionDataset ds(4, [](size_t i) {
    auto v = static_cast<int64_t>(i);
    return Example{full({2, 2}, static_cast<double>(v)), tensor(v)};
  });
  Example b = ds.get_batch({2, 1});
  EXPECT_EQ(ds.calls.load(), 2);
  EXPECT_TRUE(tensor_equal(b.data, stack({full({2, 2}, 2.0), full({2, 2}, 1.0)})));
  EXPECT_TRUE(tensor_equal(b.target, tensor({2, 1})));
}

TEST(DatasetTest, MapTransformsEveryExample) {
  auto doubled = data::map(counting_dataset(4), [](Example e) {
    return Example{e.data * 2, e.target + 100};
  });
  EXPECT_EQ(doubled->size(), 4u);
  Example e = doubled->get(1);
  EXPECT_TRUE(tensor_equal(e.data, tensor({2.0f, 20.0f})));
  EXPECT_TRUE(tensor_equal(e.target, tensor(101)));
  Example b = doubled->get_batch({3, 0});
  EXPECT_TRUE(tensor_equal(b.data, tensor({{6.0f, 60.0f}, {0.0f, 0.0f}})));
  EXPECT_TRUE(tensor_equal(b.target, tensor({103, 100})));
  auto twice = data::map(doubled, [](Example e) { return Example{e.data + 1, e.target}; });
  EXPECT_TRUE(tensor_equal(twice->get(2).data, tensor({5.0f, 41.0f})));
  EXPECT_TRUE(throws_error([] { data::map(nullptr, [](Example e) { return e; }); },
                           ErrorKind::Value, {"null"}));
}

TEST(DataLoaderTest, BatchesInOrderWithLastPartialBatch) {
  DataLoader loader(counting_dataset(10), {.batch_size = 3});
  EXPECT_EQ(loader.size(), 4u);
  std::vector<std::vector<int64_t>> expected = {{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {9}};
  EXPECT_EQ(epoch_targets(loader), expected);
  size_t n = 0;
  for (const Example& batch : loader) {
    int64_t rows = n < 3 ? 3 : 1;
    EXPECT_EQ(batch.data.sizes(), Shape({rows, 2}));
    EXPECT_EQ(batch.data.dtype(), kFloat32);
    EXPECT_EQ(batch.target.sizes(), Shape({rows}));
    EXPECT_EQ(batch.data.select(1, 1).to_vector<float>().front(), 30.0f * static_cast<float>(n));
    ++n;
  }
  EXPECT_EQ(n, loader.size());
}

TEST(DataLoaderTest, DropLastAndSize) {
  auto ds = counting_dataset(10);
  EXPECT_EQ(DataLoader(ds, {.batch_size = 3, .drop_last = true}).size(), 3u);
  EXPECT_EQ(DataLoader(ds, {.batch_size = 5, .drop_last = true}).size(), 2u);
  EXPECT_EQ(DataLoader(ds, {.batch_size = 5}).size(), 2u);
  EXPECT_EQ(DataLoader(ds, {.batch_size = 20}).size(), 1u);
  EXPECT_EQ(DataLoader(ds, {.batch_size = 20, .drop_last = true}).size(), 0u);
  EXPECT_EQ(DataLoader(ds).size(), 10u);
  DataLoader dropping(ds, {.batch_size = 3, .drop_last = true});
  std::vector<std::vector<int64_t>> expected = {{0, 1, 2}, {3, 4, 5}, {6, 7, 8}};
  EXPECT_EQ(epoch_targets(dropping), expected);
  DataLoader nothing(ds, {.batch_size = 20, .drop_last = true, .num_workers = 2});
  EXPECT_TRUE(nothing.begin() == nothing.end());
  DataLoader empty(counting_dataset(0), {.batch_size = 4, .num_workers = 2});
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_TRUE(epoch_targets(empty).empty());
}

TEST(DataLoaderTest, OptionsAreChecked) {
  auto ds = counting_dataset(4);
  EXPECT_TRUE(throws_error([&] { DataLoader(ds, {.batch_size = 0}); }, ErrorKind::Value,
                           {"batch_size", "0"}));
  EXPECT_TRUE(throws_error([&] { DataLoader(ds, {.num_workers = -1}); }, ErrorKind::Value,
                           {"num_workers"}));
  EXPECT_TRUE(throws_error([&] { DataLoader(ds, {.prefetch_factor = 0}); }, ErrorKind::Value,
                           {"prefetch_factor"}));
  EXPECT_TRUE(throws_error([] { DataLoader(nullptr); }, ErrorKind::Value, {"null"}));
}

TEST(DataLoaderTest, ShuffleIsAPermutationPerEpochFromTheSeed) {
  const int64_t n = 50;
  DataLoader loader(counting_dataset(n), {.batch_size = 8, .shuffle = true, .seed = 7});
  std::vector<int64_t> epochs[2];
  for (auto& order : epochs) {
    for (const auto& b : epoch_targets(loader)) order.insert(order.end(), b.begin(), b.end());
    EXPECT_EQ(std::set<int64_t>(order.begin(), order.end()).size(), static_cast<size_t>(n));
  }
  EXPECT_NE(epochs[0], epochs[1]);
  EXPECT_EQ(loader.epoch(), 2u);
  // Epoch k is randperm from Generator(seed) at offset k * n.
  for (uint64_t k = 0; k < 2; ++k) {
    Generator gen(7);
    gen.set_offset(k * n);
    EXPECT_EQ(randperm(n, {}, &gen).to_vector<int64_t>(), epochs[k]) << k;
  }
  // set_epoch replays an epoch; another seed gives another order.
  loader.set_epoch(1);
  std::vector<int64_t> replay;
  for (const auto& b : epoch_targets(loader)) replay.insert(replay.end(), b.begin(), b.end());
  EXPECT_EQ(replay, epochs[1]);
  DataLoader other(counting_dataset(n), {.batch_size = 8, .shuffle = true, .seed = 8});
  std::vector<int64_t> other_order;
  for (const auto& b : epoch_targets(other))
    other_order.insert(other_order.end(), b.begin(), b.end());
  EXPECT_NE(other_order, epochs[0]);
}

TEST(DataLoaderTest, SameOrderWhateverTheWorkerCount) {
  auto ds = counting_dataset(103);
  std::vector<std::vector<std::vector<int64_t>>> reference;
  for (int workers : {0, 1, 3}) {
    for (int prefetch : {1, 2}) {
      DataLoader loader(ds, {.batch_size = 10,
                             .shuffle = true,
                             .seed = 42,
                             .num_workers = workers,
                             .prefetch_factor = prefetch});
      std::vector<std::vector<std::vector<int64_t>>> epochs = {epoch_targets(loader),
                                                               epoch_targets(loader)};
      EXPECT_EQ(epochs[0].size(), 11u);
      EXPECT_EQ(epochs[0].back().size(), 3u);
      if (reference.empty()) reference = epochs;
      EXPECT_EQ(epochs, reference) << workers << " workers, prefetch " << prefetch;
    }
  }
}

TEST(DataLoaderTest, DataMatchesTargetsWithWorkers) {
  DataLoader loader(counting_dataset(64), {.batch_size = 5, .shuffle = true, .num_workers = 3});
  for (const Example& batch : loader)
    EXPECT_TRUE(tensor_equal(batch.data, stack({batch.target, batch.target * 10}, 1).to(kFloat32)));
}

// Waits until the dataset has been asked for `calls` examples (a few seconds at most).
bool wait_for_calls(const std::atomic<int>& counter, int calls) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (counter.load() < calls && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return counter.load() >= calls;
}

TEST(DataLoaderTest, WorkersStayWithinThePrefetchWindow) {
  auto ds = std::make_shared<FunctionDataset>(100, [](size_t i) {
    return Example{zeros({1}), tensor(static_cast<int64_t>(i))};
  });
  DataLoader loader(ds, {.batch_size = 1, .num_workers = 2, .prefetch_factor = 2});
  auto it = loader.begin();  // batch 0 taken: batches 1..4 get prepared, no more
  EXPECT_TRUE(wait_for_calls(ds->calls, 5));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(ds->calls.load(), 5);
  ++it;
  EXPECT_TRUE(wait_for_calls(ds->calls, 6));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(ds->calls.load(), 6);
}

TEST(DataLoaderTest, BreakingOutEarlyStopsTheWorkers) {
  auto ds = std::make_shared<FunctionDataset>(1000, [](size_t i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return Example{zeros({3}), tensor(static_cast<int64_t>(i))};
  });
  auto start = std::chrono::steady_clock::now();
  for (int workers : {1, 4}) {
    auto loader = std::make_unique<DataLoader>(
        ds, DataLoaderOptions{.batch_size = 4, .shuffle = true, .num_workers = workers});
    int seen = 0;
    for (const Example& batch : *loader) {
      EXPECT_EQ(batch.target.numel(), 4);
      if (++seen == 2) break;
    }
    EXPECT_EQ(seen, 2);
    {
      auto it = loader->begin();  // an iterator outliving its loader
      loader.reset();
      EXPECT_EQ((*it).target.numel(), 4);
      ++it;
      EXPECT_EQ(it->target.numel(), 4);
    }
  }
  // 250 batches of 4 ms each take a second or more; stopping early takes a few batches.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_LT(ds->calls.load(), 400);
}

TEST(DataLoaderTest, WorkerErrorsReachTheConsumer) {
  auto ds = std::make_shared<FunctionDataset>(20, [](size_t i) {
    EMBER_CHECK(i != 7, "[FunctionDataset] example ", i, " is broken");
    return Example{zeros({1}), tensor(static_cast<int64_t>(i))};
  });
  for (int workers : {0, 1, 3}) {
    DataLoader loader(ds, {.batch_size = 2, .num_workers = workers});
    for (int epoch = 0; epoch < 2; ++epoch) {
      std::vector<int64_t> seen;
      auto run = [&] {
        for (const Example& batch : loader)
          for (int64_t t : batch.target.to_vector<int64_t>()) seen.push_back(t);
      };
      EXPECT_TRUE(throws_error(run, ErrorKind::Value, {"example 7 is broken"})) << workers;
      EXPECT_EQ(seen, (std::vector<int64_t>{0, 1, 2, 3, 4, 5})) << workers;
    }
    DataLoader first_batch_fails(ds, {.batch_size = 8, .num_workers = workers});
    EXPECT_TRUE(throws_error([&] { first_batch_fails.begin(); }, ErrorKind::Value, {"example 7"}));
  }
}

TEST(DataLoaderTest, IteratorAtTheEnd) {
  DataLoader loader(counting_dataset(2), {.batch_size = 2});
  auto it = loader.begin();
  EXPECT_FALSE(it == loader.end());
  ++it;
  EXPECT_TRUE(it == loader.end());
  EXPECT_TRUE(throws_error([&] { *it; }, ErrorKind::Value, {"past the last batch"}));
  EXPECT_TRUE(throws_error([&] { ++it; }, ErrorKind::Value, {"past the last batch"}));
  static_assert(std::input_iterator<DataLoader::Iterator>);
}

class DataLoaderDeviceTest : public testing::DeviceTest {};

TEST_P(DataLoaderDeviceTest, BatchesMoveToTheDevice) {
  auto ds = counting_dataset(10);
  for (int workers : {0, 2}) {
    DataLoader loader(ds, {.batch_size = 4,
                           .shuffle = true,
                           .seed = 3,
                           .num_workers = workers,
                           .pin_memory = true,
                           .device = device()});
    DataLoader on_cpu(ds, {.batch_size = 4, .shuffle = true, .seed = 3});
    auto expected = on_cpu.begin();
    size_t n = 0;
    for (const Example& batch : loader) {
      EXPECT_EQ(batch.data.device(), resolve_device(device()));
      EXPECT_EQ(batch.target.device(), resolve_device(device()));
      EXPECT_TRUE(tensor_equal(batch.data, expected->data));
      EXPECT_TRUE(tensor_equal(batch.target, expected->target));
      ++expected;
      ++n;
    }
    EXPECT_EQ(n, 3u);
  }
}

EMBER_INSTANTIATE_DEVICE_TESTS(DataLoaderDeviceTest);

// --- MNIST IDX files

constexpr int64_t kImages = 5;

uint8_t pixel(int64_t image, int64_t p) {
  return static_cast<uint8_t>((image * 37 + p * 3) % 256);
}

std::string big_endian(uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}

// An IDX file's bytes: magic, dims, data.
std::string idx_bytes(uint32_t magic, const std::vector<uint32_t>& dims, const std::string& body) {
  std::string out = big_endian(magic);
  for (uint32_t d : dims) out += big_endian(d);
  return out + body;
}

std::string image_bytes(int64_t n) {
  std::string body;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t p = 0; p < 28 * 28; ++p) body += static_cast<char>(pixel(i, p));
  return idx_bytes(2051, {static_cast<uint32_t>(n), 28, 28}, body);
}

std::string label_bytes(int64_t n) {
  std::string body;
  for (int64_t i = 0; i < n; ++i) body += static_cast<char>((i * 3) % 10);
  return idx_bytes(2049, {static_cast<uint32_t>(n)}, body);
}

void write_raw(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void write_gzip(const fs::path& path, const std::string& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr) << path;
  ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())),
            static_cast<int>(bytes.size()));
  ASSERT_EQ(gzclose(f), Z_OK);
}

class MnistFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ember_mnist_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path file(const std::string& name) const { return dir_ / name; }
  std::string root() const { return dir_.string(); }
  // A well-formed train split, raw files.
  void write_train() {
    write_raw(file("train-images-idx3-ubyte"), image_bytes(kImages));
    write_raw(file("train-labels-idx1-ubyte"), label_bytes(kImages));
  }

  fs::path dir_;
};

TEST_F(MnistFilesTest, ReadsRawAndGzipFiles) {
  write_train();
  write_gzip(file("t10k-images-idx3-ubyte.gz"), image_bytes(3));
  write_gzip(file("t10k-labels-idx1-ubyte.gz"), label_bytes(3));
  for (auto [split, n] :
       {std::pair{MNIST::Split::Train, kImages}, std::pair{MNIST::Split::Test, int64_t{3}}}) {
    MNIST ds(root(), split);
    ASSERT_EQ(ds.size(), static_cast<size_t>(n));
    EXPECT_EQ(ds.images().sizes(), Shape({n, 28, 28}));
    EXPECT_EQ(ds.images().dtype(), kUInt8);
    EXPECT_EQ(ds.targets().sizes(), Shape({n}));
    EXPECT_EQ(ds.targets().dtype(), kInt64);
    std::vector<uint8_t> pixels = ds.images().to_vector<uint8_t>();
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t p = 0; p < 28 * 28; ++p)
        ASSERT_EQ(pixels[i * 784 + p], pixel(i, p)) << i << " " << p;
      EXPECT_EQ(ds.targets()[i].item<int64_t>(), (i * 3) % 10);
    }
    Example e = ds.get(2);
    EXPECT_EQ(e.data.sizes(), Shape({1, 28, 28}));
    EXPECT_EQ(e.data.dtype(), kFloat32);
    EXPECT_EQ(e.target.dim(), 0);
    EXPECT_EQ(e.target.item<int64_t>(), 6);
    std::vector<float> values = e.data.to_vector<float>();
    for (int64_t p = 0; p < 784; ++p)
      ASSERT_EQ(values[p], static_cast<float>(pixel(2, p)) / 255.0f);
    Example b = ds.get_batch({2, 0});
    EXPECT_EQ(b.data.sizes(), Shape({2, 1, 28, 28}));
    EXPECT_TRUE(tensor_equal(b.data[0], e.data));
    EXPECT_TRUE(tensor_equal(b.data[1], ds.get(0).data));
    EXPECT_TRUE(tensor_equal(b.target, tensor({6, 0})));
    EXPECT_TRUE(throws_error([&] { ds.get(static_cast<size_t>(n)); }, ErrorKind::Index, {"MNIST"}));
  }
}

TEST_F(MnistFilesTest, LoaderOverMnist) {
  write_train();
  auto ds = std::make_shared<MNIST>(root(), MNIST::Split::Train);
  DataLoader loader(ds, {.batch_size = 2, .shuffle = true, .num_workers = 2});
  int64_t total = 0;
  for (const Example& batch : loader) {
    EXPECT_EQ(batch.data.sizes().size(), 4u);
    total += batch.target.numel();
  }
  EXPECT_EQ(total, kImages);
}

TEST_F(MnistFilesTest, MissingFiles) {
  std::string images = file("train-images-idx3-ubyte").string();
  EXPECT_TRUE(throws_error([&] { MNIST(root(), MNIST::Split::Train); }, ErrorKind::IO,
                           {"missing file", images, ".gz"}));
  write_train();
  fs::remove(file("train-labels-idx1-ubyte"));
  EXPECT_TRUE(throws_error([&] { MNIST(root(), MNIST::Split::Train); }, ErrorKind::IO,
                           {"missing file", file("train-labels-idx1-ubyte").string()}));
  EXPECT_TRUE(throws_error([&] { MNIST(root(), MNIST::Split::Test); }, ErrorKind::IO,
                           {"missing file", "t10k-images-idx3-ubyte"}));
}

TEST_F(MnistFilesTest, BadMagic) {
  write_train();
  write_raw(file("train-images-idx3-ubyte"), label_bytes(kImages));
  EXPECT_TRUE(throws_error(
      [&] { MNIST(root(), MNIST::Split::Train); }, ErrorKind::IO,
      {file("train-images-idx3-ubyte").string(), "bad magic number 2049", "expected 2051"}));
  write_train();
  write_raw(file("train-labels-idx1-ubyte"), idx_bytes(2052, {kImages}, std::string(kImages, 1)));
  EXPECT_TRUE(throws_error([&] { MNIST(root(), MNIST::Split::Train); }, ErrorKind::IO,
                           {"train-labels-idx1-ubyte", "bad magic number 2052", "expected 2049"}));
  fs::remove(file("train-labels-idx1-ubyte"));
  write_gzip(file("train-labels-idx1-ubyte.gz"), idx_bytes(7, {kImages}, std::string(kImages, 1)));
  EXPECT_TRUE(throws_error([&] { MNIST(root(), MNIST::Split::Train); }, ErrorKind::IO,
                           {"train-labels-idx1-ubyte.gz", "bad magic number 7"}));
}

TEST_F(MnistFilesTest, TruncatedAndOverlongFiles) {
  write_train();
  std::string images = image_bytes(kImages);
  write_raw(file("train-images-idx3-ubyte"), images.substr(0, images.size() - 100));
  EXPECT_TRUE(throws_error(
      [&] { MNIST(root(), MNIST::Split::Train); }, ErrorKind::IO,
      {"train-images-idx3-ubyte", "truncated", "[5, 28, 28]", "3920 bytes", "only 3820"}));
  write_raw(file("train-images-idx3-ubyte"), images.substr(0, 10));
  EXPECT_TRUE(throws_error([&] { MNIST(root(), MNIST::Split::Train); }, ErrorKind::IO,
                           {"train-images-idx3-ubyte", "truncated", "header"}));
  write_raw(file("train-images-idx3-ubyte"), images + "xyz");
  EXPECT_TRUE(throws_error([&] { MNIST(root(), MNIST::Split::Train); }, ErrorKind::IO,
                           {"train-images-idx3-ubyte", "3 bytes of extra data"}));
  // A gzip stream cut short.
  fs::remove(file("train-images-idx3-ubyte"));
  write_gzip(file("train-images-idx3-ubyte.gz"), images);
  std::string gz(fs::file_size(file("train-images-idx3-ubyte.gz")), '\0');
  std::ifstream(file("train-images-idx3-ubyte.gz"), std::ios::binary)
      .read(gz.data(), static_cast<std::streamsize>(gz.size()));
  write_raw(file("train-images-idx3-ubyte.gz"), gz.substr(0, gz.size() / 2));
  EXPECT_TRUE(throws_error([&] { MNIST(root(), MNIST::Split::Train); }, ErrorKind::IO,
                           {"train-images-idx3-ubyte.gz", "truncated"}));
}

// A header declaring far more data than the file holds is refused before anything is allocated
// for it (the IDX fuzzer's first finding: 100 GB asked of a 30-byte file).
TEST_F(MnistFilesTest, HugeDeclaredShapesAreRefusedWithoutAllocating) {
  write_train();
  write_raw(file("train-images-idx3-ubyte"), idx_bytes(2051, {100000, 1000, 1000}, "abc"));
  EXPECT_TRUE(throws_error(
      [&] { MNIST(root(), MNIST::Split::Train); }, ErrorKind::IO,
      {"train-images-idx3-ubyte: truncated: the header declares shape [100000, 1000, 1000] "
       "(100000000000 bytes of data) but only 3 bytes follow"}));
  fs::remove(file("train-images-idx3-ubyte"));
  write_gzip(file("train-images-idx3-ubyte.gz"), idx_bytes(2051, {100000, 1000, 1000}, "abc"));
  EXPECT_TRUE(
      throws_error([&] { MNIST(root(), MNIST::Split::Train); }, ErrorKind::IO,
                   {"train-images-idx3-ubyte.gz: the header declares shape [100000, 1000, 1000] "
                    "(100000000000 bytes of data), more than this",
                    "-byte gzip file can hold"}));
}

TEST_F(MnistFilesTest, ImageAndLabelCountsMustAgree) {
  write_train();
  write_raw(file("train-labels-idx1-ubyte"), label_bytes(kImages - 1));
  EXPECT_TRUE(throws_error([&] { MNIST(root(), MNIST::Split::Train); }, ErrorKind::IO,
                           {"count mismatch", "train-images-idx3-ubyte has 5 images",
                            "train-labels-idx1-ubyte has 4 labels"}));
}

// The real Fashion-MNIST (Debian package dataset-fashion-mnist), when installed.
TEST(FashionMnistTest, LoadsBothSplits) {
  if (!fs::exists(data::kFashionMnistDir))
    GTEST_SKIP() << data::kFashionMnistDir << " is absent (apt install dataset-fashion-mnist)";
  for (auto [split, n] : {std::pair{MNIST::Split::Train, int64_t{60000}},
                          std::pair{MNIST::Split::Test, int64_t{10000}}}) {
    auto ds = std::make_shared<MNIST>(data::kFashionMnistDir, split);
    ASSERT_EQ(ds->size(), static_cast<size_t>(n));
    EXPECT_EQ(ds->images().sizes(), Shape({n, 28, 28}));
    EXPECT_EQ(ds->targets().sizes(), Shape({n}));
    EXPECT_EQ(ds->targets().min().item<int64_t>(), 0);
    EXPECT_EQ(ds->targets().max().item<int64_t>(), 9);
    for (int64_t c = 0; c < 10; ++c)  // Fashion-MNIST is balanced
      EXPECT_EQ(ds->targets().eq(tensor(c)).sum().item<int64_t>(), n / 10) << c;
    EXPECT_GT(ds->images().max().item<int64_t>(), 200);
    Example e = ds->get(0);
    EXPECT_EQ(e.data.sizes(), Shape({1, 28, 28}));
    EXPECT_LE(e.data.max().item<float>(), 1.0f);
    EXPECT_GE(e.data.min().item<float>(), 0.0f);
    DataLoader loader(ds, {.batch_size = 64, .shuffle = true, .num_workers = 2});
    EXPECT_EQ(loader.size(), static_cast<size_t>((n + 63) / 64));
    int64_t total = 0;
    for (const Example& batch : loader) {
      EXPECT_EQ(batch.data.size(1), 1);
      total += batch.target.numel();
    }
    EXPECT_EQ(total, n);
  }
}

}  // namespace
}  // namespace ember
