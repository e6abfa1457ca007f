// distributed/gloo_unavailable.cpp: the gloo backend of a build without Gloo: a clear error.
#include "distributed/group_factory.h"

namespace ember::distributed::detail {

std::shared_ptr<ProcessGroup> make_gloo_group(const GroupSpec&) {
  EMBER_THROW(NotImplemented,
              "[init_process_group] backend 'gloo' is not available: ember was built without Gloo "
              "(install Debian's libgloo-dev and rebuild)");
}

}  // namespace ember::distributed::detail
