// backend/cpu/cpu_backend.h: the CPU backend -- host memory, OpenMP-parallel loops, ember's GEMM.
#pragma once

#include "core/backend.h"

namespace ember {

class CpuBackend : public Backend {
 public:
  int device_count() override { return 1; }
  std::string device_name(int) override { return "cpu"; }
  void* allocate(size_t nbytes, int device_index) override;
  void deallocate(void* ptr, size_t nbytes, int device_index) override;
  void copy_from_host(void* dst, const void* src, size_t nbytes, int device_index,
                      bool non_blocking) override;
  void copy_to_host(void* dst, const void* src, size_t nbytes, int device_index,
                    bool non_blocking) override;
  // Every op of core/backend_ops.def.
#define EMBER_BACKEND_OP(name, params, args, on) void name params override;
#include "core/backend_ops.def"
#undef EMBER_BACKEND_OP
  void synchronize(int) override {}
};

}  // namespace ember
