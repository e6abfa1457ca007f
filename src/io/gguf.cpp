// io/gguf.cpp: the GGUF reader -- header, typed metadata, tensor infos and tensor data, every
// count, length and offset checked against the bytes present before anything is allocated (the
// file may be truncated, corrupt or hostile).
//
// Layout (all little-endian): "GGUF", uint32 version, uint64 tensor count, uint64 metadata count;
// metadata pairs (string key, uint32 type, value; an array is uint32 element type, uint64 count,
// the elements; a string is uint64 length and its bytes); tensor infos (string name, uint32
// n_dims, uint64 ne[n_dims], uint32 ggml type, uint64 offset); padding to the alignment; the data,
// each tensor at data start + its offset, a multiple of the alignment.
#include "ember/io/gguf.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "ember/creation.h"
#include "ember/error.h"
#include "io/gguf_format.h"

namespace ember::io {

namespace {

constexpr uint64_t kMaxElements = uint64_t{1} << 56;
constexpr uint64_t kDefaultAlignment = 32;
constexpr int kMaxDims = 4;         // GGML_MAX_DIMS
constexpr int kMaxArrayDepth = 64;  // arrays of arrays of ...

const char* const kTypeNames[] = {"uint8",  "int8",    "uint16", "int16",  "uint32",
                                  "int32",  "float32", "bool",   "string", "array",
                                  "uint64", "int64",   "float64"};

[[noreturn]] void bad(const std::string& path, const std::string& what) {
  EMBER_THROW(IO, "[load_gguf] '", path, "' is not a valid GGUF file: ", what);
}

uint64_t fixed_size(GgufType t) {
  switch (t) {
    case GgufType::UInt8:
    case GgufType::Int8:
    case GgufType::Bool:
      return 1;
    case GgufType::UInt16:
    case GgufType::Int16:
      return 2;
    case GgufType::UInt32:
    case GgufType::Int32:
    case GgufType::Float32:
      return 4;
    case GgufType::UInt64:
    case GgufType::Int64:
    case GgufType::Float64:
      return 8;
    case GgufType::String:
      return 0;
    case GgufType::Array:
      return 0;
  }
  return 0;
}

// The fewest bytes one value of the type takes (so a count can be checked against what is left).
uint64_t min_size(GgufType t) {
  if (t == GgufType::String) return 8;
  if (t == GgufType::Array) return 12;
  return fixed_size(t);
}

class Reader {
 public:
  Reader(const unsigned char* p, size_t n, const std::string& path) : p_(p), n_(n), path_(path) {}

  size_t pos() const { return pos_; }
  uint64_t left() const { return n_ - pos_; }

  void need(uint64_t bytes, const char* what) const {
    if (bytes > left())
      bad(path_, std::string("truncated: ") + what + " at byte " + std::to_string(pos_) +
                     " needs " + std::to_string(bytes) + " bytes, the file has " +
                     std::to_string(left()) + " left");
  }

  uint64_t uint(int bytes, const char* what) {
    need(static_cast<uint64_t>(bytes), what);
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(p_[pos_ + i]) << (8 * i);
    pos_ += static_cast<size_t>(bytes);
    return v;
  }
  uint32_t u32(const char* what) { return static_cast<uint32_t>(uint(4, what)); }
  uint64_t u64(const char* what) { return uint(8, what); }

  std::string str(const char* what) {
    uint64_t len = u64(what);
    if (len > left())
      bad(path_, std::string(what) + " at byte " + std::to_string(pos_ - 8) + " claims " +
                     std::to_string(len) + " bytes, the file has " + std::to_string(left()) +
                     " left");
    std::string s(reinterpret_cast<const char*>(p_ + pos_), static_cast<size_t>(len));
    pos_ += static_cast<size_t>(len);
    return s;
  }

  GgufType type(const char* what) {
    size_t at = pos_;
    uint32_t t = u32(what);
    if (t > static_cast<uint32_t>(GgufType::Float64))
      bad(path_, std::string(what) + " at byte " + std::to_string(at) + " is " + std::to_string(t) +
                     ", not a GGUF value type (0 to 12)");
    return static_cast<GgufType>(t);
  }

