// core/tensor.cpp: tensor allocation, host access, and the data copies between devices and dtypes
// (copy_data: no autograd; the recorded copies, to() and copy_(), are ops: ops/copy.cpp).
#include <cstring>

#include "core/backend.h"
#include "core/host_allocator.h"
#include "core/make_tensor.h"
#include "core/pinned_memory.h"
#include "core/shape.h"
#include "ember/cuda.h"
#include "ember/tensor.h"

namespace ember {

Tensor make_tensor(const Shape& sizes, DType dtype, Device device) {
  auto impl = make_cached_shared<TensorImpl>();
  impl->storage = make_cached_shared<Storage>(
      static_cast<size_t>(shape_numel(sizes)) * element_size(dtype), device);
  impl->sizes = sizes;
  impl->strides = contiguous_strides(sizes);
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

Tensor make_view(const Tensor& base, Shape sizes, Shape strides, int64_t offset) {
  auto impl = make_cached_shared<TensorImpl>();
  impl->storage = base.storage();
  impl->sizes = std::move(sizes);
  impl->strides = std::move(strides);
  impl->offset = offset;
  impl->dtype = base.dtype();
  const auto& root = base.impl().view_base;
  impl->view_base = root ? root : base.impl_ptr();
  return Tensor(std::move(impl));
}

Device common_device(const char* op, std::initializer_list<const Tensor*> tensors) {
  const Tensor* first = *tensors.begin();
  Device d = first->device();
  for (const Tensor* t : tensors) {
    if (t->device() != d) {
      Device a = d.is_cpu() ? t->device() : d, b = d.is_cpu() ? d : t->device();
      EMBER_THROW(Device,
                  "Expected all tensors to be on the same device, but found at least two devices, ",
                  a, " and ", b, "! (in ", op,
                  "). Move the model and the data to one device with .to(device).");
    }
  }
  return d;
}

namespace detail {
void throw_not_on_host(const char* op, const Tensor& t) {
  EMBER_THROW(Device, "[", op, "] can't convert ", t.device(),
              " device type tensor to host memory. Use Tensor.cpu() to copy the tensor to host "
              "memory first.");
}
void throw_dtype_mismatch(const char* op, DType expected, DType actual) {
  EMBER_THROW(DType, "[", op, "] expected a ", expected, " tensor but this one is ", actual,
              "; convert it first with .to(ember::k...)");
}
}  // namespace detail

int64_t Tensor::size(int64_t d) const {
  return sizes()[wrap_dim("size", d, dim())];
}
int64_t Tensor::stride(int64_t d) const {
  return strides()[wrap_dim("stride", d, dim())];
}
bool Tensor::is_contiguous() const {
  return ember::is_contiguous(sizes(), strides());
}

void* Tensor::raw_data_ptr() const {
  if (!is_cpu()) detail::throw_not_on_host("data_ptr", *this);
  return impl().data();
}

Scalar Tensor::item() const {
  EMBER_CHECK(numel() == 1, "[item] a Tensor with ", numel(),
              " elements cannot be converted to Scalar; select one element first");
  alignas(8) unsigned char buf[8];
  if (is_cpu())
    std::memcpy(buf, impl().data(), element_size());
  else
    backend_for(*this).copy_to_host(buf, impl().data(), element_size(), device().index(), false);
  return visit_dtype(dtype(), [&]<class T>() {
    T v;
    std::memcpy(&v, buf, sizeof(T));
    return Scalar(v);
  });
}

Tensor Tensor::pin_memory() const {
  EMBER_CHECK_KIND(Device, is_cpu(), "[pin_memory] only CPU tensors can be pinned, this one is on ",
                   device());
  if (is_pinned()) return *this;
  size_t bytes = static_cast<size_t>(numel()) * element_size();
  void* p = pinned_allocate(bytes);
  auto impl = std::make_shared<TensorImpl>();
  impl->storage =
      std::make_shared<Storage>(p, bytes, Device(kCPU), [](void* q) { pinned_free(q); });
  impl->sizes = sizes();
  impl->strides = contiguous_strides(sizes());
  impl->dtype = dtype();
  Tensor out(std::move(impl));
  out.copy_data(*this, false);
  return out;
}

bool Tensor::is_pinned() const {
  return is_cpu() && storage() && is_pinned_pointer(impl().data());
}

Tensor Tensor::converted(const Tensor& src, const Shape& sizes, DType dtype,
                         std::optional<Device> device) {
  Tensor out = make_tensor(sizes, dtype, device.value_or(src.device()));
  out.copy_data(src, false);
  return out;
}

void Tensor::copy_data(const Tensor& src, bool non_blocking) const {
  Device dd = device(), sd = src.device();
  if (numel() == 0) return;
  if (dd == sd) {
    Shape strides = broadcast_strides(src, sizes());
    backend_for(dd.type()).copy(view_of(*this),
                                View{src.impl().data(), sizes(), strides, src.dtype()});
    return;
  }
  bool direct = is_contiguous();
  if (sd.is_cpu()) {  // host -> device
    Tensor host = src.dtype() == dtype() && src.sizes() == sizes() && src.is_contiguous()
                      ? src
                      : converted(src, sizes(), dtype());
    Tensor dst = direct ? *this : make_tensor(sizes(), dtype(), dd);
    backend_for(dd.type()).copy_from_host(dst.impl().data(), host.impl().data(), nbytes(),
                                          dd.index(), non_blocking);
    if (!direct) copy_data(dst, false);
  } else if (dd.is_cpu()) {  // device -> host
    Tensor dev = src.dtype() == dtype() && src.sizes() == sizes() && src.is_contiguous()
                     ? src
                     : converted(src, sizes(), dtype());
    Tensor dst = direct ? *this : make_tensor(sizes(), dtype(), dd);
    backend_for(sd.type()).copy_to_host(dst.impl().data(), dev.impl().data(), nbytes(), sd.index(),
                                        non_blocking);
    if (!direct) copy_data(dst, false);
  } else {  // between two devices: directly where the backend can, else through the host
    if (dd.type() == sd.type()) {
      Tensor from = src.dtype() == dtype() && src.sizes() == sizes() && src.is_contiguous()
                        ? src
                        : converted(src, sizes(), dtype());
      Tensor dst = direct ? *this : make_tensor(sizes(), dtype(), dd);
      if (backend_for(dd.type()).copy_between_devices(dst.impl().data(), dd.index(),
                                                      from.impl().data(), sd.index(), nbytes())) {
        if (!direct) copy_data(dst, false);
        return;
      }
    }
    copy_data(converted(src, src.sizes(), src.dtype(), Device(kCPU)), non_blocking);
  }
}

void Tensor::record_stream(const cuda::Stream& stream) const {
  Device d = device();
  EMBER_CHECK_KIND(Device, d.is_cuda(),
                   "[record_stream] expected a CUDA tensor, but this one is on ", d,
                   "; record_stream is a CUDA-only API (it keeps a CUDA tensor's memory from "
                   "being reused while another stream still uses it)");
  EMBER_CHECK_KIND(Device, stream.device() == d.index(), "[record_stream] the tensor is on ", d,
                   " but the stream belongs to cuda:", stream.device(),
                   "; record a stream of the tensor's own device");
  if (!storage()) return;
  backend_for(d.type()).record_stream(storage()->data(), d.index(), stream.handle());
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  return os << t.str();
}

}  // namespace ember
