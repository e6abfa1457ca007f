// core/printing.cpp: PyTorch's tensor repr -- "tensor([1., 2., 3.])", summarised past 1000
// elements, with device and non-default dtype suffixes.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "ember/tensor.h"

namespace ember {

namespace {

constexpr int64_t kThreshold = 1000, kEdgeItems = 3, kLineWidth = 80;

// Chooses one format for every shown element, as torch._tensor_str._Formatter does.
class Formatter {
 public:
  Formatter(DType dtype, const std::vector<Scalar>& values)
      : floating_(is_floating_point(dtype)), bool_(dtype == kBool) {
    if (!floating_) {
      for (const Scalar& v : values) width_ = std::max(width_, format(v).size());
      return;
    }
    // As PyTorch: the mode and the width come from the nonzero finite values only.
    std::vector<double> shown;
    bool int_mode = true;
    double lo = INFINITY, hi = 0;
    for (const Scalar& s : values) {
      double v = s.to_double();
      if (!std::isfinite(v) || v == 0) continue;
      shown.push_back(v);
      lo = std::min(lo, std::fabs(v));
      hi = std::max(hi, std::fabs(v));
      int_mode &= std::ceil(v) == v;
    }
    int_mode_ = true;
    if (shown.empty()) return;
    sci_ = hi / lo > 1000.0 || hi > 1e8 || (!int_mode && lo < 1e-4);
    int_mode_ = int_mode && !sci_;
    for (double v : shown) width_ = std::max(width_, format(v).size());
  }

  std::string format(const Scalar& s) const {
    if (bool_) return s.to<bool>() ? "True" : "False";
    if (!floating_) return std::to_string(s.to_int());
    char buf[64];
    double v = s.to_double();
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    if (sci_)
      std::snprintf(buf, sizeof buf, "%.4e", v);
    else if (int_mode_)
      std::snprintf(buf, sizeof buf, "%.0f.", v);
    else
      std::snprintf(buf, sizeof buf, "%.4f", v);
    return buf;
  }
  std::string padded(const Scalar& v) const {
    std::string s = format(v);
    return std::string(width_ > s.size() ? width_ - s.size() : 0, ' ') + s;
  }
  size_t width() const { return width_; }

 private:
  bool floating_, bool_;
  bool sci_ = false, int_mode_ = false;
  size_t width_ = 1;
};

Scalar value_at(const Tensor& t) {
  return t.item();
}

// The indices of dim 0 shown: all, or the first and last kEdgeItems when summarising.
std::vector<int64_t> shown(int64_t n, bool summarize) {
  std::vector<int64_t> idx;
  if (summarize && n > 2 * kEdgeItems) {
    for (int64_t i = 0; i < kEdgeItems; ++i) idx.push_back(i);
    idx.push_back(-1);  // the "..." marker
    for (int64_t i = n - kEdgeItems; i < n; ++i) idx.push_back(i);
  } else {
    for (int64_t i = 0; i < n; ++i) idx.push_back(i);
  }
  return idx;
}

void collect(const Tensor& t, bool summarize, std::vector<Scalar>& out) {
  if (t.dim() == 0) {
    out.push_back(value_at(t));
    return;
  }
  for (int64_t i : shown(t.size(0), summarize))
    if (i >= 0) collect(t.select(0, i), summarize, out);
}

std::string format_rec(const Tensor& t, int64_t indent, bool summarize, const Formatter& f) {
  if (t.dim() == 0) return f.format(value_at(t));
  std::vector<int64_t> idx = shown(t.size(0), summarize);
  std::string out = "[";
  if (t.dim() == 1) {
    int64_t per_line =
        std::max<int64_t>(1, (kLineWidth - indent) / static_cast<int64_t>(f.width() + 2));
    for (size_t k = 0; k < idx.size(); ++k) {
      if (k > 0 && static_cast<int64_t>(k) % per_line == 0)
        out.append(",\n").append(indent + 1, ' ');
      else if (k > 0)
        out.append(", ");
      out += idx[k] < 0 ? std::string(" ...") : f.padded(value_at(t.select(0, idx[k])));
    }
    return out + "]";
  }
  std::string sep = std::string(",").append(t.dim() - 1, '\n').append(indent + 1, ' ');
  for (size_t k = 0; k < idx.size(); ++k) {
    if (k > 0) out += sep;
    out +=
        idx[k] < 0 ? std::string("...") : format_rec(t.select(0, idx[k]), indent + 1, summarize, f);
  }
  return out + "]";
}

}  // namespace

std::string Tensor::str() const {
  if (!defined()) return "tensor(undefined)";
  Tensor host = cpu();
  std::string body;
  std::vector<std::string> suffixes;
  if (!is_cpu()) suffixes.push_back("device='" + device().str() + "'");
  if (numel() == 0) {
    body = "[]";
    if (dim() != 1) {
      std::string text = "size=(";
      for (int64_t i = 0; i < dim(); ++i) text += (i ? ", " : "") + std::to_string(size(i));
      suffixes.push_back(text + ")");
    }
    if (dtype() != default_dtype())
      suffixes.push_back(std::string("dtype=torch.") + dtype_name(dtype()));
  } else {
    bool summarize = numel() > kThreshold;
    std::vector<Scalar> values;
    collect(host, summarize, values);
    Formatter f(dtype(), values);
    body = format_rec(host, 7, summarize, f);
    if (dtype() != default_dtype() && dtype() != kInt64 && dtype() != kBool)
      suffixes.push_back(std::string("dtype=torch.") + dtype_name(dtype()));
  }
  std::string out = "tensor(" + body;
  for (const auto& s : suffixes) out += ", " + s;
  return out + ")";
}

}  // namespace ember
