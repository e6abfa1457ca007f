// ops/random.cpp: default generators per device and the random tensor factories.
#include <map>
#include <mutex>

#include "autograd/function.h"
#include "ember/cuda.h"
#include "kernels/philox.h"
#include "ops/op_helpers.h"

namespace ember {

namespace {
std::mutex& generators_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::pair<int, int>, Generator>& generators() {
  static std::map<std::pair<int, int>, Generator> g;
  return g;
}
}  // namespace

Generator& default_generator(Device device) {
  Device d = device.is_cpu() ? Device(kCPU) : resolve_device(device);
  std::lock_guard lock(generators_mutex());
  return generators()[{static_cast<int>(d.type()), d.index()}];
}

void manual_seed(uint64_t seed) {
  std::lock_guard lock(generators_mutex());
  generators()[{static_cast<int>(kCPU), -1}].manual_seed(seed);
  for (int i = 0; i < cuda::device_count(); ++i)
    generators()[{static_cast<int>(kCUDA), i}].manual_seed(seed);
}

namespace {

void fill_random(RandomKind kind, Tensor& t, double a, double b, Generator* gen) {
  if (t.numel() == 0) return;
  t.storage()->bump_version();
  Generator& g = gen ? *gen : default_generator(t.device());
  // float16 and bfloat16 draw float32 values and round them, as PyTorch's kernels do.
  DType draw = kind == RandomKind::RandInt ? t.dtype() : opmath_dtype(t.dtype());
  Tensor dst =
      t.is_contiguous() && draw == t.dtype() ? t : make_tensor(t.sizes(), draw, t.device());
  uint64_t counter = g.advance(random_counters(kind, draw, t.numel()));
  backend_for(t).random(kind, view_of(dst), g.seed(), counter, a, b);
  if (!dst.is_same(t)) t.copy_(dst);
}

Tensor float_tensor(const char* op, const Shape& shape, const TensorOptions& options) {
  Tensor t = empty(shape, {.dtype = options.dtype, .device = options.device});
  EMBER_CHECK_KIND(DType, t.is_floating_point(), "[", op,
                   "] is only implemented for floating "
                   "point dtypes, got ",
                   t.dtype());
  return t;
}

}  // namespace

Tensor rand(const Shape& shape, const TensorOptions& options, Generator* gen) {
  Tensor t = float_tensor("rand", shape, options);
  fill_random(RandomKind::Uniform, t, 0, 1, gen);
  return options.requires_grad ? t.requires_grad_() : t;
}

Tensor randn(const Shape& shape, const TensorOptions& options, Generator* gen) {
  Tensor t = float_tensor("randn", shape, options);
  fill_random(RandomKind::Normal, t, 0, 1, gen);
  return options.requires_grad ? t.requires_grad_() : t;
}

Tensor randint(int64_t low, int64_t high, const Shape& shape, const TensorOptions& options,
               Generator* gen) {
  EMBER_CHECK(low < high,
              "[randint] random_ expects 'from' to be less than 'to', but got from=", low,
              " >= to=", high);
  Tensor t = empty(shape, {.dtype = options.dtype.value_or(kInt64), .device = options.device});
  fill_random(RandomKind::RandInt, t, static_cast<double>(low), static_cast<double>(high), gen);
  return t;
}

Tensor randint(int64_t high, const Shape& shape, const TensorOptions& options, Generator* gen) {
  return randint(0, high, shape, options, gen);
}

Tensor randperm(int64_t n, const TensorOptions& options, Generator* gen) {
  EMBER_CHECK(n >= 0, "[randperm] n must be non-negative, got ", n);
  Generator& g = gen ? *gen : default_generator(options.target_device());
  Tensor host = make_tensor({n}, kInt64, Device(kCPU));
  int64_t* p = static_cast<int64_t*>(host.impl().data());
  for (int64_t i = 0; i < n; ++i) p[i] = i;
  uint64_t counter = g.advance(static_cast<uint64_t>(n));
  for (int64_t i = n - 1; i > 0; --i) {  // Fisher-Yates
    philox::Uint4 r = philox::philox4x32(counter + i, g.seed());
    uint64_t bits = static_cast<uint64_t>(r.x) << 32 | r.y;
    std::swap(p[i], p[bits % static_cast<uint64_t>(i + 1)]);
  }
  return host.to(options.target_device(), options.dtype.value_or(kInt64));
}

Tensor& uniform_(Tensor& t, double from, double to, Generator* gen) {
  EMBER_CHECK_KIND(DType, t.is_floating_point(), "[uniform_] expects a floating point tensor, got ",
                   t.dtype());
  EMBER_CHECK(from <= to, "[uniform_] expects from <= to, but got from=", from, " > to=", to);
  autograd::check_inplace("uniform_", t);
  fill_random(RandomKind::Uniform, t, from, to, gen);
  return t;
}

Tensor& normal_(Tensor& t, double mean, double std, Generator* gen) {
  EMBER_CHECK_KIND(DType, t.is_floating_point(), "[normal_] expects a floating point tensor, got ",
                   t.dtype());
  EMBER_CHECK(std >= 0, "[normal_] expects std >= 0.0, but found std ", std);
  autograd::check_inplace("normal_", t);
  fill_random(RandomKind::Normal, t, mean, std, gen);
  return t;
}

}  // namespace ember
