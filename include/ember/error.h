// ember/error.h: the one exception type ember throws, and the check macros that build its messages.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace ember {

// What went wrong, so callers can react without parsing messages.
enum class ErrorKind { Shape, DType, Device, Index, Value, OutOfMemory, Cuda, IO, NotImplemented };

const char* error_kind_name(ErrorKind kind);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }

 private:
  ErrorKind kind_;
};

namespace detail {
template <class... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}
[[noreturn]] void throw_error(ErrorKind kind, std::string message);
}  // namespace detail

}  // namespace ember

// EMBER_CHECK(cond, "[op] what is wrong: ", details...) throws an Error of kind Value.
#define EMBER_CHECK_KIND(kind, cond, ...)                                  \
  do {                                                                     \
    if (!(cond)) [[unlikely]]                                              \
      ::ember::detail::throw_error(::ember::ErrorKind::kind,               \
                                   ::ember::detail::str_cat(__VA_ARGS__)); \
  } while (0)
#define EMBER_CHECK(cond, ...) EMBER_CHECK_KIND(Value, cond, __VA_ARGS__)
#define EMBER_THROW(kind, ...) \
  ::ember::detail::throw_error(::ember::ErrorKind::kind, ::ember::detail::str_cat(__VA_ARGS__))
