// tests/test_dlpack.cpp: DLPack export and import -- the fields a consumer reads, zero-copy in
// both directions, deleters run exactly once and only when the last view goes, strides and byte
// offsets honoured, and the refusals (requires grad, dtypes, devices, versions).
#include <cstring>
#include <memory>
#include <vector>

#include "ember/io/dlpack.h"
#include "test_util.h"

namespace ember {
namespace {

using namespace dlpack;  // NOLINT: the DLPack names read best unqualified here
using testing::tensor_equal;
using testing::throws_error;

// A producer other than ember: a float buffer whose deleter counts its calls.
struct Foreign {
  std::vector<float> data;
  std::vector<int64_t> shape, strides;
  int* deleted;
};

DLManagedTensor* foreign_tensor(std::vector<float> data, std::vector<int64_t> shape,
                                std::vector<int64_t> strides, uint64_t byte_offset, int* deleted) {
  auto* f = new Foreign{std::move(data), std::move(shape), std::move(strides), deleted};
  auto* m = new DLManagedTensor{};
  m->dl_tensor.data = f->data.data();
  m->dl_tensor.device = {kDLCPU, 0};
  m->dl_tensor.ndim = static_cast<int32_t>(f->shape.size());
  m->dl_tensor.dtype = {kDLFloat, 32, 1};
  m->dl_tensor.shape = f->shape.data();
  m->dl_tensor.strides = f->strides.empty() ? nullptr : f->strides.data();
  m->dl_tensor.byte_offset = byte_offset;
  m->manager_ctx = f;
  m->deleter = [](DLManagedTensor* self) {
    auto* f = static_cast<Foreign*>(self->manager_ctx);
    ++*f->deleted;
    delete f;
    delete self;
  };
  return m;
}

// Where a tensor's first element is, on any device.
const char* first_element(const Tensor& t) {
  return static_cast<const char*>(t.storage()->data()) +
         t.storage_offset() * static_cast<int64_t>(t.element_size());
}

class DlpackTest : public testing::DeviceTest {};

TEST_P(DlpackTest, ExportDescribesTheTensor) {
  Tensor base = arange(15, on(kFloat32)).reshape({3, 5});
  Tensor view = base.slice(1, 1, 5, 2);  // (3, 2), strides (5, 2), offset 1
  DLManagedTensor* m = io::to_dlpack(view);
  const DLTensor& dl = m->dl_tensor;
  EXPECT_EQ(dl.device.device_type, device().is_cpu() ? kDLCPU : kDLCUDA);
  EXPECT_EQ(dl.device.device_id, 0);
  EXPECT_EQ(dl.ndim, 2);
  EXPECT_EQ(dl.dtype.code, kDLFloat);
  EXPECT_EQ(dl.dtype.bits, 32);
  EXPECT_EQ(dl.dtype.lanes, 1);
  EXPECT_EQ(std::vector<int64_t>(dl.shape, dl.shape + 2), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(std::vector<int64_t>(dl.strides, dl.strides + 2), (std::vector<int64_t>{5, 2}));
  // The offset goes into the data pointer (byte_offset 0), as PyTorch exports views.
  EXPECT_EQ(dl.data, static_cast<char*>(base.storage()->data()) + 4);
  EXPECT_EQ(dl.byte_offset, 0u);
  if (device().is_cpu()) {  // read it as a consumer would
    const auto* p = reinterpret_cast<const float*>(static_cast<char*>(dl.data) + dl.byte_offset);
    EXPECT_EQ(p[2 * 5 + 1 * 2], 13.0f);  // element (2, 1) is base[2][3]
  }
  m->deleter(m);

  struct Code {
    DType dtype;
    uint8_t code, bits;
  };
  for (Code c :
       {Code{kBool, kDLBool, 8}, Code{kUInt8, kDLUInt, 8}, Code{kInt32, kDLInt, 32},
        Code{kInt64, kDLInt, 64}, Code{kFloat32, kDLFloat, 32}, Code{kFloat64, kDLFloat, 64},
        Code{kFloat16, kDLFloat, 16}, Code{kBFloat16, kDLBfloat, 16}}) {
    DLManagedTensorVersioned* v = io::to_dlpack_versioned(zeros({2}, on(c.dtype)));
    EXPECT_EQ(v->version.major, 1u);
    EXPECT_EQ(v->version.minor, 0u);
    EXPECT_EQ(v->flags, 0u);
    EXPECT_EQ(v->dl_tensor.dtype.code, c.code) << c.dtype;
    EXPECT_EQ(v->dl_tensor.dtype.bits, c.bits) << c.dtype;
    v->deleter(v);
  }
}

TEST_P(DlpackTest, ExportKeepsTheStorageAliveUntilTheDeleterRuns) {
  std::weak_ptr<Storage> storage;
  DLManagedTensor* m;
  {
    Tensor t = ones({4}, on());
    storage = t.storage();
    m = io::to_dlpack(t);
  }
  EXPECT_FALSE(storage.expired());
  m->deleter(m);
  EXPECT_TRUE(storage.expired());
}

TEST_P(DlpackTest, RoundTripsEveryDtypeWithoutCopying) {
  for (DType dtype : {kBool, kUInt8, kInt32, kInt64, kFloat32, kFloat64}) {
    Tensor t = tensor({{0, 1, 0}, {1, 0, 1}}, on(dtype)).t();
    Tensor back = io::from_dlpack(io::to_dlpack(t));
    EXPECT_TRUE(tensor_equal(back, t)) << dtype;
    EXPECT_EQ(back.strides(), t.strides());
    EXPECT_EQ(back.device(), t.device());
    EXPECT_EQ(first_element(back), first_element(t));
  }
  Tensor t = zeros({3}, on());
  Tensor back = io::from_dlpack(io::to_dlpack_versioned(t));
  t.fill_(7.0);  // shared memory: the import sees the write
  EXPECT_TRUE(tensor_equal(back, full({3}, 7.0)));
  Tensor empty_back = io::from_dlpack(io::to_dlpack(zeros({0, 5}, on())));
  EXPECT_EQ(empty_back.sizes(), (Shape{0, 5}));
}

TEST_P(DlpackTest, RequiresGradIsRefusedAsInPyTorch) {
  Tensor w = ones({2}, on()).requires_grad_();
  EXPECT_TRUE(throws_error([&] { io::to_dlpack(w); }, ErrorKind::Value,
                           {"Can't export tensors that require gradient, use tensor.detach()"}));
  EXPECT_TRUE(throws_error([&] { io::to_dlpack_versioned(w); }, ErrorKind::Value,
                           {"Can't export tensors that require gradient"}));
  DLManagedTensor* m = io::to_dlpack(w.detach());
  m->deleter(m);
}

TEST(DlpackImport, ForeignMemoryWithStridesAndOffsetIsViewedAndReleasedOnce) {
  int deleted = 0;
  // Two floats of padding, then a 2x3 row-major block viewed transposed: (3, 2), strides (1, 3).
  DLManagedTensor* m = foreign_tensor({-1, -1, 0, 1, 2, 3, 4, 5}, {3, 2}, {1, 3}, 8, &deleted);
  float* memory = static_cast<float*>(m->dl_tensor.data);
  Tensor row;
  {
    Tensor t = io::from_dlpack(m);
    EXPECT_TRUE(tensor_equal(t, tensor({{0.0, 3.0}, {1.0, 4.0}, {2.0, 5.0}})));
    EXPECT_EQ(t.strides(), (Shape{1, 3}));
    EXPECT_EQ(t.data_ptr<float>(), memory + 2);
    row = t[1];
    t.mul_(10.0);  // writes go to the producer's memory
    EXPECT_EQ(memory[3], 10.0f);
  }
  EXPECT_EQ(deleted, 0);  // `row` still views the memory
  EXPECT_TRUE(tensor_equal(row, tensor({10.0, 40.0})));
  row = Tensor();
  EXPECT_EQ(deleted, 1);

  m = foreign_tensor({1, 2, 3, 4, 5, 6}, {2, 3}, {}, 0, &deleted);  // null strides: row-major
  EXPECT_TRUE(tensor_equal(io::from_dlpack(m), tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}})));
  EXPECT_EQ(deleted, 2);
}

