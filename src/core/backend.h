// core/backend.h: the narrow interface every device backend implements, keyed by op family.
// Kernels see views as (data pointer, sizes, strides, dtype); op semantics live in src/ops.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "ember/device.h"
#include "ember/dtype.h"
#include "ember/scalar.h"
#include "ember/tensor.h"
#include "kernels/op_params.h"
#include "kernels/op_tables.h"
#include "kernels/view.h"

namespace ember {

inline View view_of(const Tensor& t) {
  const TensorImpl& i = t.impl();
  return View{i.data(), i.sizes, i.strides, i.dtype};
}

class Backend {
 public:
  virtual ~Backend() = default;
  virtual int device_count() = 0;
  virtual std::string device_name(int device_index) = 0;

  virtual void* allocate(size_t nbytes, int device_index) = 0;
  virtual void deallocate(void* ptr, size_t nbytes, int device_index) = 0;

  // Same-device copy: dst and src have dst's shape (src may broadcast), dtypes may differ.
  virtual void copy(const View& dst, const View& src) = 0;
  // Between this device and host memory; both sides contiguous, same dtype.
  virtual void copy_from_host(void* dst, const void* src, size_t nbytes, int device_index,
                              bool non_blocking) = 0;
  virtual void copy_to_host(void* dst, const void* src, size_t nbytes, int device_index,
                            bool non_blocking) = 0;
  // Between two devices of this backend, both contiguous: true when done directly (peer to
  // peer), false when this backend cannot (the caller then copies through the host).
  virtual bool copy_between_devices(void* dst, int dst_index, const void* src, int src_index,
                                    size_t nbytes);
  // The block at ptr (from allocate on device_index) is used by work on `stream` (a backend
  // stream handle): when it is freed, it is not reused before that work is done. Throws where the
  // backend has no streams.
  virtual void record_stream(void* ptr, int device_index, void* stream);
  virtual void fill(const View& dst, const Scalar& value) = 0;

  // Element-wise: all views have dst's shape (inputs broadcast with 0 strides) and inputs share
  // one dtype; dst has that dtype too except for ops whose table says bool.
  virtual void unary(UnaryOp op, const View& dst, const View& src, const UnaryParams& p) = 0;
  virtual void binary(BinaryOp op, const View& dst, const View& a, const View& b) = 0;
  virtual void where(const View& dst, const View& cond, const View& a, const View& b) = 0;

  // dst has src's rank with reduced dims of size 1; reduce_mask bit d set when dim d is reduced.
  // ArgMax / ArgMin reduce exactly one dim and write int64.
  virtual void reduce(ReduceOp op, const View& dst, const View& src, uint64_t reduce_mask) = 0;

  // dst: (B, M, N) contiguous; a: (B, M, K), b: (B, K, N) strided; one dtype.
  virtual void matmul(const View& dst, const View& a, const View& b) = 0;

  // Unfolding image patches into columns and back (convolution and pooling). image:
  // (batch, channels, height, width), cols: (batch, channels * kernel_h * kernel_w,
  // out_h * out_w); both contiguous, one floating dtype. im2col overwrites cols; col2im overwrites
  // image with the sum of every column entry that reads each pixel.
  // Softmax (or log-softmax) of src along `dim` into dst; both contiguous, one float dtype.
  virtual void softmax(const View& dst, const View& src, int64_t dim, bool log) = 0;

  virtual void im2col(const View& cols, const View& image, const Conv2dGeometry& g) = 0;
  virtual void col2im(const View& image, const View& cols, const Conv2dGeometry& g) = 0;

  // Max pooling over the windows of g (padding never wins). image: (N, C, H, W); values and
  // indices (int64): (N, C, out_h, out_w); all contiguous, one floating dtype. Each index is the
  // flat position (y * W + x) of the window's first maximum in its input plane, NaN counting as
  // a maximum (PyTorch's max_pool2d_with_indices). max_pool2d_backward overwrites grad_image
  // with each output's gradient summed at its index.
  virtual void max_pool2d(const View& values, const View& indices, const View& image,
                          const Conv2dGeometry& g) = 0;
  virtual void max_pool2d_backward(const View& grad_image, const View& grad_out,
                                   const View& indices, const Conv2dGeometry& g) = 0;

  // index: int64, bounds already checked. dst of index_select is contiguous.
  virtual void index_select(const View& dst, const View& src, int64_t dim, const View& index) = 0;
  virtual void gather(const View& dst, const View& src, int64_t dim, const View& index) = 0;
  virtual void scatter_add(const View& dst, int64_t dim, const View& index, const View& src) = 0;

  // dst contiguous. Uniform in [a, b), Normal(mean a, std b), RandInt in [a, b).
  virtual void random(RandomKind kind, const View& dst, uint64_t seed, uint64_t counter, double a,
                      double b) = 0;

  // Updates each params[i] in place from grads[i] in one pass, with per-parameter state:
  // SGD: state1 = momentum buffer (when momentum != 0); Adam: state1 = exp_avg,
  // state2 = exp_avg_sq, state3 = max_exp_avg_sq (amsgrad). All contiguous, one dtype per i.
  virtual void optimizer_step(const OptimizerStep& step, std::span<const View> params,
                              std::span<const View> grads, std::span<const View> state1,
                              std::span<const View> state2, std::span<const View> state3) = 0;

  virtual void synchronize(int device_index) = 0;
};

namespace detail {
// Backends by device type; empty until the first lookup fills it (see backend.cpp).
extern constinit std::array<Backend*, 3> g_backends;
}  // namespace detail
// backend_for's first call for a type, and its error when that type has no backend.
Backend& backend_for_slow(DeviceType type);
// The backend of a device type; throws an Error when that type has none in this build.
inline Backend& backend_for(DeviceType type) {
  Backend* b = detail::g_backends[static_cast<size_t>(type)];
  return b ? *b : backend_for_slow(type);
}
inline Backend& backend_for(const Tensor& t) {
  return backend_for(t.device().type());
}
// The built-in backends; cuda_backend() is null in a build without CUDA.
Backend* cpu_backend();
Backend* cuda_backend();
// Replaces a device type's backend (tests register a stand-in this way).
void register_backend(DeviceType type, Backend* backend);
bool has_backend(DeviceType type);

}  // namespace ember
