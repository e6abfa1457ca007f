// ops/einsum.cpp: torch.einsum -- the equation parsed into one label per operand dim, each
// operand's repeated labels taken as diagonals and its dims aligned to one global order (output
// labels first), then one operand summed or the operands contracted pairwise from the left, each
// pair as one bmm of (batch, M, K) x (batch, K, N). Gradients come from the ops it is built of.
#include <algorithm>
#include <numeric>
#include <optional>

#include "ops/op_helpers.h"

namespace ember {

namespace {

// Labels: A-Z are 0-25 and a-z 26-51 (so label order is the letters' ASCII order); the k-th
// broadcast dim of the ellipsis (counted over the widest ellipsis of all operands) is 52 + k.
constexpr int kLetters = 52;

int label_of(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
  return -1;
}
char letter_of(int label) {
  return static_cast<char>(label < 26 ? 'A' + label : 'a' + (label - 26));
}

// One side of the equation's subscripts: letter labels in order and where the ellipsis sits
// (the number of labels before it), if there is one.
struct Term {
  std::vector<int> labels;
  std::optional<size_t> ellipsis;
  std::string text;
};

Term parse_term(const std::string& eq, size_t begin, size_t end) {
  Term term;
  term.text = eq.substr(begin, end - begin);
  for (size_t i = begin; i < end; ++i) {
    const char c = eq[i];
    if (c == ' ') continue;
    if (c == '.') {
      EMBER_CHECK(i + 3 <= end && eq.compare(i, 3, "...") == 0, "[einsum] found '.' at index ", i,
                  " of equation '", eq, "' that is not part of an ellipsis '...'");
      EMBER_CHECK(!term.ellipsis, "[einsum] the subscripts '", term.text, "' of equation '", eq,
                  "' have more than one ellipsis");
      term.ellipsis = term.labels.size();
      i += 2;
      continue;
    }
    const int label = label_of(c);
    EMBER_CHECK(label >= 0, "[einsum] invalid subscript '", c, "' at index ", i, " of equation '",
                eq, "': subscripts must be letters in [a-zA-Z] or an ellipsis '...'");
    term.labels.push_back(label);
  }
  return term;
}

// The operand's dims labelled (ellipsis dims right-aligned to the widest ellipsis, `ell` dims).
std::vector<int> dim_labels(const Term& term, int64_t rank, int64_t ell) {
  std::vector<int> labels = term.labels;
  if (term.ellipsis) {
    const int64_t own = rank - static_cast<int64_t>(term.labels.size());
    std::vector<int> dots(static_cast<size_t>(own));
    std::iota(dots.begin(), dots.end(), static_cast<int>(kLetters + ell - own));
    labels.insert(labels.begin() + static_cast<std::ptrdiff_t>(*term.ellipsis), dots.begin(),
                  dots.end());
  }
  return labels;
}

std::string label_name(int label) {
  return label < kLetters ? std::string("subscript '") + letter_of(label) + "'"
                          : std::string("the ellipsis");
}

// Each label repeated within x's labels becomes one dim: the diagonal of its dims (last).
Tensor take_diagonals(const std::string& eq, size_t operand, Tensor x, std::vector<int>& labels) {
  for (;;) {
    auto i = labels.begin(), j = labels.end();
    for (; i != labels.end() && j == labels.end(); ++i) j = std::find(i + 1, labels.end(), *i);
    if (j == labels.end()) return x;
    --i;
    const int label = *i;
    const int64_t di = i - labels.begin(), dj = j - labels.begin();
    EMBER_CHECK_KIND(Shape, x.size(di) == x.size(dj), "[einsum] ", label_name(label),
                     " is repeated for operand ", operand, " of equation '", eq,
                     "' but its dims have different sizes, ", x.size(di), " and ", x.size(dj));
    x = x.diagonal(0, di, dj);
    labels.erase(j);
    labels.erase(i);
    labels.push_back(label);
  }
}

// Sums x (keeping the dims, and the dtype) over dims; x itself when there are none.
Tensor sum_kept(const Tensor& x, const Shape& dims) {
  return dims.empty() ? x : x.sum(dims, true, x.dtype());
}

Tensor permute_to(const Tensor& x, const std::vector<Shape>& groups, int64_t nd) {
  Shape order;
  for (const Shape& g : groups) order.insert(order.end(), g.begin(), g.end());
  for (int64_t d = 0; d < nd; ++d)
    if (std::find(order.begin(), order.end(), d) == order.end()) order.push_back(d);
  return x.permute(order);
}

int64_t size_of(const Tensor& x, const Shape& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= x.size(d);
  return n;
}

// a, b: aligned (one dim per global label, size 1 where absent). Contracts the dims where
// `summable` (summing away the ones only one side has) with one bmm; the result is aligned too,
// size 1 at the summed dims.
Tensor contract(Tensor a, Tensor b, const std::vector<bool>& summable) {
  const int64_t nd = a.dim();
  Shape batch, m, n, k, sum_a, sum_b;
  for (int64_t d = 0; d < nd; ++d) {
    const bool in_a = a.size(d) != 1, in_b = b.size(d) != 1;
    if (!in_a && !in_b) continue;  // a unit dim on both sides stays one
    const bool both = in_a && in_b;
    if (summable[static_cast<size_t>(d)])
      (both ? k : in_a ? sum_a : sum_b).push_back(d);
    else
      (both ? batch : in_a ? m : n).push_back(d);
  }
  a = sum_kept(a, sum_a);
  b = sum_kept(b, sum_b);
  const int64_t nb = size_of(a, batch), nm = size_of(a, m), nk = size_of(a, k), nn = size_of(b, n);
  Tensor a3 = permute_to(a, {batch, m, k}, nd).reshape({nb, nm, nk});
  Tensor b3 = permute_to(b, {batch, k, n}, nd).reshape({nb, nk, nn});
  // (nb, nm, nn) -> the batch, m and n dims, put back in the global order with unit dims between.
  Shape kept = batch, sizes;
  kept.insert(kept.end(), m.begin(), m.end());
  kept.insert(kept.end(), n.begin(), n.end());
  for (size_t i = 0; i < kept.size(); ++i)
    sizes.push_back(i < batch.size() + m.size() ? a.size(kept[i]) : b.size(kept[i]));
  Tensor out = bmm(a3, b3).reshape(sizes);
  Shape order(kept.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
    return kept[static_cast<size_t>(x)] < kept[static_cast<size_t>(y)];
  });
  out = out.permute(order);
  for (int64_t d = 0; d < nd; ++d)
    if (std::find(kept.begin(), kept.end(), d) == kept.end()) out = out.unsqueeze(d);
  return out;
}

}  // namespace

