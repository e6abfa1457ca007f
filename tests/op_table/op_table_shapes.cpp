// tests/op_table/op_table_shapes.cpp: the op table's rows of the shape ops (tril, triu, flip,
// roll, repeat, tile, repeat_interleave), scans (cumsum, cumprod, cummax, cummin, logcumsumexp),
// counts (count_nonzero, any, all), products on matmul (dot, vdot, mv, outer, addmm, baddbmm,
// addbmm, einsum), diagonals (diag, trace) and norms. References take another path than the op:
// masks multiplied in, slices reversed or rotated, copies joined with cat, products summed from
// broadcasts.
#include <algorithm>
#include <cmath>
#include <tuple>

#include "op_table/row_builders.h"

namespace ember::op_table {

namespace {

using R = ResultDtype;

// 1 where col - row <= k (lower) or >= k, as float64 (n, m).
Tensor triangle_mask(int64_t n, int64_t m, int64_t k, bool lower) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) v.push_back(lower ? (j - i <= k) : (j - i >= k));
  return from_vector<double>(v, Shape{n, m});
}

// (..., n, k) @ (..., k, m) by broadcasting and summing over k.
Tensor product_by_broadcast(const Tensor& a, const Tensor& b) {
  return (a.unsqueeze(-1) * b.unsqueeze(-3)).sum({-2});
}

OpRow composite(std::string name, std::string variant, Call call, Call ref,
                std::vector<InputSpec> inputs, std::vector<std::vector<Shape>> samples,
                std::vector<DType> dtypes, ResultDtype result = R::Same, bool differentiable = true,
                OpArgs args = {}) {
  OpRow r = other(std::move(name), std::move(variant), std::move(call), std::move(inputs),
                  std::move(samples), std::move(dtypes), result, differentiable, std::move(args));
  r.composite_ref = std::move(ref);
  return r;
}

