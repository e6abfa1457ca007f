// backend/cpu/cpu_sort.cpp: sort and topk along the last dim of contiguous rows. Elements become
// radix keys (kernels/sort_keys.h); a row of 256 or more is sorted by an LSD radix sort on bytes
// (stable by construction; one histogram pass for every byte, passes whose byte is the same for
// the whole row skipped), shorter rows by comparison on (key, index). topk keeps the k best of a
// row in a heap when k is small against the row (one pass; an element is compared with the
// heap's worst), and otherwise sorts the row and keeps its head. Rows run in parallel.
#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_loops.h"
#include "kernels/sort_keys.h"

namespace ember {

namespace {

using kernels::sort_key;
using kernels::sort_key_t;

constexpr int64_t kRadixMin = 256;

// A thread's buffers for rows of up to n elements (grown on demand).
template <class K>
struct SortScratch {
  std::vector<K> keys[2];
  std::vector<uint32_t> ids[2];
  void reserve(int64_t n) {
    for (int b = 0; b < 2; ++b) {
      if (static_cast<int64_t>(keys[b].size()) < n) keys[b].resize(static_cast<size_t>(n));
      if (static_cast<int64_t>(ids[b].size()) < n) ids[b].resize(static_cast<size_t>(n));
    }
  }
};

// A whole row's sorted values and indices, for topk's sorting path.
template <class T>
struct RowBuffer {
  std::unique_ptr<T[]> values;
  std::vector<int64_t> indices;
};

template <class K>
struct KeyIndex {
  K key;
  int64_t i;
};

// Writes row x's order (by key, then index) to idx and the elements in that order to vals.
template <class T>
void sort_small(const T* x, int64_t n, bool descending, T* vals, int64_t* idx) {
  using K = sort_key_t<T>;
  std::vector<KeyIndex<K>> e(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) e[static_cast<size_t>(i)] = {sort_key(x[i], descending), i};
  std::sort(e.begin(), e.end(), [](const KeyIndex<K>& a, const KeyIndex<K>& b) {
    return a.key < b.key || (a.key == b.key && a.i < b.i);
  });
  for (int64_t i = 0; i < n; ++i) {
    idx[i] = e[static_cast<size_t>(i)].i;
    vals[i] = x[idx[i]];
  }
}

template <class T>
void sort_radix(const T* x, int64_t n, bool descending, T* vals, int64_t* idx,
                SortScratch<sort_key_t<T>>& s) {
  using K = sort_key_t<T>;
  constexpr int kBytes = sizeof(K);
  s.reserve(n);
  std::array<std::array<uint32_t, 256>, kBytes> hist{};
  K* key_in = s.keys[0].data();
  for (int64_t i = 0; i < n; ++i) {
    const K k = sort_key(x[i], descending);
    key_in[i] = k;
    for (int b = 0; b < kBytes; ++b) ++hist[b][(k >> (8 * b)) & 0xff];
  }
  // The bytes that tell keys apart; the last of them need not move keys.
  std::array<int, kBytes> passes{};
  int npass = 0;
  for (int b = 0; b < kBytes; ++b)
    if (hist[b][(key_in[0] >> (8 * b)) & 0xff] != static_cast<uint32_t>(n)) passes[npass++] = b;
  K* key_out = s.keys[1].data();
  const uint32_t* id_in = nullptr;  // null: the identity, before the first pass
  uint32_t* id_out = s.ids[0].data();
  for (int p = 0; p < npass; ++p) {
    const int b = passes[p];
    std::array<uint32_t, 256> at;
    uint32_t sum = 0;
    for (int d = 0; d < 256; ++d) {
      at[d] = sum;
      sum += hist[b][d];
    }
    const int shift = 8 * b;
    const bool move_keys = p + 1 < npass;
    for (int64_t i = 0; i < n; ++i) {
      const K k = key_in[i];
      const uint32_t pos = at[(k >> shift) & 0xff]++;
      if (move_keys) key_out[pos] = k;
      id_out[pos] = id_in ? id_in[i] : static_cast<uint32_t>(i);
    }
    std::swap(key_in, key_out);
    id_in = id_out;
    id_out = id_out == s.ids[0].data() ? s.ids[1].data() : s.ids[0].data();
  }
  for (int64_t i = 0; i < n; ++i) {
    const int64_t j = id_in ? id_in[i] : i;
    idx[i] = j;
    vals[i] = x[j];
  }
}

template <class T>
void sort_row(const T* x, int64_t n, bool descending, T* vals, int64_t* idx,
              SortScratch<sort_key_t<T>>& s) {
  if (n < kRadixMin || n > int64_t{UINT32_MAX})
    sort_small(x, n, descending, vals, idx);
  else
    sort_radix(x, n, descending, vals, idx, s);
}

// The k best of row x (largest or smallest), best first, equal keys by lower index.
template <class T>
void topk_row(const T* x, int64_t n, int64_t k, bool largest, T* vals, int64_t* idx,
              SortScratch<sort_key_t<T>>& s, RowBuffer<T>& row) {
  using K = sort_key_t<T>;
  if (k * 8 > n || k > 4096) {
    if (static_cast<int64_t>(row.indices.size()) < n) {
      row.values = std::make_unique<T[]>(static_cast<size_t>(n));
      row.indices.resize(static_cast<size_t>(n));
    }
    sort_row(x, n, largest, row.values.get(), row.indices.data(), s);
    std::copy_n(row.values.get(), k, vals);
    std::copy_n(row.indices.data(), k, idx);
    return;
  }
  // Larger key = better; the heap's front is its worst element.
  const auto better = [](const KeyIndex<K>& a, const KeyIndex<K>& b) {
    return a.key > b.key || (a.key == b.key && a.i < b.i);
  };
  std::vector<KeyIndex<K>> heap(static_cast<size_t>(k));
  for (int64_t i = 0; i < k; ++i) heap[static_cast<size_t>(i)] = {sort_key(x[i], !largest), i};
  std::make_heap(heap.begin(), heap.end(), better);
  K worst = heap.front().key;
  for (int64_t i = k; i < n; ++i) {
    const K key = sort_key(x[i], !largest);
    if (key > worst) {  // a later equal key loses to the earlier one
      std::pop_heap(heap.begin(), heap.end(), better);
      heap.back() = {key, i};
      std::push_heap(heap.begin(), heap.end(), better);
      worst = heap.front().key;
    }
  }
  std::sort_heap(heap.begin(), heap.end(), better);
  for (int64_t i = 0; i < k; ++i) {
    idx[i] = heap[static_cast<size_t>(i)].i;
    vals[i] = x[idx[i]];
  }
}

// Each row of src (n per row) and its output row (k per row) on the threads: row(x, v, ix, s,
// buffer) per row with the thread's scratch.
template <class Row>
void each_row(const View& values, const View& indices, const View& src, int64_t k, Row&& row) {
  const int64_t n = src.sizes.empty() ? 1 : src.sizes.back();
  if (n == 0 || k == 0) return;
  const int64_t rows = src.numel() / n;
  visit_dtype(src.dtype, [&]<class T>() {
    const T* x = static_cast<const T*>(src.data);
    T* v = static_cast<T*>(values.data);
    auto* ix = static_cast<int64_t*>(indices.data);
    const int64_t grain = std::max<int64_t>(1, cpu::kGrainSize / n);
    cpu::parallel_for(rows, grain, [&](int64_t r0, int64_t r1) {
      SortScratch<sort_key_t<T>> s;
      RowBuffer<T> buffer;
      for (int64_t r = r0; r < r1; ++r) row(x + r * n, n, v + r * k, ix + r * k, s, buffer);
    });
  });
}

}  // namespace

void CpuBackend::sort(const View& values, const View& indices, const View& src, bool descending) {
  each_row(values, indices, src, src.sizes.empty() ? 1 : src.sizes.back(),
           [&](const auto* x, int64_t n, auto* v, int64_t* ix, auto& s, auto&) {
             sort_row(x, n, descending, v, ix, s);
           });
}

void CpuBackend::topk(const View& values, const View& indices, const View& src, int64_t k,
                      bool largest) {
  each_row(values, indices, src, k,
           [&](const auto* x, int64_t n, auto* v, int64_t* ix, auto& s, auto& buffer) {
             topk_row(x, n, k, largest, v, ix, s, buffer);
           });
}

}  // namespace ember
