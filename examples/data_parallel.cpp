// examples/data_parallel.cpp: the tutorial's "training across all available GPUs simultaneously"
// with nn.DataParallel in one process -- each batch split over every GPU, the gradients summed
// back into the model. With fewer than two GPUs it runs the model as it is.
//   model = nn.DataParallel(model.to(device)); loss = loss_fn(model(X), y); loss.backward()
#include <ember/ember.h>

#include <iostream>

namespace nn = ember::nn;
namespace optim = ember::optim;

int main() {
  ember::Device device = ember::best_device();
  nn::Sequential net(nn::Linear(10, 32), nn::ReLU(), nn::Linear(32, 1));
  net->to(device);
  // Every CUDA device by default; the module itself runs on the first one.
  nn::DataParallel model(net.ptr(), nn::DataParallelOptions{});
  std::cout << "DataParallel over " << model->device_ids().size() << " GPU(s)\n";
  optim::Adam optimizer(net->parameters());
  nn::MSELoss loss_fn;
  ember::Tensor X = ember::rand({64, 10}).to(device);
  ember::Tensor y = ember::rand({64, 1}).to(device);
  for (int step = 0; step < 3; ++step) {
    ember::Tensor loss = loss_fn(model(X), y);
    optimizer.zero_grad();
    loss.backward();  // the replicas' gradients end up in net's parameters
    optimizer.step();
    std::cout << "step " << step << " loss " << loss.item<float>() << "\n";
  }
}