std::vector<OpRow> shape_rows() {
  std::vector<OpRow> rows;
  const std::vector<std::vector<Shape>> matrices = {{{3, 5}}, {{5, 3}}, {{2, 4, 4}}, {{0, 3}}};
  for (bool lower : {true, false}) {
    for (int64_t k : {int64_t{0}, int64_t{1}, int64_t{-2}}) {
      rows.push_back(composite(
          lower ? "tril" : "triu",
          k == 0  ? ""
          : k > 0 ? "above"
                  : "below",
          [lower](const std::vector<Tensor>& x, const OpArgs& a) {
            auto d = static_cast<int64_t>(a.numbers[0]);
            return lower ? tril(x[0], d) : triu(x[0], d);
          },
          [lower](const std::vector<Tensor>& x, const OpArgs& a) {
            auto d = static_cast<int64_t>(a.numbers[0]);
            return x[0] * triangle_mask(x[0].size(-2), x[0].size(-1), d, lower).to(x[0].device());
          },
          {value()}, matrices, kAll, R::Same, true, {.numbers = {static_cast<double>(k)}}));
    }
  }
  const std::vector<std::vector<Shape>> along = {{{7}}, {{3, 5}}, {{2, 3, 4}}};
  const SliceRef reversed = [](std::span<const double> v, auto&) {
    return std::vector<double>(v.rbegin(), v.rend());
  };
  rows.push_back(slice_map(
      "flip", "",
      [](const std::vector<Tensor>& x, const OpArgs& a) { return flip(x[0], {dim_arg(a)}); },
      reversed, along, {.numbers = {0}}));
  rows.push_back(slice_map(
      "flip", "last",
      [](const std::vector<Tensor>& x, const OpArgs& a) { return flip(x[0], {dim_arg(a)}); },
      reversed, along, {.numbers = {-1}}));
  // roll by args.numbers[2] along args.numbers[0] (args.numbers[1] is keepdim's slot).
  const SliceRef rotated = [](std::span<const double> v, const OpArgs& a) {
    auto n = static_cast<int64_t>(v.size());
    std::vector<double> out(v.size());
    auto shift = static_cast<int64_t>(a.numbers[2]);
    for (int64_t i = 0; i < n; ++i) out[static_cast<size_t>(((i + shift) % n + n) % n)] = v[i];
    return out;
  };
  const Call roll_call = [](const std::vector<Tensor>& x, const OpArgs& a) {
    return roll(x[0], {static_cast<int64_t>(a.numbers[2])}, {dim_arg(a)});
  };
  rows.push_back(slice_map("roll", "", roll_call, rotated, along, {.numbers = {-1, 0, 2}}));
  rows.push_back(slice_map("roll", "negative", roll_call, rotated, along, {.numbers = {0, 0, -8}}));
  // cumsum: prefix sums per slice; the 140000-element line takes the CPU's blocked parallel scan.
  const SliceRef prefix = [](std::span<const double> v, auto&) {
    std::vector<double> out(v.size());
    double s = 0;
    for (size_t i = 0; i < v.size(); ++i) out[i] = s += v[i];
    return out;
  };
  const Call cumsum_call = [](const std::vector<Tensor>& x, const OpArgs& a) {
    return cumsum(x[0], dim_arg(a));
  };
  OpRow cumsum_row =
      slice_map("cumsum", "", cumsum_call, prefix, {{{7}}, {{3, 5}}, {{140000}}}, {.numbers = {0}});
  cumsum_row.result = R::Int64ForIntegers;
  rows.push_back(cumsum_row);
  OpRow cumsum_inner = slice_map("cumsum", "inner", cumsum_call, prefix,
                                 {{{3, 5}}, {{2, 3, 4}}, {{0, 4}}}, {.numbers = {0}});
  cumsum_inner.result = R::Int64ForIntegers;
  rows.push_back(cumsum_inner);
  OpRow cumsum_last = with_variant(cumsum_inner, "last", {.numbers = {-1}});
  rows.push_back(cumsum_last);
  // cumprod (near 1, so the long line neither overflows nor vanishes at once), cummax/cummin
  // (a later equal element takes over: the index rows see integer ties), logcumsumexp.
  const SliceRef running_product = [](std::span<const double> v, auto&) {
    std::vector<double> out(v.size());
    double p = 1;
    for (size_t i = 0; i < v.size(); ++i) out[i] = p *= v[i];
    return out;
  };
  const Call cumprod_call = [](const std::vector<Tensor>& x, const OpArgs& a) {
    return cumprod(x[0], dim_arg(a));
  };
  for (const auto& [variant, samples, dim] :
       {std::tuple{"", std::vector<std::vector<Shape>>{{{7}}, {{3, 5}}, {{140000}}}, 0.0},
        std::tuple{"last", std::vector<std::vector<Shape>>{{{3, 5}}, {{2, 3, 4}}, {{0, 4}}},
                   -1.0}}) {
    OpRow r =
        slice_map("cumprod", variant, cumprod_call, running_product, samples, {.numbers = {dim}});
    r.result = R::Int64ForIntegers;
    r.inputs[0].domain = {.lo = -1.3, .hi = 1.3};
    rows.push_back(r);
  }
  for (bool largest : {true, false}) {
    for (bool indices : {false, true}) {
      OpRow r = slice_map(
          largest ? "cummax" : "cummin", indices ? "indices" : "",
          [largest, indices](const std::vector<Tensor>& x, const OpArgs& a) {
            auto [v, i] = largest ? cummax(x[0], dim_arg(a)) : cummin(x[0], dim_arg(a));
            return indices ? i : v;
          },
          [largest, indices](std::span<const double> v, auto&) {
            std::vector<double> out;
            size_t at = 0;
            for (size_t i = 0; i < v.size(); ++i) {
              if (largest ? v[i] >= v[at] : v[i] <= v[at]) at = i;
              out.push_back(indices ? static_cast<double>(at) : v[at]);
            }
            return out;
          },
          {{{7}}, {{3, 5}}, {{2, 3, 4}}}, {.numbers = {-1}});
      if (indices) {
        r.result = R::Int64;
        r.differentiable = false;
      }
      rows.push_back(r);
    }
  }
  OpRow lcse = slice_map(
      "logcumsumexp", "",
      [](const std::vector<Tensor>& x, const OpArgs& a) { return logcumsumexp(x[0], dim_arg(a)); },
      [](std::span<const double> v, auto&) {
        std::vector<double> out(v.size());
        double m = -INFINITY, s = 0;  // running max and the sum of exp(v - m)
        for (size_t i = 0; i < v.size(); ++i) {
          const double nm = std::max(m, v[i]);
          s = s * std::exp(m - nm) + std::exp(v[i] - nm);
          m = nm;
          out[i] = m + std::log(s);
        }
        return out;
      },
      {{{7}}, {{3, 5}}, {{140000}}}, {.numbers = {0}});
  lcse.dtypes = kFloats;
  rows.push_back(lcse);
  OpRow lcse_inner = with_variant(lcse, "last", {.numbers = {-1}});
  lcse_inner.samples = {{{3, 5}}, {{2, 3, 4}}};
  rows.push_back(lcse_inner);
  // movedim, swapaxes/swapdims and unflatten: the permutation or shape written out.
  const std::vector<std::vector<Shape>> cube = {{{2, 3, 4}}, {{1, 0, 2}}};
  rows.push_back(composite(
      "movedim", "", [](const std::vector<Tensor>& x, auto&) { return movedim(x[0], 0, -1); },
      [](const std::vector<Tensor>& x, auto&) {
        return x[0].permute({1, 2, 0});
      },
      {value()}, cube, kAll));
  rows.push_back(composite(
      "movedim", "dims",
      [](const std::vector<Tensor>& x, auto&) { return movedim(x[0], Shape{2}, Shape{0}); },
      [](const std::vector<Tensor>& x, auto&) {
        return x[0].permute({2, 0, 1});
      },
      {value()}, cube, kAll));
  rows.push_back(composite(
      "swapaxes", "", [](const std::vector<Tensor>& x, auto&) { return swapaxes(x[0], 0, 1); },
      [](const std::vector<Tensor>& x, auto&) {
        return x[0].permute({1, 0, 2});
      },
      {value()}, cube, kAll));
  rows.push_back(composite(
      "swapdims", "", [](const std::vector<Tensor>& x, auto&) { return swapdims(x[0], 2, 0); },
      [](const std::vector<Tensor>& x, auto&) {
        return x[0].permute({2, 1, 0});
      },
      {value()}, cube, kAll));
  rows.push_back(composite(
      "unflatten", "",
      [](const std::vector<Tensor>& x, auto&) {
        return unflatten(x[0], 1, {3, -1});
      },
      [](const std::vector<Tensor>& x, auto&) {
        return x[0].contiguous().view({x[0].size(0), 3, x[0].size(1) / 3});
      },
      {value()}, {{{2, 6}}, {{0, 6}}}, kAll));
  OpRow take = composite(
      "take_along_dim", "",
      [](const std::vector<Tensor>& x, auto&) { return take_along_dim(x[0], x[1], 1); },
      [](const std::vector<Tensor>& x, auto&) {
        return gather(x[0].expand({x[1].size(0), x[0].size(1)}), 1, x[1]);
      },
      {value(), index(4)}, {{{3, 4}, {3, 2}}, {{1, 4}, {3, 5}}}, kAll);
  rows.push_back(take);
  // repeat (2, 3) and tile (3,) of a matrix: copies joined with cat.
  rows.push_back(composite(
      "repeat", "",
      [](const std::vector<Tensor>& x, auto&) {
        return repeat(x[0], {2, 3});
      },
      [](const std::vector<Tensor>& x, auto&) {
        Tensor row = cat({x[0], x[0], x[0]}, 1);
        return cat({row, row}, 0);
      },
      {value()}, {{{3, 5}}, {{1, 1}}, {{0, 2}}}, kAll));
  rows.push_back(composite(
      "repeat", "new_dims",
      [](const std::vector<Tensor>& x, auto&) {
        return repeat(x[0], {2, 1, 2});
      },
      [](const std::vector<Tensor>& x, auto&) {
        Tensor m = cat({x[0], x[0]}, 1).unsqueeze(0);
        return cat({m, m}, 0);
      },
      {value()}, {{{3, 5}}, {{2, 1}}}, kAll));
  rows.push_back(composite(
      "tile", "", [](const std::vector<Tensor>& x, auto&) { return tile(x[0], {3}); },
      [](const std::vector<Tensor>& x, auto&) {
        return cat({x[0], x[0], x[0]}, -1);
      },
      {value()}, {{{3, 5}}, {{4}}, {{2, 3, 4}}}, kAll));
  return rows;
}

