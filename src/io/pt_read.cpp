// io/pt_read.cpp: load_pt -- the value tree of a torch.save file rebuilt from its pickle (tensors,
// Parameters, OrderedDicts, torch.Size), and the legacy container; the zip container is in
// pt_zip_read.cpp.
#include <cstring>
#include <fstream>
#include <limits>
#include <unordered_map>

#include "ember/error.h"
#include "ember/io/pt.h"
#include "io/file_bytes.h"
#include "io/pt_format.h"
#include "io/pt_storage_types.h"

namespace ember::io {

namespace detail {

namespace {

using Kind = PickleValue::Kind;

// The most dimensions a tensor of a checkpoint may have (PyTorch's own limit is 64).
constexpr size_t kMaxDims = 64;

class Rebuilder {
 public:
  Rebuilder(const PtStorageReader& read, const std::string& what, Device device, bool legacy)
      : read_(read), what_(what), device_(device), legacy_(legacy) {}

  PtValue value(const PickleRef& v) {
    // A pickle may hold one value in many places (memo): rebuild it once, so shared subtrees stay
    // shared and a file of repeated references cannot blow up.
    auto it = done_.find(v.get());
    if (it != done_.end()) return it->second;
    PtValue out = build(*v);
    done_.emplace(v.get(), out);
    return out;
  }

 private:
  [[noreturn]] void fail(const std::string& message) const {
    ember::detail::throw_error(ErrorKind::IO,
                               ember::detail::str_cat("[load_pt] ", what_, ": ", message));
  }

  PtValue build(const PickleValue& v) {
    switch (v.kind) {
      case Kind::None:
        return PtValue();
      case Kind::Bool:
        return PtValue(v.boolean);
      case Kind::Int:
        return PtValue(v.integer);
      case Kind::Float:
        return PtValue(v.floating);
      case Kind::Str:
        return PtValue(v.text);
      case Kind::Bytes:
        return PtValue::bytes(v.text);
      case Kind::List:
      case Kind::Tuple: {
        std::vector<PtValue> elements;
        elements.reserve(v.items.size());
        for (const auto& item : v.items) elements.push_back(value(item));
        return v.kind == Kind::List ? PtValue::list(std::move(elements))
                                    : PtValue::tuple(std::move(elements));
      }
      case Kind::Dict:
        return PtValue::dict(pairs(v, 0), false);
      case Kind::Global:
        fail("the global '" + v.text + "' stands as a value; only calls of it are understood");
      case Kind::PersistentId:
        fail("a storage reference stands outside a tensor");
      case Kind::Call:
        return call(v);
    }
    fail("unknown value");
  }

  std::vector<PtValue::Item> pairs(const PickleValue& v, size_t first) {
    std::vector<PtValue::Item> items;
    items.reserve((v.items.size() - first) / 2);
    for (size_t i = first; i + 1 < v.items.size(); i += 2)
      items.emplace_back(value(v.items[i]), value(v.items[i + 1]));
    return items;
  }

  static const std::vector<PickleRef>& args_of(const PickleValue& call) {
    return call.items[1]->items;
  }

  PtValue call(const PickleValue& v) {
    const std::string& callee = v.items.at(0)->text;
    const auto& args = args_of(v);
    const bool has_items = v.items.size() > 2;
    if (callee == "collections.OrderedDict") {
      // OrderedDict's own reduce: no arguments, the items set afterwards, and a state (the
      // _metadata of a state_dict) that PyTorch keeps as an attribute, which is dropped here.
      if (!args.empty()) fail("collections.OrderedDict called with arguments");
      return PtValue::dict(pairs(v, 2), true);
    }
    if (has_items) fail("items set on a '" + callee + "' object");
    if (v.state) fail("state set on a '" + callee + "' object");
    if (callee == "torch.Size") {
      if (args.size() != 1 || args[0]->kind != Kind::Tuple)
        fail("torch.Size of something not a tuple");
      for (const auto& d : args[0]->items)
        if (d->kind != Kind::Int) fail("torch.Size with an element that is not an int");
      return value(args[0]);
    }
    if (callee == "torch._utils._rebuild_tensor_v2") return PtValue(tensor(args));
    if (callee == "_codecs.encode") return PtValue::bytes(latin1(args));
    if (callee == "torch._utils._rebuild_parameter" ||
        callee == "torch._utils._rebuild_parameter_with_state") {
      const size_t want = callee.ends_with("with_state") ? 4 : 3;
      if (args.size() != want)
        fail(ember::detail::str_cat(callee, " with ", args.size(), " arguments, not ", want));
      PtValue data = value(args[0]);
      if (!data.is_tensor()) fail("an nn.Parameter of something that is not a tensor");
      Tensor t = data.to_tensor();
      if (flag(args[1], "requires_grad")) requires_grad(t);
      hooks(args[2]);
      return PtValue(t, true);
    }
    fail("'" + callee + "' is not something a checkpoint calls");
  }

