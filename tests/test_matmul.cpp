// tests/test_matmul.cpp: matmul with torch.matmul's rank rules (1-D, 2-D, batched, broadcast
// batch dims), mm and bmm, strided operands, float and integer dtypes, empty inner dims, errors,
// and random products against a float64 reference.
#include "test_util.h"

namespace ember {
namespace {

using testing::tensor_close;
using testing::tensor_equal;
using testing::throws_error;
using testing::values_of;

// Reference batched product in float64 on the host: a (B, M, K) @ b (B, K, N) -> (B, M, N).
std::vector<double> reference_bmm(const Tensor& a, const Tensor& b) {
  int64_t B = a.size(0), M = a.size(1), K = a.size(2), N = b.size(2);
  std::vector<double> va = values_of(a), vb = values_of(b), out(B * M * N, 0.0);
  for (int64_t i = 0; i < B; ++i)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double acc = 0;
        for (int64_t k = 0; k < K; ++k) acc += va[(i * M + m) * K + k] * vb[(i * K + k) * N + n];
        out[(i * M + m) * N + n] = acc;
      }
  return out;
}

class MatmulTest : public testing::DeviceTest {
 protected:
  // 0, 1, 2, ... laid out contiguously in `shape`.
  Tensor iota(const Shape& shape, DType dtype = kFloat32) const {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    return arange(n, on(dtype)).view(shape);
  }
  // The reference result as a tensor of `shape` on this device.
  Tensor expected(const std::vector<double>& values, const Shape& shape) const {
    return from_vector(values, shape, on(kFloat64));
  }
};

TEST_P(MatmulTest, VectorDotVectorIsZeroDim) {
  Tensor r = matmul(tensor({1.0, 2.0, 3.0}, on()), tensor({4.0, 5.0, 6.0}, on()));
  EXPECT_EQ(r.dim(), 0);
  EXPECT_EQ(r.dtype(), kFloat32);
  EXPECT_EQ(r.item<float>(), 32.0f);
  EXPECT_TRUE(throws_error(
      [&] {
        matmul(tensor({1.0, 2.0}, on()), tensor({1.0}, on()));
      },
      ErrorKind::Shape, {"inconsistent tensor size"}));
}

TEST_P(MatmulTest, MatrixTimesVector) {
  Tensor A = tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}, on());
  Tensor r = A.matmul(tensor({1.0, 0.0, -1.0}, on()));
  EXPECT_TRUE(tensor_equal(r, tensor({-2.0, -2.0}, on())));  // shape (2), not (2, 1)
}

TEST_P(MatmulTest, VectorTimesMatrix) {
  Tensor A = tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}, on());
  Tensor r = matmul(tensor({1.0, 1.0}, on()), A);
  EXPECT_TRUE(tensor_equal(r, tensor({5.0, 7.0, 9.0}, on())));  // shape (3), not (1, 3)
}

TEST_P(MatmulTest, MatrixTimesMatrix) {
  Tensor A = tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}, on());
  Tensor B = tensor({{7.0, 8.0}, {9.0, 10.0}, {11.0, 12.0}}, on());
  Tensor want = tensor({{58.0, 64.0}, {139.0, 154.0}}, on());
  EXPECT_TRUE(tensor_equal(matmul(A, B), want));
  EXPECT_TRUE(tensor_equal(A.mm(B), want));
  EXPECT_TRUE(tensor_equal(
      mm(B, A), tensor({{39.0, 54.0, 69.0}, {49.0, 68.0, 87.0}, {59.0, 82.0, 105.0}}, on())));
}

TEST_P(MatmulTest, BatchedThreeDims) {
  // [[0, 1, 2], [3, 4, 5]] @ [[0, 1], [2, 3], [4, 5]] and [[6..8], [9..11]] @ [[6, 7], ..., [10,
  // 11]]
  Tensor a = iota({2, 2, 3}), b = iota({2, 3, 2});
  Tensor want = tensor({{{10.0, 13.0}, {28.0, 40.0}}, {{172.0, 193.0}, {244.0, 274.0}}}, on());
  EXPECT_TRUE(tensor_equal(matmul(a, b), want));
  EXPECT_TRUE(tensor_equal(bmm(a, b), want));
  EXPECT_TRUE(tensor_equal(a.bmm(b), want));
}

