// distributed/nccl_unavailable.cpp: the nccl backend of a build without NCCL: a clear error.
#include "distributed/group_factory.h"

namespace ember::distributed::detail {

std::shared_ptr<ProcessGroup> make_nccl_group(const GroupSpec&) {
  EMBER_THROW(NotImplemented,
              "[init_process_group] backend 'nccl' is not available: ember was built without NCCL "
              "(a CUDA build with the CUDA toolkit's NCCL); use backend 'gloo' for CPU tensors");
}

}  // namespace ember::distributed::detail
