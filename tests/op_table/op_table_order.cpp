// tests/op_table/op_table_order.cpp: the op table's rows of the ordering ops -- sort, argsort,
// msort, topk, kthvalue, median, nanmedian, mode. References order each slice with std::stable_sort
// on doubles (equal values keep their order, as ember's sort; integer inputs have many ties, so
// the index rows check stability). Rows of 300 take the CPU's radix sort and top-k heap, rows of
// 7 its comparison sort.
#include <algorithm>
#include <numeric>

#include "op_table/row_builders.h"

namespace ember::op_table {

namespace {

using R = ResultDtype;

// The positions of v in stable ascending (or descending) order.
std::vector<double> stable_order(std::span<const double> v, bool descending) {
  std::vector<size_t> at(v.size());
  std::iota(at.begin(), at.end(), size_t{0});
  std::stable_sort(at.begin(), at.end(),
                   [&](size_t a, size_t b) { return descending ? v[a] > v[b] : v[a] < v[b]; });
  return {at.begin(), at.end()};
}

std::vector<double> in_order(std::span<const double> v, bool descending) {
  std::vector<double> out;
  for (double i : stable_order(v, descending)) out.push_back(v[static_cast<size_t>(i)]);
  return out;
}

bool flag(const OpArgs& a, size_t i) {
  return a.numbers.at(i) != 0;
}
int64_t k_arg(const OpArgs& a) {
  return static_cast<int64_t>(a.numbers.at(2));
}

// The k-th smallest value (k from 1).
double kth_of(std::span<const double> v, int64_t k) {
  std::vector<double> s(v.begin(), v.end());
  std::sort(s.begin(), s.end());
  return s.at(static_cast<size_t>(k - 1));
}

}  // namespace

std::vector<OpRow> order_rows() {
  std::vector<OpRow> rows;
  const std::vector<std::vector<Shape>> last = {{{7}}, {{3, 5}}, {{2, 3, 300}}, {{0, 4}}};
  const std::vector<std::vector<Shape>> first = {{{7}}, {{3, 5}}, {{300, 2}}};
  // args.numbers: dim, (keepdim's slot), descending.
  const Call sort_call = [](const std::vector<Tensor>& x, const OpArgs& a) {
    return std::get<0>(sort(x[0], dim_arg(a), flag(a, 2)));
  };
  const SliceRef sorted = [](std::span<const double> v, const OpArgs& a) {
    return in_order(v, flag(a, 2));
  };
  rows.push_back(slice_map("sort", "", sort_call, sorted, last, {.numbers = {-1, 0, 0}}));
  rows.push_back(slice_map("sort", "descending", sort_call, sorted, last, {.numbers = {-1, 0, 1}}));
  rows.push_back(slice_map("sort", "dim0", sort_call, sorted, first, {.numbers = {0, 0, 0}}));
  const Call argsort_call = [](const std::vector<Tensor>& x, const OpArgs& a) {
    return argsort(x[0], dim_arg(a), flag(a, 2));
  };
  const SliceRef order = [](std::span<const double> v, const OpArgs& a) {
    return stable_order(v, flag(a, 2));
  };
  for (bool descending : {false, true}) {
    OpRow r = slice_map("argsort", descending ? "descending" : "", argsort_call, order, last,
                        {.numbers = {-1, 0, descending ? 1.0 : 0.0}});
    r.result = R::Int64;
    r.differentiable = false;
    rows.push_back(r);
  }
  rows.push_back(slice_map("msort", "",
                           [](const std::vector<Tensor>& x, auto&) { return msort(x[0]); }, sorted,
                           first, {.numbers = {0, 0, 0}}));
  // topk: args.numbers: dim, (keepdim's slot), k, largest; its values, then its indices (equal
  // values by lower index).
  const std::vector<std::vector<Shape>> topk_samples = {{{7}}, {{3, 5}}, {{2, 3, 300}}, {{4, 3}}};
  for (bool largest : {true, false}) {
    for (bool indices : {false, true}) {
      OpRow r = slice_map(
          "topk", std::string(largest ? "" : "smallest") + (indices ? "indices" : ""),
          [indices](const std::vector<Tensor>& x, const OpArgs& a) {
            auto [v, i] = topk(x[0], k_arg(a), dim_arg(a), flag(a, 3));
            return indices ? i : v;
          },
          [indices](std::span<const double> v, const OpArgs& a) {
            std::vector<double> best =
                indices ? stable_order(v, flag(a, 3)) : in_order(v, flag(a, 3));
            best.resize(static_cast<size_t>(k_arg(a)));
            return best;
          },
          topk_samples, {.numbers = {-1, 0, 3, largest ? 1.0 : 0.0}});
      if (indices) {
        r.result = R::Int64;
        r.differentiable = false;
      }
      rows.push_back(r);
    }
  }
  // kthvalue (k = 2) and the medians, over a dim with and without keepdim, and over all.
  const std::vector<std::vector<Shape>> by_dim = {{{3, 5}}, {{2, 3, 4}}, {{4, 2}}};
  const OpArgs dim1{.numbers = {1, 0, 2}}, last_keep{.numbers = {-1, 1, 2}};
  for (const OpArgs& along : {dim1, last_keep}) {
    rows.push_back(reduction(
        "kthvalue", flag(along, 1) ? "keepdim" : "",
        [](const std::vector<Tensor>& x, const OpArgs& a) {
          return std::get<0>(kthvalue(x[0], k_arg(a), dim_arg(a), keepdim_arg(a)));
        },
        [](std::span<const double> v, const OpArgs& a) { return kth_of(v, k_arg(a)); }, by_dim,
        kNumbers, R::Same, true, along));
  }
  const ReduceRef lower_median = [](std::span<const double> v, auto&) {
    return kth_of(v, (static_cast<int64_t>(v.size()) - 1) / 2 + 1);
  };
  const std::vector<std::vector<Shape>> nonempty = {{{}}, {{7}}, {{3, 5}}, {{2, 3, 300}}};
  for (bool nan : {false, true}) {
    const char* name = nan ? "nanmedian" : "median";
    rows.push_back(reduction(
        name, "",
        [nan](const std::vector<Tensor>& x, auto&) { return nan ? nanmedian(x[0]) : median(x[0]); },
        lower_median, nonempty, kNumbers, R::Same, true));
    for (const OpArgs& along : {dim1, last_keep}) {
      rows.push_back(reduction(
          name, flag(along, 1) ? "keepdim" : "dim",
          [nan](const std::vector<Tensor>& x, const OpArgs& a) {
            return std::get<0>(nan ? nanmedian(x[0], dim_arg(a), keepdim_arg(a))
                                   : median(x[0], dim_arg(a), keepdim_arg(a)));
          },
          lower_median, by_dim, kNumbers, R::Same, true, along));
    }
  }
  // mode: integer-valued inputs so that values repeat (the smallest most frequent value and its
  // last position); on distinct values (the smallest) for gradcheck.
  const Domain repeats{.lo = -2, .hi = 2, .integers = true};
  for (bool indices : {false, true}) {
    OpRow r = reduction(
        "mode", indices ? "indices" : "",
        [indices](const std::vector<Tensor>& x, const OpArgs& a) {
          auto [v, i] = mode(x[0], dim_arg(a), keepdim_arg(a));
          return indices ? i : v;
        },
        [indices](std::span<const double> v, auto&) {
          double best = 0;
          size_t best_count = 0, best_at = 0;
          for (size_t i = 0; i < v.size(); ++i) {
            size_t count = 0, last = 0;
            for (size_t j = 0; j < v.size(); ++j)
              if (v[j] == v[i]) count++, last = j;
            if (count > best_count || (count == best_count && v[i] < best))
              best = v[i], best_count = count, best_at = last;
          }
          return indices ? static_cast<double>(best_at) : best;
        },
        by_dim, kNumbers, indices ? R::Int64 : R::Same, false, indices ? last_keep : dim1, repeats);
    rows.push_back(r);
  }
  rows.push_back(reduction(
      "mode", "distinct",
      [](const std::vector<Tensor>& x, const OpArgs& a) {
        return std::get<0>(mode(x[0], dim_arg(a), keepdim_arg(a)));
      },
      [](std::span<const double> v, auto&) { return *std::min_element(v.begin(), v.end()); },
      by_dim, {kFloat32, kFloat64}, R::Same, true, dim1));
  return rows;
}

}  // namespace ember::op_table