std::vector<OpRow> count_rows() {
  const Domain sparse{.lo = -1, .hi = 1, .integers = true};
  const std::vector<std::vector<Shape>> whole = {{{}}, {{0}}, {{7}}, {{3, 5}}};
  const std::vector<std::vector<Shape>> by_dim = {{{3, 5}}, {{2, 3, 4}}, {{4, 1}}};
  const ReduceRef nonzero = [](std::span<const double> v, auto&) {
    return static_cast<double>(std::count_if(v.begin(), v.end(), [](double x) { return x != 0; }));
  };
  const ReduceRef any_ref = [](std::span<const double> v, auto&) {
    return double(std::any_of(v.begin(), v.end(), [](double x) { return x != 0; }));
  };
  const ReduceRef all_ref = [](std::span<const double> v, auto&) {
    return double(std::all_of(v.begin(), v.end(), [](double x) { return x != 0; }));
  };
  // uint8 gives uint8, as PyTorch; the rows take the other dtypes, whose results are bool.
  const std::vector<DType> logical = {kBool,    kInt32,    kInt64,  kFloat32,
                                      kFloat64, kBFloat16, kFloat16};
  std::vector<OpRow> rows;
  rows.push_back(reduction(
      "count_nonzero", "", [](const std::vector<Tensor>& x, auto&) { return count_nonzero(x[0]); },
      nonzero, whole, kAll, R::Int64, false, {}, sparse));
  rows.push_back(reduction(
      "count_nonzero", "dim",
      [](const std::vector<Tensor>& x, const OpArgs& a) {
        return count_nonzero(x[0], {dim_arg(a)});
      },
      nonzero, by_dim, kAll, R::Int64, false, {.numbers = {1}}, sparse));
  // nansum / nanmean on finite samples (NaN handling is in tests/reference/math_ops.txt),
  // var_mean / std_mean's two results.
  const ReduceRef total = [](std::span<const double> v, auto&) {
    double s = 0;
    for (double x : v) s += x;
    return s;
  };
  const ReduceRef average = [total](std::span<const double> v, const OpArgs& a) {
    return total(v, a) / static_cast<double>(v.size());
  };
  const ReduceRef variance = [average](std::span<const double> v, const OpArgs& a) {
    double m = average(v, a), s = 0;
    for (double x : v) s += (x - m) * (x - m);
    return s / static_cast<double>(v.size() - 1);
  };
  const std::vector<DType> floats = {kFloat32, kFloat64, kBFloat16, kFloat16};
  rows.push_back(reduction("nansum", "dim",
                           [](const std::vector<Tensor>& x, const OpArgs& a) {
                             return nansum(x[0], {dim_arg(a)}, keepdim_arg(a));
                           },
                           total, by_dim, floats, R::Same, true, {.numbers = {1, 0}}));
  rows.push_back(reduction("nanmean", "dim",
                           [](const std::vector<Tensor>& x, const OpArgs& a) {
                             return nanmean(x[0], {dim_arg(a)}, keepdim_arg(a));
                           },
                           average, by_dim, floats, R::Same, true, {.numbers = {0, 1}}));
  rows.push_back(reduction("var_mean", "var",
                           [](const std::vector<Tensor>& x, const OpArgs& a) {
                             return std::get<0>(var_mean(x[0], {dim_arg(a)}, true, keepdim_arg(a)));
                           },
                           variance, {{{3, 5}}, {{2, 3, 4}}}, floats, R::Same, true,
                           {.numbers = {1, 0}}));
  rows.push_back(reduction("std_mean", "mean",
                           [](const std::vector<Tensor>& x, const OpArgs& a) {
                             return std::get<1>(std_mean(x[0], {dim_arg(a)}, true, keepdim_arg(a)));
                           },
                           average, by_dim, floats, R::Same, true, {.numbers = {1, 1}}));
  for (bool is_any : {true, false}) {
    const ReduceRef& ref = is_any ? any_ref : all_ref;
    rows.push_back(reduction(
        is_any ? "any" : "all", "",
        [is_any](const std::vector<Tensor>& x, auto&) { return is_any ? any(x[0]) : all(x[0]); },
        ref, whole, logical, R::Bool, false, {}, sparse));
    rows.push_back(reduction(
        is_any ? "any" : "all", "dim",
        [is_any](const std::vector<Tensor>& x, const OpArgs& a) {
          return is_any ? any(x[0], dim_arg(a), keepdim_arg(a))
                        : all(x[0], dim_arg(a), keepdim_arg(a));
        },
        ref, by_dim, logical, R::Bool, false, {.numbers = {0, 1}}, sparse));
  }
  return rows;
}

