// tools/ember/launcher.cpp: `ember run` (see launcher.h) -- fork/exec of the ranks, their output
// through pipes with a "[rankK]: " prefix, and stopping every rank when one fails or when the
// launcher is signalled.
#include "launcher.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

extern char** environ;

namespace ember::cli {
namespace {

using Clock = std::chrono::steady_clock;

constexpr double kDefaultGraceSeconds = 5.0;
// A hard cap, --oversubscribe or not: each rank is a whole process with its own memory.
constexpr int kMaxRanksPerNode = 1024;
constexpr size_t kMaxLine = size_t{1} << 20;    // a longer line without '\n' is cut here
constexpr size_t kReadChunk = size_t{1} << 16;  // bytes per read()
constexpr int kMaxDrainReads = 16;              // reads of an exited rank's pipe, at most
constexpr int kExecFailed = 127;                // the shell's "command not found" status
constexpr int kHandledSignals[] = {SIGINT, SIGTERM, SIGCHLD};

// The signals arrive as one byte each on this pipe, which the poll loop watches together with the
// ranks' output (the self-pipe trick), so no work happens inside a handler.
int g_signal_pipe[2] = {-1, -1};

void on_signal(int sig) {
  const int saved = errno;
  const unsigned char byte = static_cast<unsigned char>(sig);
  [[maybe_unused]] ssize_t n = write(g_signal_pipe[1], &byte, 1);  // full: wakes the loop anyway
  errno = saved;
}

// Installs the handlers for the launcher's lifetime and puts the previous ones back after.
class SignalPipe {
 public:
  SignalPipe() {
    if (pipe2(g_signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
      throw std::system_error(errno, std::generic_category(), "ember run: pipe");
    struct sigaction action {};
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    for (size_t i = 0; i < std::size(kHandledSignals); ++i)
      sigaction(kHandledSignals[i], &action, &previous_[i]);
  }
  ~SignalPipe() {
    for (size_t i = 0; i < std::size(kHandledSignals); ++i)
      sigaction(kHandledSignals[i], &previous_[i], nullptr);
    close(g_signal_pipe[0]);
    close(g_signal_pipe[1]);
    g_signal_pipe[0] = g_signal_pipe[1] = -1;
  }
  SignalPipe(const SignalPipe&) = delete;
  SignalPipe& operator=(const SignalPipe&) = delete;

  int fd() const { return g_signal_pipe[0]; }

 private:
  struct sigaction previous_[std::size(kHandledSignals)]{};
};

void write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = write(fd, data, size);
    if (n >= 0) {
      data += n;
      size -= static_cast<size_t>(n);
    } else if (errno == EAGAIN) {  // our stdout is a non-blocking descriptor: wait for room
      pollfd p{fd, POLLOUT, 0};
      poll(&p, 1, -1);
    } else if (errno != EINTR) {
      return;  // nowhere to write to: the output is lost, the ranks carry on
    }
  }
}

void say(const std::string& line) {
  const std::string text = "ember run: " + line + "\n";
  write_all(STDERR_FILENO, text.data(), text.size());
}

// One of a rank's output pipes, and the bytes after its last newline.
struct Stream {
  int fd = -1;  // read end, -1 once closed
  int target;   // STDOUT_FILENO or STDERR_FILENO
  std::string partial;
};

struct Rank {
  int rank = 0;
  std::string prefix;  // "[rankK]: "
  pid_t pid = -1;
  bool running = false;
  int status = 0;      // from waitpid, once it has exited
  int exec_error = 0;  // errno of a failed exec
  Stream out{-1, STDOUT_FILENO, {}}, err{-1, STDERR_FILENO, {}};
};

// Writes each complete line of s.partial + data to s.target with the prefix, keeping the rest;
// with `final` (the rank has exited, or closed the stream) the rest too, ended with a newline.
void emit(Stream& s, const std::string& prefix, const char* data, size_t size, bool final) {
  if (size > 0) s.partial.append(data, size);
  std::string text;
  size_t start = 0;
  for (size_t nl; (nl = s.partial.find('\n', start)) != std::string::npos; start = nl + 1) {
    text += prefix;
    text.append(s.partial, start, nl + 1 - start);
  }
  s.partial.erase(0, start);
  if (!s.partial.empty() && (final || s.partial.size() >= kMaxLine)) {
    text += prefix;
    text += s.partial;
    text += '\n';
    s.partial.clear();
  }
  if (!text.empty()) write_all(s.target, text.data(), text.size());
}

void close_stream(Stream& s, const std::string& prefix) {
  if (s.fd < 0) return;
  close(s.fd);
  s.fd = -1;
  emit(s, prefix, nullptr, 0, true);
}

// Reads up to `reads` chunks of what the pipe holds now; closes it at end of file.
void pump(Stream& s, const std::string& prefix, int reads) {
  char buffer[kReadChunk];
  while (s.fd >= 0 && reads-- > 0) {
    const ssize_t n = read(s.fd, buffer, sizeof buffer);
    if (n > 0) {
      emit(s, prefix, buffer, static_cast<size_t>(n), false);
    } else if (n < 0 && errno == EINTR) {
      ++reads;
    } else if (n < 0 && errno == EAGAIN) {
      return;
    } else {
      close_stream(s, prefix);  // end of file (or a read error: nothing more will come)
    }
  }
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exit code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = strsignal(sig);
    return "signal " + std::to_string(sig) + (name ? " (" + std::string(name) + ")" : "");
  }
  return "status " + std::to_string(status);
}

bool failed(int status) {
  return !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

double grace_seconds() {
  const char* text = std::getenv("EMBER_RUN_GRACE_S");
  if (!text || !*text) return kDefaultGraceSeconds;
  char* end = nullptr;
  const double seconds = std::strtod(text, &end);
  if (*end != '\0' || !std::isfinite(seconds) || seconds < 0 || seconds > 1e6)
    throw std::invalid_argument(
        "EMBER_RUN_GRACE_S must be a number of seconds from 0 to 1e6 (got '" + std::string(text) +
        "')");
  return seconds;
}

void validate(const LaunchOptions& o) {
  auto bad = [](const std::string& message) { throw std::invalid_argument(message); };
  if (o.nproc_per_node < 1)
    bad("--nproc-per-node must be at least 1 (got " + std::to_string(o.nproc_per_node) + ")");
  if (o.nnodes < 1) bad("--nnodes must be at least 1 (got " + std::to_string(o.nnodes) + ")");
  if (o.node_rank < 0 || o.node_rank >= o.nnodes)
    bad("--node-rank must be from 0 to " + std::to_string(o.nnodes - 1) + " with --nnodes " +
        std::to_string(o.nnodes) + " (got " + std::to_string(o.node_rank) + ")");
  if (int64_t{o.nproc_per_node} * o.nnodes > INT_MAX)
    bad("--nproc-per-node times --nnodes is too large");
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  if (o.nproc_per_node > kRanksPerCore * cores && !o.oversubscribe)
    bad("--nproc-per-node " + std::to_string(o.nproc_per_node) +
        " starts far more processes than " + "this machine's " + std::to_string(cores) +
        " CPU cores can run (at most " + std::to_string(kRanksPerCore * cores) + ", " +
        std::to_string(kRanksPerCore) +
        " per core, without --oversubscribe); give a smaller count, or --oversubscribe if you "
        "mean it");
  if (o.nproc_per_node > kMaxRanksPerNode)
    bad("--nproc-per-node " + std::to_string(o.nproc_per_node) + " is more than " +
        std::to_string(kMaxRanksPerNode) + " processes on one node, even with --oversubscribe");
  if (o.master_port < 0 || o.master_port > 65535)
    bad("--master-port must be from 1 to 65535, or 0 for a free port (got " +
        std::to_string(o.master_port) + ")");
  if (o.master_port == 0 && o.nnodes > 1)
    bad("--master-port 0 (a free port of this machine) is for single-node jobs; with --nnodes " +
        std::to_string(o.nnodes) + " every node needs the same port: give it");
  if (o.master_addr.empty()) bad("--master-addr must not be empty");
  if (o.command.empty()) bad("no program to run (ember run [OPTIONS] PROGRAM [ARGS...])");
  if (o.command[0].empty()) bad("the program name is empty");
}

// This process's environment with torchrun's variables for one rank set (replacing any there).
std::vector<std::string> rank_environment(const LaunchOptions& o, int local_rank, bool omp) {
  const int world = o.nproc_per_node * o.nnodes;
  const int rank = o.node_rank * o.nproc_per_node + local_rank;
  std::vector<std::pair<std::string, std::string>> vars = {
      {"MASTER_ADDR", o.master_addr},
      {"MASTER_PORT", std::to_string(o.master_port)},
      {"WORLD_SIZE", std::to_string(world)},
      {"RANK", std::to_string(rank)},
      {"LOCAL_RANK", std::to_string(local_rank)},
      {"LOCAL_WORLD_SIZE", std::to_string(o.nproc_per_node)},
      {"GROUP_RANK", std::to_string(o.node_rank)},
      {"GROUP_WORLD_SIZE", std::to_string(o.nnodes)},
      {"ROLE_RANK", std::to_string(rank)},
      {"ROLE_WORLD_SIZE", std::to_string(world)},
  };
  if (omp) vars.emplace_back("OMP_NUM_THREADS", "1");
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    if (std::none_of(vars.begin(), vars.end(), [&](const auto& v) { return v.first == name; }))
      env.push_back(entry);
  }
  for (const auto& [name, value] : vars) env.push_back(name + "=" + value);
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> result;
  for (auto& s : strings) result.push_back(s.data());
  result.push_back(nullptr);
  return result;
}

// A closed 0, 1 or 2 would be reused by the pipes below and then clobbered by dup2 in the child.
void open_standard_descriptors() {
  for (int fd = 0; fd <= 2; ++fd)
    if (fcntl(fd, F_GETFD) == -1 && errno == EBADF) open("/dev/null", O_RDWR);
}

// In the child, between fork and exec: only async-signal-safe calls.
//
// Each rank gets a session (so a process group) of its own, as torchrun's start_new_session=True
// does: stopping a rank signals its whole group, so a `sh -c '...'` rank and what it started all
// stop and nothing is left holding the output pipes; and a Ctrl-C at the terminal reaches only
// the launcher, which then stops the ranks once, in order (SIGTERM, grace, SIGKILL), instead of
// every rank getting SIGINT at the same time. With no controlling terminal a rank is also never
// stopped by SIGTTIN/SIGTTOU as a background process group would be.
[[noreturn]] void exec_rank(char** argv, char** envp, int out, int err, int exec_report,
                            pid_t launcher, const sigset_t& mask) {
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  for (int sig : kHandledSignals) sigaction(sig, &action, nullptr);
  sigprocmask(SIG_SETMASK, &mask, nullptr);
  setsid();
  // Never outlive the launcher, even when it is SIGKILLed (strictly: the launcher's thread that
  // forked, which for `ember run` is the main thread). The launcher may have died before prctl
  // took effect, which shows as a new parent.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != launcher) _exit(kExecFailed);
  // dup2's copies do not inherit O_CLOEXEC; the originals (and exec_report) close at exec.
  if (dup2(out, STDOUT_FILENO) < 0 || dup2(err, STDERR_FILENO) < 0) {
    const int e = errno;
    [[maybe_unused]] ssize_t n = write(exec_report, &e, sizeof e);
    _exit(kExecFailed);
  }
  environ = envp;
  execvp(argv[0], argv);
  const int e = errno;
  [[maybe_unused]] ssize_t n = write(exec_report, &e, sizeof e);
  _exit(kExecFailed);
}

class Launch {
 public:
  Launch(const LaunchOptions& options, double grace) : options_(options), grace_(grace) {}

