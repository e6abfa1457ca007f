// examples/move_model.cpp: the tutorial's "Moving a Model to GPU" -- model.to(device) moves every
// parameter; computations inside the model then run there.
//   model = nn.Linear(10, 1); model = model.to(device)
//   print(next(model.parameters()).device)
#include <ember/ember.h>

#include <iostream>

int main() {
  ember::nn::Linear model(10, 1);
  ember::Device device = ember::best_device();

  model = model.to(device);
  std::cout << model->parameters().front().device() << "\n";  // cuda:0 (or cpu)
  std::cout << *model << "\n";  // Linear(in_features=10, out_features=1, bias=True)
}