std::vector<OpRow> product_rows() {
  const std::vector<DType> dtypes = {kInt64, kFloat32, kFloat64, kBFloat16, kFloat16};
  std::vector<OpRow> rows;
  const Call dot_ref = [](const std::vector<Tensor>& x, auto&) { return (x[0] * x[1]).sum(); };
  const std::vector<std::vector<Shape>> vectors = {{{7}, {7}}, {{0}, {0}}, {{65}, {65}}};
  rows.push_back(composite(
      "dot", "", [](const std::vector<Tensor>& x, auto&) { return dot(x[0], x[1]); }, dot_ref,
      {value(), value()}, vectors, dtypes));
  rows.push_back(composite(
      "vdot", "", [](const std::vector<Tensor>& x, auto&) { return vdot(x[0], x[1]); }, dot_ref,
      {value(), value()}, vectors, dtypes));
  rows.push_back(composite(
      "mv", "", [](const std::vector<Tensor>& x, auto&) { return mv(x[0], x[1]); },
      [](const std::vector<Tensor>& x, auto&) { return (x[0] * x[1]).sum({1}); },
      {value(), value()}, {{{3, 7}, {7}}, {{0, 2}, {2}}, {{33, 65}, {65}}}, dtypes));
  rows.push_back(composite(
      "outer", "", [](const std::vector<Tensor>& x, auto&) { return outer(x[0], x[1]); },
      [](const std::vector<Tensor>& x, auto&) {
        return x[0].reshape({-1, 1}).expand({x[0].size(0), x[1].size(0)}) * x[1];
      },
      {value(), value()}, {{{3}, {5}}, {{0}, {4}}}, kNumbers));
  // beta args.numbers[0], alpha args.numbers[1].
  const Call addmm_call = [](const std::vector<Tensor>& x, const OpArgs& a) {
    return addmm(x[0], x[1], x[2], a.numbers[0], a.numbers[1]);
  };
  const Call addmm_ref = [](const std::vector<Tensor>& x, const OpArgs& a) {
    return x[0] * a.numbers[0] + product_by_broadcast(x[1], x[2]) * a.numbers[1];
  };
  const std::vector<std::vector<Shape>> addmm_shapes = {
      {{3, 5}, {3, 4}, {4, 5}}, {{5}, {3, 4}, {4, 5}}, {{33, 65}, {33, 17}, {17, 65}}};
  const std::vector<DType> floats = {kFloat32, kFloat64, kBFloat16, kFloat16};
  rows.push_back(composite("addmm", "", addmm_call, addmm_ref, {value(), value(), value()},
                           addmm_shapes, floats, R::Same, true, {.numbers = {0.5, -1.5}}));
  rows.push_back(composite("addmm", "beta1", addmm_call, addmm_ref, {value(), value(), value()},
                           addmm_shapes, dtypes, R::Same, true, {.numbers = {1, 1}}));
  rows.push_back(composite("baddbmm", "",
                           [](const std::vector<Tensor>& x, const OpArgs& a) {
                             return baddbmm(x[0], x[1], x[2], a.numbers[0], a.numbers[1]);
                           },
                           addmm_ref, {value(), value(), value()},
                           {{{2, 3, 5}, {2, 3, 4}, {2, 4, 5}}, {{5}, {3, 2, 4}, {3, 4, 5}}}, floats,
                           R::Same, true, {.numbers = {2, 0.5}}));
  rows.push_back(composite(
      "addbmm", "",
      [](const std::vector<Tensor>& x, const OpArgs& a) {
        return addbmm(x[0], x[1], x[2], a.numbers[0], a.numbers[1]);
      },
      [](const std::vector<Tensor>& x, const OpArgs& a) {
        return x[0] * a.numbers[0] + product_by_broadcast(x[1], x[2]).sum({0}) * a.numbers[1];
      },
      {value(), value(), value()}, {{{3, 5}, {2, 3, 4}, {2, 4, 5}}}, floats, R::Same, true,
      {.numbers = {-1, 1}}));
  return rows;
}

