// distributed/gloo_store.h: ember's rendezvous Store seen as Gloo's rendezvous::Store, through
// which Gloo's full-mesh connect exchanges the ranks' addresses.
#pragma once

#include <gloo/rendezvous/store.h>

#include <memory>

#include "distributed/store.h"

namespace ember::distributed::detail {

class GlooStore final : public gloo::rendezvous::Store {
 public:
  explicit GlooStore(std::shared_ptr<distributed::Store> store) : store_(std::move(store)) {}
  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override;

 private:
  std::shared_ptr<distributed::Store> store_;
};

}  // namespace ember::distributed::detail
