// distributed/group_factory.h: what a backend needs to build a process group, and the factory of
// each backend (each one's file is compiled only when its library was found; the
// *_unavailable.cpp stand-ins throw a clear error otherwise).
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "distributed/store.h"
#include "ember/distributed.h"

namespace ember::distributed::detail {

struct GroupSpec {
  std::shared_ptr<Store> store;  // private to this group (a PrefixStore)
  int rank = 0;                  // in the group
  int size = 1;
  std::vector<int> global_ranks;  // by group rank
  std::chrono::milliseconds timeout{};
  std::string local_address;  // the address Gloo listens on (empty: the host's name)
};

std::shared_ptr<ProcessGroup> make_gloo_group(const GroupSpec& spec);
std::shared_ptr<ProcessGroup> make_nccl_group(const GroupSpec& spec);

// A Work already done (what the synchronous forms return).
class CompletedWork final : public Work {
 public:
  bool is_completed() override { return true; }
  void wait() override {}
};

}  // namespace ember::distributed::detail