// A matrix's diagonal k, as elements joined with cat.
Tensor diagonal_by_narrow(const Tensor& x, int64_t k) {
  std::vector<Tensor> items;
  for (int64_t i = 0; i < x.size(0); ++i)
    if (i + k >= 0 && i + k < x.size(1))
      items.push_back(x.narrow(0, i, 1).narrow(1, i + k, 1).view({1}));
  return items.empty() ? zeros({0}, {.dtype = x.dtype()}) : cat(items);
}

std::vector<OpRow> diagonal_rows() {
  std::vector<OpRow> rows;
  const Call diag_call = [](const std::vector<Tensor>& x, const OpArgs& a) {
    return diag(x[0], static_cast<int64_t>(a.numbers[0]));
  };
  for (double k : {0.0, 2.0, -1.0})
    rows.push_back(composite("diag",
                             k == 0  ? "matrix"
                             : k > 0 ? "matrix_above"
                                     : "matrix_below",
                             diag_call,
                             [](const std::vector<Tensor>& x, const OpArgs& a) {
                               return diagonal_by_narrow(x[0], static_cast<int64_t>(a.numbers[0]));
                             },
                             {value()}, {{{3, 5}}, {{5, 3}}, {{4, 4}}}, kAll, R::Same, true,
                             {.numbers = {k}}));
  for (double k : {0.0, 1.0, -2.0})
    rows.push_back(
        composite("diag",
                  k == 0  ? "vector"
                  : k > 0 ? "vector_above"
                          : "vector_below",
                  diag_call,
                  [](const std::vector<Tensor>& x, const OpArgs& a) {
                    auto k = static_cast<int64_t>(a.numbers[0]);
                    int64_t n = x[0].size(0) + std::abs(k);
                    Tensor padded = cat({x[0], zeros({std::abs(k)}, {.dtype = x[0].dtype()})});
                    Tensor mask = triangle_mask(n, n, k, false) * triangle_mask(n, n, k, true);
                    return mask * (k >= 0 ? padded.unsqueeze(1) : padded.unsqueeze(0));
                  },
                  {value()}, {{{4}}, {{1}}}, kAll, R::Same, true, {.numbers = {k}}));
  rows.push_back(composite(
      "trace", "", [](const std::vector<Tensor>& x, auto&) { return trace(x[0]); },
      [](const std::vector<Tensor>& x, auto&) { return diagonal_by_narrow(x[0], 0).sum(); },
      {value()}, {{{3, 5}}, {{4, 4}}, {{0, 2}}}, kAll, R::Int64ForIntegers));
  return rows;
}

