// examples/device_error.cpp: the tutorial's "Most Common GPU Error" -- mixing devices in one op
// throws an ember::Error with PyTorch's message; the fix is to move both to one device.
#include <ember/ember.h>

#include <iostream>

int main() {
  ember::Device device = ember::best_device();
  ember::Tensor weights = ember::rand({4, 3}).to(device);  // "the model", on the device
  ember::Tensor data = ember::rand({2, 4});                // the data, forgotten on the CPU

  if (device.is_cuda()) {
    try {
      ember::matmul(data, weights);
    } catch (const ember::Error& e) {
      std::cout << "Error: " << e.what() << "\n";
    }
  } else {
    // With a single device there is nothing to mix up; show what the error would be about.
    std::cout << "Only the CPU is here, so model and data cannot be on different devices.\n";
    try {
      data.to("cuda");
    } catch (const ember::Error& e) {
      std::cout << "Moving to a missing GPU fails clearly instead: " << e.what() << "\n";
    }
  }

  // Fix: model -> .to(device), data -> .to(device).
  ember::Tensor out = ember::matmul(data.to(device), weights);
  std::cout << "both on " << out.device() << ": output shape " << ember::shape_str(out.sizes())
            << "\n";
}
