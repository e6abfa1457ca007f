// ember/creation.h: making tensors -- from values, filled, ranges, and random with a seeded
// generator.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <variant>
#include <vector>

#include "ember/tensor.h"

namespace ember {

// Where and what a new tensor is: `{.dtype = kFloat64, .device = device}`.
struct TensorOptions {
  std::optional<DType> dtype = std::nullopt;    // unset: float32, or inferred from the values
  std::optional<Device> device = std::nullopt;  // unset: the CPU (or the other tensor's, for _like)
  bool requires_grad = false;

  Device target_device() const { return device.value_or(Device(kCPU)); }
};

// Values for ember::tensor, nested as deep as the tensor: {{1.0, 2.0}, {3.0, 4.0}}.
class NestedValues {
 public:
  template <class T>
  requires std::is_arithmetic_v<T> NestedValues(T v) : value_(Scalar(v)) {}  // NOLINT
  NestedValues(std::initializer_list<NestedValues> list)
      : value_(std::vector<NestedValues>(list)) {}
  bool is_scalar() const { return std::holds_alternative<Scalar>(value_); }
  const Scalar& scalar() const { return std::get<Scalar>(value_); }
  const std::vector<NestedValues>& list() const {
    return std::get<std::vector<NestedValues>>(value_);
  }

 private:
  std::variant<Scalar, std::vector<NestedValues>> value_;
};

// torch.tensor: dtype inferred as PyTorch does (floats -> float32, ints -> int64, bools -> bool).
Tensor tensor(const NestedValues& values, const TensorOptions& options = {});
// From a flat vector and a shape (the shape defaults to 1-D).
template <class T>
Tensor from_vector(const std::vector<T>& values, std::optional<Shape> shape = std::nullopt,
                   const TensorOptions& options = {});
// Copies numel(shape) values of `dtype` from host memory at `data` into a new tensor.
Tensor from_blob_copy(const void* data, DType dtype, const Shape& shape,
                      const TensorOptions& options = {});
Tensor scalar_tensor(const Scalar& value, const TensorOptions& options = {});

Tensor empty(const Shape& shape, const TensorOptions& options = {});
Tensor zeros(const Shape& shape, const TensorOptions& options = {});
Tensor ones(const Shape& shape, const TensorOptions& options = {});
Tensor full(const Shape& shape, const Scalar& value, const TensorOptions& options = {});
Tensor eye(int64_t n, std::optional<int64_t> m = std::nullopt, const TensorOptions& options = {});
// torch.arange: int64 when all of start, end and step are integers, else float32.
Tensor arange(const Scalar& end, const TensorOptions& options = {});
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step = 1,
              const TensorOptions& options = {});
Tensor linspace(double start, double end, int64_t steps, const TensorOptions& options = {});

// The _like forms keep the other tensor's dtype and device unless options say otherwise.
Tensor empty_like(const Tensor& t, std::optional<TensorOptions> options = std::nullopt);
Tensor zeros_like(const Tensor& t, std::optional<TensorOptions> options = std::nullopt);
Tensor ones_like(const Tensor& t, std::optional<TensorOptions> options = std::nullopt);
Tensor full_like(const Tensor& t, const Scalar& value,
                 std::optional<TensorOptions> options = std::nullopt);
Tensor rand_like(const Tensor& t, std::optional<TensorOptions> options = std::nullopt);
Tensor randn_like(const Tensor& t, std::optional<TensorOptions> options = std::nullopt);
Tensor randint_like(const Tensor& t, int64_t low, int64_t high,
                    std::optional<TensorOptions> options = std::nullopt);

// --- random numbers: a counter-based (Philox 4x32-10) generator per device.
class Generator {
 public:
  explicit Generator(uint64_t seed = 67280421310721ULL) : seed_(seed) {}
  void manual_seed(uint64_t seed) {
    seed_ = seed;
    offset_ = 0;
  }
  uint64_t seed() const { return seed_; }
  uint64_t offset() const { return offset_; }
  void set_offset(uint64_t offset) { offset_ = offset; }
  // Reserves `n` Philox counters and returns the first.
  uint64_t advance(uint64_t n) {
    uint64_t first = offset_;
    offset_ += n;
    return first;
  }

 private:
  uint64_t seed_;
  uint64_t offset_ = 0;
};

// The generator used when none is passed, one per device.
Generator& default_generator(Device device = kCPU);
// Seeds every device's default generator (torch.manual_seed).
void manual_seed(uint64_t seed);

Tensor rand(const Shape& shape, const TensorOptions& options = {}, Generator* gen = nullptr);
Tensor randn(const Shape& shape, const TensorOptions& options = {}, Generator* gen = nullptr);
// Integers uniform in [low, high); int64 unless options say otherwise.
Tensor randint(int64_t low, int64_t high, const Shape& shape, const TensorOptions& options = {},
               Generator* gen = nullptr);
Tensor randint(int64_t high, const Shape& shape, const TensorOptions& options = {},
               Generator* gen = nullptr);
// A random permutation of 0..n-1 (int64 unless options say otherwise).
Tensor randperm(int64_t n, const TensorOptions& options = {}, Generator* gen = nullptr);
// In place: uniform in [from, to) and normal(mean, std).
Tensor& uniform_(Tensor& t, double from = 0, double to = 1, Generator* gen = nullptr);
Tensor& normal_(Tensor& t, double mean = 0, double std = 1, Generator* gen = nullptr);
// bernoulli: 1 with the probability in each element of probs (or p), else 0, in the input's
// dtype; bernoulli_ and exponential_ (-log(1 - u) / lambd) fill t in place.
Tensor bernoulli(const Tensor& probs, Generator* gen = nullptr);
Tensor bernoulli(const Tensor& x, double p, Generator* gen = nullptr);
Tensor& bernoulli_(Tensor& t, double p = 0.5, Generator* gen = nullptr);
Tensor& bernoulli_(Tensor& t, const Tensor& p, Generator* gen = nullptr);
Tensor& exponential_(Tensor& t, double lambd = 1, Generator* gen = nullptr);
// multinomial: num_samples category indices (int64) per row of non-negative weights input (1-D
// or 2-D, not necessarily summing to 1), with or without replacement.
Tensor multinomial(const Tensor& input, int64_t num_samples, bool replacement = false,
                   Generator* gen = nullptr);

template <class T>
Tensor from_vector(const std::vector<T>& values, std::optional<Shape> shape,
                   const TensorOptions& options) {
  Shape s = shape ? *shape : Shape{static_cast<int64_t>(values.size())};
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  EMBER_CHECK_KIND(Shape, n == static_cast<int64_t>(values.size()), "[from_vector] shape ",
                   shape_str(s), " holds ", n, " elements but the vector has ", values.size());
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<uint8_t> bytes(values.begin(), values.end());
    Tensor t = from_blob_copy(bytes.data(), kBool, s, {.device = kCPU});
    return t.to(options.target_device(), options.dtype.value_or(kBool));
  } else {
    Tensor t = from_blob_copy(values.data(), dtype_of<T>(), s, {.device = kCPU});
    return t.to(options.target_device(), options.dtype.value_or(dtype_of<T>()));
  }
}

}  // namespace ember
