// io/pickle_write.h: the opcodes of a pickle writer (protocol 2, as Python's pickle.Pickler
// writes them) for PyTorch checkpoints: scalars, strings, containers, globals, REDUCE,
// BINPERSID and the memo. The caller walks its values and says what to write; io/pt_write.cpp
// is that caller.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ember::io::detail {

class PickleWriter {
 public:
  PickleWriter();  // starts with PROTO 2

  void none();
  void boolean(bool value);           // NEWTRUE / NEWFALSE
  void integer(int64_t value);        // BININT1, BININT2, BININT or LONG1, as Python chooses
  void floating(double value);        // BINFLOAT (big-endian)
  void str(std::string_view utf8);    // BINUNICODE
  void bytes(std::string_view data);  // SHORT_BINBYTES or BINBYTES
  void global(std::string_view module, std::string_view name);  // GLOBAL
  void mark();
  void tuple_from_mark();  // TUPLE
  // EMPTY_TUPLE, TUPLE1, TUPLE2 or TUPLE3 of the top `n` values (n <= 3).
  void small_tuple(size_t n);
  void empty_list();
  void empty_dict();
  void append();    // APPEND: one value onto the list below it
  void appends();   // APPENDS: the values since the mark
  void setitem();   // SETITEM: one key and value into the dict below them
  void setitems();  // SETITEMS: the keys and values since the mark
  void reduce();    // REDUCE: callable(*args)
  void persid();    // BINPERSID
  // Memoizes the top of the stack (BINPUT / LONG_BINPUT) and returns its index.
  uint32_t put();
  void get(uint32_t index);  // BINGET / LONG_BINGET
  // Writes STOP and returns the pickle.
  std::string finish();

 private:
  void op(uint8_t code) { out_.push_back(static_cast<char>(code)); }
  void le(uint64_t value, int bytes);
  std::string out_;
  uint32_t memo_size_ = 0;
};

}  // namespace ember::io::detail