std::vector<OpRow> norm_rows() {
  const std::vector<std::vector<Shape>> all = {{{}}, {{7}}, {{3, 5}}, {{33, 65}}};
  const std::vector<std::vector<Shape>> by_dim = {{{3, 5}}, {{2, 3, 4}}, {{4, 1}}};
  const ReduceRef p_norm = [](std::span<const double> v, const OpArgs& a) {
    double p = a.numbers.at(2), s = 0;
    if (std::isinf(p)) {
      double m = p > 0 ? 0 : INFINITY;
      for (double x : v) m = p > 0 ? std::max(m, std::fabs(x)) : std::min(m, std::fabs(x));
      return m;
    }
    if (p == 0)
      return static_cast<double>(
          std::count_if(v.begin(), v.end(), [](double x) { return x != 0; }));
    for (double x : v) s += std::pow(std::fabs(x), p);
    return std::pow(s, 1 / p);
  };
  const Domain away{.lo = -2, .hi = 2, .gap = 0.1};
  std::vector<OpRow> rows;
  for (double p : {2.0, 1.0, 3.0, HUGE_VAL, -HUGE_VAL, 0.0}) {
    const char* name = p == 2   ? "p2"
                       : p == 1 ? "p1"
                       : p == 3 ? "p3"
                       : p == 0 ? "p0"
                       : p > 0  ? "inf"
                                : "neg_inf";
    OpRow r = reduction(
        "norm", name,
        [](const std::vector<Tensor>& x, const OpArgs& a) {
          return norm(x[0], a.numbers[2], {}, false);
        },
        p_norm, all, {kFloat32, kFloat64, kBFloat16, kFloat16}, R::Same, p != 0, {.numbers = {}},
        away);
    r.args.numbers = {0, 0, p};
    r.along_dim = false;
    rows.push_back(r);
    rows.push_back(reduction(
        "linalg_vector_norm", std::string(name) + "_dim",
        [](const std::vector<Tensor>& x, const OpArgs& a) {
          return linalg::vector_norm(x[0], a.numbers[2], {dim_arg(a)}, keepdim_arg(a));
        },
        p_norm, by_dim, {kFloat32, kFloat64, kBFloat16, kFloat16}, R::Same, p != 0,
        {.numbers = {1, 1, p}}, away));
  }
  // matrix_norm: Frobenius and the induced 1 and inf norms.
  const std::vector<DType> floats = {kFloat32, kFloat64, kBFloat16, kFloat16};
  for (const char* ord : {"fro", "1", "inf"})
    rows.push_back(composite(
        "linalg_matrix_norm", ord,
        [](const std::vector<Tensor>& x, const OpArgs& a) {
          return linalg::matrix_norm(x[0], a.text);
        },
        [](const std::vector<Tensor>& x, const OpArgs& a) {
          Tensor m = abs(x[0]);
          if (a.text == "fro") return sqrt((x[0] * x[0]).sum({-2, -1}));
          return a.text == "1" ? amax(m.sum({-2}), {-1}) : amax(m.sum({-1}), {-1});
        },
        {value(away)}, {{{3, 5}}, {{2, 4, 3}}}, floats, R::Same, true, {.text = ord}));
  return rows;
}

}  // namespace

