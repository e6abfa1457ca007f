// tests/interop/dlpack_libtorch.cpp: DLPack exchange with PyTorch's C++ library (LibTorch) in the
// same process -- ember tensors imported by at::fromDLPack and LibTorch tensors imported by
// ember::io::from_dlpack, zero-copy both ways, values, strides and ownership checked, bfloat16 and
// float16 included. Built only
// when CMake finds LibTorch (Debian's libtorch-dev), whose DLPack is the legacy DLManagedTensor.
#include <ATen/DLConvertor.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdint>

#include "ember/ember.h"
#include "ember/io/dlpack.h"

namespace {

// ember's legacy struct and LibTorch's have the DLPack ABI, so a pointer passes between them.
::DLManagedTensor* as_aten(ember::dlpack::DLManagedTensor* m) {
  return reinterpret_cast<::DLManagedTensor*>(m);
}
ember::dlpack::DLManagedTensor* as_ember(::DLManagedTensor* m) {
  return reinterpret_cast<ember::dlpack::DLManagedTensor*>(m);
}

TEST(DlpackLibTorch, EmberTensorsImportIntoLibTorchWithoutCopying) {
  ember::Tensor e = ember::arange(12, {.dtype = ember::kFloat32}).view({3, 4});
  at::Tensor t = at::fromDLPack(as_aten(ember::io::to_dlpack(e)));
  EXPECT_EQ(t.data_ptr(), e.raw_data_ptr());
  EXPECT_EQ(t.sizes(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(t.dtype(), torch::kFloat32);
  EXPECT_TRUE(torch::equal(t, torch::arange(12, torch::kFloat32).view({3, 4})));
  // A write through LibTorch shows in ember: one buffer.
  t.index_put_({1, 2}, 100.0f);
  EXPECT_EQ(e.index({1, 2}).item<float>(), 100.0f);
  // A transposed, offset view keeps its strides and offset.
  ember::Tensor v = e.t().slice(0, 1, 3);  // (2, 3), strides (1, 4), offset 1
  at::Tensor tv = at::fromDLPack(as_aten(ember::io::to_dlpack(v)));
  EXPECT_EQ(tv.strides(), (std::vector<int64_t>{1, 4}));
  EXPECT_TRUE(torch::equal(tv, t.t().slice(0, 1, 3)));
  // The storage outlives the ember handles while LibTorch holds it.
  e = ember::Tensor();
  v = ember::Tensor();
  EXPECT_EQ(t.index({1, 2}).item<float>(), 100.0f);
}

TEST(DlpackLibTorch, LibTorchTensorsImportIntoEmberWithoutCopying) {
  for (auto [tdt, edt] :
       {std::pair{torch::kFloat32, ember::kFloat32}, std::pair{torch::kFloat64, ember::kFloat64},
        std::pair{torch::kInt64, ember::kInt64}, std::pair{torch::kInt32, ember::kInt32},
        std::pair{torch::kUInt8, ember::kUInt8}, std::pair{torch::kBFloat16, ember::kBFloat16},
        std::pair{torch::kHalf, ember::kFloat16}}) {
    at::Tensor t = torch::arange(20, tdt).view({4, 5}).t();  // (5, 4), strides (1, 5)
    ember::Tensor e = ember::io::from_dlpack(as_ember(at::toDLPack(t)));
    EXPECT_EQ(e.dtype(), edt);
    EXPECT_EQ(e.raw_data_ptr(), t.data_ptr());
    EXPECT_EQ(e.sizes(), (ember::Shape{5, 4}));
    EXPECT_EQ(e.strides(), (ember::Shape{1, 5}));
    ember::Tensor want = ember::arange(20, {.dtype = edt}).view({4, 5}).t();
    EXPECT_EQ(e.to(ember::kFloat64).contiguous().to_vector<double>(),
              want.to(ember::kFloat64).contiguous().to_vector<double>())
        << edt;
  }
}

TEST(DlpackLibTorch, SixteenBitTensorsExportWithTheirBits) {
  // bfloat16 and float16 go to LibTorch as its own dtypes, bit for bit: 0.1 rounded by ember
  // equals 0.1 rounded by PyTorch.
  for (auto [edt, tdt] :
       {std::pair{ember::kBFloat16, torch::kBFloat16}, std::pair{ember::kFloat16, torch::kHalf}}) {
    ember::Tensor e = ember::tensor({0.1, -2.5, 65504.0, 1e-6}).to(edt);
    at::Tensor t = at::fromDLPack(as_aten(ember::io::to_dlpack(e)));
    EXPECT_EQ(t.dtype(), tdt);
    at::Tensor want = torch::tensor({0.1f, -2.5f, 65504.0f, 1e-6f}).to(tdt);
    EXPECT_TRUE(torch::equal(t.view(torch::kInt16), want.view(torch::kInt16))) << edt;
  }
}

TEST(DlpackLibTorch, RoundTripKeepsOneBufferAndFreesIt) {
  at::Tensor t = torch::ones({1000}, torch::kFloat64);
  const void* p = t.data_ptr();
  {
    ember::Tensor e = ember::io::from_dlpack(as_ember(at::toDLPack(t)));
    at::Tensor back = at::fromDLPack(as_aten(ember::io::to_dlpack(e * 1.0 + e)));
    EXPECT_TRUE(torch::allclose(back, torch::full({1000}, 2.0, torch::kFloat64)));
    at::Tensor same = at::fromDLPack(as_aten(ember::io::to_dlpack(e)));
    EXPECT_EQ(same.data_ptr(), p);
  }
  // LibTorch's own handle is the last one; its storage is intact.
  EXPECT_EQ(t.use_count(), 1);
  EXPECT_TRUE(torch::equal(t, torch::ones({1000}, torch::kFloat64)));
}

}  // namespace
