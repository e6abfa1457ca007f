// core/backend.h: the narrow interface every device backend implements -- device memory and
// copies by hand, the compute ops generated from core/backend_ops.def -- and the backend registry.
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

namespace detail {
template <class... Args>
inline void ignore(const Args&...) {}
}  // namespace detail

class Backend {
 public:
  virtual ~Backend() = default;
  virtual int device_count() = 0;
  virtual std::string device_name(int device_index) = 0;

  virtual void* allocate(size_t nbytes, int device_index) = 0;
  virtual void deallocate(void* ptr, size_t nbytes, int device_index) = 0;

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
  // Whether attention_forward / attention_backward take bfloat16 and float16 views themselves
  // (the logsumexp in float32) for query/key heads of head_dim and value heads of value_dim on
  // this device. False by default: the attention op then computes 16-bit attention through
  // float32 copies. The CUDA backend's tensor-core kernels take multiples of 16 up to 128 whose
  // tiles fit the device's shared memory.
  virtual bool takes_half_attention(int64_t head_dim, int64_t value_dim, int device_index);

  // The compute ops (core/backend_ops.def). A backend overrides those it implements; the others
  // throw an Error naming the op and the device, so a new backend can start with a few.
#define EMBER_BACKEND_OP(name, params, args, on) \
  virtual void name params {                     \
    detail::ignore args;                         \
    not_implemented(#name);                      \
  }
#include "core/backend_ops.def"
#undef EMBER_BACKEND_OP

  virtual void synchronize(int device_index) = 0;

 private:
  [[noreturn]] void not_implemented(const char* op) const;
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