  int run() {
    const bool omp = options_.nproc_per_node > 1 && !std::getenv("OMP_NUM_THREADS");
    if (omp)
      say("setting OMP_NUM_THREADS=1 for each process (the default, to avoid overloading the "
          "system); set it yourself to tune");
    ranks_.resize(static_cast<size_t>(options_.nproc_per_node));
    for (int local = 0; local < options_.nproc_per_node && !stopping_; ++local) {
      handle_signals();
      if (!stopping_) start(local, omp);
    }
    while (step()) {
    }
    return finish();
  }

 private:
  void start(int local, bool omp) {
    Rank& r = ranks_[static_cast<size_t>(local)];
    r.rank = options_.node_rank * options_.nproc_per_node + local;
    r.prefix = "[rank" + std::to_string(r.rank) + "]: ";
    std::vector<std::string> env = rank_environment(options_, local, omp);
    std::vector<std::string> args = options_.command;
    std::vector<char*> envp = pointers(env), argv = pointers(args);

    int out[2], err[2], report[2];
    if (pipe2(out, O_CLOEXEC) != 0) return start_failed(r, "pipe");
    if (pipe2(err, O_CLOEXEC) != 0) {
      close_pair(out);
      return start_failed(r, "pipe");
    }
    if (pipe2(report, O_CLOEXEC) != 0) {
      close_pair(out);
      close_pair(err);
      return start_failed(r, "pipe");
    }
    // Signals stay blocked across fork until the child has put the default handlers back, so a
    // signal meant for the child never runs the launcher's handler in it.
    sigset_t all, mask;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &mask);
    const pid_t launcher = getpid();
    const pid_t pid = fork();
    if (pid == 0) exec_rank(argv.data(), envp.data(), out[1], err[1], report[1], launcher, mask);
    const int fork_error = errno;
    pthread_sigmask(SIG_SETMASK, &mask, nullptr);
    close(out[1]);
    close(err[1]);
    close(report[1]);
    if (pid < 0) {
      close(out[0]);
      close(err[0]);
      close(report[0]);
      errno = fork_error;
      return start_failed(r, "fork");
    }
    r.pid = pid;
    r.running = true;
    r.out.fd = out[0];
    r.err.fd = err[0];
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    fcntl(err[0], F_SETFL, O_NONBLOCK);
    // End of file here means exec succeeded (report[1] is close-on-exec); else its errno.
    int exec_error = 0;
    ssize_t n;
    do n = read(report[0], &exec_error, sizeof exec_error);
    while (n < 0 && errno == EINTR);
    close(report[0]);
    if (n == static_cast<ssize_t>(sizeof exec_error)) {
      r.exec_error = exec_error;
      const std::string line = r.prefix + "ember run: cannot execute '" + options_.command[0] +
                               "': " + std::strerror(exec_error) + "\n";
      write_all(STDERR_FILENO, line.data(), line.size());
      begin_stop();  // the ranks not started yet would fail the same way
    }
  }