TEST(DlpackImport, ReadOnlyVersionedTensorsAreCopiedAndReleased) {
  int deleted = 0;
  DLManagedTensor* legacy = foreign_tensor({1, 2, 3}, {3}, {}, 0, &deleted);
  // Re-wrap the legacy one as versioned, read-only.
  auto* v = new DLManagedTensorVersioned{};
  v->version = {1, 0};
  v->flags = kFlagReadOnly;
  v->dl_tensor = legacy->dl_tensor;
  v->manager_ctx = legacy;
  v->deleter = [](DLManagedTensorVersioned* self) {
    auto* inner = static_cast<DLManagedTensor*>(self->manager_ctx);
    inner->deleter(inner);
    delete self;
  };
  Tensor t = io::from_dlpack(v);
  EXPECT_EQ(deleted, 1);  // copied, so released at once
  EXPECT_TRUE(tensor_equal(t, tensor({1.0, 2.0, 3.0})));
}

TEST(DlpackImport, RefusalsLeaveOwnershipWithTheCaller) {
  int deleted = 0;
  DLManagedTensor* m = foreign_tensor({1, 2, 3, 4}, {2, 2}, {2, 1}, 0, &deleted);
  DLTensor good = m->dl_tensor;
  auto refuses = [&](ErrorKind kind, const std::string& fragment) {
    return throws_error([&] { io::from_dlpack(m); }, kind, {"[from_dlpack] ", fragment});
  };
  m->dl_tensor.dtype = {kDLFloat, 8, 1};
  EXPECT_TRUE(refuses(ErrorKind::DType, "unsupported DLPack dtype (code 2, bits 8)"));
  m->dl_tensor.dtype = {kDLInt, 8, 1};
  EXPECT_TRUE(refuses(ErrorKind::DType, "unsupported DLPack dtype (code 0, bits 8)"));
  m->dl_tensor.dtype = {kDLFloat, 32, 4};
  EXPECT_TRUE(refuses(ErrorKind::DType, "vector dtypes (lanes = 4) are not supported"));
  m->dl_tensor = good;
  m->dl_tensor.device = {kDLMetal, 0};
  EXPECT_TRUE(refuses(ErrorKind::Device, "DLPack device type 8 is not supported"));
  m->dl_tensor = good;
  m->dl_tensor.device = {kDLCUDA, 7};
  EXPECT_TRUE(throws_error([&] { io::from_dlpack(m); }, ErrorKind::Device, {"cuda:7"}));
  m->dl_tensor = good;
  int64_t negative[2] = {-2, 1};
  m->dl_tensor.strides = negative;
  EXPECT_TRUE(refuses(ErrorKind::Value, "negative strides ([-2, 1]) are not supported"));
  m->dl_tensor = good;
  int64_t bad_shape[2] = {2, -1};
  m->dl_tensor.shape = bad_shape;
  EXPECT_TRUE(refuses(ErrorKind::Value, "negative size -1 in dimension 1"));
  m->dl_tensor = good;
  EXPECT_EQ(deleted, 0);

  auto* v = new DLManagedTensorVersioned{};
  v->version = {2, 0};
  v->dl_tensor = good;
  EXPECT_TRUE(throws_error([&] { io::from_dlpack(v); }, ErrorKind::Value,
                           {"[from_dlpack] DLPack version 2.0 is not supported"}));
  delete v;
  EXPECT_TRUE(throws_error([&] { io::from_dlpack(static_cast<DLManagedTensor*>(nullptr)); },
                           ErrorKind::Value, {"[from_dlpack] null DLManagedTensor"}));
  m->deleter(m);
  EXPECT_EQ(deleted, 1);
}

EMBER_INSTANTIATE_DEVICE_TESTS(DlpackTest);

}  // namespace
}  // namespace ember