TEST_P(MatmulTest, BroadcastsBatchDims) {
  Tensor a = iota({2, 1, 3, 4}), b = iota({5, 4, 2}) - 7;
  Tensor r = matmul(a, b);
  EXPECT_EQ(r.sizes(), (Shape{2, 5, 3, 2}));
  // r[i][j] = a[i][0] @ b[j].
  Tensor ea = a.expand({2, 5, 3, 4}).reshape({10, 3, 4}),
         eb = b.expand({2, 5, 4, 2}).reshape({10, 4, 2});
  EXPECT_TRUE(tensor_close(r, expected(reference_bmm(ea, eb), {2, 5, 3, 2})));
  // 2-D operands broadcast against a batch too.
  Tensor m = iota({4, 2});
  EXPECT_TRUE(tensor_close(
      matmul(a, m),
      expected(reference_bmm(a.reshape({2, 3, 4}), m.expand({2, 4, 2})), {2, 1, 3, 2})));
  Tensor left = iota({3, 4});
  EXPECT_TRUE(
      tensor_close(matmul(left, b), expected(reference_bmm(left.expand({5, 3, 4}), b), {5, 3, 2})));
  EXPECT_TRUE(throws_error(
      [&] {
        matmul(iota({2, 3, 4}), iota({3, 4, 2}));
      },
      ErrorKind::Shape, {"must match the size of tensor b"}));
}

TEST_P(MatmulTest, BatchedTimesVectorAndVectorTimesBatched) {
  Tensor a = iota({2, 3, 4});
  Tensor v = tensor({1.0, -1.0, 2.0, 0.5}, on());
  Tensor r = matmul(a, v);  // (2, 3): the vector's unit dim is removed
  EXPECT_EQ(r.sizes(), (Shape{2, 3}));
  EXPECT_TRUE(
      tensor_close(r, expected(reference_bmm(a, v.view({1, 4, 1}).expand({2, 4, 1})), {2, 3})));
  Tensor u = tensor({2.0, 0.0, -1.0}, on());
  Tensor l = matmul(u, a);  // (3) @ (2, 3, 4) -> (2, 4)
  EXPECT_EQ(l.sizes(), (Shape{2, 4}));
  EXPECT_TRUE(
      tensor_close(l, expected(reference_bmm(u.view({1, 1, 3}).expand({2, 1, 3}), a), {2, 4})));
  // Non-contiguous batched operand times a vector.
  Tensor at = iota({2, 4, 3}).transpose(1, 2);
  EXPECT_TRUE(tensor_close(
      matmul(at, v), expected(reference_bmm(at, v.view({1, 4, 1}).expand({2, 4, 1})), {2, 3})));
  // Four dims times a vector.
  Tensor a4 = iota({2, 2, 3, 4});
  EXPECT_TRUE(tensor_close(matmul(a4, v).view({4, 3}), matmul(a4.view({4, 3, 4}), v)));
  EXPECT_EQ(matmul(a4, v).sizes(), (Shape{2, 2, 3}));
  EXPECT_TRUE(throws_error(
      [&] {
        matmul(a, tensor({1.0, 2.0, 3.0}, on()));
      },
      ErrorKind::Shape, {"mat1 and mat2 shapes cannot be multiplied (3x4 and 3x1)"}));
}

TEST_P(MatmulTest, BatchedTimesMatrixFoldsOrBatches) {
  Tensor m = iota({4, 5}) - 9;
  Tensor a = iota({2, 3, 4});  // contiguous: one GEMM over the folded batch
  Tensor want = expected(reference_bmm(a, m.expand({2, 4, 5})), {2, 3, 5});
  EXPECT_TRUE(tensor_close(matmul(a, m), want));
  Tensor at = a.transpose(1, 2).contiguous().transpose(1, 2);  // same values, not contiguous
  ASSERT_FALSE(at.is_contiguous());
  EXPECT_TRUE(tensor_close(matmul(at, m), want));
}