  GgufValue value(GgufType t, const std::string& key, int depth) {
    switch (t) {
      case GgufType::UInt8:
        return static_cast<uint8_t>(uint(1, "a uint8"));
      case GgufType::Int8:
        return static_cast<int8_t>(uint(1, "an int8"));
      case GgufType::UInt16:
        return static_cast<uint16_t>(uint(2, "a uint16"));
      case GgufType::Int16:
        return static_cast<int16_t>(uint(2, "an int16"));
      case GgufType::UInt32:
        return static_cast<uint32_t>(uint(4, "a uint32"));
      case GgufType::Int32:
        return static_cast<int32_t>(uint(4, "an int32"));
      case GgufType::UInt64:
        return uint(8, "a uint64");
      case GgufType::Int64:
        return static_cast<int64_t>(uint(8, "an int64"));
      case GgufType::Float32: {
        uint32_t bits = u32("a float32");
        float f;
        std::memcpy(&f, &bits, 4);
        return f;
      }
      case GgufType::Float64: {
        uint64_t bits = u64("a float64");
        double f;
        std::memcpy(&f, &bits, 8);
        return f;
      }
      case GgufType::Bool: {
        size_t at = pos_;
        uint64_t b = uint(1, "a bool");
        if (b > 1)
          bad(path_, "metadata '" + key + "' has a bool byte " + std::to_string(b) + " at byte " +
                         std::to_string(at) + " (a bool is 0 or 1)");
        return b == 1;
      }
      case GgufType::String:
        return str("a string's length");
      case GgufType::Array: {
        if (depth >= kMaxArrayDepth)
          bad(path_, "metadata '" + key + "' nests arrays over " + std::to_string(kMaxArrayDepth) +
                         " deep");
        GgufValue::Array a;
        a.type = type("an array's element type");
        size_t at = pos_;
        uint64_t count = u64("an array's length");
        if (count > left() / min_size(a.type))
          bad(path_, "metadata '" + key + "' is an array claiming " + std::to_string(count) +
                         " elements of " + gguf_type_name(a.type) + " at byte " +
                         std::to_string(at) + ", more than the " + std::to_string(left()) +
                         " bytes left can hold");
        a.items.reserve(static_cast<size_t>(count));
        for (uint64_t i = 0; i < count; ++i) a.items.push_back(value(a.type, key, depth + 1));
        return a;
      }
    }
    bad(path_, "unreachable value type");
  }

