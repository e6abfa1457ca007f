// tests/internal/test_tcp_store.cpp: the TCP rendezvous store against peers that are not ember
// ranks -- its server drops a foreign client (an HTTP request, a message no rank sends) and goes
// on serving the ranks, and a rank connecting to another program's port fails at once, naming
// it, instead of waiting out the timeout.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "distributed/store.h"
#include "ember/distributed.h"

namespace {

using namespace std::chrono_literals;
using ember::distributed::make_tcp_store;

// A loopback socket bound to a free port; listening when listen_too.
int bound_socket(int& port, bool listen_too) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  port = ntohs(addr.sin_port);
  if (listen_too) {
    EXPECT_EQ(::listen(fd, 4), 0);
  }
  return fd;
}

int connect_to(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  return fd;
}

// True when the peer closes fd within the time given (what it sent first is read and ignored).
bool closed_by_peer(int fd, std::chrono::milliseconds within) {
  const auto deadline = std::chrono::steady_clock::now() + within;
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char buf[256];
    if (::recv(fd, buf, sizeof buf, 0) <= 0) return true;
  }
  return false;
}

// A message of the store's protocol: command byte, part count, length-prefixed parts.
std::string message(uint8_t command, std::initializer_list<std::string> parts) {
  auto u32 = [](std::string& out, uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  std::string out(1, static_cast<char>(command));
  u32(out, static_cast<uint32_t>(parts.size()));
  for (const auto& p : parts) {
    u32(out, static_cast<uint32_t>(p.size()));
    out += p;
  }
  return out;
}

TEST(TcpStore, ServerDropsForeignClientsAndKeepsServingRanks) {
  int port = 0;
  ::close(bound_socket(port, false));
  auto master = make_tcp_store("127.0.0.1", port, true, 10s);

  const std::string http = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  int web = connect_to(port);
  ASSERT_EQ(::send(web, http.data(), http.size(), MSG_NOSIGNAL), static_cast<ssize_t>(http.size()));
  EXPECT_TRUE(closed_by_peer(web, 5s)) << "an HTTP request was not dropped";
  ::close(web);

  // Past the handshake, an ADD without its operands (the server used to throw in its thread).
  const std::string bad = message(6, {"ember-tcp-store-1"}) + message(3, {});
  int raw = connect_to(port);
  ASSERT_EQ(::send(raw, bad.data(), bad.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bad.size()));
  EXPECT_TRUE(closed_by_peer(raw, 5s)) << "a malformed message was not dropped";
  ::close(raw);

  // A claimed part of 4 GB is refused, not buffered.
  std::string huge =
      message(6, {"ember-tcp-store-1"}) + std::string("\x01\x01\0\0\0\xff\xff\xff\xff", 9);
  raw = connect_to(port);
  ASSERT_EQ(::send(raw, huge.data(), huge.size(), MSG_NOSIGNAL), static_cast<ssize_t>(huge.size()));
  EXPECT_TRUE(closed_by_peer(raw, 5s)) << "a 4 GB part was not refused";
  ::close(raw);

  auto rank = make_tcp_store("127.0.0.1", port, false, 10s);
  rank->set("key", {1, 2, 3});
  EXPECT_EQ(master->get("key"), (std::vector<uint8_t>{1, 2, 3}));
  EXPECT_EQ(rank->add("n", 5), 5);
}

TEST(TcpStore, ARankAtAForeignServersPortFailsAtOnceNamingIt) {
  int port = 0;
  const int listener = bound_socket(port, true);
  std::thread server([listener] {
    const int c = ::accept(listener, nullptr, nullptr);
    char buf[64];
    if (::recv(c, buf, sizeof buf, 0) > 0) {
      const char reply[] = "HTTP/1.1 400 Bad Request\r\n\r\n";
      ::send(c, reply, sizeof reply - 1, MSG_NOSIGNAL);
    }
    ::close(c);
  });
  const auto start = std::chrono::steady_clock::now();
  try {
    make_tcp_store("127.0.0.1", port, false, 60s);
    ADD_FAILURE() << "connected to a web server as to the store";
  } catch (const ember::Error& e) {
    EXPECT_NE(std::string(e.what()).find("is not ember's rendezvous store"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("HTTP/1.1 400"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s) << "it waited for the timeout";
  server.join();
  ::close(listener);
}

}  // namespace