// The index updates, diagonal views, cross, kron and cdist; references write loops over the
// elements (index ops) or spell the formula out per element.
std::vector<OpRow> update_rows() {
  std::vector<OpRow> rows;
  // index (int64 below 4) along dim 1 of a (3, 4) self with a (3, 5) source: duplicates add.
  const auto index_ref = [](int kind) {
    return [kind](const std::vector<Tensor>& x, auto&) {
      std::vector<double> self = x[0].contiguous().to_vector<double>();
      const std::vector<int64_t> idx = x[1].contiguous().to_vector<int64_t>();
      const std::vector<double> src =
          kind == 2 ? std::vector<double>{} : x[2].contiguous().to_vector<double>();
      const int64_t rows = x[0].size(0), cols = x[0].size(1), n = static_cast<int64_t>(idx.size());
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < n; ++j) {
          double& e = self[static_cast<size_t>(r * cols + idx[static_cast<size_t>(j)])];
          if (kind == 0) e += 2.0 * src[static_cast<size_t>(r * n + j)];
          if (kind == 1) e = src[static_cast<size_t>(r * n + j)];
          if (kind == 2) e = -1.5;
        }
      return from_vector<double>(self, x[0].sizes());
    };
  };
  rows.push_back(composite(
      "index_add", "",
      [](const std::vector<Tensor>& x, auto&) { return index_add(x[0], 1, x[1], x[2], 2.0); },
      index_ref(0), {value(), index(4), value()}, {{{3, 4}, {5}, {3, 5}}, {{3, 4}, {0}, {3, 0}}},
      kNumbers));
  // index_copy with distinct indices (a permutation's head), as PyTorch asks.
  rows.push_back(composite(
      "index_copy", "",
      [](const std::vector<Tensor>& x, auto&) {
        return index_copy(x[0], 1, x[1].argsort().narrow(0, 0, 3), x[2]);
      },
      [index_ref](const std::vector<Tensor>& x, const OpArgs& a) {
        return index_ref(1)({x[0], x[1].argsort().narrow(0, 0, 3), x[2]}, a);
      },
      {value(), index(100), value()}, {{{3, 4}, {4}, {3, 3}}}, kAll));
  // scatter along dim 0 of a (3, 4) self from a (2, 4) src: the plain write with distinct
  // indices per column (a permutation's head, as PyTorch asks), the reductions with repeats.
  const auto scatter_ref = [](std::string reduce) {
    return [reduce](const std::vector<Tensor>& x, auto&) {
      std::vector<double> self = x[0].contiguous().to_vector<double>(), count(self.size(), 1.0);
      const std::vector<int64_t> idx = x[1].contiguous().to_vector<int64_t>();
      const std::vector<double> src = x[2].contiguous().to_vector<double>();
      const int64_t cols = x[0].size(1), n = x[1].size(0), src_cols = x[2].size(1);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < cols; ++j) {
          const auto at = static_cast<size_t>(idx[static_cast<size_t>(i * cols + j)] * cols + j);
          const double v = src[static_cast<size_t>(i * src_cols + j)];
          double& e = self[at];
          e = reduce == "assign" ? v
              : reduce == "prod" ? e * v
              : reduce == "amax" ? std::max(e, v)
                                 : e + v;
          count[at] += 1;
        }
      if (reduce == "mean")
        for (size_t k = 0; k < self.size(); ++k) self[k] /= count[k];
      return from_vector<double>(self, x[0].sizes());
    };
  };
  rows.push_back(composite(
      "scatter", "",
      [](const std::vector<Tensor>& x, auto&) {
        return scatter(x[0], 0, x[1].argsort(0).narrow(0, 0, 2), x[2]);
      },
      [scatter_ref](const std::vector<Tensor>& x, const OpArgs& a) {
        return scatter_ref("assign")({x[0], x[1].argsort(0).narrow(0, 0, 2), x[2]}, a);
      },
      {value(), index(100), value()}, {{{3, 4}, {3, 4}, {2, 4}}}, kAll));
  for (const char* reduce : {"sum", "prod", "mean", "amax"})
    rows.push_back(composite(
        "scatter_reduce", reduce,
        [](const std::vector<Tensor>& x, const OpArgs& a) {
          return scatter_reduce(x[0], 0, x[1], x[2], a.text);
        },
        scatter_ref(reduce), {value(), index(3), value()}, {{{3, 4}, {2, 4}, {2, 4}}},
        std::string(reduce) == "sum" || std::string(reduce) == "amax" ? kNumbers : kFloats, R::Same,
        true, {.text = reduce}));
  rows.push_back(composite(
      "index_fill", "",
      [](const std::vector<Tensor>& x, auto&) { return index_fill(x[0], 1, x[1], -1.5); },
      index_ref(2), {value(), index(4)}, {{{3, 4}, {3}}, {{3, 4}, {0}}}, kFloats));
  // diagonal views, above and below, of the last two dims and of dims (0, 2).
  for (const auto& [variant, offset, d1, d2] :
       {std::tuple{"", 0, 0, 1}, std::tuple{"above", 1, -2, -1}, std::tuple{"below", -1, 0, -1}}) {
    rows.push_back(composite(
        "diagonal", variant,
        [offset, d1, d2](const std::vector<Tensor>& x, auto&) {
          return diagonal(x[0], offset, d1, d2);
        },
        [offset, d1, d2](const std::vector<Tensor>& x, auto&) {
          // The diagonal dims moved last, then the (i, i + offset) elements stacked.
          const int64_t a = d1 < 0 ? d1 + x[0].dim() : d1, b = d2 < 0 ? d2 + x[0].dim() : d2;
          const Tensor m = movedim(x[0], Shape{a, b}, Shape{-2, -1});
          std::vector<Tensor> picks;
          for (int64_t i = 0; i < m.size(-2); ++i)
            if (i + offset >= 0 && i + offset < m.size(-1))
              picks.push_back(m.select(-2, i).select(-1, i + offset));
          if (picks.empty()) {
            Shape s = m.sizes();
            s.pop_back();
            s.back() = 0;
            return zeros(s, {.dtype = kFloat64});
          }
          return stack(picks, -1);
        },
        {value()}, {{{3, 4}}, {{4, 3}}, {{2, 3, 4}}, {{3, 1, 3}}}, kAll));
  }
  rows.push_back(composite(
      "cross", "", [](const std::vector<Tensor>& x, auto&) { return cross(x[0], x[1]); },
      [](const std::vector<Tensor>& x, auto&) {
        const Shape shape = broadcast_shapes(x[0].sizes(), x[1].sizes());
        const Tensor a = x[0].expand(shape), b = x[1].expand(shape);
        auto c = [](const Tensor& t, int64_t i) { return t.select(-1, i); };
        return stack({c(a, 1) * c(b, 2) - c(a, 2) * c(b, 1), c(a, 2) * c(b, 0) - c(a, 0) * c(b, 2),
                      c(a, 0) * c(b, 1) - c(a, 1) * c(b, 0)},
                     -1);
      },
      {value(), value()}, {{{3}, {3}}, {{4, 3}, {4, 3}}, {{2, 1, 3}, {5, 3}}}, kNumbers));
  rows.push_back(composite(
      "kron", "", [](const std::vector<Tensor>& x, auto&) { return kron(x[0], x[1]); },
      [](const std::vector<Tensor>& x, auto&) {
        // Every (i, j) block of the result is a[i, j] * b.
        const Tensor a = x[0].dim() == 1 ? x[0].unsqueeze(0) : x[0];
        const Tensor b = x[1].dim() == 1 ? x[1].unsqueeze(0) : x[1];
        std::vector<Tensor> block_rows;
        for (int64_t i = 0; i < a.size(0); ++i) {
          std::vector<Tensor> blocks;
          for (int64_t j = 0; j < a.size(1); ++j) blocks.push_back(a.select(0, i).select(0, j) * b);
          block_rows.push_back(cat(blocks, 1));
        }
        Tensor out = cat(block_rows, 0);
        return x[0].dim() == 1 && x[1].dim() == 1 ? out.squeeze(0) : out;
      },
      {value(), value()}, {{{2, 3}, {3, 2}}, {{4}, {3}}, {{1, 2}, {2, 2}}}, kNumbers));
  for (double p : {2.0, 1.0}) {
    rows.push_back(composite(
        "cdist", p == 2 ? "" : "p1",
        [p](const std::vector<Tensor>& x, auto&) { return cdist(x[0], x[1], p); },
        [p](const std::vector<Tensor>& x, auto&) {
          const Tensor d = (x[0].unsqueeze(-2) - x[1].unsqueeze(-3)).abs();
          return p == 2 ? (d * d).sum({-1}).sqrt() : d.sum({-1});
        },
        {value(), value()}, {{{4, 3}, {5, 3}}, {{2, 3, 2}, {2, 4, 2}}}, kFloats));
  }
  return rows;
}