TEST_P(MatmulTest, TransposedOperands) {
  for (DType dt : {kFloat32, kFloat64, kInt64}) {
    Tensor a = iota({3, 2}, dt).t();        // (2, 3), strides (1, 2)
    Tensor b = (iota({2, 3}, dt) - 2).t();  // (3, 2), strides (1, 3)
    ASSERT_FALSE(a.is_contiguous());
    Tensor want = mm(a.contiguous(), b.contiguous());
    EXPECT_TRUE(tensor_equal(mm(a, b), want)) << dt;
    EXPECT_TRUE(tensor_equal(matmul(a, b), want)) << dt;
    EXPECT_TRUE(tensor_equal(mm(a.contiguous(), b), want)) << dt;
    EXPECT_TRUE(tensor_equal(mm(a, b.contiguous()), want)) << dt;
    // By hand: a = [[0, 2, 4], [1, 3, 5]], b = [[-2, 1], [-1, 2], [0, 3]].
    EXPECT_EQ(values_of(want), (std::vector<double>{-2, 16, -5, 22})) << dt;
    // Batched operands transposed in their matrix dims.
    Tensor ba = iota({2, 3, 2}, dt).transpose(1, 2), bb = iota({2, 2, 3}, dt).transpose(1, 2);
    EXPECT_TRUE(tensor_close(bmm(ba, bb), expected(reference_bmm(ba, bb), {2, 2, 2}))) << dt;
    EXPECT_EQ(bmm(ba, bb).dtype(), dt);
  }
}

TEST_P(MatmulTest, SlicedOperandsWithNonUnitStrides) {
  for (DType dt : {kFloat32, kFloat64, kInt64}) {
    Tensor big = iota({6, 8}, dt) - 20;
    Tensor a = big.slice(1, 0, 8, 3);                 // (6, 3), strides (8, 3): packed
    Tensor b = big.slice(0, 1, 6, 2).slice(1, 2, 7);  // (3, 5), strides (16, 1), offset 10
    Tensor c = big.t().slice(0, 1, 5);                // (4, 6), strides (1, 8): transposed layout
    Tensor d = big.slice(0, 0, 6, 2).t();             // (8, 3), strides (1, 16)
    auto reference_mm = [&](const Tensor& x, const Tensor& y) {
      return expected(reference_bmm(x.unsqueeze(0), y.unsqueeze(0)), {x.size(0), y.size(1)});
    };
    EXPECT_TRUE(tensor_close(mm(a, b), reference_mm(a, b))) << dt;
    EXPECT_TRUE(tensor_close(mm(c, a), reference_mm(c, a))) << dt;
    EXPECT_TRUE(tensor_close(mm(d, b), reference_mm(d, b))) << dt;
    EXPECT_TRUE(tensor_close(mm(a.t(), c.t()), mm(a.t().contiguous(), c.t().contiguous()))) << dt;
    // A column slice as a vector, and a broadcast (zero-stride) operand.
    Tensor col = big.select(1, 5).slice(0, 0, 3);  // (3), stride 8
    EXPECT_TRUE(tensor_close(matmul(b.t(), col), reference_mm(b.t(), col.unsqueeze(1)).view({5})))
        << dt;
    Tensor bcast = tensor({1, 2, 3}, on(dt)).unsqueeze(1).expand({3, 4});  // strides (1, 0)
    EXPECT_TRUE(tensor_close(mm(a, bcast), mm(a, bcast.contiguous()))) << dt;
  }
}

TEST_P(MatmulTest, FloatDtypes) {
  Tensor A = tensor({{0.5, -1.25}, {2.0, 4.0}}, on(kFloat64));
  Tensor B = tensor({{2.0, 1.0}, {0.25, -3.0}}, on(kFloat64));
  Tensor r = mm(A, B);
  EXPECT_EQ(r.dtype(), kFloat64);
  EXPECT_TRUE(tensor_equal(r, tensor({{0.6875, 4.25}, {5.0, -10.0}}, on(kFloat64))));
  // float64 keeps digits float32 would lose: (1 + 2^-40) * 1.
  Tensor x = tensor({{1.0 + 0x1p-40}}, on(kFloat64));
  EXPECT_EQ(mm(x, tensor({{1.0}}, on(kFloat64))).item<double>(), 1.0 + 0x1p-40);
}