Tensor einsum(const std::string& eq, const std::vector<Tensor>& operands0) {
  EMBER_CHECK(!operands0.empty(), "[einsum] equation '", eq, "' needs at least one operand");
  // The subscripts: operands' terms split at ',' before the "->", then the output's.
  const size_t arrow = eq.find("->");
  const size_t lhs_end = arrow == std::string::npos ? eq.size() : arrow;
  std::vector<Term> terms;
  for (size_t begin = 0;;) {
    const size_t comma = std::min(eq.find(',', begin), lhs_end);
    terms.push_back(parse_term(eq, begin, comma));
    if (comma == lhs_end) break;
    begin = comma + 1;
  }
  EMBER_CHECK(terms.size() == operands0.size(), "[einsum] equation '", eq, "' has subscripts for ",
              terms.size(), " operand(s) but ", operands0.size(), " were given");
  const Device device = operands0[0].device();
  DType dtype = operands0[0].dtype();
  int64_t ell = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    const Tensor& x = operands0[i];
    EMBER_CHECK_KIND(Device, x.device() == device, "[einsum] operand ", i, " is on ", x.device(),
                     " but operand 0 is on ", device);
    dtype = promote_types(dtype, x.dtype());
    const auto named = static_cast<int64_t>(terms[i].labels.size());
    if (terms[i].ellipsis) {
      EMBER_CHECK_KIND(Shape, x.dim() >= named, "[einsum] operand ", i, " has ", x.dim(),
                       " dims but its subscripts '", terms[i].text, "' in equation '", eq,
                       "' name at least ", named);
      ell = std::max(ell, x.dim() - named);
    } else {
      EMBER_CHECK_KIND(Shape, x.dim() == named, "[einsum] operand ", i, " has ", x.dim(),
                       " dims but its subscripts '", terms[i].text, "' in equation '", eq,
                       "' name ", named, " (and there is no ellipsis)");
    }
  }
  const int num_labels = kLetters + static_cast<int>(ell);

  // Each operand's labels (diagonals taken) and every label's size, broadcast over operands.
  std::vector<Tensor> operands;
  std::vector<std::vector<int>> labels;
  std::vector<int64_t> sizes(static_cast<size_t>(num_labels), -1);
  std::vector<int> count(static_cast<size_t>(num_labels), 0), last_use(sizes.size(), -1);
  for (size_t i = 0; i < terms.size(); ++i) {
    const Tensor& x0 = operands0[i];
    labels.push_back(dim_labels(terms[i], x0.dim(), ell));
    for (int l : labels.back()) ++count[static_cast<size_t>(l)];
    operands.push_back(take_diagonals(eq, i, x0.dtype() == dtype ? x0 : x0.to(dtype), labels[i]));
    for (size_t d = 0; d < labels[i].size(); ++d) {
      const auto l = static_cast<size_t>(labels[i][d]);
      const int64_t s = operands[i].size(static_cast<int64_t>(d));
      EMBER_CHECK_KIND(Shape, sizes[l] < 0 || sizes[l] == s || sizes[l] == 1 || s == 1, "[einsum] ",
                       label_name(labels[i][d]), " has size ", s, " for operand ", i,
                       " of equation '", eq, "', which does not broadcast with size ", sizes[l],
                       " of an earlier operand");
      if (sizes[l] <= 1) sizes[l] = s;
      last_use[l] = static_cast<int>(i);
    }
  }

  // The output's labels: the explicit ones after "->" (the ellipsis where it is written), or the
  // ellipsis then the letters used once, in order.
  std::vector<int> out;
  if (arrow != std::string::npos) {
    Term term = parse_term(eq, arrow + 2, eq.size());
    std::vector<bool> seen(sizes.size(), false);
    for (int l : term.labels) {
      EMBER_CHECK(count[static_cast<size_t>(l)] > 0, "[einsum] output subscript '", letter_of(l),
                  "' of equation '", eq, "' does not appear in any operand's subscripts");
      EMBER_CHECK(!seen[static_cast<size_t>(l)], "[einsum] output subscript '", letter_of(l),
                  "' appears more than once in equation '", eq, "'");
      seen[static_cast<size_t>(l)] = true;
    }
    out = term.labels;
    if (term.ellipsis) {
      std::vector<int> dots(static_cast<size_t>(ell));
      std::iota(dots.begin(), dots.end(), kLetters);
      out.insert(out.begin() + static_cast<std::ptrdiff_t>(*term.ellipsis), dots.begin(),
                 dots.end());
    }
  } else {
    for (int l = kLetters; l < num_labels; ++l) out.push_back(l);
    for (int l = 0; l < kLetters; ++l)
      if (count[static_cast<size_t>(l)] == 1) out.push_back(l);
  }

  // Global dim order: the output's labels, then the summed ones.
  std::vector<int> order = out;
  for (int l = 0; l < num_labels; ++l)
    if (count[static_cast<size_t>(l)] > 0 && std::find(out.begin(), out.end(), l) == out.end())
      order.push_back(l);
  const auto nd = static_cast<int64_t>(order.size()), nout = static_cast<int64_t>(out.size());
  std::vector<int64_t> position(sizes.size(), -1);
  for (size_t g = 0; g < order.size(); ++g)
    position[static_cast<size_t>(order[g])] = static_cast<int64_t>(g);

  // Each operand aligned: its dims permuted into the global order, unit dims where it lacks one.
  for (size_t i = 0; i < operands.size(); ++i) {
    Shape perm(labels[i].size());
    std::iota(perm.begin(), perm.end(), 0);
    std::sort(perm.begin(), perm.end(), [&](int64_t x, int64_t y) {
      return position[static_cast<size_t>(labels[i][static_cast<size_t>(x)])] <
             position[static_cast<size_t>(labels[i][static_cast<size_t>(y)])];
    });
    Tensor x = operands[i].permute(perm);
    for (int64_t g = 0; g < nd; ++g) {
      const int l = order[static_cast<size_t>(g)];
      if (std::find(labels[i].begin(), labels[i].end(), l) == labels[i].end()) x = x.unsqueeze(g);
    }
    operands[i] = x;
  }

  Tensor result = operands[0];
  if (operands.size() == 1) {
    Shape summed(static_cast<size_t>(nd - nout));
    std::iota(summed.begin(), summed.end(), nout);
    // As PyTorch: integer and bool sums give int64 here (a pair's contraction keeps its dtype).
    if (!summed.empty()) result = result.sum(summed, true);
  }
  for (size_t i = 1; i < operands.size(); ++i) {
    // A summed label can go once no later operand has it.
    std::vector<bool> summable(static_cast<size_t>(nd), false);
    for (int64_t g = nout; g < nd; ++g)
      summable[static_cast<size_t>(g)] =
          last_use[static_cast<size_t>(order[static_cast<size_t>(g)])] <= static_cast<int>(i);
    result = contract(result, operands[i], summable);
  }
  for (int64_t g = nd - 1; g >= nout; --g) result = result.squeeze(g);
  return result;
}

}  // namespace ember