// einsum (a batched product, a transposed operand, an outer product, a diagonal, a trace, a sum
// and transpose) against products summed from broadcasts and diagonals picked by narrow;
// repeat_interleave against copies joined with cat.
std::vector<OpRow> einsum_rows() {
  using X = const std::vector<Tensor>&;
  const std::vector<DType> products = {kInt64, kFloat32, kFloat64, kBFloat16, kFloat16};
  const auto equation = [](std::string eq) { return [eq](X x, auto&) { return einsum(eq, x); }; };
  std::vector<OpRow> rows;
  rows.push_back(composite(
      "einsum", "", equation("bij,bjk->bik"),
      [](X x, auto&) { return product_by_broadcast(x[0], x[1]); }, {value(), value()},
      {{{2, 3, 4}, {2, 4, 5}}, {{1, 0, 2}, {1, 2, 3}}, {{2, 33, 17}, {2, 17, 9}}}, products));
  rows.push_back(composite(
      "einsum", "transposed", equation("bij,bkj->bik"),
      [](X x, auto&) { return product_by_broadcast(x[0], x[1].transpose(1, 2)); },
      {value(), value()}, {{{2, 3, 4}, {2, 5, 4}}, {{1, 3, 4}, {2, 5, 4}}}, products));
  rows.push_back(composite(
      "einsum", "outer", equation("i,j->ij"),
      [](X x, auto&) { return x[0].unsqueeze(1) * x[1].unsqueeze(0); }, {value(), value()},
      {{{3}, {4}}, {{0}, {2}}}, products));
  rows.push_back(composite(
      "einsum", "diagonal", equation("ii->i"),
      [](X x, auto&) { return diagonal_by_narrow(x[0], 0); }, {value()}, {{{4, 4}}, {{0, 0}}},
      kAll));
  rows.push_back(composite(
      "einsum", "trace", equation("ii"),
      [](X x, auto&) { return diagonal_by_narrow(x[0], 0).sum(); }, {value()}, {{{4, 4}}, {{1, 1}}},
      kNumbers, R::Int64ForIntegers));
  rows.push_back(composite(
      "einsum", "sum_transpose", equation("bij->jb"), [](X x, auto&) { return x[0].sum({1}).t(); },
      {value()}, {{{2, 3, 4}}, {{3, 0, 2}}}, kNumbers, R::Int64ForIntegers));
  // Each slice along dim (of the flattened x without one) counts[i] times.
  const auto repeated = [](const Tensor& x, int64_t dim, const std::vector<int64_t>& counts) {
    std::vector<Tensor> pieces;
    for (int64_t i = 0; i < x.size(dim); ++i)
      for (int64_t r = 0; r < counts[static_cast<size_t>(i)]; ++r)
        pieces.push_back(x.narrow(dim, i, 1));
    return cat(pieces, dim);
  };
  rows.push_back(composite(
      "repeat_interleave", "", [](X x, auto&) { return repeat_interleave(x[0], 2, 1); },
      [repeated](X x, auto&) {
        return repeated(x[0], 1, std::vector<int64_t>(static_cast<size_t>(x[0].size(1)), 2));
      },
      {value()}, {{{3, 4}}, {{2, 1, 3}}}, kAll));
  rows.push_back(composite(
      "repeat_interleave", "flat", [](X x, auto&) { return x[0].repeat_interleave(3); },
      [repeated](X x, auto&) {
        return repeated(x[0].reshape({-1}), 0,
                        std::vector<int64_t>(static_cast<size_t>(x[0].numel()), 3));
      },
      {value()}, {{{}}, {{7}}, {{3, 5}}}, kAll));
  rows.push_back(composite(
      "repeat_interleave", "counts",
      [](X x, auto&) {
        return repeat_interleave(x[0], tensor({2, 0, 1, 3}, {.device = x[0].device()}).to(kInt64),
                                 0);
      },
      [repeated](X x, auto&) {
        return repeated(x[0], 0, {2, 0, 1, 3});
      },
      {value()}, {{{4, 3}}, {{4}}}, kAll));
  return rows;
}

std::vector<OpRow> shape_and_linalg_rows() {
  std::vector<OpRow> rows;
  for (auto part :
       {shape_rows, count_rows, product_rows, diagonal_rows, norm_rows, update_rows, einsum_rows})
    for (OpRow& row : part()) rows.push_back(std::move(row));
  return rows;
}

}  // namespace ember::op_table
