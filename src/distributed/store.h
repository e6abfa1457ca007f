// distributed/store.h: the rendezvous key-value store (c10d's Store): ranks exchange addresses and
// NCCL's unique id through it, never tensor data. TcpStore (a server on rank 0, as c10d's
// TCPStore), FileStore (one file every rank sees) and PrefixStore (a namespace in another).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ember::distributed {

class Store {
 public:
  explicit Store(std::chrono::milliseconds timeout) : timeout_(timeout) {}
  virtual ~Store() = default;
  virtual void set(const std::string& key, const std::vector<uint8_t>& value) = 0;
  // Waits (up to the timeout) until the key exists, then returns its value.
  virtual std::vector<uint8_t> get(const std::string& key) = 0;
  // Adds delta to the integer at key (0 if absent) and returns the new value.
  virtual int64_t add(const std::string& key, int64_t delta) = 0;
  // True when every key exists (does not wait).
  virtual bool check(const std::vector<std::string>& keys) = 0;
  // Waits until every key exists; throws DistributedError naming the missing keys on timeout.
  virtual void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) = 0;
  void wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }
  std::chrono::milliseconds timeout() const { return timeout_; }

 private:
  std::chrono::milliseconds timeout_;
};

// Keys of `inner` under "prefix/".
class PrefixStore final : public Store {
 public:
  PrefixStore(std::string prefix, std::shared_ptr<Store> inner);
  void set(const std::string& key, const std::vector<uint8_t>& value) override;
  std::vector<uint8_t> get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t delta) override;
  bool check(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;

 private:
  std::string key(const std::string& k) const { return prefix_ + "/" + k; }
  std::vector<std::string> keys(const std::vector<std::string>& ks) const;
  std::string prefix_;
  std::shared_ptr<Store> inner_;
};

// The store server runs on the master (a thread of that process, while the store lives); every
// rank, the master included, is a client. Connecting retries until the timeout.
std::shared_ptr<Store> make_tcp_store(const std::string& host, int port, bool is_master,
                                      std::chrono::milliseconds timeout);
// The local address this process reaches the master store's host from (for Gloo's listening
// address when no GLOO_SOCKET_IFNAME is set).
std::string tcp_store_local_address(const Store& store);

// Records appended to one file under an exclusive lock (flock), read back by every rank.
std::shared_ptr<Store> make_file_store(const std::string& path, std::chrono::milliseconds timeout);

}  // namespace ember::distributed
