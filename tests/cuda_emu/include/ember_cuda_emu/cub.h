// ember_cuda_emu/cub.h: CUB's DeviceRadixSort::SortPairs and DeviceSegmentedRadixSort::SortPairs on
// the emulated device: the temporary-storage query, then a stable sort of the keys' bits
// [begin_bit, end_bit) carrying the values, after checking that the keys, values, offsets and
// temporary storage lie in live device memory and the storage is as large as the query said.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "ember_cuda_emu/runtime.h"

namespace ember_cuda_emu {

// Whether [p, p + nbytes) lies in one live device allocation; else records an error naming `what`.
bool check_device_range(const void* p, size_t nbytes, const std::string& what);
// Runs `work` on `stream` (now, or recorded while the stream is captured).
cudaError_t submit_work(cudaStream_t stream, const char* what, std::function<void()> work);
cudaError_t record_error(cudaError_t err, const std::string& message);

template <class K, class V>
size_t sort_temp_bytes(int64_t items, int64_t segments) {
  return 256 + static_cast<size_t>(items) * (sizeof(K) + sizeof(V)) +
         static_cast<size_t>(segments) * sizeof(int);
}

template <class K, class V, class Offset>
cudaError_t sort_pairs(void* temp, size_t& temp_bytes, const K* keys_in, K* keys_out,
                       const V* values_in, V* values_out, int64_t items, int64_t segments,
                       const Offset* begins, const Offset* ends, int begin_bit, int end_bit,
                       cudaStream_t stream, const char* op) {
  static_assert(std::is_unsigned_v<K>, "the emulated radix sort takes unsigned keys");
  const size_t need = sort_temp_bytes<K, V>(items, segments);
  if (!temp) {
    temp_bytes = need;
    return cudaSuccess;
  }
  const std::string name = op;
  if (temp_bytes < need)
    return record_error(cudaErrorInvalidValue,
                        name + ": temp_storage_bytes " + std::to_string(temp_bytes) +
                            " is less than the query's " + std::to_string(need));
  if (begin_bit < 0 || end_bit > static_cast<int>(sizeof(K) * 8) || begin_bit >= end_bit)
    return record_error(cudaErrorInvalidValue, name + ": bad bit range");
  const size_t nb = static_cast<size_t>(items);
  if (!check_device_range(temp, temp_bytes, name + " temp storage") ||
      !check_device_range(keys_in, nb * sizeof(K), name + " keys_in") ||
      !check_device_range(keys_out, nb * sizeof(K), name + " keys_out") ||
      !check_device_range(values_in, nb * sizeof(V), name + " values_in") ||
      !check_device_range(values_out, nb * sizeof(V), name + " values_out"))
    return cudaErrorInvalidValue;
  if (begins && (!check_device_range(begins, segments * sizeof(Offset), name + " begin offsets") ||
                 !check_device_range(ends, segments * sizeof(Offset), name + " end offsets")))
    return cudaErrorInvalidValue;
  return submit_work(stream, op, [=] {
    const K mask = end_bit - begin_bit >= static_cast<int>(sizeof(K) * 8)
                       ? static_cast<K>(~K{0})
                       : static_cast<K>((K{1} << (end_bit - begin_bit)) - 1);
    auto sort_range = [&](int64_t lo, int64_t hi) {
      std::vector<int64_t> order(static_cast<size_t>(hi - lo));
      std::iota(order.begin(), order.end(), lo);
      std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
        return static_cast<K>(keys_in[x] >> begin_bit & mask) <
               static_cast<K>(keys_in[y] >> begin_bit & mask);
      });
      for (int64_t i = lo; i < hi; ++i) {
        keys_out[i] = keys_in[order[i - lo]];
        values_out[i] = values_in[order[i - lo]];
      }
    };
    if (!begins)
      sort_range(0, items);
    else
      for (int64_t s = 0; s < segments; ++s)
        if (ends[s] > begins[s]) sort_range(begins[s], ends[s]);
  });
}

}  // namespace ember_cuda_emu

namespace cub {

struct DeviceRadixSort {
  template <class K, class V, class N>
  static cudaError_t SortPairs(void* temp, size_t& temp_bytes, const K* keys_in, K* keys_out,
                               const V* values_in, V* values_out, N items, int begin_bit = 0,
                               int end_bit = sizeof(K) * 8, cudaStream_t stream = nullptr) {
    return ember_cuda_emu::sort_pairs<K, V, int>(
        temp, temp_bytes, keys_in, keys_out, values_in, values_out, static_cast<int64_t>(items), 1,
        nullptr, nullptr, begin_bit, end_bit, stream, "cub::DeviceRadixSort::SortPairs");
  }
};

struct DeviceSegmentedRadixSort {
  template <class K, class V, class BeginIt, class EndIt>
  static cudaError_t SortPairs(void* temp, size_t& temp_bytes, const K* keys_in, K* keys_out,
                               const V* values_in, V* values_out, int items, int segments,
                               BeginIt begins, EndIt ends, int begin_bit = 0,
                               int end_bit = sizeof(K) * 8, cudaStream_t stream = nullptr) {
    using Offset = std::remove_cv_t<std::remove_pointer_t<BeginIt>>;
    return ember_cuda_emu::sort_pairs<K, V, Offset>(
        temp, temp_bytes, keys_in, keys_out, values_in, values_out, items, segments, begins, ends,
        begin_bit, end_bit, stream, "cub::DeviceSegmentedRadixSort::SortPairs");
  }
};

}  // namespace cub
