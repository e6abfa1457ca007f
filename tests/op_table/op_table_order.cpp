// tests/op_table/op_table_order.cpp: the op table's rows of the ordering ops -- sort, argsort,
// msort, topk, kthvalue, median, nanmedian, mode, searchsorted, bucketize -- and of the ops whose
// result size depends on the data: nonzero, argwhere, masked_select, masked_scatter, bincount,
// histc, unique, unique_consecutive (references count with plain loops). References order each
// slice with std::stable_sort on doubles (equal values keep their order, as ember's sort; integer
// inputs have many ties, so the index rows check stability). Rows of 300 take the CPU's radix sort
// and top-k heap, rows of 7 its comparison sort.
#include <algorithm>
#include <cmath>
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

std::vector<double> values_of_cpu(const Tensor& t) {
  return t.cpu().to(kFloat64).contiguous().to_vector<double>();
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
  // searchsorted and bucketize on sorted rows (the call sorts its first input, the reference
  // counts): one 1-D sequence for all values and one row per row of values.
  for (bool right : {false, true}) {
    OpRow r = other(
        "searchsorted", right ? "right" : "",
        [right](const std::vector<Tensor>& x, auto&) {
          return searchsorted(std::get<0>(sort(x[0])), x[1], false, right);
        },
        {value(), value()}, {{{7}, {3, 5}}, {{3, 7}, {3, 4}}, {{5}, {}}}, kNumbers, R::Int64,
        false);
    r.composite_ref = [right](const std::vector<Tensor>& x, auto&) {
      const Tensor s = std::get<0>(sort(x[0])).contiguous(), v = x[1].contiguous();
      const std::vector<double> sv = values_of_cpu(s), vv = values_of_cpu(v);
      const size_t m = static_cast<size_t>(s.size(-1)),
                   k = v.dim() ? static_cast<size_t>(v.size(-1)) : 1;
      std::vector<double> out;
      for (size_t i = 0; i < vv.size(); ++i) {
        const size_t row = s.dim() == 1 ? 0 : i / k;
        size_t c = 0;
        for (size_t j = 0; j < m; ++j)
          c += right ? sv[row * m + j] <= vv[i] : sv[row * m + j] < vv[i];
        out.push_back(static_cast<double>(c));
      }
      return from_vector<double>(out, v.sizes());
    };
    rows.push_back(r);
  }
  OpRow bucket = other(
      "bucketize", "",
      [](const std::vector<Tensor>& x, auto&) { return bucketize(x[1], std::get<0>(sort(x[0]))); },
      {value(), value()}, {{{6}, {3, 5}}, {{4}, {}}}, kNumbers, R::Int64, false);
  bucket.composite_ref = [](const std::vector<Tensor>& x, auto&) {
    const std::vector<double> b = values_of_cpu(x[0]), v = values_of_cpu(x[1]);
    std::vector<double> out;
    for (double e : v)
      out.push_back(
          static_cast<double>(std::count_if(b.begin(), b.end(), [e](double t) { return t < e; })));
    return from_vector<double>(out, x[1].sizes());
  };
  rows.push_back(bucket);
  // nonzero / argwhere: coordinates of the non-zero elements (integer values, so zeros appear).
  const Domain small_ints{.lo = -1, .hi = 1, .integers = true};
  for (const char* name : {"nonzero", "argwhere"}) {
    OpRow r = other(
        name, "",
        [name](const std::vector<Tensor>& x, auto&) {
          return std::string(name) == "nonzero" ? nonzero(x[0]) : argwhere(x[0]);
        },
        {value(small_ints)}, {{{7}}, {{3, 5}}, {{2, 3, 4}}, {{0, 3}}, {{}}}, kAll, R::Int64, false);
    r.composite_ref = [](const std::vector<Tensor>& x, auto&) {
      const std::vector<double> v = values_of_cpu(x[0]);
      const Shape& shape = x[0].sizes();
      std::vector<double> out;
      int64_t count = 0;
      for (size_t i = 0; i < v.size(); ++i) {
        if (v[i] == 0) continue;
        ++count;
        std::vector<double> coord(shape.size());
        int64_t rest = static_cast<int64_t>(i);
        for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
          coord[static_cast<size_t>(d)] = static_cast<double>(rest % shape[d]);
          rest /= shape[d];
        }
        out.insert(out.end(), coord.begin(), coord.end());
      }
      return from_vector<double>(out, Shape{count, static_cast<int64_t>(shape.size())});
    };
    rows.push_back(r);
  }
  // masked_select and masked_scatter (broadcast masks; the source has at least as many elements).
  OpRow select = other(
      "masked_select", "",
      [](const std::vector<Tensor>& x, auto&) { return masked_select(x[0], x[1]); },
      {value(), mask()}, {{{3, 5}, {3, 5}}, {{3, 1}, {1, 4}}, {{7}, {7}}, {{}, {}}}, kAll, R::Same,
      true);
  select.composite_ref = [](const std::vector<Tensor>& x, auto&) {
    const Shape shape = broadcast_shapes(x[0].sizes(), x[1].sizes());
    const std::vector<double> v = values_of_cpu(x[0].expand(shape)),
                              m = values_of_cpu(x[1].expand(shape));
    std::vector<double> out;
    for (size_t i = 0; i < v.size(); ++i)
      if (m[i] != 0) out.push_back(v[i]);
    return from_vector<double>(out, Shape{static_cast<int64_t>(out.size())});
  };
  rows.push_back(select);
  OpRow scatter = other(
      "masked_scatter", "",
      [](const std::vector<Tensor>& x, auto&) { return masked_scatter(x[0], x[1], x[2]); },
      {value(), mask(), value()}, {{{3, 5}, {3, 5}, {3, 5}}, {{2, 4}, {4}, {9}}, {{7}, {7}, {7}}},
      kAll, R::Same, true);
  scatter.composite_ref = [](const std::vector<Tensor>& x, auto&) {
    const Shape shape = broadcast_shapes(x[0].sizes(), x[1].sizes());
    std::vector<double> v = values_of_cpu(x[0].expand(shape));
    const std::vector<double> m = values_of_cpu(x[1].expand(shape)), src = values_of_cpu(x[2]);
    size_t next = 0;
    for (size_t i = 0; i < v.size(); ++i)
      if (m[i] != 0) v[i] = src[next++];
    return from_vector<double>(v, shape);
  };
  rows.push_back(scatter);
  // bincount, plain and weighted (its gradient reaches the weights); histc over a fixed range
  // and over the data's.
  const Domain counts{.lo = 0, .hi = 4, .integers = true};
  const auto bins_of = [](const std::vector<double>& idx, const std::vector<double>* w) {
    size_t size = 0;
    for (double i : idx) size = std::max(size, static_cast<size_t>(i) + 1);
    std::vector<double> out(size);
    for (size_t i = 0; i < idx.size(); ++i) out[static_cast<size_t>(idx[i])] += w ? (*w)[i] : 1;
    return out;
  };
  OpRow bc = other(
      "bincount", "", [](const std::vector<Tensor>& x, auto&) { return bincount(x[0]); },
      {value(counts)}, {{{7}}, {{300}}, {{0}}}, {kUInt8, kInt32, kInt64}, R::Int64, false);
  bc.composite_ref = [bins_of](const std::vector<Tensor>& x, auto&) {
    std::vector<double> out = bins_of(values_of_cpu(x[0]), nullptr);
    return from_vector<double>(out, Shape{static_cast<int64_t>(out.size())});
  };
  rows.push_back(bc);
  OpRow bcw = other(
      "bincount", "weights",
      [](const std::vector<Tensor>& x, auto&) { return bincount(x[0], x[1]); }, {index(5), value()},
      {{{7}, {7}}, {{300}, {300}}}, kFloats, R::Same, true);
  bcw.composite_ref = [bins_of](const std::vector<Tensor>& x, auto&) {
    const std::vector<double> w = values_of_cpu(x[1]);
    std::vector<double> out = bins_of(values_of_cpu(x[0]), &w);
    return from_vector<double>(out, Shape{static_cast<int64_t>(out.size())});
  };
  rows.push_back(bcw);
  for (bool data_range : {false, true}) {
    OpRow h = other(
        "histc", data_range ? "data_range" : "",
        [data_range](const std::vector<Tensor>& x, auto&) {
          return data_range ? histc(x[0], 5) : histc(x[0], 5, -1.0, 1.0);
        },
        {value()}, {{{7}}, {{3, 5}}, {{300}}}, kFloats, R::Same, false);
    h.composite_ref = [data_range](const std::vector<Tensor>& x, auto&) {
      const std::vector<double> v = values_of_cpu(x[0]);
      double lo = -1, hi = 1;
      if (data_range) {
        lo = *std::min_element(v.begin(), v.end());
        hi = *std::max_element(v.begin(), v.end());
      }
      std::vector<double> out(5);
      for (double e : v)
        if (e >= lo && e <= hi)
          out[std::min<size_t>(4, static_cast<size_t>(std::floor((e - lo) * 5 / (hi - lo))))] += 1;
      return from_vector<double>(out, Shape{5});
    };
    rows.push_back(h);
  }
  // unique (sorted) and unique_consecutive: values, inverse and counts (integer values repeat).
  for (bool consecutive : {false, true}) {
    for (int part : {0, 1, 2}) {
      OpRow u = other(
          consecutive ? "unique_consecutive" : "unique",
          part == 0   ? ""
          : part == 1 ? "inverse"
                      : "counts",
          [consecutive, part](const std::vector<Tensor>& x, auto&) {
            auto r =
                consecutive ? unique_consecutive(x[0], true, true) : unique(x[0], true, true, true);
            return part == 0 ? std::get<0>(r) : part == 1 ? std::get<1>(r) : std::get<2>(r);
          },
          {value(repeats)}, {{{7}}, {{3, 5}}, {{300}}, {{0}}}, kAll, part == 0 ? R::Same : R::Int64,
          false);
      u.composite_ref = [consecutive, part](const std::vector<Tensor>& x, auto&) {
        const std::vector<double> v = values_of_cpu(x[0]);
        std::vector<double> keys = v;
        if (!consecutive) std::sort(keys.begin(), keys.end());
        std::vector<double> values, counts;
        for (size_t i = 0; i < keys.size(); ++i) {
          if (i == 0 || keys[i] != keys[i - 1]) {
            values.push_back(keys[i]);
            counts.push_back(0);
          }
          counts.back() += 1;
        }
        if (part == 0)
          return from_vector<double>(values, Shape{static_cast<int64_t>(values.size())});
        if (part == 2)
          return from_vector<double>(counts, Shape{static_cast<int64_t>(counts.size())});
        std::vector<double> inverse;
        double group = -1;
        for (size_t i = 0; i < v.size(); ++i) {
          if (consecutive) {
            if (i == 0 || v[i] != v[i - 1]) group += 1;
            inverse.push_back(group);
          } else {
            inverse.push_back(static_cast<double>(
                std::lower_bound(values.begin(), values.end(), v[i]) - values.begin()));
          }
        }
        return from_vector<double>(inverse, x[0].sizes());
      };
      rows.push_back(u);
    }
  }
  return rows;
}

}  // namespace ember::op_table
