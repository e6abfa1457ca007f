// backend/cuda/cuda_sort.cu: sort and topk along the last dim of contiguous rows with CUB's radix
// sort on the keys of kernels/sort_keys.h (the CPU's order: stable, NaN above every number, -0.0
// as 0.0) carrying each element's index: one row through cub::DeviceRadixSort, several through
// cub::DeviceSegmentedRadixSort; then the values are read at the sorted indices. topk sorts whole
// rows and keeps their heads (correct, not a selection kernel).
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>

#include <climits>

#include "backend/cuda/cuda_check.h"
#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/cuda_loops.cuh"
#include "kernels/sort_keys.h"

namespace ember::cuda_detail {

namespace {

using kernels::sort_key;
using kernels::sort_key_t;

template <class T>
__global__ void make_keys(sort_key_t<T>* keys, int64_t* ids, const T* x, int64_t total, int64_t n,
                          bool descending) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    keys[i] = sort_key(x[i], descending);
    ids[i] = i % n;
  }
}

__global__ void row_offsets(int* offsets, int64_t rows, int64_t n) {
  for (int64_t r = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; r <= rows;
       r += int64_t{gridDim.x} * blockDim.x)
    offsets[r] = static_cast<int>(r * n);
}

// Row r's first k of (rows, n) sorted indices: indices and the values of x there, (rows, k).
template <class T>
__global__ void take_heads(T* values, int64_t* indices, const int64_t* sorted, const T* x,
                           int64_t rows, int64_t n, int64_t k) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < rows * k;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t r = i / k, j = sorted[r * n + i % k];
    indices[i] = j;
    values[i] = x[r * n + j];
  }
}

// Sorts the rows of x by key into `order` (rows, n) of in-row indices.
template <class T>
void sort_indices(int64_t* order, const T* x, int64_t rows, int64_t n, bool descending,
                  cudaStream_t stream) {
  using K = sort_key_t<T>;
  const int64_t total = rows * n;
  Scratch keys_in(sizeof(K) * total), keys_out(sizeof(K) * total), ids(sizeof(int64_t) * total);
  auto* kin = static_cast<K*>(keys_in.get());
  auto* kout = static_cast<K*>(keys_out.get());
  auto* id = static_cast<int64_t*>(ids.get());
  EMBER_CUDA_LAUNCH(blocks_for(total), kThreads, 0, stream, make_keys<T>)
  (kin, id, x, total, n, descending);
  EMBER_CUDA_CHECK_LAUNCH("sort keys kernel");
  size_t bytes = 0;
  if (rows == 1) {
    EMBER_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, kin, kout, id, order, total, 0,
                                                     int(sizeof(K) * 8), stream),
                     "sort (cub::DeviceRadixSort)");
    Scratch temp(bytes);
    EMBER_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.get(), bytes, kin, kout, id, order, total,
                                                     0, int(sizeof(K) * 8), stream),
                     "sort (cub::DeviceRadixSort)");
    return;
  }
  EMBER_CHECK(total <= INT_MAX,
              "[sort] CUDA sorts of several rows take at most 2^31 - 1 "
              "elements in all; got ",
              rows, " rows of ", n, ". Sort fewer rows at a time");
  Scratch offsets(sizeof(int) * (rows + 1));
  auto* off = static_cast<int*>(offsets.get());
  EMBER_CUDA_LAUNCH(blocks_for(rows + 1), kThreads, 0, stream, row_offsets)(off, rows, n);
  EMBER_CUDA_CHECK_LAUNCH("sort offsets kernel");
  EMBER_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairs(
                       nullptr, bytes, kin, kout, id, order, static_cast<int>(total),
                       static_cast<int>(rows), off, off + 1, 0, int(sizeof(K) * 8), stream),
                   "sort (cub::DeviceSegmentedRadixSort)");
  Scratch temp(bytes);
  EMBER_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairs(
                       temp.get(), bytes, kin, kout, id, order, static_cast<int>(total),
                       static_cast<int>(rows), off, off + 1, 0, int(sizeof(K) * 8), stream),
                   "sort (cub::DeviceSegmentedRadixSort)");
}

template <class T>
void sort_rows(const View& values, const View& indices, const View& src, int64_t k,
               bool descending) {
  const int64_t n = src.sizes.empty() ? 1 : src.sizes.back();
  if (n == 0 || k == 0) return;
  const int64_t rows = src.numel() / n;
  cudaStream_t stream = current_stream();
  const T* x = static_cast<const T*>(src.data);
  Scratch order(sizeof(int64_t) * rows * n);
  auto* o = static_cast<int64_t*>(order.get());
  sort_indices<T>(o, x, rows, n, descending, stream);
  EMBER_CUDA_LAUNCH(blocks_for(rows * k), kThreads, 0, stream, take_heads<T>)
  (static_cast<T*>(values.data), static_cast<int64_t*>(indices.data), o, x, rows, n, k);
  EMBER_CUDA_CHECK_LAUNCH("sort gather kernel");
}

}  // namespace

void launch_sort(const View& values, const View& indices, const View& src, bool descending) {
  visit_dtype(src.dtype, [&]<class T>() {
    sort_rows<T>(values, indices, src, src.sizes.empty() ? 1 : src.sizes.back(), descending);
  });
}

void launch_topk(const View& values, const View& indices, const View& src, int64_t k,
                 bool largest) {
  visit_dtype(src.dtype, [&]<class T>() { sort_rows<T>(values, indices, src, k, largest); });
}

}  // namespace ember::cuda_detail