 private:
  const unsigned char* p_;
  size_t n_;
  size_t pos_ = 0;
  const std::string& path_;
};

// The types ember reads and their blocks (elements, bytes).
const GgmlBlock* read_type_block(uint32_t type) {
  static const std::pair<GgmlType, GgmlBlock> kTypes[] = {
      {GgmlType::F32, {1, 4}},      {GgmlType::F16, {1, 2}},      {GgmlType::BF16, {1, 2}},
      {GgmlType::Q8_0, {32, 34}},   {GgmlType::Q4_0, {32, 18}},   {GgmlType::Q4_1, {32, 20}},
      {GgmlType::Q4_K, {256, 144}}, {GgmlType::Q5_K, {256, 176}}, {GgmlType::Q6_K, {256, 210}}};
  for (const auto& [t, block] : kTypes)
    if (static_cast<uint32_t>(t) == type) return &block;
  return nullptr;
}

void check_dtype(DType dtype) {
  EMBER_CHECK_KIND(DType, dtype == kFloat32 || dtype == kFloat16 || dtype == kBFloat16,
                   "[load_gguf] quantized tensors dequantize to float32, float16 or bfloat16, not ",
                   dtype_name(dtype), "; pass one of those as GgufOptions::dtype");
}

// Dequantizes numel elements (whole blocks) of `type` at `src` into a float32 CPU tensor.
Tensor dequantize_to_float(GgmlType type, const unsigned char* src, const Shape& shape) {
  Tensor out = empty(shape, {.dtype = kFloat32, .device = kCPU});
  const int64_t blocks = out.numel() / ggml_block(type).elements;
  detail::gguf_dequantize_blocks(type, src, blocks, out.data_ptr<float>());
  return out;
}

}  // namespace

const char* gguf_type_name(GgufType type) {
  auto i = static_cast<uint32_t>(type);
  return i <= 12 ? kTypeNames[i] : "unknown";
}

bool GgufValue::is_integer() const {
  switch (type()) {
    case GgufType::UInt8:
    case GgufType::Int8:
    case GgufType::UInt16:
    case GgufType::Int16:
    case GgufType::UInt32:
    case GgufType::Int32:
    case GgufType::UInt64:
    case GgufType::Int64:
      return true;
    default:
      return false;
  }
}

void GgufValue::type_error(size_t wanted) const {
  EMBER_THROW(Value, "[GgufValue] the value is a ", gguf_type_name(type()), ", not a",
              wanted < 13 ? (std::string(" ") + kTypeNames[wanted]) : std::string("nother type"),
              "; read it with the accessor of its type");
}

int64_t GgufValue::to_int() const {
  if (type() == GgufType::UInt64) {
    uint64_t v = std::get<uint64_t>(value_);
    EMBER_CHECK(v <= static_cast<uint64_t>(INT64_MAX), "[GgufValue] the uint64 ", v,
                " does not fit int64; read it with to_uint()");
    return static_cast<int64_t>(v);
  }
  return std::visit(
      [&](const auto& v) -> int64_t {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
          return static_cast<int64_t>(v);
        else
          EMBER_THROW(Value, "[GgufValue] the value is a ", gguf_type_name(type()),
                      ", not an integer");
      },
      value_);
}

uint64_t GgufValue::to_uint() const {
  if (type() == GgufType::UInt64) return std::get<uint64_t>(value_);
  int64_t v = to_int();
  EMBER_CHECK(v >= 0, "[GgufValue] the value ", v, " is negative; read it with to_int()");
  return static_cast<uint64_t>(v);
}

double GgufValue::to_double() const {
  if (type() == GgufType::Float32) return std::get<float>(value_);
  if (type() == GgufType::Float64) return std::get<double>(value_);
  if (type() == GgufType::UInt64) return static_cast<double>(std::get<uint64_t>(value_));
  if (is_integer()) return static_cast<double>(to_int());
  EMBER_THROW(Value, "[GgufValue] the value is a ", gguf_type_name(type()), ", not a number");
}

bool GgufValue::to_bool() const {
  return get<bool>();
}
const std::string& GgufValue::to_string() const {
  return get<std::string>();
}
const GgufValue::Array& GgufValue::to_array() const {
  return get<Array>();
}

const char* ggml_type_name(uint32_t type) {
  static const char* const names[] = {
      "F32",   "F16",        "Q4_0",       "Q4_1",       "Q4_2",     "Q4_3",     "Q5_0",
      "Q5_1",  "Q8_0",       "Q8_1",       "Q2_K",       "Q3_K",     "Q4_K",     "Q5_K",
      "Q6_K",  "Q8_K",       "IQ2_XXS",    "IQ2_XS",     "IQ3_XXS",  "IQ1_S",    "IQ4_NL",
      "IQ3_S", "IQ2_S",      "IQ4_XS",     "I8",         "I16",      "I32",      "I64",
      "F64",   "IQ1_M",      "BF16",       "Q4_0_4_4",   "Q4_0_4_8", "Q4_0_8_8", "TQ1_0",
      "TQ2_0", "IQ4_NL_4_4", "IQ4_NL_4_8", "IQ4_NL_8_8", "MXFP4"};
  return type < std::size(names) ? names[type] : "unknown";
}

GgmlBlock ggml_block(GgmlType type) {
  const GgmlBlock* block = read_type_block(static_cast<uint32_t>(type));
  if (!block)
    EMBER_THROW(Value, "[ggml_block] ggml type ", static_cast<uint32_t>(type), " (",
                ggml_type_name(static_cast<uint32_t>(type)), ") is not one ember reads");
  return *block;
}

bool ggml_is_quantized(GgmlType type) {
  return type != GgmlType::F32 && type != GgmlType::F16 && type != GgmlType::BF16;
}

Tensor gguf_dequantize(const GgufTensor& tensor, DType dtype) {
  check_dtype(dtype);
  const GgmlBlock blk = ggml_block(tensor.type);
  EMBER_CHECK(!tensor.shape.empty() && tensor.shape.back() % blk.elements == 0,
              "[gguf_dequantize] '", tensor.name, "': a ",
              ggml_type_name(static_cast<uint32_t>(tensor.type)),
              " tensor's last dimension must be a multiple of ", blk.elements);
  int64_t numel = 1;
  for (int64_t d : tensor.shape) numel *= d;
  Tensor blocks = tensor.blocks.cpu().contiguous();
  EMBER_CHECK(blocks.dtype() == kUInt8 &&
                  static_cast<int64_t>(blocks.nbytes()) == numel / blk.elements * blk.bytes,
              "[gguf_dequantize] '", tensor.name, "': the blocks are ", blocks.nbytes(),
              " bytes of ", dtype_name(blocks.dtype()), ", its shape needs ",
              numel / blk.elements * blk.bytes, " uint8");
  Tensor out = dequantize_to_float(
      tensor.type, static_cast<const unsigned char*>(blocks.raw_data_ptr()), tensor.shape);
  if (dtype != kFloat32) out = out.to(dtype);
  return out.to(tensor.blocks.device());
}

std::optional<QuantizedTensor> gguf_quantized_tensor(const GgufTensor& tensor) {
  if (tensor.shape.size() != 2) return std::nullopt;
  switch (tensor.type) {
    case GgmlType::Q8_0:
      return QuantizedTensor(QuantType::Q8_0, tensor.blocks, tensor.shape[1]);
    case GgmlType::Q4_0:
      return QuantizedTensor(QuantType::Q4_0, tensor.blocks, tensor.shape[1]);
    case GgmlType::Q4_1:
      return QuantizedTensor(QuantType::Q4_1, tensor.blocks, tensor.shape[1]);
    default:
      return std::nullopt;
  }
}

const GgufValue* GgufFile::find(const std::string& key) const {
  auto it = metadata.find(key);
  return it == metadata.end() ? nullptr : &it->second;
}

const GgufValue& GgufFile::at(const std::string& key) const {
  const GgufValue* v = find(key);
  EMBER_CHECK(v, "[GgufFile] the file has no metadata '", key, "'");
  return *v;
}

namespace detail {

GgufFile decode_gguf(const unsigned char* bytes, size_t size, const std::string& path,
                     Device device, const GgufOptions& options, const FileBytes* source) {
  check_dtype(options.dtype);
  if (size < 4 || std::memcmp(bytes, "GGUF", 4) != 0)
    bad(path, "it does not start with the magic bytes \"GGUF\"");
  Reader r(bytes, size, path);
  r.uint(4, "the magic");
  GgufFile file;
  const uint32_t version = r.u32("the version");
  const uint32_t swapped = __builtin_bswap32(version);
  if (version != 1 && version != 2 && version != 3 && swapped >= 1 && swapped <= 3)
    bad(path, "it is a big-endian GGUF file (version " + std::to_string(swapped) +
                  "); ember reads little-endian ones -- convert it on a little-endian machine");
  if (version == 1)
    bad(path,
        "it is GGUF version 1, which ember does not read; convert it again with a "
        "current llama.cpp to get version 3");
  if (version != 2 && version != 3)
    bad(path, "unknown GGUF version " + std::to_string(version) + " (ember reads 2 and 3)");
  file.version = version;
  const uint64_t n_tensors = r.u64("the tensor count");
  const uint64_t n_kv = r.u64("the metadata count");
  // a pair: key length, a key byte, type, the smallest value; a tensor info: name length,
  // n_dims, one dimension, type, offset
  if (n_kv > r.left() / 14)
    bad(path, "it claims " + std::to_string(n_kv) + " metadata pairs, more than the " +
                  std::to_string(r.left()) + " bytes left can hold");
  if (n_tensors > r.left() / 32)
    bad(path, "it claims " + std::to_string(n_tensors) + " tensors, more than the " +
                  std::to_string(r.left()) + " bytes left can hold");

  for (uint64_t i = 0; i < n_kv; ++i) {
    std::string key = r.str("a metadata key's length");
    if (key.empty()) bad(path, "metadata pair " + std::to_string(i) + " has an empty key");
    GgufType t = r.type(("the type of metadata '" + key + "'").c_str());
    GgufValue v = r.value(t, key, 0);
    if (!file.metadata.emplace(key, std::move(v)).second)
      bad(path, "metadata '" + key + "' appears twice");
  }
  file.alignment = kDefaultAlignment;
  if (const GgufValue* a = file.find("general.alignment")) {
    if (!a->is_integer() || a->to_int() <= 0)
      bad(path, std::string("general.alignment is a ") + gguf_type_name(a->type()) +
                    " that is not a positive integer");
    const uint64_t al = a->to_uint();
    if ((al & (al - 1)) != 0 || al > (uint64_t{1} << 30))
      bad(path, "general.alignment " + std::to_string(al) + " is not a power of two up to 2^30");
    file.alignment = al;
  }

  std::set<std::string> names;
  for (uint64_t i = 0; i < n_tensors; ++i) {
    GgufTensorInfo info;
    info.name = r.str("a tensor name's length");
    const std::string what = "tensor '" + info.name + "'";
    if (info.name.empty()) bad(path, "tensor " + std::to_string(i) + " has an empty name");
    if (!names.insert(info.name).second) bad(path, what + " appears twice");
    const uint32_t n_dims = r.u32("a tensor's n_dims");
    if (n_dims < 1 || n_dims > kMaxDims)
      bad(path, what + " has " + std::to_string(n_dims) + " dimensions (GGUF allows 1 to " +
                    std::to_string(kMaxDims) + ")");
    std::vector<uint64_t> ne(n_dims);
    uint64_t numel = 1, nonzero = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      ne[d] = r.u64("a tensor dimension");
      if (ne[d] != 0 && nonzero > kMaxElements / ne[d])
        bad(path, what + " has an implausibly large shape");
      if (ne[d] != 0) nonzero *= ne[d];
      numel *= ne[d];
    }
    const uint32_t type = r.u32("a tensor's type");
    if (!read_type_block(type))
      bad(path, what + " has ggml type " + std::to_string(type) + " (" + ggml_type_name(type) +
                    "), which ember does not read (it reads F32, F16, BF16, Q8_0, Q4_0, Q4_1, "
                    "Q4_K, Q5_K and Q6_K; requantize the model to one of those)");
    info.type = static_cast<GgmlType>(type);
    const GgmlBlock blk = ggml_block(info.type);
    if (ne[0] % static_cast<uint64_t>(blk.elements) != 0)
      bad(path, what + " has rows of " + std::to_string(ne[0]) + " elements, not a multiple of " +
                    ggml_type_name(type) + "'s block of " + std::to_string(blk.elements));
    info.nbytes = numel / static_cast<uint64_t>(blk.elements) * static_cast<uint64_t>(blk.bytes);
    info.offset = r.u64("a tensor's offset");
    for (uint32_t d = n_dims; d-- > 0;) info.shape.push_back(static_cast<int64_t>(ne[d]));
    file.infos.push_back(std::move(info));
  }

