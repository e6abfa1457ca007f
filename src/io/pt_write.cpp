// io/pt_write.cpp: the pickle half of save_pt -- a PtValue tree as torch.save pickles it
// (protocol 2, Python's memo), tensors as torch._utils._rebuild_tensor_v2 of a persistent-id
// storage, and the list of storages the zip half writes.
#include "io/pt_write.h"

#include <map>
#include <unordered_map>

#include "ember/error.h"
#include "io/pickle.h"
#include "io/pickle_write.h"
#include "io/pt_storage_types.h"

namespace ember::io::detail {

namespace {

using Kind = PtValue::Kind;

// Python's pickler sends at most this many items per APPENDS / SETITEMS.
constexpr size_t kBatch = 1000;
// ember's reader accepts kPickleMaxDepth levels; a tensor takes up to 7 of them (parameter,
// rebuild call, its arguments, the persistent id and its tuple).
constexpr int kMaxNesting = kPickleMaxDepth - 8;

bool valid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<uint8_t>(s[i]);
    size_t n;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xe0) == 0xc0) {
      n = 1;
      cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      n = 2;
      cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      n = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + n >= s.size()) return false;
    for (size_t k = 1; k <= n; ++k) {
      const auto d = static_cast<uint8_t>(s[i + k]);
      if ((d & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3f);
    }
    // overlong forms and values past U+10FFFF (surrogates pass, as Python's "surrogatepass")
    if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
        cp > 0x10ffff)
      return false;
    i += n + 1;
  }
  return true;
}

// Whether Python can hash the value (a dict key): not a list or dict, nor a tuple holding one.
bool hashable(const PtValue& v) {
  if (v.kind() == Kind::List || v.kind() == Kind::Dict) return false;
  if (v.kind() == Kind::Tuple)
    for (const auto& e : v.elements())
      if (!hashable(e)) return false;
  return true;
}

class PtPickler {
 public:
  explicit PtPickler(const std::string& path) : path_(path) {}

  PtPickle run(const PtValue& value) {
    save(value, 0);
    PtPickle out;
    out.data = w_.finish();
    out.storages = std::move(storages_);
    return out;
  }

 private:
  template <typename... Args>
  [[noreturn]] void fail(const Args&... what) const {
    EMBER_THROW(Value, "[save_pt] '", path_, "': ", where(), " ", what...);
  }
  // "the root value", or the keys and indices to the value: value['model'][2]
  std::string where() const {
    if (where_.empty()) return "the root value";
    std::string out = "value";
    for (const auto& w : where_) out += w;
    return out;
  }
  static std::string key_text(const PtValue& key) {
    switch (key.kind()) {
      case Kind::Str:
        return ember::detail::str_cat("['", key.to_str(), "']");
      case Kind::Int:
        return ember::detail::str_cat("[", key.to_int(), "]");
      default:
        return ember::detail::str_cat("[<", key.kind_name(), " key>]");
    }
  }

  // A memoized object seen before: BINGET it and return true.
  bool seen(const void* identity) {
    auto it = memo_.find(identity);
    if (it == memo_.end()) return false;
    w_.get(it->second);
    return true;
  }
  void remember(const void* identity) { memo_[identity] = w_.put(); }

  void global(const std::string& module, const std::string& name) {
    const std::string full = module + "." + name;
    auto it = globals_.find(full);
    if (it != globals_.end()) return w_.get(it->second);
    w_.global(module, name);
    globals_[full] = w_.put();
  }
  // A str that Python keeps as one object ('storage', 'cpu'): pickled once, then fetched.
  void constant_str(const std::string& text) {
    auto it = constants_.find(text);
    if (it != constants_.end()) return w_.get(it->second);
    w_.str(text);
    constants_[text] = w_.put();
  }
  // EMPTY_TUPLE, TUPLE1..3 or MARK ... TUPLE of the n values `emit` writes, memoized as Python
  // does (all but the empty tuple); returns the memo index, or -1 for the empty tuple.
  template <typename Emit>
  int64_t tuple(size_t n, Emit emit) {
    if (n > 3) w_.mark();
    emit();
    if (n > 3)
      w_.tuple_from_mark();
    else
      w_.small_tuple(n);
    return n > 0 ? int64_t{w_.put()} : -1;
  }
  void int_tuple(const Shape& values) {
    tuple(values.size(), [&] {
      for (int64_t v : values) w_.integer(v);
    });
  }
  void empty_ordered_dict() {
    global("collections", "OrderedDict");
    w_.small_tuple(0);
    w_.reduce();
    w_.put();
  }

