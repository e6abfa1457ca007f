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
  void copy(const View& dst, const View& src) override;
  void copy_from_host(void* dst, const void* src, size_t nbytes, int device_index,
                      bool non_blocking) override;
  void copy_to_host(void* dst, const void* src, size_t nbytes, int device_index,
                    bool non_blocking) override;
  void fill(const View& dst, const Scalar& value) override;
  void unary(UnaryOp op, const View& dst, const View& src, const UnaryParams& p) override;
  void binary(BinaryOp op, const View& dst, const View& a, const View& b) override;
  void where(const View& dst, const View& cond, const View& a, const View& b) override;
  void reduce(ReduceOp op, const View& dst, const View& src, uint64_t reduce_mask) override;
  void matmul(const View& dst, const View& a, const View& b) override;
  void softmax(const View& dst, const View& src, int64_t dim, bool log) override;
  void im2col(const View& cols, const View& image, const Conv2dGeometry& g) override;
  void col2im(const View& image, const View& cols, const Conv2dGeometry& g) override;
  void max_pool2d(const View& values, const View& indices, const View& image,
                  const Conv2dGeometry& g) override;
  void max_pool2d_backward(const View& grad_image, const View& grad_out, const View& indices,
                           const Conv2dGeometry& g) override;
  void index_select(const View& dst, const View& src, int64_t dim, const View& index) override;
  void gather(const View& dst, const View& src, int64_t dim, const View& index) override;
  void scatter_add(const View& dst, int64_t dim, const View& index, const View& src) override;
  void random(RandomKind kind, const View& dst, uint64_t seed, uint64_t counter, double a,
              double b) override;
  void optimizer_step(const OptimizerStep& step, std::span<const View> params,
                      std::span<const View> grads, std::span<const View> state1,
                      std::span<const View> state2, std::span<const View> state3) override;
  void synchronize(int) override {}
};

}  // namespace ember