TEST_P(MatmulTest, Int64UsesExactIntegerArithmetic) {
  // 3 * 2^40 + 5 is not representable in float32 or in a float64 product with rounding slack.
  Tensor a = tensor({{int64_t{1} << 40, 1}, {-7, 11}}, on());
  Tensor b = tensor({{3}, {5}}, on());
  Tensor r = matmul(a, b);
  EXPECT_EQ(r.dtype(), kInt64);
  EXPECT_EQ(r.index({0, 0}).item<int64_t>(), (int64_t{3} << 40) + 5);
  EXPECT_EQ(r.index({1, 0}).item<int64_t>(), 34);
  Tensor big = tensor({{int64_t{1} << 53, 1}}, on());
  EXPECT_EQ(mm(big, tensor({{1}, {1}}, on())).item<int64_t>(), (int64_t{1} << 53) + 1);
  Tensor ia = iota({2, 3, 4}, kInt64), ib = iota({2, 4, 2}, kInt64) - 5;
  EXPECT_TRUE(tensor_equal(bmm(ia, ib), expected(reference_bmm(ia, ib), {2, 3, 2}).to(kInt64)));
  EXPECT_TRUE(tensor_equal(matmul(tensor({1, 2, 3}, on()), tensor({4, 5, 6}, on())),
                           scalar_tensor(32, on(kInt64))));
}

TEST_P(MatmulTest, EmptyInnerDimGivesZeros) {
  for (DType dt : {kFloat32, kFloat64, kInt64}) {
    Tensor r = mm(empty({3, 0}, on(dt)), empty({0, 4}, on(dt)));
    EXPECT_TRUE(tensor_equal(r, zeros({3, 4}, on(dt)))) << dt;
    Tensor rb = bmm(empty({2, 3, 0}, on(dt)), empty({2, 0, 2}, on(dt)));
    EXPECT_TRUE(tensor_equal(rb, zeros({2, 3, 2}, on(dt)))) << dt;
    Tensor dot = matmul(empty({0}, on(dt)), empty({0}, on(dt)));
    EXPECT_TRUE(tensor_equal(dot, zeros({}, on(dt)))) << dt;
  }
  // Empty outer dims give empty results.
  EXPECT_EQ(mm(empty({0, 3}, on()), empty({3, 4}, on())).sizes(), (Shape{0, 4}));
  EXPECT_EQ(matmul(empty({2, 0, 3}, on()), empty({3, 4}, on())).sizes(), (Shape{2, 0, 4}));
  EXPECT_EQ(matmul(empty({0, 2, 3}, on()), empty({3, 4}, on())).sizes(), (Shape{0, 2, 4}));
}

TEST_P(MatmulTest, ShapeErrorsNameBothShapes) {
  EXPECT_TRUE(throws_error(
      [&] {
        mm(zeros({2, 3}, on()), zeros({4, 5}, on()));
      },
      ErrorKind::Shape, {"mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"}));
  EXPECT_TRUE(throws_error(
      [&] {
        matmul(zeros({2, 3}, on()), zeros({4, 5}, on()));
      },
      ErrorKind::Shape, {"mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"}));
  EXPECT_TRUE(throws_error(
      [&] {
        matmul(zeros({6, 2, 3}, on()), zeros({4, 5}, on()));
      },
      ErrorKind::Shape, {"mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)", "[6, 2, 3]"}));
  EXPECT_TRUE(throws_error(
      [&] {
        mm(zeros({3}, on()), zeros({3, 2}, on()));
      },
      ErrorKind::Shape, {"expected 2-D tensors, got 1-D and 2-D"}));
  EXPECT_TRUE(throws_error(
      [&] {
        bmm(zeros({2, 3, 4}, on()), zeros({3, 4, 5}, on()));
      },
      ErrorKind::Shape, {"batch1 and batch2 must have same number of batches, got 2 and 3"}));
  EXPECT_TRUE(throws_error(
      [&] {
        bmm(zeros({2, 3, 4}, on()), zeros({2, 5, 5}, on()));
      },
      ErrorKind::Shape, {"[2, 4] but got: [2, 5]"}));
  EXPECT_TRUE(throws_error(
      [&] {
        bmm(zeros({3, 4}, on()), zeros({4, 5}, on()));
      },
      ErrorKind::Shape, {"expected 3-D tensors"}));
  EXPECT_TRUE(throws_error([&] { matmul(scalar_tensor(1, on()), zeros({2}, on())); },
                           ErrorKind::Shape, {"at least 1D", "0D and 1D"}));
}