  // _codecs.encode(text, 'latin1'): protocol 2's bytes -- each code point (< 256) one byte.
  std::string latin1(const std::vector<PickleRef>& args) const {
    if (args.size() != 2 || args[0]->kind != Kind::Str || args[1]->kind != Kind::Str ||
        (args[1]->text != "latin1" && args[1]->text != "latin-1"))
      fail("_codecs.encode other than of a str to latin1");
    std::string out;
    const std::string& s = args[0]->text;
    for (size_t i = 0; i < s.size(); ++i) {
      const auto c = static_cast<unsigned char>(s[i]);
      if (c < 0x80) {
        out += static_cast<char>(c);
      } else if ((c == 0xc2 || c == 0xc3) && i + 1 < s.size() &&
                 (static_cast<unsigned char>(s[i + 1]) & 0xc0) == 0x80) {
        out += static_cast<char>(((c & 0x03) << 6) | (static_cast<unsigned char>(s[++i]) & 0x3f));
      } else {
        fail("_codecs.encode of a character outside latin1");
      }
    }
    return out;
  }

  bool flag(const PickleRef& v, const char* name) const {
    if (v->kind != Kind::Bool) fail(std::string(name) + " is not a bool");
    return v->boolean;
  }

  void hooks(const PickleRef& v) const {
    // backward hooks: an empty OrderedDict (torch.save refuses to write others with weights_only)
    const bool empty_dict =
        (v->kind == Kind::Dict && v->items.empty()) ||
        (v->kind == Kind::Call && v->items[0]->text == "collections.OrderedDict" &&
         v->items.size() == 2);
    if (!empty_dict && v->kind != Kind::None) fail("a tensor with backward hooks");
  }

  void requires_grad(Tensor& t) const {
    if (!is_floating_point(t.dtype()))
      fail(ember::detail::str_cat("requires_grad on a ", dtype_name(t.dtype()), " tensor"));
    t.requires_grad_(true);
  }

  int64_t integer(const PickleRef& v, const char* name) const {
    if (v->kind != Kind::Int) fail(std::string(name) + " is not an int");
    return v->integer;
  }

  Shape int_tuple(const PickleRef& v, const char* name) const {
    if (v->kind != Kind::Tuple) fail(std::string(name) + " is not a tuple");
    if (v->items.size() > kMaxDims)
      fail(ember::detail::str_cat(name, " has ", v->items.size(), " dimensions (at most ", kMaxDims,
                                  ")"));
    Shape out;
    for (const auto& d : v->items) {
      const int64_t n = integer(d, name);
      if (n < 0) fail(ember::detail::str_cat(name, " has a negative entry (", n, ")"));
      out.push_back(n);
    }
    return out;
  }

