// io/safetensors.cpp: the safetensors reader and writer, with the reader checking every field
// before it trusts it (the file may be truncated, corrupt or hostile).
#include "ember/io/safetensors.h"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "ember/creation.h"
#include "io/file_bytes.h"
#include "io/safetensors_format.h"

namespace ember::io {

namespace {

constexpr uint64_t kMaxHeader = 100u << 20;  // 100 MB, as the reference implementation
constexpr uint64_t kMaxElements = uint64_t{1} << 56;

const char* safetensors_dtype(DType t) {
  return dtype_info(t).safetensors;
}

std::optional<DType> parse_dtype(const std::string& s) {
  for (DType t : kAllDTypes)
    if (s == safetensors_dtype(t)) return t;
  return std::nullopt;
}

[[noreturn]] void bad(const std::string& path, const std::string& what) {
  EMBER_THROW(IO, "[load_safetensors] '", path, "' is not a valid safetensors file: ", what);
}

}  // namespace

void save_safetensors(const std::string& path, const NamedTensors& tensors,
                      const Metadata& metadata) {
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::set<std::string> names;
  std::vector<Tensor> host;
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    EMBER_CHECK(!name.empty() && name != "__metadata__", "[save_safetensors] invalid tensor name '",
                name, "'");
    EMBER_CHECK(names.insert(name).second, "[save_safetensors] duplicate tensor name '", name, "'");
    Tensor c = t.detach().cpu().contiguous();
    uint64_t bytes = c.nbytes();
    header[name] = {{"dtype", safetensors_dtype(c.dtype())},
                    {"shape", std::vector<int64_t>(c.sizes())},
                    {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
    host.push_back(c);
  }
  std::string json = header.dump();
  json.append((8 - json.size() % 8) % 8, ' ');  // pad so the data starts 8-byte aligned
  std::string out(8, '\0');
  uint64_t n = json.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  out += json;
  out.reserve(out.size() + offset);
  for (const Tensor& c : host)
    if (c.nbytes()) out.append(static_cast<const char*>(c.raw_data_ptr()), c.nbytes());
  write_file_atomic(path, out);
}

namespace detail {

SafetensorsFile decode_safetensors(const unsigned char* bytes, size_t size, const std::string& path,
                                   Device device, const FileBytes* source) {
  uint64_t file_size = size;
  if (file_size < 8) bad(path, "shorter than the 8-byte header length");
  uint64_t header_len = 0;
  for (int i = 0; i < 8; ++i) header_len |= static_cast<uint64_t>(bytes[i]) << (8 * i);
  if (header_len > kMaxHeader)
    bad(path, "header length " + std::to_string(header_len) + " is over 100 MB");
  if (header_len > file_size - 8) bad(path, "header length runs past the end of the file");
  std::string_view json(reinterpret_cast<const char*>(bytes + 8), header_len);

  // Parse, refusing duplicate names at the top level.
  std::set<std::string> seen;
  std::string duplicate;
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(
        json, [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
          if (depth == 1 && event == nlohmann::json::parse_event_t::key &&
              !seen.insert(parsed.get<std::string>()).second)
            duplicate = parsed.get<std::string>();
          return true;
        });
  } catch (const nlohmann::json::exception& e) {
    bad(path, std::string("invalid JSON or UTF-8 in the header (") + e.what() + ")");
  }
  if (!duplicate.empty()) bad(path, "duplicate tensor name '" + duplicate + "'");
  if (!header.is_object()) bad(path, "the header is not a JSON object");

  SafetensorsFile result;
  struct Entry {
    std::string name;
    DType dtype;
    Shape shape;
    uint64_t begin, end;
  };
  std::vector<Entry> entries;
  uint64_t data_size = file_size - 8 - header_len;
  for (auto& [name, value] : header.items()) {
    if (name == "__metadata__") {
      if (!value.is_object()) bad(path, "__metadata__ is not an object");
      for (auto& [k, v] : value.items()) {
        if (!v.is_string()) bad(path, "metadata value for '" + k + "' is not a string");
        result.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    if (!value.is_object() || !value.contains("dtype") || !value.contains("shape") ||
        !value.contains("data_offsets"))
      bad(path, "tensor '" + name + "' lacks dtype, shape or data_offsets");
    const auto& dt = value["dtype"];
    auto dtype = dt.is_string() ? parse_dtype(dt.get<std::string>()) : std::nullopt;
    if (!dtype) bad(path, "tensor '" + name + "' has an unsupported dtype " + dt.dump());
    const auto& shape_json = value["shape"];
    if (!shape_json.is_array()) bad(path, "tensor '" + name + "' has a shape that is not a list");
    Shape shape;
    // The non-zero dimensions must multiply sanely even when a zero one makes the tensor empty.
    uint64_t numel = 1, nonzero = 1;
    for (const auto& d : shape_json) {
      if (!d.is_number_unsigned())
        bad(path, "tensor '" + name + "' has a negative or non-integer dimension");
      uint64_t v = d.get<uint64_t>();
      if (v != 0 && nonzero > kMaxElements / v)
        bad(path, "tensor '" + name + "' has an implausibly large shape");
      if (v != 0) nonzero *= v;
      numel *= v;
      shape.push_back(static_cast<int64_t>(v));
    }
    const auto& off = value["data_offsets"];
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() ||
        !off[1].is_number_unsigned())
      bad(path, "tensor '" + name + "' has malformed data_offsets");
    uint64_t b = off[0].get<uint64_t>(), e = off[1].get<uint64_t>();
    if (b > e || e > data_size)
      bad(path, "tensor '" + name + "' has data_offsets past the end of the file");
    if (e - b != numel * element_size(*dtype))
      bad(path, "tensor '" + name + "' has " + std::to_string(e - b) +
                    " bytes but its dtype and shape need " +
                    std::to_string(numel * element_size(*dtype)));
    entries.push_back({name, *dtype, shape, b, e});
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t expect = 0;
  for (const Entry& e : entries) {
    if (e.begin < expect) bad(path, "tensor '" + e.name + "' overlaps the one before it");
    if (e.begin > expect) bad(path, "there is a gap before tensor '" + e.name + "'");
    expect = e.end;
  }
  if (expect != data_size)
    bad(path,
        "the data section has " + std::to_string(data_size - expect) + " bytes no tensor uses");
  const unsigned char* data = bytes + 8 + header_len;
  for (const Entry& e : entries) {
    Tensor t = from_blob_copy(data + e.begin, e.dtype, e.shape);
    if (e.dtype == kBool) {  // bytes other than 0 and 1 are not valid bools: read them as true
      auto* b = static_cast<unsigned char*>(t.raw_data_ptr());
      for (int64_t i = 0; i < t.numel(); ++i) b[i] = b[i] != 0;
    }
    result.tensors.emplace_back(e.name, t.to(device));
    if (source) source->release(data + e.begin, e.end - e.begin);
  }
  return result;
}

}  // namespace detail

SafetensorsFile load_safetensors(const std::string& path, Device device) {
  detail::FileBytes bytes(path, "load_safetensors");
  return detail::decode_safetensors(bytes.data(), bytes.size(), path, device, &bytes);
}

}  // namespace ember::io