  void save(const PtValue& v, int depth) {
    if (depth > kMaxNesting)
      fail("is nested more than ", kMaxNesting,
           " levels deep, more than ember's own reader accepts; flatten the tree");
    switch (v.kind()) {
      case Kind::None:
        return w_.none();
      case Kind::Bool:
        return w_.boolean(v.to_bool());
      case Kind::Int:
        return w_.integer(v.to_int());
      case Kind::Float:
        return w_.floating(v.to_double());
      case Kind::Str: {
        const std::string& s = v.to_str();
        if (seen(&s)) return;
        if (!valid_utf8(s))
          fail(
              "is a str that is not valid UTF-8, which Python cannot load; store binary data "
              "with PtValue::bytes");
        w_.str(s);
        return remember(&s);
      }
      case Kind::Bytes: {
        const std::string& s = v.to_str();
        if (seen(&s)) return;
        w_.bytes(s);
        return remember(&s);
      }
      case Kind::Tensor:
        return save_tensor(v);
      case Kind::List:
        return save_list(v, depth);
      case Kind::Tuple: {
        const auto& elements = v.elements();
        if (seen(&elements)) return;
        const int64_t index = tuple(elements.size(), [&] { save_elements(elements, depth); });
        if (index >= 0) memo_[&elements] = static_cast<uint32_t>(index);
        return;
      }
      case Kind::Dict:
        return save_dict(v, depth);
    }
  }

  void save_elements(const std::vector<PtValue>& elements, int depth, size_t begin = 0,
                     size_t end = SIZE_MAX) {
    end = std::min(end, elements.size());
    for (size_t i = begin; i < end; ++i) {
      where_.push_back(ember::detail::str_cat("[", i, "]"));
      save(elements[i], depth + 1);
      where_.pop_back();
    }
  }

  void save_list(const PtValue& v, int depth) {
    const auto& elements = v.elements();
    if (seen(&elements)) return;
    w_.empty_list();
    remember(&elements);
    for (size_t begin = 0; begin < elements.size(); begin += kBatch) {
      const size_t n = std::min(kBatch, elements.size() - begin);
      if (n > 1) w_.mark();
      save_elements(elements, depth, begin, begin + n);
      if (n > 1)
        w_.appends();
      else
        w_.append();
    }
  }

  void save_dict(const PtValue& v, int depth) {
    const auto& items = v.items();
    if (seen(&items)) return;
    std::map<std::string, size_t> str_keys;
    std::map<int64_t, size_t> int_keys;
    for (size_t i = 0; i < items.size(); ++i) {
      const PtValue& key = items[i].first;
      if (!hashable(key))
        fail("has a key that is a ", key.kind_name(),
             ", which Python cannot hash; use str, int, float, bool, None, bytes or a tuple of "
             "those");
      const bool repeated = key.kind() == Kind::Str   ? !str_keys.emplace(key.to_str(), i).second
                            : key.kind() == Kind::Int ? !int_keys.emplace(key.to_int(), i).second
                                                      : false;
      if (repeated)
        fail("has the key ", key_text(key),
             " twice; Python would keep only the last value, so give each entry its own key");
    }
    if (v.ordered()) {
      global("collections", "OrderedDict");
      w_.small_tuple(0);
      w_.reduce();
    } else {
      w_.empty_dict();
    }
    remember(&items);
    for (size_t begin = 0; begin < items.size(); begin += kBatch) {
      const size_t n = std::min(kBatch, items.size() - begin);
      if (n > 1) w_.mark();
      for (size_t i = begin; i < begin + n; ++i) {
        const auto& [key, value] = items[i];
        where_.push_back(key_text(key));
        save(key, depth + 1);
        save(value, depth + 1);
        where_.pop_back();
      }
      if (n > 1)
        w_.setitems();
      else
        w_.setitem();
    }
  }

