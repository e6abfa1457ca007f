// io/npy_header.cpp: a strict parser for the Python dict literal in a .npy header. It accepts
// what numpy writes (and Python 2's "3L" integers) and nothing that would need eval().
#include "io/npy_header.h"

#include <cstdint>
#include <set>

#include "ember/error.h"

namespace ember::io::detail {

namespace {

constexpr int64_t kMaxDim = int64_t{1} << 62;

class Parser {
 public:
  Parser(std::string_view text, const char* op, const std::string& name)
      : s_(text), op_(op), name_(name) {}

  NpyHeader parse() {
    NpyHeader h;
    std::set<std::string> keys;
    skip_space();
    expect('{', "the header does not start with '{'");
    while (true) {
      skip_space();
      if (peek() == '}') break;
      std::string key = string_literal("a dict key");
      if (!keys.insert(key).second) fail("the header repeats the key '" + key + "'");
      skip_space();
      expect(':', "expected ':' after '" + key + "'");
      skip_space();
      if (key == "descr") {
        if (peek() == '[')
          fail("structured dtypes (a list descr) are not supported; save plain arrays");
        h.descr = string_literal("the descr value");
      } else if (key == "fortran_order") {
        h.fortran_order = boolean();
      } else if (key == "shape") {
        h.shape = shape();
      } else {
        fail("unexpected key '" + key + "' in the header (expected descr, fortran_order, shape)");
      }
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != '}') fail("expected ',' or '}' in the header dict");
    }
    ++pos_;
    skip_space();
    if (pos_ != s_.size()) fail("unexpected text after the header dict");
    for (const char* k : {"descr", "fortran_order", "shape"})
      if (!keys.count(k)) fail(std::string("the header lacks the key '") + k + "'");
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { npy_bad(op_, name_, what); }
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }
  void expect(char c, const std::string& what) {
    if (peek() != c) fail(what);
    ++pos_;
  }
  std::string string_literal(const char* what) {
    char quote = peek();
    if (quote != '\'' && quote != '"') fail(std::string("expected a quoted string as ") + what);
    size_t end = s_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) fail("unterminated string in the header");
    std::string_view body = s_.substr(pos_ + 1, end - pos_ - 1);
    if (body.find('\\') != std::string_view::npos)
      fail("escape sequences in header strings are not supported");
    pos_ = end + 1;
    return std::string(body);
  }
  bool boolean() {
    if (s_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (s_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    fail("fortran_order is not True or False");
  }
  int64_t integer() {
    if (peek() == '-') fail("the shape has a negative dimension");
    if (peek() < '0' || peek() > '9') fail("the shape holds something other than integers");
    int64_t v = 0;
    while (peek() >= '0' && peek() <= '9') {
      int digit = peek() - '0';
      if (v > (kMaxDim - digit) / 10) fail("a dimension of the shape is implausibly large");
      v = v * 10 + digit;
      ++pos_;
    }
    if (peek() == 'L') ++pos_;  // Python 2 long
    return v;
  }
  Shape shape() {
    expect('(', "the shape is not a tuple");
    Shape shape;
    bool comma_after_last = false;
    while (true) {
      skip_space();
      if (peek() == ')') break;
      shape.push_back(integer());
      skip_space();
      comma_after_last = peek() == ',';
      if (comma_after_last) {
        ++pos_;
        continue;
      }
      if (peek() != ')') fail("expected ',' or ')' in the shape");
    }
    ++pos_;
    if (shape.size() == 1 && !comma_after_last) fail("the shape is not a tuple: (n) needs a comma");
    return shape;
  }

  std::string_view s_;
  size_t pos_ = 0;
  const char* op_;
  const std::string& name_;
};

}  // namespace

void npy_bad(const char* op, const std::string& name, const std::string& what) {
  EMBER_THROW(IO, "[", op, "] '", name, "' is not a valid .npy file: ", what);
}

NpyHeader parse_npy_header(std::string_view text, const char* op, const std::string& name) {
  return Parser(text, op, name).parse();
}

}  // namespace ember::io::detail