TEST_P(MatmulTest, DtypeMismatchIsADTypeError) {
  EXPECT_TRUE(throws_error(
      [&] {
        matmul(zeros({2, 2}, on()), zeros({2, 2}, on(kFloat64)));
      },
      ErrorKind::DType, {"same dtype", "float32 != float64"}));
  EXPECT_TRUE(throws_error(
      [&] {
        mm(zeros({2, 2}, on(kInt64)), zeros({2, 2}, on()));
      },
      ErrorKind::DType, {"int64 != float32"}));
  EXPECT_TRUE(throws_error(
      [&] {
        bmm(zeros({1, 2, 2}, on()), zeros({1, 2, 2}, on(kInt32)));
      },
      ErrorKind::DType, {"same dtype"}));
}

TEST_P(MatmulTest, RandomFloat32MatchesFloat64Reference) {
  Generator gen(2024);
  for (Shape dims : {Shape{17, 33, 9}, Shape{1, 64, 1}, Shape{40, 7, 65}}) {
    int64_t M = dims[0], K = dims[1], N = dims[2];
    Tensor a = rand({M, K}, on(), &gen) - 0.5, b = rand({K, N}, on(), &gen) - 0.5;
    Tensor r = mm(a, b);
    EXPECT_EQ(r.dtype(), kFloat32);
    // float32 accumulation over K terms of magnitude <= 1/4: well inside 1e-5 relative + 1e-5.
    EXPECT_TRUE(tensor_close(r, expected(reference_bmm(a.unsqueeze(0), b.unsqueeze(0)), {M, N}),
                             1e-5, 1e-5))
        << shape_str(dims);
  }
  Tensor a = randn({3, 5, 20}, on(), &gen), b = randn({3, 20, 6}, on(), &gen);
  EXPECT_TRUE(tensor_close(matmul(a, b), expected(reference_bmm(a, b), {3, 5, 6}), 1e-5, 1e-4));
}

TEST_P(MatmulTest, SmallAndBlasSizedProductsAgreeWithReference) {
  // Products of up to 4096 multiply-adds take a plain loop on the CPU, larger ones BLAS; both
  // must honour transposed and sliced operands. Shapes straddle that boundary, and the thin
  // shapes of a Linear(10, 1) step (N = 1, K = 1, M = 1) are among them.
  Generator gen(7);
  for (Shape dims : {Shape{32, 10, 1}, Shape{32, 1, 10}, Shape{1, 32, 10}, Shape{16, 16, 16},
                     Shape{16, 16, 17}, Shape{3, 200, 7}}) {
    int64_t M = dims[0], K = dims[1], N = dims[2];
    for (DType dt : {kFloat32, kFloat64}) {
      Tensor a = (rand({K, M}, on(dt), &gen) - 0.5).t();  // (M, K), transposed layout
      Tensor b = (rand({K, 2 * N}, on(dt), &gen) - 0.5).slice(1, 0, 2 * N, 2);  // stride 2
      Tensor r = mm(a, b);
      double tol = dt == kFloat32 ? 1e-5 : 1e-12;
      EXPECT_TRUE(tensor_close(r, expected(reference_bmm(a.unsqueeze(0), b.unsqueeze(0)), {M, N}),
                               tol, tol))
          << shape_str(dims) << " " << dt;
      EXPECT_TRUE(tensor_close(mm(a.contiguous(), b.contiguous()), r, tol, tol))
          << shape_str(dims) << " " << dt;
    }
  }
}

