// examples/training_step.cpp: the tutorial's "Running a Full GPU Training Step".
//   model = nn.Linear(10, 1).to(device); optimizer = torch.optim.Adam(model.parameters())
//   loss_fn = nn.MSELoss(); X = torch.rand(32, 10).to(device); y = torch.rand(32, 1).to(device)
//   pred = model(X); loss = loss_fn(pred, y); optimizer.zero_grad(); loss.backward()
//   optimizer.step(); print("Loss:", loss.item())
#include <ember/ember.h>

#include <iostream>

namespace nn = ember::nn;
namespace optim = ember::optim;

int main() {
  ember::Device device = ember::best_device();

  auto model = nn::Linear(10, 1).to(device);
  optim::Adam optimizer(model->parameters());
  nn::MSELoss loss_fn;

  // Data must also be on the same device as the model
  ember::Tensor X = ember::rand({32, 10}).to(device);  // batch of 32 samples, 10 features
  ember::Tensor y = ember::rand({32, 1}).to(device);   // target values

  ember::Tensor pred = model(X);
  ember::Tensor loss = loss_fn(pred, y);
  optimizer.zero_grad();
  loss.backward();
  optimizer.step();

  std::cout << "Loss: " << loss.item<float>() << "\n";
}
