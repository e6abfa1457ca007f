// ops/gradcheck.cpp: backward's gradients against central finite differences.
#include <cmath>

#include "ember/autograd.h"
#include "ember/ops.h"

namespace ember::autograd {

namespace {

// The element of t at linear (row-major) position i, as a 0-dim view.
Tensor element(const Tensor& t, int64_t i) {
  Tensor e = t;
  std::vector<int64_t> coord(t.dim());
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    coord[d] = i % t.size(d);
    i /= t.size(d);
  }
  for (int64_t d = 0; d < t.dim(); ++d) e = e.select(0, coord[d]);
  return e;
}

}  // namespace

bool gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& f,
               const std::vector<Tensor>& inputs, const GradcheckOptions& o) {
  // A fixed random weighting turns any output into a scalar while checking every element.
  Tensor out = f(inputs);
  EMBER_CHECK(out.requires_grad(), "[gradcheck] the function's output does not require grad");
  Generator gen(1234);
  Tensor w = rand(out.sizes(), {.dtype = out.dtype()}, &gen).to(out.device()) + 0.5;
  std::vector<Tensor> wrt;
  for (const Tensor& t : inputs)
    if (t.requires_grad()) wrt.push_back(t);
  EMBER_CHECK(!wrt.empty(), "[gradcheck] no input requires grad");
  std::vector<Tensor> analytic = grad({sum(out * w)}, wrt, {}, false, true);

  NoGradGuard no_grad;
  std::vector<Tensor> probe;
  for (const Tensor& t : inputs) probe.push_back(t.detach().clone());
  auto loss = [&] { return sum(f(probe) * w).to(kFloat64).item<double>(); };
  size_t k = 0;
  for (size_t j = 0; j < inputs.size(); ++j) {
    if (!inputs[j].requires_grad()) continue;
    EMBER_CHECK_KIND(DType, inputs[j].dtype() == kFloat64, "[gradcheck] input ", j, " is ",
                     inputs[j].dtype(),
                     "; gradcheck needs float64 inputs for accurate differences");
    std::vector<double> a = analytic[k].defined()
                                ? analytic[k].cpu().to(kFloat64).contiguous().to_vector<double>()
                                : std::vector<double>(inputs[j].numel(), 0.0);
    for (int64_t i = 0; i < inputs[j].numel(); ++i) {
      Tensor e = element(probe[j], i);
      double x = e.item<double>();
      e.fill_(x + o.eps);
      double plus = loss();
      e.fill_(x - o.eps);
      double minus = loss();
      e.fill_(x);
      double numeric = (plus - minus) / (2 * o.eps);
      EMBER_CHECK(std::abs(a[i] - numeric) <= o.atol + o.rtol * std::abs(numeric),
                  "[gradcheck] Jacobian mismatch for input ", j, " element ", i, ": analytical ",
                  a[i], " vs numerical ", numeric);
    }
    ++k;
  }
  return true;
}

}  // namespace ember::autograd