// Float32 products run ember's own GEMM (cpu_gemm.h); its AVX-512 kernel has 14x32 register
// tiles, K blocks of up to 512, row blocks of up to 2016, column chunks of up to 512 per thread
// (tests/internal/test_gemm.cpp covers the edges of every level's kernel). These shapes sit on and
// around each of those edges; the last one packs more than 1 MiB, which the GEMM takes as a huge
// block from the host allocator.
TEST_P(MatmulTest, Float32TileAndBlockEdgesMatchReference) {
  Generator gen(11);
  std::vector<Shape> shapes;
  for (int64_t s : {1, 13, 14, 15, 31, 32, 33, 63, 64, 65, 255, 256, 257, 1000}) {
    shapes.push_back({s, 33, 65});
    shapes.push_back({65, s, 33});
    shapes.push_back({33, 65, s});
  }
  for (Shape dims :
       {Shape{14, 512, 32}, Shape{15, 513, 33}, Shape{29, 1025, 95}, Shape{2030, 24, 70},
        Shape{20, 1000, 1300}, Shape{257, 257, 257}, Shape{300, 1000, 600}})
    shapes.push_back(dims);
  for (const Shape& dims : shapes) {
    int64_t M = dims[0], K = dims[1], N = dims[2];
    Tensor a = rand({M, K}, on(), &gen) - 0.5, b = rand({K, N}, on(), &gen) - 0.5;
    // K float32 terms of magnitude <= 1/4, K <= 1025.
    EXPECT_TRUE(tensor_close(
        mm(a, b), expected(reference_bmm(a.unsqueeze(0), b.unsqueeze(0)), {M, N}), 1e-4, 1e-4))
        << shape_str(dims);
  }
}

TEST_P(MatmulTest, Float32TransposedAndStridedOperandsMatchReference) {
  Generator gen(12);
  for (Shape dims : {Shape{65, 257, 33}, Shape{14, 31, 100}, Shape{100, 40, 15}}) {
    int64_t M = dims[0], K = dims[1], N = dims[2];
    // Each operand three ways: contiguous, transposed (unit row stride), and every other element
    // of every other row (no unit stride at all).
    std::vector<Tensor> as{
        rand({M, K}, on(), &gen) - 0.5, (rand({K, M}, on(), &gen) - 0.5).t(),
        (rand({2 * M, 2 * K}, on(), &gen) - 0.5).slice(0, 0, 2 * M, 2).slice(1, 0, 2 * K, 2)};
    std::vector<Tensor> bs{
        rand({K, N}, on(), &gen) - 0.5, (rand({N, K}, on(), &gen) - 0.5).t(),
        (rand({2 * K, 2 * N}, on(), &gen) - 0.5).slice(0, 0, 2 * K, 2).slice(1, 0, 2 * N, 2)};
    for (size_t i = 0; i < as.size(); ++i)
      for (size_t j = 0; j < bs.size(); ++j) {
        Tensor want = expected(reference_bmm(as[i].unsqueeze(0), bs[j].unsqueeze(0)), {M, N});
        EXPECT_TRUE(tensor_close(mm(as[i], bs[j]), want, 1e-5, 1e-5))
            << shape_str(dims) << " a layout " << i << " b layout " << j;
      }
  }
}

TEST_P(MatmulTest, Float32BatchedProductsMatchReference) {
  Generator gen(13);
  // Few large matrices (threads share each product) and many small ones (a matrix per thread),
  // one of them with a broadcast (stride 0) batch dim.
  Tensor a = rand({3, 70, 45}, on(), &gen) - 0.5, b = rand({3, 45, 90}, on(), &gen) - 0.5;
  EXPECT_TRUE(tensor_close(bmm(a, b), expected(reference_bmm(a, b), {3, 70, 90}), 1e-5, 1e-5));
  Tensor c = rand({9, 20, 33}, on(), &gen) - 0.5, d = rand({33, 17}, on(), &gen) - 0.5;
  Tensor de = d.unsqueeze(0).expand({9, 33, 17});
  EXPECT_TRUE(tensor_close(bmm(c, de), expected(reference_bmm(c, de), {9, 20, 17}), 1e-5, 1e-5));
  EXPECT_TRUE(tensor_close(bmm(c.transpose(1, 2).contiguous().transpose(1, 2), de),
                           expected(reference_bmm(c, de), {9, 20, 17}), 1e-5, 1e-5));
}

