// backend/cuda/cuda_stub.cpp: the CUDA entry points of a build without CUDA -- nothing is there.
#include "core/backend.h"
#include "ember/cuda.h"

namespace ember {

Backend* cuda_backend() {
  return nullptr;
}

namespace cuda {
bool is_built() {
  return false;
}
}  // namespace cuda

}  // namespace ember
