// ops/copy.cpp: the copies autograd sees -- to(device, dtype), clone, contiguous and copy_ (whose
// backward sends the gradient back to the source's device and dtype, summed over broadcast dims).
#include "autograd/function.h"
#include "core/make_tensor.h"
#include "core/shape.h"
#include "ember/tensor.h"

namespace ember {

Tensor Tensor::to(Device device, DType dtype, bool non_blocking, bool copy) const {
  Device target = device == this->device() ? device : resolve_device(device);
  if (target == this->device() && dtype == this->dtype() && !copy) return *this;
  Tensor out = make_tensor(sizes(), dtype, target);
  out.copy_(*this, non_blocking);
  return out;
}
Tensor Tensor::to(Device device, bool non_blocking, bool copy) const {
  return to(device, dtype(), non_blocking, copy);
}
Tensor Tensor::to(DType dtype, bool non_blocking, bool copy) const {
  return to(device(), dtype, non_blocking, copy);
}

Tensor Tensor::clone() const {
  Tensor out = make_tensor(sizes(), dtype(), device());
  out.copy_(*this);
  return out;
}

Tensor Tensor::contiguous() const {
  return is_contiguous() ? *this : clone();
}

Tensor& Tensor::copy_(const Tensor& src, bool non_blocking) {
  EMBER_CHECK_KIND(Shape, broadcast_shape("copy_", sizes(), src.sizes()) == sizes(),
                   "[copy_] source of shape ", shape_str(src.sizes()),
                   " can't be broadcast to the destination shape ", shape_str(sizes()));
  storage()->bump_version();
  autograd::record_inplace(
      "CopyBackwards", *this, {&src},
      [src_sizes = src.sizes(), src_device = src.device(),
       src_dtype = src.dtype()](const Tensor& g) -> std::vector<Tensor> {
        return {Tensor(), autograd::sum_to(g, src_sizes).to(src_device, src_dtype)};
      });
  autograd::NoGradGuard no_grad;
  copy_data(src, non_blocking);
  return *this;
}

}  // namespace ember
