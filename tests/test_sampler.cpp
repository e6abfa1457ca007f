// tests/test_sampler.cpp: DistributedSampler against PyTorch's own index lists (every dataset
// size, world size, rank, shuffle, seed, epoch and drop_last case of
// tests/reference/distributed_reference.json, written by torch 1.13), torch.randperm's
// permutations, and a DataLoader reading its epochs from a sampler.
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "ember/data.h"
#include "test_util.h"

namespace ember {
namespace {

using data::DataLoader;
using data::DistributedSampler;
using testing::throws_error;

const nlohmann::json& reference() {
  static const nlohmann::json j = [] {
    std::ifstream in(std::string(EMBER_REFERENCE_DIR) + "/distributed_reference.json");
    return nlohmann::json::parse(in);
  }();
  return j;
}

TEST(DistributedSamplerTest, IndexListsArePyTorchs) {
  const auto& cases = reference().at("sampler");
  ASSERT_GT(cases.size(), 500u);
  for (const auto& c : cases) {
    DistributedSampler s(c.at("n").get<size_t>(), c.at("world").get<int>(), c.at("rank").get<int>(),
                         c.at("shuffle").get<bool>(), c.at("seed").get<uint64_t>(),
                         c.at("drop_last").get<bool>());
    s.set_epoch(c.at("epoch").get<uint64_t>());
    EXPECT_EQ(s.size(), c.at("len").get<size_t>()) << c.dump();
    EXPECT_EQ(s.indices(), c.at("indices").get<std::vector<int64_t>>()) << c.dump();
  }
}

TEST(DistributedSamplerTest, RandpermIsTorchRandperm) {
  for (const auto& c : reference().at("randperm")) {
    auto n = c.at("n").get<int64_t>();
    std::vector<int64_t> perm = data::torch_randperm(n, c.at("seed").get<uint64_t>());
    ASSERT_EQ(static_cast<int64_t>(perm.size()), n);
    auto head = c.at("head").get<std::vector<int64_t>>();
    EXPECT_EQ(std::vector<int64_t>(perm.begin(), perm.begin() + static_cast<int64_t>(head.size())),
              head)
        << c.dump();
    int64_t weighted = 0;
    for (int64_t i = 0; i < n; ++i) weighted += i * perm[static_cast<size_t>(i)];
    EXPECT_EQ(weighted, c.at("weighted_sum").get<int64_t>()) << "n " << n;
  }
}

TEST(DistributedSamplerTest, RanksPartitionTheEpochAndEpochsDiffer) {
  // 10 examples on 3 ranks: 4 each, the order padded with its first two indices.
  std::multiset<int64_t> seen;
  for (int rank = 0; rank < 3; ++rank) {
    DistributedSampler s(10, 3, rank, true, 5);
    s.set_epoch(2);
    for (int64_t i : s.indices()) seen.insert(i);
  }
  EXPECT_EQ(seen.size(), 12u);
  for (int64_t i = 0; i < 10; ++i) EXPECT_GE(seen.count(i), 1u);
  DistributedSampler s(100, 2, 0, true, 5);
  auto first = s.indices();
  s.set_epoch(1);
  EXPECT_NE(s.indices(), first);
  s.set_epoch(0);
  EXPECT_EQ(s.indices(), first);
}

TEST(DistributedSamplerTest, Errors) {
  EXPECT_TRUE(throws_error([] { DistributedSampler(10, 2, 2); }, ErrorKind::Value,
                           {"[DistributedSampler]", "Invalid rank 2", "[0, 1]"}));
  EXPECT_TRUE(throws_error([] { DistributedSampler(10, 0, 0); }, ErrorKind::Value,
                           {"[DistributedSampler]", "num_replicas"}));
  // Defaults come from the default process group, which no test initializes.
  EXPECT_TRUE(throws_error([] { DistributedSampler(10); }, ErrorKind::Value,
                           {"[DistributedSampler]", "init_process_group"}));
  EXPECT_TRUE(DistributedSampler(0, 2, 0).indices().empty());
}

TEST(DistributedSamplerTest, DataLoaderTakesItsEpochsFromTheSampler) {
  Tensor i = arange(10);
  auto dataset = std::make_shared<data::TensorDataset>(i.to(kFloat32).unsqueeze(1), i);
  auto sampler = std::make_shared<DistributedSampler>(10, 2, 1, true, 3);
  DataLoader loader(dataset, {.batch_size = 2, .num_workers = 1, .sampler = sampler});
  EXPECT_EQ(loader.size(), 3u);  // 5 indices in batches of 2
  for (uint64_t epoch : {0u, 1u}) {
    sampler->set_epoch(epoch);
    std::vector<int64_t> targets;
    for (const data::Example& batch : loader)
      for (int64_t t : batch.target.to_vector<int64_t>()) targets.push_back(t);
    EXPECT_EQ(targets, sampler->indices()) << "epoch " << epoch;
  }
  EXPECT_TRUE(throws_error(
      [&] { DataLoader(dataset, {.batch_size = 2, .shuffle = true, .sampler = sampler}); },
      ErrorKind::Value, {"[DataLoader]", "mutually exclusive with shuffle"}));
}

// A sampler naming an index past the dataset is an Index error, not a read out of bounds.
class BadSampler : public data::Sampler {
 public:
  std::vector<int64_t> indices() const override { return {0, 12}; }
  size_t size() const override { return 2; }
};

TEST(DistributedSamplerTest, DataLoaderChecksTheSamplersIndices) {
  Tensor i = arange(10);
  auto dataset = std::make_shared<data::TensorDataset>(i.unsqueeze(1), i);
  DataLoader loader(dataset, {.batch_size = 2, .sampler = std::make_shared<BadSampler>()});
  EXPECT_TRUE(throws_error([&] { loader.begin(); }, ErrorKind::Index,
                           {"[DataLoader]", "index 12", "10 examples"}));
}

}  // namespace
}  // namespace ember