  void start_failed(Rank& r, const char* what) {
    start_error_ =
        "cannot start rank " + std::to_string(r.rank) + ": " + what + ": " + std::strerror(errno);
    begin_stop();
  }

  static void close_pair(int fds[2]) {
    close(fds[0]);
    close(fds[1]);
  }

  // One round of the loop: handle what happened, then wait for output, a signal or the end of
  // the grace period. False once every rank has been reaped.
  bool step() {
    handle_signals();
    reap();
    if (stopping_ && !killed_ && Clock::now() >= deadline_)
      kill_stragglers("still running " + format_seconds(grace_) + " s after SIGTERM");
    if (std::none_of(ranks_.begin(), ranks_.end(), [](const Rank& r) { return r.running; }))
      return false;
    std::vector<pollfd> fds{{signals_.fd(), POLLIN, 0}};
    std::vector<std::pair<Rank*, Stream*>> streams;
    for (Rank& r : ranks_)
      for (Stream* s : {&r.out, &r.err})
        if (s->fd >= 0) {
          fds.push_back({s->fd, POLLIN, 0});
          streams.emplace_back(&r, s);
        }
    int timeout = -1;
    if (stopping_ && !killed_) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline_ - Clock::now());
      timeout = static_cast<int>(std::clamp<int64_t>(left.count(), 0, INT_MAX));
    }
    if (poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR)
      throw std::system_error(errno, std::generic_category(), "ember run: poll");
    for (size_t i = 1; i < fds.size(); ++i)
      if (fds[i].revents) pump(*streams[i - 1].second, streams[i - 1].first->prefix, 1);
    return true;
  }

  void handle_signals() {
    unsigned char bytes[64];
    ssize_t n;
    while ((n = read(signals_.fd(), bytes, sizeof bytes)) > 0) {
      for (ssize_t i = 0; i < n; ++i) {
        const int sig = bytes[i];
        if (sig != SIGINT && sig != SIGTERM) continue;  // SIGCHLD: reap() looks at every rank
        const std::string name = sig == SIGINT ? "SIGINT" : "SIGTERM";
        if (received_signal_) {  // a second one: no more waiting
          if (!killed_) kill_stragglers("still running at a second " + name);
          continue;
        }
        received_signal_ = sig;
        say("got " + name + "; stopping the ranks");
        begin_stop();
      }
    }
  }

  void reap() {
    for (Rank& r : ranks_) {
      if (!r.running) continue;
      int status;
      pid_t pid;
      do pid = waitpid(r.pid, &status, WNOHANG);
      while (pid < 0 && errno == EINTR);
      if (pid == 0) continue;
      r.running = false;
      r.status = pid > 0 ? status : 0;
      // All it wrote is in the pipes now; what its own children write later is not waited for.
      pump(r.out, r.prefix, kMaxDrainReads);
      pump(r.err, r.prefix, kMaxDrainReads);
      close_stream(r.out, r.prefix);
      close_stream(r.err, r.prefix);
      if (failed(r.status) && !first_failure_ && !received_signal_ && start_error_.empty()) {
        first_failure_ = &r;
        others_stopped_ =
            std::any_of(ranks_.begin(), ranks_.end(), [](const Rank& o) { return o.running; });
        begin_stop();
      }
    }
  }

  void begin_stop() {
    if (stopping_) return;
    stopping_ = true;
    deadline_ = Clock::now() +
                std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(grace_));
    signal_all(SIGTERM);
  }

  void kill_stragglers(const std::string& why) {
    killed_ = true;
    std::string names;
    for (const Rank& r : ranks_)
      if (r.running && !r.exec_error) names += (names.empty() ? "" : ", ") + std::to_string(r.rank);
    if (names.empty()) return;
    say("rank(s) " + names + " " + why + "; sending SIGKILL");
    signal_all(SIGKILL);
  }

  // The whole process group of every rank not yet reaped (its pid is its group's id until then),
  // except one whose exec failed: it is exiting with 127 by itself, which the summary reports.
  void signal_all(int sig) {
    for (const Rank& r : ranks_)
      if (r.running && !r.exec_error && kill(-r.pid, sig) != 0) kill(r.pid, sig);
  }

  int finish() {
    if (first_failure_) {
      const Rank& r = *first_failure_;
      std::string line = "rank " + std::to_string(r.rank) + " (pid " + std::to_string(r.pid) +
                         ") failed with " + describe_status(r.status);
      if (r.exec_error)
        line +=
            " (cannot execute '" + options_.command[0] + "': " + std::strerror(r.exec_error) + ")";
      if (others_stopped_) line += "; stopped the other ranks";
      say(line);
    } else if (!start_error_.empty()) {
      say(start_error_ +
          (std::any_of(ranks_.begin(), ranks_.end(), [](const Rank& r) { return r.pid > 0; })
               ? "; stopped the other ranks"
               : ""));
    }
    if (received_signal_) return 128 + received_signal_;
    return first_failure_ || !start_error_.empty() ? 1 : 0;
  }

  static std::string format_seconds(double seconds) {
    std::string text = std::to_string(seconds);
    text.erase(text.find_last_not_of('0') + 1);
    if (text.back() == '.') text.pop_back();
    return text;
  }

  const LaunchOptions& options_;
  const double grace_;
  SignalPipe signals_;
  std::vector<Rank> ranks_;
  bool stopping_ = false, killed_ = false, others_stopped_ = false;
  int received_signal_ = 0;
  const Rank* first_failure_ = nullptr;
  std::string start_error_;
  Clock::time_point deadline_;
};

// A TCP port of this machine that nothing listens on now (the kernel's pick), for
// --master-port 0.
int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t len = sizeof addr;
  bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
            ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  int err = errno;
  ::close(fd);
  if (!ok) throw std::system_error(err, std::generic_category(), "finding a free port");
  return ntohs(addr.sin_port);
}

}  // namespace

int run_launcher(const LaunchOptions& options) {
  validate(options);
  const double grace = grace_seconds();
  open_standard_descriptors();
  LaunchOptions o = options;
  if (o.master_port == 0) o.master_port = free_port();
  Launch launch(o, grace);
  return launch.run();
}

}  // namespace ember::cli