  // _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks
  // [, metadata])
  Tensor tensor(const std::vector<PickleRef>& args) {
    if (args.size() != 6 && args.size() != 7)
      fail(ember::detail::str_cat("_rebuild_tensor_v2 with ", args.size(),
                                  " arguments, not 6 or 7"));
    auto [storage, dtype, base_offset] = storage_of(args[0]);
    const int64_t offset = integer(args[1], "a tensor's storage offset");
    if (offset < 0) fail(ember::detail::str_cat("a negative storage offset (", offset, ")"));
    Shape sizes = int_tuple(args[2], "a tensor's size");
    Shape strides = int_tuple(args[3], "a tensor's stride");
    if (sizes.size() != strides.size())
      fail(ember::detail::str_cat("a tensor of ", sizes.size(), " sizes and ", strides.size(),
                                  " strides"));
    const bool grad = flag(args[4], "requires_grad");
    hooks(args[5]);

    // The elements the view reaches must lie in the storage; sums are checked as they grow.
    const int64_t elem = static_cast<int64_t>(element_size(dtype));
    const int64_t capacity = static_cast<int64_t>(storage->nbytes()) / elem - base_offset;
    constexpr int64_t kLimit = std::numeric_limits<int64_t>::max() / 2;
    int64_t numel = 1, last = offset;
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (sizes[d] == 0)
        numel = 0;
      else if (numel != 0 && sizes[d] > kLimit / numel)
        fail("a tensor of absurd size");
      else
        numel *= sizes[d];
    }
    if (numel > 0) {
      for (size_t d = 0; d < sizes.size(); ++d) {
        if (strides[d] != 0 && sizes[d] - 1 > (kLimit - last) / strides[d])
          fail("a tensor whose strides reach past any storage");
        last += (sizes[d] - 1) * strides[d];
      }
      if (last >= capacity)
        fail(ember::detail::str_cat(
            "a view of size (", sizes_text(sizes), "), stride (", sizes_text(strides),
            ") at offset ", offset, " reaches element ", last, " of a storage of ",
            std::max<int64_t>(capacity, 0), " ", dtype_name(dtype), " elements"));
    } else if (offset > capacity) {
      fail(ember::detail::str_cat("storage offset ", offset, " past a storage of ", capacity,
                                  " elements"));
    }

    auto impl = std::make_shared<TensorImpl>();
    impl->storage = std::move(storage);
    impl->sizes = std::move(sizes);
    impl->strides = std::move(strides);
    impl->offset = base_offset + offset;
    impl->dtype = dtype;
    Tensor t(std::move(impl));
    if (grad) requires_grad(t);
    return t;
  }

  static std::string sizes_text(const Shape& s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    return out;
  }

  struct StorageView {
    std::shared_ptr<Storage> storage;
    DType dtype;
    int64_t offset;  // in elements: a legacy storage view's offset into its root
  };

  // ('storage', storage type, key, location, numel[, view metadata (legacy)])
  StorageView storage_of(const PickleRef& ref) {
    if (ref->kind != Kind::PersistentId) fail("a tensor whose storage is not a storage reference");
    const PickleRef& pid = ref->items.at(0);
    const size_t want = legacy_ ? 6 : 5;
    if (pid->kind != Kind::Tuple || pid->items.size() != want || pid->items[0]->kind != Kind::Str ||
        pid->items[0]->text != "storage")
      fail("a storage reference that is not ('storage', type, key, location, numel" +
           std::string(legacy_ ? ", view)" : ")"));
    const auto& f = pid->items;
    if (f[1]->kind != Kind::Global) fail("a storage type that is not a global");
    const PtStorageType* type = pt_storage_global(f[1]->text);
    if (!type) fail("'" + f[1]->text + "' is not a storage type");
    if (!type->supported)
      fail(ember::detail::str_cat("a ", type->torch_dtype, " tensor (", f[1]->text,
                                  "): ember has no ", type->torch_dtype,
                                  " dtype; convert it in Python before saving (for example "
                                  "tensor.to(torch.float32) or .to(torch.int32))"));
    if (f[2]->kind != Kind::Str) fail("a storage key that is not a str");
    if (f[3]->kind != Kind::Str) fail("a storage location that is not a str");
    const int64_t numel = integer(f[4], "a storage's element count");
    const auto elem = static_cast<int64_t>(type->bytes);
    if (numel < 0 || numel > std::numeric_limits<int64_t>::max() / 2 / elem)
      fail(ember::detail::str_cat("a storage of ", numel, " elements"));
    const std::string& key = f[2]->text;
    int64_t offset = 0;
    if (legacy_ && f[5]->kind != Kind::None) {
      // (view key, offset, size): a view of storage `key` (very old files)
      const auto& view = f[5];
      if (view->kind != Kind::Tuple || view->items.size() != 3)
        fail("legacy storage view metadata that is not (key, offset, size)");
      offset = integer(view->items[1], "a storage view's offset");
      const int64_t size = integer(view->items[2], "a storage view's size");
      if (offset < 0 || size < 0 || offset > numel || size > numel - offset)
        fail(ember::detail::str_cat("a storage view of ", size, " elements at ", offset,
                                    " in a storage of ", numel));
    }
    auto storage = storage_for(key);
    if (static_cast<int64_t>(storage->nbytes()) / elem < numel)
      fail(ember::detail::str_cat("storage '", key, "' holds ", storage->nbytes(),
                                  " bytes, less than its ", numel, " ", type->torch_dtype,
                                  " elements"));
    return {std::move(storage), type->dtype, offset};
  }

