// tests/internal/test_backend_ops.cpp: a backend that implements only device memory answers every
// op of core/backend_ops.def with an Error naming the op and its device, and the CPU backend
// overrides them all.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>

#include "backend/cpu/cpu_backend.h"
#include "core/backend.h"

namespace ember {
namespace {

class MemoryOnlyBackend : public Backend {
 public:
  int device_count() override { return 1; }
  std::string device_name(int) override { return "memory only"; }
  void* allocate(size_t nbytes, int) override { return std::malloc(nbytes ? nbytes : 1); }
  void deallocate(void* ptr, size_t, int) override { std::free(ptr); }
  void copy_from_host(void* dst, const void* src, size_t n, int, bool) override {
    std::memcpy(dst, src, n);
  }
  void copy_to_host(void* dst, const void* src, size_t n, int, bool) override {
    std::memcpy(dst, src, n);
  }
  void synchronize(int) override {}
};

template <class T>
T sample() {
  if constexpr (std::is_same_v<T, Scalar>)
    return Scalar(0);
  else
    return T{};
}

// Calls op with a value-initialized argument of each parameter type.
template <class... P>
void call_with_samples(Backend& b, void (Backend::*op)(P...)) {
  (b.*op)(sample<std::remove_cvref_t<P>>()...);
}

// Every op of the list, by name, called with sample arguments.
struct OpEntry {
  const char* name;
  void (*call)(Backend&);
};
const OpEntry kOps[] = {
#define EMBER_BACKEND_OP(name, params, args, on) \
  {#name, [](Backend& b) { call_with_samples(b, &Backend::name); }},
#include "core/backend_ops.def"
#undef EMBER_BACKEND_OP
};

// Registers a backend for CUDA for one test, restoring what was there.
class RegisteredAsCuda {
 public:
  explicit RegisteredAsCuda(Backend* b)
      : previous_(has_backend(kCUDA) ? &backend_for(kCUDA) : nullptr) {
    register_backend(kCUDA, b);
  }
  ~RegisteredAsCuda() { register_backend(kCUDA, previous_); }

 private:
  Backend* previous_;
};

TEST(BackendOps, UnimplementedOpsNameTheOpAndTheDevice) {
  MemoryOnlyBackend memory_only;
  RegisteredAsCuda registered(&memory_only);
  ASSERT_GE(std::size(kOps), 17u);
  for (const OpEntry& op : kOps) {
    SCOPED_TRACE(op.name);
    try {
      op.call(memory_only);
      ADD_FAILURE() << "no error from an op the backend does not implement";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::NotImplemented);
      std::string expected = std::string("[") + op.name + "] is not implemented for cuda tensors";
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  }
}

TEST(BackendOps, AnUnregisteredBackendSaysThisDevice) {
  MemoryOnlyBackend memory_only;
  EXPECT_THROW(
      {
        try {
          memory_only.matmul(View{}, View{}, View{});
        } catch (const Error& e) {
          EXPECT_NE(
              std::string(e.what()).find("[matmul] is not implemented for this backend's tensors"),
              std::string::npos)
              << e.what();
          throw;
        }
      },
      Error);
}

TEST(BackendOps, TheCpuBackendImplementsEveryOp) {
  // An op the CPU did not override would be the base class's; its address would then match.
#define EMBER_BACKEND_OP(name, params, args, on) \
  static_assert(!std::is_same_v<decltype(&CpuBackend::name), decltype(&Backend::name)>, #name);
#include "core/backend_ops.def"
#undef EMBER_BACKEND_OP
  SUCCEED();
}

}  // namespace
}  // namespace ember
