// tests/internal/test_strided_iter.cpp: kernels/strided_iter.h, the dim merging every backend loop
// starts from -- which dims merge (contiguous ones) and which stay apart (transposed, broadcast),
// size-1 dims dropped, contiguity and density checks, byte strides, and every element's offsets
// against a naive row-major index computation.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/strided_iter.h"

namespace ember::kernels {
namespace {

// An operand described by its strides (in elements); the data pointer is never dereferenced.
struct Operand {
  std::vector<int64_t> strides;
  DType dtype = kFloat32;
};

// Owns the shape and strides the views point into.
template <int N>
struct Views {
  std::vector<int64_t> sizes;
  std::array<Operand, N> ops;
  std::array<View, N> views;
  std::array<const View*, N> ptrs;

  Views(std::vector<int64_t> s, std::array<Operand, N> o) : sizes(std::move(s)), ops(std::move(o)) {
    for (int k = 0; k < N; ++k) {
      views[k] = View{nullptr, sizes, ops[k].strides, ops[k].dtype};
      ptrs[k] = &views[k];
    }
  }
  template <StrideUnit unit = StrideUnit::Elements>
  StridedIter<N> iter() const {
    return make_strided_iter<N, unit>(ptrs, "[test]");
  }
};

std::vector<int64_t> row_major(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> s(sizes.size());
  int64_t n = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    s[d] = n;
    n *= sizes[d];
  }
  return s;
}

template <int N>
std::vector<int64_t> merged_sizes(const StridedIter<N>& it) {
  return {it.sizes, it.sizes + it.ndim};
}
template <int N>
std::vector<int64_t> merged_strides(const StridedIter<N>& it, int k) {
  return {it.strides[k], it.strides[k] + it.ndim};
}

TEST(StridedIter, ContiguousDimsMergeIntoOne) {
  Views<1> v({2, 3, 4}, {Operand{{12, 4, 1}}});
  auto it = v.iter();
  EXPECT_EQ(it.ndim, 1);
  EXPECT_EQ(it.numel, 24);
  EXPECT_EQ(merged_sizes(it), (std::vector<int64_t>{24}));
  EXPECT_EQ(it.stride(0), 1);
  EXPECT_TRUE(it.contiguous(0));
  EXPECT_TRUE(it.all_contiguous());
}

TEST(StridedIter, TransposedDimsDoNotMerge) {
  Views<1> v({3, 4}, {Operand{{1, 3}}});
  auto it = v.iter();
  EXPECT_EQ(it.ndim, 2);
  EXPECT_EQ(merged_sizes(it), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(merged_strides(it, 0), (std::vector<int64_t>{1, 3}));
  EXPECT_FALSE(it.contiguous(0));
}

TEST(StridedIter, MergesOnlyWhereEveryOperandIsContiguous) {
  // Operand 0 is contiguous everywhere; operand 1 is the first 4 columns of a (2, 3, 8) tensor,
  // so only the two outer dims merge.
  Views<2> v({2, 3, 4}, {Operand{{12, 4, 1}}, Operand{{24, 8, 1}}});
  auto it = v.iter();
  EXPECT_EQ(it.ndim, 2);
  EXPECT_EQ(merged_sizes(it), (std::vector<int64_t>{6, 4}));
  EXPECT_EQ(merged_strides(it, 0), (std::vector<int64_t>{4, 1}));
  EXPECT_EQ(merged_strides(it, 1), (std::vector<int64_t>{8, 1}));
  EXPECT_FALSE(it.all_contiguous());

  // Every other column of a (2, 3, 8) tensor is one evenly strided run: everything merges.
  Views<2> w({2, 3, 4}, {Operand{{12, 4, 1}}, Operand{{24, 8, 2}}});
  auto jt = w.iter();
  EXPECT_EQ(merged_sizes(jt), (std::vector<int64_t>{24}));
  EXPECT_EQ(merged_strides(jt, 1), (std::vector<int64_t>{2}));
}

TEST(StridedIter, SizeOneDimsAreDroppedWhateverTheirStride) {
  Views<1> v({1, 5, 1, 3}, {Operand{{999, 3, 7, 1}}});
  auto it = v.iter();
  EXPECT_EQ(it.ndim, 1);
  EXPECT_EQ(it.numel, 15);
  EXPECT_TRUE(it.contiguous(0));

  // A size-1 dim between two dims does not keep them apart.
  Views<1> w({4, 1, 3}, {Operand{{6, 42, 2}}});
  auto jt = w.iter();
  EXPECT_EQ(merged_sizes(jt), (std::vector<int64_t>{12}));
  EXPECT_EQ(jt.stride(0), 2);
  EXPECT_FALSE(jt.contiguous(0));
}

TEST(StridedIter, BroadcastDimsStayApartFromStridedOnes) {
  // b broadcast along rows, then along columns: neither merges with a's contiguous dims.
  Views<2> rows({3, 4}, {Operand{{4, 1}}, Operand{{0, 1}}});
  auto it = rows.iter();
  EXPECT_EQ(it.ndim, 2);
  EXPECT_EQ(merged_strides(it, 1), (std::vector<int64_t>{0, 1}));
  EXPECT_FALSE(it.all_contiguous());

  Views<2> cols({3, 4}, {Operand{{4, 1}}, Operand{{1, 0}}});
  auto jt = cols.iter();
  EXPECT_EQ(jt.ndim, 2);
  EXPECT_EQ(merged_strides(jt, 1), (std::vector<int64_t>{1, 0}));

  // A scalar broadcast over every dim keeps stride 0 and lets the other operand merge.
  Views<2> scalar({3, 4}, {Operand{{4, 1}}, Operand{{0, 0}}});
  auto st = scalar.iter();
  EXPECT_EQ(merged_sizes(st), (std::vector<int64_t>{12}));
  EXPECT_EQ(merged_strides(st, 0), (std::vector<int64_t>{1}));
  EXPECT_EQ(merged_strides(st, 1), (std::vector<int64_t>{0}));
  EXPECT_TRUE(st.contiguous(0));
  EXPECT_FALSE(st.contiguous(1));
}

TEST(StridedIter, ZeroDimAndSingleElementOperandsAreContiguous) {
  Views<2> zero({}, {Operand{{}}, Operand{{}}});
  auto it = zero.iter();
  EXPECT_EQ(it.ndim, 0);
  EXPECT_EQ(it.numel, 1);
  EXPECT_TRUE(it.all_contiguous());
  int64_t off[2] = {-1, -1};
  it.offsets(0, off);
  EXPECT_EQ(off[0], 0);
  EXPECT_EQ(off[1], 0);

  Views<1> ones({1, 1}, {Operand{{5, 9}}});
  EXPECT_TRUE(ones.iter().all_contiguous());
}

TEST(StridedIter, EmptyShapeHasNoElements) {
  Views<1> v({3, 0, 2}, {Operand{{0, 2, 1}}});
  EXPECT_EQ(v.iter().numel, 0);
}

TEST(StridedIter, ByteStridesScaleByEachOperandsElementSize) {
  Views<3> v({2, 3},
             {Operand{{3, 1}, kFloat64}, Operand{{3, 1}, kFloat32}, Operand{{1, 2}, kBool}});
  auto it = v.iter<StrideUnit::Bytes>();
  EXPECT_EQ(it.ndim, 2);  // the bool operand is transposed
  EXPECT_EQ(merged_strides(it, 0), (std::vector<int64_t>{24, 8}));
  EXPECT_EQ(merged_strides(it, 1), (std::vector<int64_t>{12, 4}));
  EXPECT_EQ(merged_strides(it, 2), (std::vector<int64_t>{1, 2}));

  Views<2> dense({2, 3}, {Operand{{3, 1}, kFloat64}, Operand{{3, 1}, kFloat32}});
  auto jt = dense.iter<StrideUnit::Bytes>();
  EXPECT_TRUE(jt.contiguous(0, 8));
  EXPECT_TRUE(jt.contiguous(1, 4));
  EXPECT_FALSE(jt.contiguous(1, 8));
}

TEST(StridedIter, TooManyDimsIsAShapeError) {
  Views<1> v(std::vector<int64_t>(kMaxKernelDims + 1, 1),
             {Operand{std::vector<int64_t>(kMaxKernelDims + 1, 1)}});
  try {
    (void)v.iter();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Shape);
    EXPECT_EQ(std::string(e.what()), "[test] tensors with more than " +
                                         std::to_string(kMaxKernelDims) +
                                         " dims are not supported");
  }
  Views<1> most(std::vector<int64_t>(kMaxKernelDims, 2),
                {Operand{row_major(std::vector<int64_t>(kMaxKernelDims, 2))}});
  EXPECT_EQ(most.iter().ndim, 1);
}

// Every element's offsets against sum(index[d] * stride[d]) with the row-major index of the
// original (unmerged) shape.
template <int N>
void expect_offsets_match_naive(const Views<N>& v) {
  auto it = v.iter();
  int64_t numel = 1;
  for (int64_t s : v.sizes) numel *= s;
  ASSERT_EQ(it.numel, numel);
  const int nd = static_cast<int>(v.sizes.size());
  std::vector<int64_t> idx(nd, 0);
  for (int64_t i = 0; i < numel; ++i) {
    int64_t got[N];
    it.offsets(i, got);
    for (int k = 0; k < N; ++k) {
      int64_t want = 0;
      for (int d = 0; d < nd; ++d) want += idx[d] * v.ops[k].strides[d];
      ASSERT_EQ(got[k], want) << "element " << i << ", operand " << k;
      ASSERT_EQ(it.offset(i, k), want) << "element " << i << ", operand " << k;
    }
    for (int d = nd - 1; d >= 0 && ++idx[d] == v.sizes[d]; --d) idx[d] = 0;
  }
}

TEST(StridedIter, OffsetsMatchNaiveIndexing) {
  // Contiguous, permuted, sliced, broadcast, and size-1 dims with arbitrary strides.
  expect_offsets_match_naive(Views<1>({2, 3, 4}, {Operand{{12, 4, 1}}}));
  expect_offsets_match_naive(Views<1>({4, 3, 2}, {Operand{{1, 4, 12}}}));
  expect_offsets_match_naive(Views<1>({5}, {Operand{{3}}}));
  expect_offsets_match_naive(Views<3>(
      {2, 1, 3, 4}, {Operand{{12, 99, 4, 1}}, Operand{{1, 7, 8, 2}}, Operand{{0, 0, 1, 0}}}));
  expect_offsets_match_naive(
      Views<2>({3, 1, 5, 2}, {Operand{{10, 10, 2, 1}}, Operand{{0, 5, 0, 1}}}));
  expect_offsets_match_naive(
      Views<4>({2, 3, 2, 3}, {Operand{{18, 6, 3, 1}}, Operand{{1, 2, 6, 12}},
                              Operand{{36, 12, 3, 1}}, Operand{{0, 0, 0, 0}}}));
}

TEST(StridedIter, PushBuildsOneGroupAsTheReductionsDo) {
  // The kept dims (0, 2) of a contiguous (2, 3, 4) tensor: dim 1 sits between them, so they stay
  // apart; pushing contiguous dims merges them.
  StridedIter<1> kept;
  kept.push(2, 12);
  kept.push(4, 1);
  EXPECT_EQ(kept.ndim, 2);
  EXPECT_EQ(kept.numel, 8);
  EXPECT_EQ(kept.offset(5), 12 + 1);

  StridedIter<1> reduced;
  reduced.push(3, 4);
  reduced.push(1, 100);
  reduced.push(4, 1);
  EXPECT_EQ(reduced.ndim, 1);
  EXPECT_EQ(reduced.numel, 12);
  EXPECT_EQ(reduced.offset(7), 7);
}

TEST(StridedIter, IsDense) {
  auto dense = [](std::vector<int64_t> sizes, std::vector<int64_t> strides) {
    View v{nullptr, sizes, strides, kFloat32};
    return is_dense(v);
  };
  EXPECT_TRUE(dense({2, 3, 4}, {12, 4, 1}));
  EXPECT_TRUE(dense({}, {}));
  EXPECT_TRUE(dense({1, 3, 1}, {7, 1, 42}));
  EXPECT_FALSE(dense({3, 4}, {1, 3}));  // transposed
  EXPECT_FALSE(dense({3, 4}, {8, 1}));  // rows of a wider tensor
  EXPECT_FALSE(dense({3, 4}, {0, 1}));  // broadcast
}

}  // namespace
}  // namespace ember::kernels
