// io/npy_format.cpp: the bytes of a .npy file -- the preamble (magic, version, header length),
// the header dict and the data -- written and read, every field checked before it is trusted.
#include "io/npy_format.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <optional>

#include "ember/creation.h"
#include "io/npy_header.h"

namespace ember::io::detail {

static_assert(std::endian::native == std::endian::little,
              "ember's .npy code assumes a "
              "little-endian host");

namespace {

constexpr unsigned char kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
constexpr size_t kAlign = 64;  // numpy aligns the data to 64 bytes
constexpr int64_t kMaxElements = int64_t{1} << 56;

// The little-endian descr of t, after a check that NumPy has such a type.
std::string npy_descr(DType t) {
  std::string d = dtype_info(t).numpy;
  EMBER_CHECK_KIND(DType, !d.empty(), "[save_npy] NumPy has no ", dtype_name(t),
                   " type; convert the tensor first, e.g. t.to(ember::kFloat32)");
  return d;
}

struct Descr {
  DType dtype;
  bool big_endian;
};

// A descr as NumPy writes it ('<f4', '>i8', '|b1', '?', 'f8', ...) -> the dtype and byte order.
std::optional<Descr> parse_descr(const std::string& descr) {
  std::string_view d = descr;
  bool big = false;
  if (!d.empty() && (d[0] == '<' || d[0] == '>' || d[0] == '|' || d[0] == '=')) {
    big = d[0] == '>';
    d.remove_prefix(1);
  }
  if (d == "?") return Descr{kBool, false};
  for (DType t : kAllDTypes) {
    std::string_view known = dtype_info(t).numpy;
    if (!known.empty() && d == known.substr(1)) return Descr{t, big && element_size(t) > 1};
  }
  return std::nullopt;
}

bool is_object_descr(const std::string& descr) {
  std::string_view d = descr;
  if (!d.empty() && (d[0] == '<' || d[0] == '>' || d[0] == '|' || d[0] == '=')) d.remove_prefix(1);
  return !d.empty() && d[0] == 'O';
}

std::string shape_tuple(const Shape& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

void byteswap(unsigned char* p, int64_t count, size_t width) {
  for (int64_t i = 0; i < count; ++i, p += width) std::reverse(p, p + width);
}

}  // namespace

std::string encode_npy(const Tensor& t) {
  Tensor c = t.detach().cpu().contiguous();
  std::string dict = "{'descr': '" + npy_descr(c.dtype()) +
                     "', 'fortran_order': False, 'shape': " + shape_tuple(c.sizes()) + ", }";
  size_t preamble = 10;
  size_t header_len = (preamble + dict.size() + 1 + kAlign - 1) / kAlign * kAlign - preamble;
  if (header_len > 0xffff) {
    preamble = 12;
    header_len = (preamble + dict.size() + 1 + kAlign - 1) / kAlign * kAlign - preamble;
  }
  std::string out(reinterpret_cast<const char*>(kMagic), sizeof kMagic);
  out += static_cast<char>(preamble == 10 ? 1 : 2);
  out += '\0';
  for (size_t i = 0; i < preamble - 8; ++i)
    out += static_cast<char>((header_len >> (8 * i)) & 0xff);
  out += dict;
  out.append(header_len - dict.size() - 1, ' ');
  out += '\n';
  if (c.nbytes()) out.append(static_cast<const char*>(c.raw_data_ptr()), c.nbytes());
  return out;
}

Tensor decode_npy(const unsigned char* data, size_t size, const char* op, const std::string& name,
                  Device device) {
  auto bad = [&](const std::string& what) { npy_bad(op, name, what); };
  if (size >= 1 && data[0] == 0x80)
    bad("it is a Python pickle, not a .npy file; ember never loads pickles");
  if (size < 10) bad("shorter than the 10-byte .npy preamble (truncated?)");
  if (std::memcmp(data, kMagic, sizeof kMagic) != 0)
    bad("bad magic: it does not start with \\x93NUMPY");
  int major = data[6], minor = data[7];
  if (major < 1 || major > 3 || minor != 0)
    bad("unsupported format version " + std::to_string(major) + "." + std::to_string(minor) +
        " (ember reads 1.0, 2.0 and 3.0)");
  size_t preamble = major == 1 ? 10 : 12;
  if (size < preamble) bad("shorter than its preamble (truncated?)");
  size_t header_len = 0;
  for (size_t i = 0; i < preamble - 8; ++i) header_len |= size_t{data[8 + i]} << (8 * i);
  if (header_len > size - preamble)
    bad("the header length " + std::to_string(header_len) + " runs past the end of the file (" +
        std::to_string(size) + " bytes; truncated?)");
  std::string_view text(reinterpret_cast<const char*>(data + preamble), header_len);
  NpyHeader h = parse_npy_header(text, op, name);

  if (is_object_descr(h.descr))
    bad("object arrays (descr '" + h.descr +
        "') hold pickled Python objects, which ember never loads; save a numeric array");
  std::optional<Descr> descr = parse_descr(h.descr);
  if (!descr)
    bad("unsupported dtype '" + h.descr +
        "' (ember reads <f4 <f8 <i4 <i8 |u1 |b1 and their big-endian forms); convert it with "
        "astype() before saving");

  // Elements: zero when any dimension is; the other dimensions must still multiply sanely.
  int64_t nonzero_product = 1;
  bool has_zero = false;
  for (int64_t d : h.shape) {
    if (d == 0) {
      has_zero = true;
      continue;
    }
    if (nonzero_product > kMaxElements / d)
      bad("the shape " + shape_tuple(h.shape) + " is too large");
    nonzero_product *= d;
  }
  int64_t numel = has_zero ? 0 : nonzero_product;
  size_t width = element_size(descr->dtype);
  size_t available = size - preamble - header_len;
  if (static_cast<uint64_t>(numel) > available / width)
    bad("the shape " + shape_tuple(h.shape) + " needs " + std::to_string(numel * width) +
        " bytes of data but only " + std::to_string(available) + " follow (truncated?)");
  size_t nbytes = static_cast<size_t>(numel) * width;
  if (available != nbytes)
    bad(std::to_string(available - nbytes) + " bytes of extra data after the " +
        std::to_string(nbytes) + " its shape " + shape_tuple(h.shape) + " needs");

  Shape stored = h.shape;
  if (h.fortran_order) std::reverse(stored.begin(), stored.end());
  Tensor t = empty(stored, {.dtype = descr->dtype});
  if (nbytes) {
    auto* out = static_cast<unsigned char*>(t.raw_data_ptr());
    std::memcpy(out, data + preamble + header_len, nbytes);
    if (descr->big_endian) byteswap(out, numel, width);
    if (descr->dtype == kBool)
      for (size_t i = 0; i < nbytes; ++i) out[i] = out[i] != 0;
  }
  if (h.fortran_order) {
    Shape dims;
    for (int64_t i = static_cast<int64_t>(stored.size()) - 1; i >= 0; --i) dims.push_back(i);
    t = t.permute(dims).contiguous();
  }
  return t.to(device);
}

}  // namespace ember::io::detail
