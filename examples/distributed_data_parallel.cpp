// examples/distributed_data_parallel.cpp: the tutorial's "training across all available GPUs
// simultaneously" with DistributedDataParallel -- one process per GPU (or CPU process), started
// by `ember run` (or torchrun), which sets RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR/PORT:
//   ember run --nproc-per-node 2 build/release/examples/example_distributed_data_parallel
// Each rank trains on its share of the data; backward averages the gradients over the ranks, so
// every rank keeps the same model. Started alone, it is a job of one process.
//   dist.init_process_group("nccl" or "gloo"); model = DDP(model.to(device)); sampler =
//   DistributedSampler(dataset); loader = DataLoader(dataset, sampler=sampler)
#include <ember/ember.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <string>

namespace dist = ember::distributed;
namespace nn = ember::nn;

int main() {
  if (!dist::is_available()) {
    std::cout << "this ember was built without a distributed backend (install libgloo-dev)\n";
    return 0;
  }
  const char* launched = std::getenv("WORLD_SIZE");
  if (launched) {
    dist::init_process_group();  // env://, Gloo for CPU tensors, NCCL for CUDA ones
  } else {
    std::string store = "file:///tmp/ember-ddp-example-" + std::to_string(::getpid());
    dist::init_process_group({.init_method = store, .world_size = 1, .rank = 0});
  }
  const int rank = dist::get_rank(), world = dist::get_world_size();
  const char* local = std::getenv("LOCAL_RANK");
  ember::Device device = ember::cuda::is_available()
                             ? ember::Device(ember::kCUDA, local ? std::atoi(local) : 0)
                             : ember::Device("cpu");

  ember::manual_seed(0);  // every rank builds the same model (DDP copies rank 0's anyway)
  nn::Sequential net(nn::Linear(10, 32), nn::ReLU(), nn::Linear(32, 1));
  net->to(device);
  nn::parallel::DistributedDataParallel model(net.ptr(), {});
  ember::optim::SGD optimizer(net->parameters(), {.lr = 0.1});

  ember::Tensor X = ember::rand({256, 10}), y = X.sum({1}, true) / 10.0;
  auto dataset = std::make_shared<ember::data::TensorDataset>(X, y);
  auto sampler = std::make_shared<ember::data::DistributedSampler>(dataset->size());
  ember::data::DataLoader loader(dataset, {.batch_size = 32, .device = device, .sampler = sampler});
  for (int epoch = 0; epoch < 3; ++epoch) {
    sampler->set_epoch(epoch);
    double loss_sum = 0;
    for (const auto& batch : loader) {
      ember::Tensor loss = nn::F::mse_loss(model(batch.data), batch.target);
      optimizer.zero_grad();
      loss.backward();  // gradients averaged over the ranks here
      optimizer.step();
      loss_sum += loss.item<double>();
    }
    if (rank == 0)
      std::cout << "epoch " << epoch << ": mean loss on rank 0 " << loss_sum / loader.size() << " ("
                << world << " process(es))\n";
  }
  dist::destroy_process_group();
}
