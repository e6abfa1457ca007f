// io/pickle_write.cpp: PickleWriter (io/pickle_write.h) -- pickle protocol 2 opcodes, encoded as
// Python's pickle module encodes them.
#include "io/pickle_write.h"

#include <cstring>

#include "ember/error.h"

namespace ember::io::detail {

PickleWriter::PickleWriter() {
  op(0x80);  // PROTO
  op(2);
}

void PickleWriter::le(uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out_.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

void PickleWriter::none() {
  op('N');
}

void PickleWriter::boolean(bool value) {
  op(value ? 0x88 : 0x89);
}

void PickleWriter::integer(int64_t value) {
  if (value >= 0 && value <= 0xff) {
    op('K');  // BININT1
    le(static_cast<uint64_t>(value), 1);
  } else if (value >= 0 && value <= 0xffff) {
    op('M');  // BININT2
    le(static_cast<uint64_t>(value), 2);
  } else if (value >= INT32_MIN && value <= INT32_MAX) {
    op('J');  // BININT
    le(static_cast<uint64_t>(value), 4);
  } else {
    // LONG1: the fewest little-endian two's complement bytes that hold the value
    int n = 1;
    while (n < 8) {
      const int64_t lo = -(int64_t{1} << (8 * n - 1));
      const int64_t hi = (int64_t{1} << (8 * n - 1)) - 1;
      if (value >= lo && value <= hi) break;
      ++n;
    }
    op(0x8a);
    le(static_cast<uint64_t>(n), 1);
    le(static_cast<uint64_t>(value), n);
  }
}

void PickleWriter::floating(double value) {
  op('G');  // BINFLOAT: an IEEE double, big-endian
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  for (int i = 7; i >= 0; --i) out_.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
}

void PickleWriter::str(std::string_view utf8) {
  EMBER_CHECK(utf8.size() <= UINT32_MAX, "[save_pt] a str of ", utf8.size(),
              " bytes is longer than pickle protocol 2 allows (4 GiB); store it in a tensor");
  op('X');  // BINUNICODE
  le(utf8.size(), 4);
  out_.append(utf8);
}

void PickleWriter::bytes(std::string_view data) {
  EMBER_CHECK(data.size() <= UINT32_MAX, "[save_pt] a bytes value of ", data.size(),
              " bytes is longer than pickle protocol 2 allows (4 GiB); store it in a tensor");
  if (data.size() < 256) {
    op('C');  // SHORT_BINBYTES
    le(data.size(), 1);
  } else {
    op('B');  // BINBYTES
    le(data.size(), 4);
  }
  out_.append(data);
}

void PickleWriter::global(std::string_view module, std::string_view name) {
  op('c');
  out_.append(module);
  out_.push_back('\n');
  out_.append(name);
  out_.push_back('\n');
}

void PickleWriter::mark() {
  op('(');
}
void PickleWriter::tuple_from_mark() {
  op('t');
}

void PickleWriter::small_tuple(size_t n) {
  EMBER_CHECK(n <= 3, "[save_pt] internal: small_tuple of ", n, " values");
  static constexpr uint8_t kOps[] = {')', 0x85, 0x86, 0x87};
  op(kOps[n]);
}

void PickleWriter::empty_list() {
  op(']');
}
void PickleWriter::empty_dict() {
  op('}');
}
void PickleWriter::append() {
  op('a');
}
void PickleWriter::appends() {
  op('e');
}
void PickleWriter::setitem() {
  op('s');
}
void PickleWriter::setitems() {
  op('u');
}
void PickleWriter::reduce() {
  op('R');
}
void PickleWriter::persid() {
  op('Q');
}

uint32_t PickleWriter::put() {
  const uint32_t index = memo_size_++;
  if (index < 256) {
    op('q');  // BINPUT
    le(index, 1);
  } else {
    op('r');  // LONG_BINPUT
    le(index, 4);
  }
  return index;
}

void PickleWriter::get(uint32_t index) {
  if (index < 256) {
    op('h');  // BINGET
    le(index, 1);
  } else {
    op('j');  // LONG_BINGET
    le(index, 4);
  }
}

std::string PickleWriter::finish() {
  op('.');
  return std::move(out_);
}

}  // namespace ember::io::detail
