// distributed/tcp_store.cpp: the TCP rendezvous store. The master runs a server thread (poll over
// its clients; GET and WAIT answered once their keys exist); every rank talks to it through one
// client connection. A request is a command byte and length-prefixed strings; so is a reply.
// A connection opens with a handshake (HELLO and the protocol's name, both ways), so that a rank
// pointed at a port where another program listens fails at once instead of waiting out the
// timeout, and the server drops a client that speaks anything else.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "distributed/store.h"
#include "ember/distributed.h"

namespace ember::distributed {
namespace {

using Clock = std::chrono::steady_clock;
using Parts = std::vector<std::string>;

enum Command : uint8_t { kSet = 1, kGet = 2, kAdd = 3, kCheck = 4, kWait = 5, kHello = 6 };

constexpr const char* kProtocol = "ember-tcp-store-1";
// How long a connected peer has to answer the handshake.
constexpr std::chrono::seconds kHandshakeTimeout{15};
// A message claiming more parts or bytes than this is not from an ember rank.
constexpr uint32_t kMaxParts = 1u << 16, kMaxPartBytes = 1u << 30;

std::string seconds(std::chrono::milliseconds ms) {
  return ember::detail::str_cat(static_cast<double>(ms.count()) / 1000.0, " s");
}

void append_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
uint32_t read_u32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

std::string encode(uint8_t command, const Parts& parts) {
  std::string out(1, static_cast<char>(command));
  append_u32(out, static_cast<uint32_t>(parts.size()));
  for (const auto& p : parts) {
    append_u32(out, static_cast<uint32_t>(p.size()));
    out += p;
  }
  return out;
}

// Parses one message from the front of buf; false when it is not complete yet. Throws
// std::length_error for counts no ember message has.
bool decode(std::string& buf, uint8_t& command, Parts& parts) {
  if (buf.size() < 5) return false;
  size_t pos = 5;
  uint32_t n = read_u32(buf.data() + 1);
  if (n > kMaxParts) throw std::length_error("too many parts");
  Parts out;
  for (uint32_t i = 0; i < n; ++i) {
    if (buf.size() < pos + 4) return false;
    uint32_t len = read_u32(buf.data() + pos);
    if (len > kMaxPartBytes) throw std::length_error("a part too large");
    pos += 4;
    if (buf.size() < pos + len) return false;
    out.emplace_back(buf.data() + pos, len);
    pos += len;
  }
  command = static_cast<uint8_t>(buf[0]);
  parts = std::move(out);
  buf.erase(0, pos);
  return true;
}

bool send_all(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

std::string int64_bytes(int64_t v) {
  return std::string(reinterpret_cast<const char*>(&v), 8);
}
int64_t bytes_int64(const std::string& s) {
  int64_t v = 0;
  if (s.size() == 8) std::memcpy(&v, s.data(), 8);
  return v;
}

// The server of the master: a thread serving every client until the store is destroyed.
class StoreServer {
 public:
  explicit StoreServer(int port) {
    listen_fd_ = ::socket(AF_INET6, SOCK_STREAM, 0);
    bool v6 = listen_fd_ >= 0;
    if (!v6) listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (listen_fd_ < 0) fail(port, "socket");
    int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    int rc;
    if (v6) {
      int zero = 0;
      ::setsockopt(listen_fd_, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
      sockaddr_in6 addr{};
      addr.sin6_family = AF_INET6;
      addr.sin6_addr = in6addr_any;
      addr.sin6_port = htons(static_cast<uint16_t>(port));
      rc = ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    } else {
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_addr.s_addr = htonl(INADDR_ANY);
      addr.sin_port = htons(static_cast<uint16_t>(port));
      rc = ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    }
    if (rc != 0 || ::listen(listen_fd_, 128) != 0) fail(port, "bind/listen");
    if (::pipe(wake_) != 0) fail(port, "pipe");
    thread_ = std::thread([this] { serve(); });
  }
  ~StoreServer() {
    char c = 0;
    if (::write(wake_[1], &c, 1) < 0) {
    }
    thread_.join();
    for (auto& [fd, buf] : clients_) ::close(fd);
    ::close(listen_fd_);
    ::close(wake_[0]);
    ::close(wake_[1]);
  }

 private:
  [[noreturn]] void fail(int port, const char* what) {
    std::string reason = std::strerror(errno);
    if (listen_fd_ >= 0) ::close(listen_fd_);
    throw DistributedError(ember::detail::str_cat(
        "[init_process_group] the rendezvous store could not listen on port ", port, " (", what,
        ": ", reason, "); pick a free MASTER_PORT (another job may be using this one)"));
  }

  struct Pending {
    int fd;
    uint8_t command;
    Parts keys;
  };

  bool has_all(const Parts& keys) const {
    for (const auto& k : keys)
      if (!data_.count(k)) return false;
    return true;
  }

  // Answers a request now, or parks it (GET, WAIT) until its keys exist. False for a message no
  // ember rank sends (the client is then dropped).
  bool handle(int fd, uint8_t command, Parts parts) {
    switch (command) {
      case kSet:
        if (parts.size() != 2) return false;
        data_[parts[0]] = parts[1];
        send_all(fd, encode(kSet, {"ok"}));
        wake_pending();
        return true;
      case kAdd: {
        if (parts.size() != 2 || parts[1].size() != 8) return false;
        int64_t v = 0;
        if (auto it = data_.find(parts.at(0)); it != data_.end()) v = bytes_int64(it->second);
        v += bytes_int64(parts.at(1));
        data_[parts[0]] = int64_bytes(v);
        send_all(fd, encode(kAdd, {int64_bytes(v)}));
        wake_pending();
        return true;
      }
      case kCheck:
        send_all(fd, encode(kCheck, {has_all(parts) ? "1" : "0"}));
        return true;
      case kGet:
      case kWait:
        if (command == kGet && parts.size() != 1) return false;
        if (has_all(parts)) {
          reply_ready(fd, command, parts);
        } else {
          pending_.push_back({fd, command, std::move(parts)});
        }
        return true;
      default:
        return false;
    }
  }
  // The first message of a client must be the handshake; true once it was answered.
  bool greet(int fd, uint8_t command, const Parts& parts) {
    if (command != kHello || parts.size() != 1 || parts[0] != kProtocol) return false;
    send_all(fd, encode(kHello, {kProtocol}));
    greeted_.insert(fd);
    return true;
  }
  void reply_ready(int fd, uint8_t command, const Parts& keys) {
    if (command == kGet) {
      send_all(fd, encode(kGet, {data_.at(keys.at(0))}));
    } else {
      send_all(fd, encode(kWait, {"ok"}));
    }
  }
  void wake_pending() {
    for (size_t i = 0; i < pending_.size();) {
      if (has_all(pending_[i].keys)) {
        reply_ready(pending_[i].fd, pending_[i].command, pending_[i].keys);
        pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    }
  }
  void drop(int fd) {
    ::close(fd);
    clients_.erase(fd);
    greeted_.erase(fd);
    std::erase_if(pending_, [fd](const Pending& p) { return p.fd == fd; });
  }

  void serve() {
    for (;;) {
      std::vector<pollfd> fds{{wake_[0], POLLIN, 0}, {listen_fd_, POLLIN, 0}};
      for (auto& [fd, buf] : clients_) fds.push_back({fd, POLLIN, 0});
      if (::poll(fds.data(), fds.size(), -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (fds[0].revents) return;
      if (fds[1].revents & POLLIN) {
        int fd = ::accept(listen_fd_, nullptr, nullptr);
        if (fd >= 0) {
          int one = 1;
          ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          clients_[fd];
        }
      }
      for (size_t i = 2; i < fds.size(); ++i) {
        if (!fds[i].revents) continue;
        int fd = fds[i].fd;
        char chunk[4096];
        ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
        if (n <= 0) {
          drop(fd);
          continue;
        }
        std::string& buf = clients_[fd];
        buf.append(chunk, static_cast<size_t>(n));
        uint8_t command = 0;
        Parts parts;
        try {
          while (decode(buf, command, parts)) {
            const bool ok = greeted_.count(fd) ? handle(fd, command, std::move(parts))
                                               : greet(fd, command, parts);
            if (!ok) throw std::length_error("not an ember store message");
          }
        } catch (const std::length_error&) {
          drop(fd);  // a foreign or broken client: nothing it sent is answered
        }
      }
    }
  }

  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};
  std::map<int, std::string> clients_;  // fd -> bytes received, not yet parsed
  std::set<int> greeted_;               // clients past the handshake
  std::map<std::string, std::string> data_;
  std::vector<Pending> pending_;
  std::thread thread_;
};

class TcpStore final : public Store {
 public:
  TcpStore(std::string host, int port, bool is_master, std::chrono::milliseconds timeout)
      : Store(timeout), host_(std::move(host)), port_(port) {
    if (is_master) server_ = std::make_unique<StoreServer>(port);
    std::lock_guard lock(mutex_);
    connect_locked(Clock::now() + timeout);
  }
  ~TcpStore() override {
    if (fd_ >= 0) ::close(fd_);
  }

  void set(const std::string& key, const std::vector<uint8_t>& value) override {
    request(kSet, {key, std::string(value.begin(), value.end())}, timeout(), "set", key);
  }
  std::vector<uint8_t> get(const std::string& key) override {
    Parts r = request(kGet, {key}, timeout(), "get", key);
    return std::vector<uint8_t>(r.at(0).begin(), r.at(0).end());
  }
  int64_t add(const std::string& key, int64_t delta) override {
    return bytes_int64(request(kAdd, {key, int64_bytes(delta)}, timeout(), "add", key).at(0));
  }
  bool check(const std::vector<std::string>& keys) override {
    return request(kCheck, keys, timeout(), "check", keys.empty() ? "" : keys[0]).at(0) == "1";
  }
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds t) override {
    request(kWait, keys, t, "wait", keys.empty() ? "" : keys[0]);
  }
  std::string local_address() {
    std::lock_guard lock(mutex_);
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    if (fd_ < 0 || ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "";
    char text[INET6_ADDRSTRLEN] = {0};
    if (addr.ss_family == AF_INET) {
      ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&addr)->sin_addr, text, sizeof text);
    } else {
      auto* a6 = reinterpret_cast<sockaddr_in6*>(&addr);
      if (IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr)) {
        ::inet_ntop(AF_INET, &a6->sin6_addr.s6_addr[12], text, sizeof text);
      } else {
        ::inet_ntop(AF_INET6, &a6->sin6_addr, text, sizeof text);
      }
    }
    return text;
  }

 private:
  void connect_locked(Clock::time_point deadline) {
    std::string last_error = "no attempt";
    for (;;) {
      addrinfo hints{};
      hints.ai_family = AF_UNSPEC;
      hints.ai_socktype = SOCK_STREAM;
      addrinfo* res = nullptr;
      std::string port = std::to_string(port_);
      int rc = ::getaddrinfo(host_.c_str(), port.c_str(), &hints, &res);
      // Freed however the loop ends (the handshake throws out of it).
      const std::unique_ptr<addrinfo, void (*)(addrinfo*)> owned(rc == 0 ? res : nullptr,
                                                                 ::freeaddrinfo);
      if (rc != 0) {
        last_error = ::gai_strerror(rc);
      } else {
        for (addrinfo* ai = res; ai; ai = ai->ai_next) {
          int fd = ::socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
          if (fd < 0) continue;
          if (::connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
            int one = 1;
            ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            handshake(fd);  // throws (and closes fd) when the peer is not ember's store
            fd_ = fd;
            break;
          }
          last_error = std::strerror(errno);
          ::close(fd);
        }
      }
      if (fd_ >= 0) return;
      if (Clock::now() >= deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    throw DistributedError(ember::detail::str_cat(
        "[init_process_group] could not reach the rendezvous store at ", host_, ":", port_,
        " within ", seconds(timeout()), " (", last_error,
        "); is rank 0 running, and do all ranks have the same MASTER_ADDR and MASTER_PORT?"));
  }

  // Sends HELLO and checks, byte by byte as they come, that the reply is ember's: a foreign
  // server's first wrong byte, its closing the connection or its silence for kHandshakeTimeout
  // is an error at once, naming what answered.
  void handshake(int fd) {
    const std::string expected = encode(kHello, {kProtocol});
    auto fail = [&](const std::string& why) {
      ::close(fd);
      throw DistributedError(ember::detail::str_cat(
          "[init_process_group] the program listening at ", host_, ":", port_,
          " is not ember's rendezvous store (", why,
          "); MASTER_PORT must be the port rank 0 listens on -- another program uses this one, "
          "pick a free port"));
    };
    if (!send_all(fd, expected)) fail("it closed the connection");
    const auto deadline = Clock::now() + kHandshakeTimeout;
    std::string got;
    while (got.size() < expected.size()) {
      auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0)
        fail(ember::detail::str_cat("it did not answer the handshake within ",
                                    seconds(kHandshakeTimeout)));
      pollfd p{fd, POLLIN, 0};
      const int rc = ::poll(&p, 1, static_cast<int>(left.count()));
      if (rc <= 0) continue;
      char chunk[256];
      const ssize_t n = ::recv(fd, chunk, std::min(sizeof chunk, expected.size() - got.size()), 0);
      if (n <= 0) fail("it closed the connection without answering the handshake");
      got.append(chunk, static_cast<size_t>(n));
      if (expected.compare(0, got.size(), got) != 0) {
        std::string shown;
        for (char c : got.substr(0, 16)) shown += (c >= 32 && c < 127) ? c : '.';
        fail("it answered \"" + shown + "\"");
      }
    }
  }

  // Sends one request and reads its reply by the deadline. On a timeout or a lost server the
  // connection is closed (a late reply must not answer the next request) and reopened next time.
  Parts request(uint8_t command, const Parts& parts, std::chrono::milliseconds t, const char* what,
                const std::string& key) {
    std::lock_guard lock(mutex_);
    auto deadline = Clock::now() + t;
    if (fd_ < 0) connect_locked(deadline);
    auto lost = [&](const std::string& why) -> DistributedError {
      ::close(fd_);
      fd_ = -1;
      return DistributedError(ember::detail::str_cat("[TCPStore] ", what, "('", key, "') at ",
                                                     host_, ":", port_, ": ", why));
    };
    if (!send_all(fd_, encode(command, parts))) throw lost("the store's server is gone");
    std::string buf;
    uint8_t reply_command = 0;
    Parts reply;
    while (!decode(buf, reply_command, reply)) {
      auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0)
        throw lost(ember::detail::str_cat("timed out after ", seconds(t), " waiting for the key"));
      pollfd p{fd_, POLLIN, 0};
      int rc = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1 << 30)));
      if (rc < 0 && errno == EINTR) continue;
      if (rc == 0) continue;
      char chunk[4096];
      ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
      if (n <= 0) throw lost("the store's server (rank 0) closed the connection");
      buf.append(chunk, static_cast<size_t>(n));
    }
    return reply;
  }

  std::string host_;
  int port_;
  std::unique_ptr<StoreServer> server_;
  std::mutex mutex_;
  int fd_ = -1;
};

}  // namespace

std::shared_ptr<Store> make_tcp_store(const std::string& host, int port, bool is_master,
                                      std::chrono::milliseconds timeout) {
  return std::make_shared<TcpStore>(host, port, is_master, timeout);
}

std::string tcp_store_local_address(const Store& store) {
  auto* tcp = dynamic_cast<const TcpStore*>(&store);
  return tcp ? const_cast<TcpStore*>(tcp)->local_address() : "";
}

}  // namespace ember::distributed