  std::shared_ptr<Storage> storage_for(const std::string& key) {
    auto it = storages_.find(key);
    if (it != storages_.end()) return it->second;
    auto host = read_(key);
    if (device_.type() != kCPU) {
      // The whole storage moves once; every tensor viewing it views the moved copy.
      auto bytes = std::make_shared<TensorImpl>();
      bytes->storage = host;
      bytes->sizes = Shape{static_cast<int64_t>(host->nbytes())};
      bytes->strides = Shape{1};
      bytes->dtype = kUInt8;
      host = Tensor(std::move(bytes)).to(device_).storage();
    }
    storages_.emplace(key, host);
    return host;
  }

  const PtStorageReader& read_;
  const std::string& what_;
  Device device_;
  bool legacy_;
  std::unordered_map<const PickleValue*, PtValue> done_;
  std::unordered_map<std::string, std::shared_ptr<Storage>> storages_;
};

// The legacy format's first pickle: PROTO, perhaps a FRAME, the 10-byte magic number, STOP.
size_t legacy_magic_length(const unsigned char* data, size_t size) {
  static constexpr unsigned char kMagic[] = {0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9,
                                             0x20, 0x6a, 0xa8, 0x50, 0x19, '.'};
  size_t pos = 0;
  if (size < 2 || data[0] != 0x80) return 0;
  pos = 2;
  if (pos < size && data[pos] == 0x95) pos += 9;
  if (size < pos + sizeof kMagic || std::memcmp(data + pos, kMagic, sizeof kMagic) != 0) return 0;
  return pos + sizeof kMagic;
}

bool is_zip(const unsigned char* data, size_t size) {
  return size >= 4 && data[0] == 'P' && data[1] == 'K' && data[2] == 3 && data[3] == 4;
}

}  // namespace

PtValue pt_value_from_pickle(const PickleRef& root, const PtStorageReader& read_storage,
                             const std::string& what, Device device, bool legacy) {
  return Rebuilder(read_storage, what, device, legacy).value(root);
}

PtValue load_pt_legacy(const unsigned char* data, size_t size, const std::string& path,
                       Device device, const FileBytes* source) {
  const auto fail = [&](const std::string& message) {
    ember::detail::throw_error(ErrorKind::IO,
                               ember::detail::str_cat("[load_pt] '", path, "': ", message));
  };
  size_t pos = legacy_magic_length(data, size);
  if (pos == 0) fail("not a PyTorch checkpoint (no zip archive, no legacy magic number)");
  const auto next = [&](const char* part) {
    size_t used = 0;
    auto v = read_pickle(std::string_view(reinterpret_cast<const char*>(data) + pos, size - pos),
                         "'" + path + "' (" + part + ")", &used);
    pos += used;
    return v;
  };
  auto version = next("protocol version");
  if (version->kind != Kind::Int || version->integer != 1001)
    fail("legacy protocol version is not 1001");
  auto info = next("system info");
  if (info->kind == Kind::Dict) {
    for (size_t i = 0; i + 1 < info->items.size(); i += 2)
      if (info->items[i]->text == "little_endian" && info->items[i + 1]->kind == Kind::Bool &&
          !info->items[i + 1]->boolean)
        fail("written on a big-endian machine; re-save it on a little-endian one");
  }
  auto root = next("object");
  auto keys = next("storage keys");
  if (keys->kind != Kind::List) fail("the storage key list is not a list");

  // Each storage: its element count (int64) and its bytes, in the key list's order. Where each
  // lies is found by walking the records; the element sizes come from the object's references,
  // so the walk happens when the first storage is wanted.
  struct Record {
    size_t at = 0;
    size_t nbytes = 0;
  };
  std::unordered_map<std::string, Record> records;
  std::unordered_map<std::string, size_t> element_sizes;
  std::unordered_map<const PickleValue*, bool> seen;
  // A pickle's tree shares subtrees (memo): each node is visited once.
  const auto collect_sizes = [&](const auto& self, const PickleRef& v) -> void {
    if (!seen.emplace(v.get(), true).second) return;
    if (v->kind == Kind::PersistentId) {
      const auto& pid = v->items.at(0);
      if (pid->kind == Kind::Tuple && pid->items.size() == 6 && pid->items[2]->kind == Kind::Str &&
          pid->items[1]->kind == Kind::Global) {
        if (const PtStorageType* t = pt_storage_global(pid->items[1]->text))
          element_sizes.emplace(pid->items[2]->text, t->bytes);
      }
      return;
    }
    for (const auto& c : v->items) self(self, c);
    if (v->state) self(self, v->state);
  };
  bool walked = false;
  const auto walk = [&] {
    walked = true;
    collect_sizes(collect_sizes, root);
    size_t at = pos;
    for (const auto& k : keys->items) {
      if (k->kind != Kind::Str) fail("a storage key that is not a str");
      auto es = element_sizes.find(k->text);
      if (es == element_sizes.end())
        fail("storage '" + k->text + "' is listed but no tensor says what it holds");
      if (size - at < 8) fail("truncated before storage '" + k->text + "'");
      uint64_t count = 0;
      for (int b = 7; b >= 0; --b) count = (count << 8) | data[at + static_cast<size_t>(b)];
      at += 8;
      if (count > (size - at) / es->second)
        fail(ember::detail::str_cat("storage '", k->text, "' claims ", count,
                                    " elements; the file has ", size - at, " bytes left"));
      records[k->text] = {at, static_cast<size_t>(count) * es->second};
      at += static_cast<size_t>(count) * es->second;
    }
  };
  PtStorageReader read = [&](const std::string& key) {
    if (!walked) walk();
    auto it = records.find(key);
    if (it == records.end()) fail("storage '" + key + "' is not in the file's storage list");
    auto storage = std::make_shared<Storage>(it->second.nbytes, Device(kCPU));
    if (it->second.nbytes) std::memcpy(storage->data(), data + it->second.at, it->second.nbytes);
    if (source) source->release(data + it->second.at, it->second.nbytes);
    return storage;
  };
  return pt_value_from_pickle(root, read, "'" + path + "'", device, true);
}

PtValue decode_pt(const unsigned char* data, size_t size, const std::string& path, Device device,
                  const FileBytes* source) {
  if (is_zip(data, size)) return load_pt_zip(data, size, path, device);
  if (size >= 262 && std::memcmp(data + 257, "ustar", 5) == 0)
    EMBER_THROW(IO, "[load_pt] '", path,
                "': a tar checkpoint of PyTorch before 0.4 is not "
                "supported; load and re-save it with a current torch.save");
  return load_pt_legacy(data, size, path, device, source);
}

}  // namespace detail

PtValue load_pt(const std::string& path, Device device) {
  {
    // A zip archive is read member by member from the file; the legacy format is mapped.
    std::ifstream in(path, std::ios::binary);
    char head[4] = {};
    if (in.read(head, 4) && detail::is_zip(reinterpret_cast<const unsigned char*>(head), 4))
      return detail::load_pt_zip_file(path, device);
  }
  detail::FileBytes bytes(path, "load_pt");
  return detail::decode_pt(bytes.data(), bytes.size(), path, device, &bytes);
}

}  // namespace ember::io
