// ops/tensor_methods.cpp: Tensor's op methods, generated from ember/op_variants.def; each
// forwards to its free function in ops.h. The in-place forms are defined with their ops.
#include "ember/ops.h"

namespace ember {

#define EMBER_OP_METHOD(ret, name, params, args)        \
  ret Tensor::name(EMBER_OP_PARAMS params) const {      \
    return ember::name(*this EMBER_OP_AFTER_SELF args); \
  }
#define EMBER_OP_SCALAR(ret, name, params, args) \
  ret Tensor::name(const Scalar& other) const {  \
    return ember::name(*this, other);            \
  }
#include "ember/op_variants.def"

}  // namespace ember
