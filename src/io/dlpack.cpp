// io/dlpack.cpp: DLPack export (an ember tensor kept alive by the managed tensor's context) and
// import (ember storage wrapping the foreign memory, its deleter calling the producer's).
#include "ember/io/dlpack.h"

#include <memory>
#include <optional>
#include <vector>

#include "ember/device.h"

namespace ember::io {

using dlpack::DLDataType;
using dlpack::DLManagedTensor;
using dlpack::DLManagedTensorVersioned;
using dlpack::DLTensor;

namespace {

constexpr int64_t kMaxElements = int64_t{1} << 56;

DLDataType dl_dtype(DType t) {
  const DTypeInfo& i = dtype_info(t);
  return {i.dlpack_code, i.dlpack_bits, 1};
}

std::optional<DType> ember_dtype(DLDataType d) {
  for (DType t : kAllDTypes) {
    DLDataType e = dl_dtype(t);
    if (e.code == d.code && e.bits == d.bits) return t;
  }
  return std::nullopt;
}

// What an exported managed tensor owns: the tensor (so its storage) and the arrays DLTensor
// points to.
struct ExportContext {
  Tensor tensor;
  std::vector<int64_t> shape, strides;
};

std::unique_ptr<ExportContext> describe(const Tensor& t, DLTensor& out) {
  EMBER_CHECK(t.defined(), "[to_dlpack] the tensor is undefined (default-constructed)");
  EMBER_CHECK(!t.requires_grad(),
              "Can't export tensors that require gradient, use tensor.detach()");
  Device d = t.device();
  EMBER_CHECK_KIND(Device, d.is_cpu() || d.is_cuda(), "[to_dlpack] ", d,
                   " tensors can't be exported through DLPack; move them to the CPU with .cpu()");
  auto ctx = std::make_unique<ExportContext>();
  ctx->tensor = t;
  ctx->shape.assign(t.sizes().begin(), t.sizes().end());
  ctx->strides.assign(t.strides().begin(), t.strides().end());
  // The view's first element as `data` and byte_offset 0, as PyTorch and NumPy export: consumers
  // that ignore byte_offset (LibTorch 1.13's fromDLPack among them) read the right elements.
  out.data = t.impl().data();
  out.device = d.is_cpu() ? dlpack::DLDevice{dlpack::kDLCPU, 0}
                          : dlpack::DLDevice{dlpack::kDLCUDA,
                                             static_cast<int32_t>(d.has_index() ? d.index() : 0)};
  out.ndim = static_cast<int32_t>(t.dim());
  out.dtype = dl_dtype(t.dtype());
  out.shape = ctx->shape.data();
  out.strides = ctx->strides.data();
  out.byte_offset = 0;
  return ctx;
}

template <class Managed>
void delete_exported(Managed* self) {
  delete static_cast<ExportContext*>(self->manager_ctx);
  delete self;
}

Device import_device(const dlpack::DLDevice& d) {
  if (d.device_type == dlpack::kDLCPU) return Device(kCPU);
  if (d.device_type == dlpack::kDLCUDA) {
    EMBER_CHECK_KIND(Device, d.device_id >= 0, "[from_dlpack] invalid CUDA device id ",
                     d.device_id);
    return resolve_device(Device(kCUDA, d.device_id));
  }
  EMBER_THROW(Device, "[from_dlpack] DLPack device type ", static_cast<int>(d.device_type),
              " is not supported: ember takes CPU (1) and CUDA (2) memory; copy the array to one "
              "of those first");
}

// A tensor viewing dl's memory; `release` runs when the last view goes. Validates everything
// before taking ownership, so on error the caller still owns the memory.
Tensor import(const DLTensor& dl, std::function<void()> release) {
  EMBER_CHECK(dl.ndim >= 0, "[from_dlpack] negative ndim ", dl.ndim);
  EMBER_CHECK(dl.ndim == 0 || dl.shape != nullptr, "[from_dlpack] the DLTensor has no shape");
  EMBER_CHECK_KIND(DType, dl.dtype.lanes == 1,
                   "[from_dlpack] vector dtypes (lanes = ", dl.dtype.lanes, ") are not supported");
  std::optional<DType> dtype = ember_dtype(dl.dtype);
  EMBER_CHECK_KIND(DType, dtype.has_value(), "[from_dlpack] unsupported DLPack dtype (code ",
                   int{dl.dtype.code}, ", bits ", int{dl.dtype.bits},
                   "); ember has bool, uint8, int32, int64, float32 and float64: convert first");
  Device device = import_device(dl.device);

  Shape sizes(dl.shape, dl.shape + dl.ndim), strides(static_cast<size_t>(dl.ndim));
  int64_t numel = 1, extent = 1;
  for (int64_t i = dl.ndim - 1; i >= 0; --i) {
    int64_t n = sizes[i];
    EMBER_CHECK(n >= 0, "[from_dlpack] negative size ", n, " in dimension ", i);
    EMBER_CHECK(n == 0 || numel <= kMaxElements / n, "[from_dlpack] implausibly large shape ",
                shape_str(sizes));
    strides[i] = dl.strides ? dl.strides[i] : numel;
    numel *= n;
  }
  for (int64_t i = 0; i < dl.ndim && numel > 0; ++i) {
    EMBER_CHECK(strides[i] >= 0, "[from_dlpack] negative strides (", shape_str(strides),
                ") are not supported; make the array contiguous first");
    EMBER_CHECK(strides[i] <= kMaxElements / sizes[i], "[from_dlpack] implausibly large strides ",
                shape_str(strides));
    extent += (sizes[i] - 1) * strides[i];
  }
  if (numel == 0) extent = 0;
  EMBER_CHECK(extent == 0 || dl.data != nullptr, "[from_dlpack] the DLTensor's data is null");

  char* base = dl.data ? static_cast<char*>(dl.data) + dl.byte_offset : nullptr;
  auto impl = std::make_shared<TensorImpl>();
  impl->storage =
      std::make_shared<Storage>(base, static_cast<size_t>(extent) * element_size(*dtype), device,
                                [release = std::move(release)](void*) { release(); });
  impl->sizes = std::move(sizes);
  impl->strides = std::move(strides);
  impl->dtype = *dtype;
  return Tensor(std::move(impl));
}

}  // namespace

DLManagedTensor* to_dlpack(const Tensor& tensor) {
  auto managed = std::make_unique<DLManagedTensor>();
  managed->manager_ctx = describe(tensor, managed->dl_tensor).release();
  managed->deleter = delete_exported<DLManagedTensor>;
  return managed.release();
}

DLManagedTensorVersioned* to_dlpack_versioned(const Tensor& tensor) {
  auto managed = std::make_unique<DLManagedTensorVersioned>();
  managed->version = {dlpack::kMajorVersion, dlpack::kMinorVersion};
  managed->flags = 0;
  managed->manager_ctx = describe(tensor, managed->dl_tensor).release();
  managed->deleter = delete_exported<DLManagedTensorVersioned>;
  return managed.release();
}

Tensor from_dlpack(DLManagedTensor* managed) {
  EMBER_CHECK(managed != nullptr, "[from_dlpack] null DLManagedTensor");
  return import(managed->dl_tensor, [managed] {
    if (managed->deleter) managed->deleter(managed);
  });
}

Tensor from_dlpack(DLManagedTensorVersioned* managed) {
  EMBER_CHECK(managed != nullptr, "[from_dlpack] null DLManagedTensorVersioned");
  EMBER_CHECK(managed->version.major == dlpack::kMajorVersion, "[from_dlpack] DLPack version ",
              managed->version.major, ".", managed->version.minor,
              " is not supported; ember reads major version ", dlpack::kMajorVersion);
  Tensor t = import(managed->dl_tensor, [managed] {
    if (managed->deleter) managed->deleter(managed);
  });
  if (managed->flags & dlpack::kFlagReadOnly) return t.clone();  // the view goes, releasing it
  return t;
}

}  // namespace ember::io
