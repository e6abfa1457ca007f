// ember/io/dlpack.h: zero-copy exchange of tensors with other libraries through DLPack, the
// common in-memory tensor structure (NumPy, PyTorch, JAX, CuPy ...). The structs below follow the
// published DLPack 1.x ABI (field order, types and enum values); they live in ember::dlpack so
// that they never clash with a copy of the reference header.
#pragma once

#include <cstdint>

#include "ember/tensor.h"

namespace ember::dlpack {

inline constexpr uint32_t kMajorVersion = 1;
inline constexpr uint32_t kMinorVersion = 0;

struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
};

enum DLDeviceType : int32_t {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,
  kDLOpenCL = 4,
  kDLVulkan = 7,
  kDLMetal = 8,
  kDLVPI = 9,
  kDLROCM = 10,
  kDLROCMHost = 11,
  kDLExtDev = 12,
  kDLCUDAManaged = 13,
  kDLOneAPI = 14,
  kDLWebGPU = 15,
  kDLHexagon = 16,
};

struct DLDevice {
  DLDeviceType device_type;
  int32_t device_id;
};

enum DLDataTypeCode : uint8_t {
  kDLInt = 0,
  kDLUInt = 1,
  kDLFloat = 2,
  kDLOpaqueHandle = 3,
  kDLBfloat = 4,
  kDLComplex = 5,
  kDLBool = 6,
};

struct DLDataType {
  uint8_t code;    // a DLDataTypeCode
  uint8_t bits;    // bits per lane
  uint16_t lanes;  // 1 for scalars
};

struct DLTensor {
  void* data;  // the first element is at data + byte_offset (ember exports byte_offset 0)
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;    // ndim sizes
  int64_t* strides;  // ndim strides in elements; null means compact row-major
  uint64_t byte_offset;
};

// The legacy (pre-1.0) managed tensor: the consumer calls deleter(self) when it is done.
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};

inline constexpr uint64_t kFlagReadOnly = uint64_t{1} << 0;  // DLPACK_FLAG_BITMASK_READ_ONLY
inline constexpr uint64_t kFlagIsCopied = uint64_t{1} << 1;  // DLPACK_FLAG_BITMASK_IS_COPIED

// The versioned managed tensor of DLPack 1.0 and later.
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
};

}  // namespace ember::dlpack

namespace ember::io {

// Exports `tensor` without copying: the result keeps the tensor's storage alive until the
// consumer calls its deleter (exactly once). Shape, strides (in elements) and byte_offset describe
// the view. CPU tensors export as kDLCPU, CUDA tensors as kDLCUDA with their device index. Tensors
// that require grad are refused, as in PyTorch: detach() them first.
dlpack::DLManagedTensor* to_dlpack(const Tensor& tensor);
dlpack::DLManagedTensorVersioned* to_dlpack_versioned(const Tensor& tensor);

// Imports without copying, taking ownership on success: the managed tensor's deleter runs when
// the last ember tensor viewing the memory goes. On error (an unsupported dtype, device, version,
// lanes or negative strides) nothing is taken and the caller still owns `managed`. A versioned
// tensor flagged read-only is copied (ember tensors are writable) and released at once.
Tensor from_dlpack(dlpack::DLManagedTensor* managed);
Tensor from_dlpack(dlpack::DLManagedTensorVersioned* managed);

}  // namespace ember::io