  // The storage record of a tensor's storage, added on first use.
  PtStorageRecord& storage_of(const Tensor& t) {
    const Storage* identity = t.storage().get();
    auto it = storage_index_.find(identity);
    if (it == storage_index_.end()) {
      PtStorageRecord record;
      record.key = std::to_string(storages_.size());
      record.storage = t.storage();
      record.dtype = t.dtype();
      record.numel = static_cast<int64_t>(t.storage()->nbytes() / t.element_size());
      storage_index_.emplace(identity, storages_.size());
      storages_.push_back(std::move(record));
      return storages_.back();
    }
    PtStorageRecord& record = storages_[it->second];
    if (record.dtype != t.dtype())
      fail("is a ", dtype_name(t.dtype()), " tensor whose storage an earlier tensor uses as ",
           dtype_name(record.dtype),
           "; torch.save cannot write one storage as two dtypes, so save a copy "
           "(tensor.clone()) of one of them");
    return record;
  }

  // torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, OrderedDict())
  void rebuild_tensor(const Tensor& t, bool requires_grad) {
    PtStorageRecord& record = storage_of(t);
    const std::string key = record.key;
    const int64_t numel = record.numel;
    const char* storage_class = pt_storage_class(record.dtype);
    global("torch._utils", "_rebuild_tensor_v2");
    w_.mark();
    // the persistent id: ('storage', torch.<X>Storage, key, 'cpu', numel)
    w_.mark();
    constant_str("storage");
    global("torch", storage_class);
    auto it = key_memo_.find(key);
    if (it != key_memo_.end()) {
      w_.get(it->second);
    } else {
      w_.str(key);
      key_memo_[key] = w_.put();
    }
    constant_str("cpu");
    w_.integer(numel);
    w_.tuple_from_mark();
    w_.put();
    w_.persid();
    w_.integer(t.storage_offset());
    int_tuple(t.sizes());
    int_tuple(t.strides());
    w_.boolean(requires_grad);
    empty_ordered_dict();
    w_.tuple_from_mark();
    w_.put();
    w_.reduce();
  }

  void save_tensor(const PtValue& v) {
    const Tensor& t = v.to_tensor();
    const bool parameter = v.is_parameter();
    const void* identity = &t.impl();
    auto& memo = parameter ? parameters_ : tensors_;
    auto it = memo.find(identity);
    if (it != memo.end()) return w_.get(it->second);
    if (parameter) {
      // torch._utils._rebuild_parameter(data, requires_grad, OrderedDict())
      global("torch._utils", "_rebuild_parameter");
      rebuild_tensor(t, false);
      w_.put();
      w_.boolean(t.requires_grad());
      empty_ordered_dict();
      w_.small_tuple(3);
      w_.put();
      w_.reduce();
    } else {
      rebuild_tensor(t, t.requires_grad());
    }
    memo[identity] = w_.put();
  }

  const std::string& path_;
  PickleWriter w_;
  std::vector<std::string> where_;
  std::unordered_map<const void*, uint32_t> memo_;        // str, bytes, list, tuple, dict nodes
  std::unordered_map<const void*, uint32_t> tensors_;     // by TensorImpl
  std::unordered_map<const void*, uint32_t> parameters_;  // by TensorImpl
  std::unordered_map<std::string, uint32_t> globals_;
  std::unordered_map<std::string, uint32_t> constants_;
  std::unordered_map<std::string, uint32_t> key_memo_;
  std::unordered_map<const Storage*, size_t> storage_index_;
  std::vector<PtStorageRecord> storages_;
};

}  // namespace

PtPickle pickle_pt(const PtValue& value, const std::string& path) {
  return PtPickler(path).run(value);
}

const char* pt_storage_class(DType dtype) {
  for (const auto& t : kPtStorageTypes)
    if (t.supported && t.dtype == dtype) return t.name.data();
  EMBER_THROW(DType, "[save_pt] dtype ", dtype_name(dtype),
              " has no torch storage class ember knows; convert the tensor (tensor.to(kFloat32))");
}

std::string pt_archive_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  const size_t dot = name.find_last_of('.');
  if (dot != std::string::npos) name.resize(dot);
  if (name.empty()) return "archive";
  for (char c : name)
    if (c < 0x20 || c > 0x7e || c == '\\') return "archive";
  return name;
}

}  // namespace ember::io::detail
