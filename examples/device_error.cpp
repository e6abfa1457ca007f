// examples/device_error.cpp: the tutorial's "Most Common GPU Error" -- the model on the GPU, the
// data left on the CPU: ember throws an ember::Error with PyTorch's message. The fix is to move
// both to one device.
#include <ember/ember.h>

#include <iostream>

int main() {
  ember::Device device = ember::best_device();
  auto model = ember::nn::Linear(10, 1).to(device);  // model -> .to(device)
  ember::Tensor X = ember::rand({32, 10});           // data forgotten on the CPU

  if (device.is_cuda()) {
    try {
      model(X);
    } catch (const ember::Error& e) {
      std::cout << "Error: " << e.what() << "\n";
    }
  } else {
    // With only the CPU there is nothing to mix up; a missing GPU is reported clearly instead.
    std::cout << "Only the CPU is here, so model and data cannot be on different devices.\n";
    try {
      X.to("cuda");
    } catch (const ember::Error& e) {
      std::cout << "Moving to a missing GPU: " << e.what() << "\n";
    }
  }

  // Fix: model -> .to(device), data -> .to(device): both on the same device.
  ember::Tensor pred = model(X.to(device));
  std::cout << "both on " << pred.device() << ": prediction shape "
            << ember::shape_str(pred.sizes()) << "\n";
}