  // The data starts at the next multiple of the alignment.
  const uint64_t info_end = r.pos();
  const uint64_t data_start = (info_end + file.alignment - 1) / file.alignment * file.alignment;
  const uint64_t data_size = data_start <= size ? size - data_start : 0;
  std::vector<const GgufTensorInfo*> by_offset;
  for (GgufTensorInfo& info : file.infos) {
    const std::string what = "tensor '" + info.name + "'";
    if (info.offset % file.alignment != 0)
      bad(path, what + " has data offset " + std::to_string(info.offset) +
                    ", not a multiple of the alignment " + std::to_string(file.alignment));
    if (info.offset > data_size || info.nbytes > data_size - info.offset)
      bad(path, what + " has its " + std::to_string(info.nbytes) + " bytes at data offset " +
                    std::to_string(info.offset) +
                    ", past the end of the file (the data section has " +
                    std::to_string(data_size) + " bytes)");
    info.offset += data_start;
    by_offset.push_back(&info);
  }
  std::sort(by_offset.begin(), by_offset.end(),
            [](const GgufTensorInfo* a, const GgufTensorInfo* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < by_offset.size(); ++i)
    if (by_offset[i]->offset < by_offset[i - 1]->offset + by_offset[i - 1]->nbytes)
      bad(path,
          "tensor '" + by_offset[i]->name + "' overlaps tensor '" + by_offset[i - 1]->name + "'");

  for (const GgufTensorInfo& info : file.infos) {
    const unsigned char* src = bytes + info.offset;
    Tensor t;
    switch (info.type) {
      case GgmlType::F32:
        t = from_blob_copy(src, kFloat32, info.shape);
        break;
      case GgmlType::F16:
        t = from_blob_copy(src, kFloat16, info.shape);
        break;
      case GgmlType::BF16:
        t = from_blob_copy(src, kBFloat16, info.shape);
        break;
      default:
        if (options.keep_quantized) {
          const int64_t row =
              info.shape.back() / ggml_block(info.type).elements * ggml_block(info.type).bytes;
          int64_t rows = 1;
          for (size_t d = 0; d + 1 < info.shape.size(); ++d) rows *= info.shape[d];
          file.quantized.push_back({info.name, info.type, info.shape,
                                    from_blob_copy(src, kUInt8, {rows, row}).to(device)});
        } else {
          t = dequantize_to_float(info.type, src, info.shape);
          if (options.dtype != kFloat32) t = t.to(options.dtype);
        }
    }
    if (t.defined()) file.tensors.emplace_back(info.name, t.to(device));
    if (source) source->release(src, info.nbytes);
  }
  return file;
}

}  // namespace detail

GgufFile load_gguf(const std::string& path, Device device, const GgufOptions& options) {
  detail::FileBytes bytes(path, "load_gguf");
  return detail::decode_gguf(bytes.data(), bytes.size(), path, device, options, &bytes);
}

}  // namespace ember::io
