// distributed/file_store.cpp: the rendezvous store in one file (init_method file://PATH): every
// change appends a record (key, value) under an exclusive flock, and reads replay the records, the
// last value of a key winning. Waiting polls the file.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "distributed/store.h"
#include "ember/distributed.h"

namespace ember::distributed {
namespace {

using Clock = std::chrono::steady_clock;

class FileStore final : public Store {
 public:
  FileStore(std::string path, std::chrono::milliseconds timeout)
      : Store(timeout), path_(std::move(path)) {
    int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
      throw DistributedError(ember::detail::str_cat(
          "[init_process_group] cannot open the store file '", path_, "': ", std::strerror(errno),
          "; file:// needs a path every rank can write"));
    ::close(fd);
  }

  void set(const std::string& key, const std::vector<uint8_t>& value) override {
    Locked f(path_);
    append(f.fd, key, std::string(value.begin(), value.end()));
  }
  std::vector<uint8_t> get(const std::string& key) override {
    wait({key}, timeout());
    auto data = read_all();
    const std::string& v = data.at(key);
    return std::vector<uint8_t>(v.begin(), v.end());
  }
  int64_t add(const std::string& key, int64_t delta) override {
    Locked f(path_);
    auto data = read_fd(f.fd);
    int64_t v = 0;
    if (auto it = data.find(key); it != data.end() && it->second.size() == 8)
      std::memcpy(&v, it->second.data(), 8);
    v += delta;
    append(f.fd, key, std::string(reinterpret_cast<const char*>(&v), 8));
    return v;
  }
  bool check(const std::vector<std::string>& keys) override {
    auto data = read_all();
    for (const auto& k : keys)
      if (!data.count(k)) return false;
    return true;
  }
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds t) override {
    auto deadline = Clock::now() + t;
    while (!check(keys)) {
      if (Clock::now() >= deadline)
        throw DistributedError(ember::detail::str_cat(
            "[FileStore] timed out after ", static_cast<double>(t.count()) / 1000.0,
            " s waiting for key '", keys.at(0), "' in '", path_, "'"));
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

 private:
  struct Locked {
    explicit Locked(const std::string& path) {
      fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
      if (fd < 0)
        throw DistributedError(
            ember::detail::str_cat("[FileStore] cannot open '", path, "': ", std::strerror(errno)));
      while (::flock(fd, LOCK_EX) != 0 && errno == EINTR) {
      }
    }
    ~Locked() {
      ::flock(fd, LOCK_UN);
      ::close(fd);
    }
    int fd = -1;
  };

  static void put_u32(std::string& out, uint32_t v) {
    out.append(reinterpret_cast<const char*>(&v), 4);
  }
  void append(int fd, const std::string& key, const std::string& value) {
    std::string rec;
    put_u32(rec, static_cast<uint32_t>(key.size()));
    rec += key;
    put_u32(rec, static_cast<uint32_t>(value.size()));
    rec += value;
    ::lseek(fd, 0, SEEK_END);
    size_t done = 0;
    while (done < rec.size()) {
      ssize_t n = ::write(fd, rec.data() + done, rec.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0)
        throw DistributedError(ember::detail::str_cat("[FileStore] cannot write '", path_,
                                                      "': ", std::strerror(errno)));
      done += static_cast<size_t>(n);
    }
  }
  static std::map<std::string, std::string> read_fd(int fd) {
    std::string bytes;
    ::lseek(fd, 0, SEEK_SET);
    char chunk[65536];
    for (;;) {
      ssize_t n = ::read(fd, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      bytes.append(chunk, static_cast<size_t>(n));
    }
    std::map<std::string, std::string> out;
    size_t pos = 0;
    auto u32 = [&](uint32_t& v) {
      if (pos + 4 > bytes.size()) return false;
      std::memcpy(&v, bytes.data() + pos, 4);
      pos += 4;
      return true;
    };
    for (;;) {
      uint32_t klen = 0, vlen = 0;
      if (!u32(klen) || pos + klen > bytes.size()) break;
      std::string key = bytes.substr(pos, klen);
      pos += klen;
      if (!u32(vlen) || pos + vlen > bytes.size()) break;
      out[key] = bytes.substr(pos, vlen);
      pos += vlen;
    }
    return out;
  }
  std::map<std::string, std::string> read_all() {
    Locked f(path_);
    return read_fd(f.fd);
  }

  std::string path_;
};

}  // namespace

std::shared_ptr<Store> make_file_store(const std::string& path, std::chrono::milliseconds timeout) {
  return std::make_shared<FileStore>(path, timeout);
}

}  // namespace ember::distributed