// ember's own GEMM never splits K among threads, so float32, float64 and bfloat16 products (the
// last on AMX or AVX512-BF16 where the level has them) give the same bits on any thread count, at
// every instruction-set level (CI runs this under each EMBER_CPU_ISA).
TEST_P(MatmulTest, FloatResultsDoNotDependOnThreadCount) {
  int saved = get_num_threads();
  for (DType dt : {kFloat32, kFloat64, kBFloat16}) {
    Generator gen(14);
    // Column split, row split (few columns), a multi-block K, and a batch of small matrices.
    std::vector<std::pair<Tensor, Tensor>> cases;
    for (Shape dims : {Shape{200, 800, 300}, Shape{1000, 64, 20}, Shape{129, 1000, 65}}) {
      Tensor a = (rand({dims[0], dims[1]}, on(), &gen) - 0.5).to(dt);
      cases.emplace_back(a, (rand({dims[1], dims[2]}, on(), &gen) - 0.5).to(dt));
    }
    Tensor ba = (rand({6, 40, 50}, on(), &gen) - 0.5).to(dt);
    Tensor bb = (rand({6, 50, 60}, on(), &gen) - 0.5).to(dt);
    std::vector<Tensor> one, two;
    set_num_threads(1);
    for (auto& [a, b] : cases) one.push_back(mm(a, b));
    one.push_back(bmm(ba, bb));
    set_num_threads(2);
    for (auto& [a, b] : cases) two.push_back(mm(a, b));
    two.push_back(bmm(ba, bb));
    set_num_threads(saved);
    for (size_t i = 0; i < one.size(); ++i)
      EXPECT_TRUE(tensor_equal(one[i], two[i])) << i << " " << dt;
  }
}

// Restores the default float32 matmul precision when a test ends.
struct PrecisionGuard {
  ~PrecisionGuard() { set_float32_matmul_precision("highest"); }
};

TEST(MatmulPrecision, DefaultsToHighestAndKeepsWhatIsSet) {
  PrecisionGuard restore;
  EXPECT_EQ(get_float32_matmul_precision(), "highest");
  for (const char* p : {"high", "medium", "highest"}) {
    set_float32_matmul_precision(p);
    EXPECT_EQ(get_float32_matmul_precision(), p);
  }
}

TEST(MatmulPrecision, RejectsOtherValues) {
  PrecisionGuard restore;
  set_float32_matmul_precision("high");
  for (const char* bad : {"fast", "HIGH", ""})
    EXPECT_TRUE(throws_error([&] { set_float32_matmul_precision(bad); }, ErrorKind::Value,
                             {"[set_float32_matmul_precision]", std::string("'") + bad + "'",
                              "\"highest\", \"high\" or \"medium\""}));
  EXPECT_EQ(get_float32_matmul_precision(), "high");  // unchanged by the failed calls
}

TEST_P(MatmulTest, Float32PrecisionAllowsTf32OnCudaOnly) {
  PrecisionGuard restore;
  Generator gen(11);
  Tensor a = randn({64, 512}, on(), &gen), b = randn({512, 48}, on(), &gen);
  Tensor a64 = a.to(kFloat64), b64 = b.to(kFloat64);
  Tensor full = mm(a, b), full64 = mm(a64, b64);
  Tensor ref = expected(reference_bmm(a.unsqueeze(0), b.unsqueeze(0)), {64, 48});
  for (const char* p : {"high", "medium"}) {
    set_float32_matmul_precision(p);
    Tensor fast = mm(a, b);
    if (device().is_cpu()) {
      EXPECT_TRUE(tensor_equal(fast, full)) << p;  // the CPU ignores the setting
    }
    // TF32 keeps 10 of float32's 23 mantissa bits: each of the 512 products may be off by about
    // 2^-10 relative; sums of 512 terms of size ~1 stay within 0.1 here, and full float32 within
    // 1e-3.
    EXPECT_TRUE(tensor_close(fast, ref, 1e-2, 1e-1)) << p;
    EXPECT_TRUE(tensor_equal(mm(a64, b64), full64)) << p;  // float64 is never affected
    // Batched products go through the same GEMM.
    EXPECT_TRUE(tensor_close(bmm(a.unsqueeze(0), b.unsqueeze(0)).squeeze(0), ref, 1e-2, 1e-1));
  }
  EXPECT_TRUE(tensor_close(full, ref, 1e-4, 1e-3));
}

EMBER_INSTANTIATE_DEVICE_TESTS(MatmulTest);

}  // namespace
}  // namespace ember
