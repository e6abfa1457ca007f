// tests/package/main.cpp: proves a consumer can include, link and run ember.
#include <ember/ember.h>

#include <iostream>

int main() {
  ember::Tensor t = ember::matmul(ember::ones({2, 3}), ember::arange(3.0));
  bool ok = t.to_vector<float>() == std::vector<float>{3.0f, 3.0f} &&
            ember::best_device().is_cpu() == !ember::cuda::is_available();
  std::cout << t << (ok ? " ok" : " WRONG") << "\n";
  return ok ? 0 : 1;
}
