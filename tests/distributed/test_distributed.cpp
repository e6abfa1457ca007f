// tests/distributed/test_distributed.cpp: multi-process tests of ember::distributed and
// DistributedDataParallel. Each test starts its ranks itself (ember_dist_worker SCENARIO, with
// torchrun's variables on loopback or a file:// store in a fresh directory), waits for them with
// a deadline and checks how each ended; a rank's checks print "FAIL" lines, shown on failure.
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct RankResult {
  int exit_code = -1;  // -1: killed by a signal (signal set) or still running at the deadline
  int signal = 0;
  bool timed_out = false;
  double seconds = 0;  // until it ended
  std::string log;     // stdout and stderr
};

struct Launch {
  std::string scenario;
  int world = 2;
  std::vector<int> ranks = {};   // which ranks to start (all when empty)
  std::string init_method = "";  // empty: env:// on a free loopback port
  double pg_timeout_s = 30;      // the process group's timeout (EMBER_TEST_TIMEOUT_S)
  double deadline_s = 240;       // the test kills every rank after this
  std::map<int, std::map<std::string, std::string>> env = {};  // extra variables per rank
};

// A TCP port nothing listens on right now.
int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

fs::path scratch_dir(const std::string& name) {
  fs::path dir =
      fs::temp_directory_path() / ("ember-dist-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::vector<RankResult> run_ranks(const Launch& launch) {
  std::vector<int> ranks = launch.ranks;
  if (ranks.empty())
    for (int r = 0; r < launch.world; ++r) ranks.push_back(r);
  const fs::path dir = scratch_dir(launch.scenario);
  const int port = free_port();
  std::string init = launch.init_method;
  if (init == "file") init = "file://" + (dir / "store").string();
  std::vector<pid_t> pids;
  std::vector<RankResult> results(ranks.size());
  const auto start = Clock::now();
  for (size_t i = 0; i < ranks.size(); ++i) {
    int rank = ranks[i];
    std::map<std::string, std::string> env{
        {"RANK", std::to_string(rank)},
        {"WORLD_SIZE", std::to_string(launch.world)},
        {"LOCAL_RANK", std::to_string(rank)},
        {"LOCAL_WORLD_SIZE", std::to_string(launch.world)},
        {"MASTER_ADDR", "127.0.0.1"},
        {"MASTER_PORT", std::to_string(port)},
        {"EMBER_TEST_TIMEOUT_S", std::to_string(launch.pg_timeout_s)},
        {"OMP_NUM_THREADS", "1"}};
    if (auto it = launch.env.find(rank); it != launch.env.end())
      for (const auto& [k, v] : it->second) env[k] = v;
    std::string log = (dir / ("rank" + std::to_string(rank) + ".log")).string();
    pid_t pid = ::fork();
    if (pid == 0) {
      int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
      std::vector<std::string> args{EMBER_DIST_WORKER, launch.scenario};
      if (!init.empty()) args.push_back(init);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    pids.push_back(pid);
  }
  size_t running = pids.size();
  std::vector<bool> done(pids.size(), false);
  while (running > 0) {
    bool late = Clock::now() - start > std::chrono::duration<double>(launch.deadline_s);
    for (size_t i = 0; i < pids.size(); ++i) {
      if (done[i]) continue;
      if (late) {
        ::kill(pids[i], SIGKILL);
        results[i].timed_out = true;
      }
      int status = 0;
      pid_t got = ::waitpid(pids[i], &status, late ? 0 : WNOHANG);
      if (got != pids[i]) continue;
      done[i] = true;
      --running;
      results[i].seconds = std::chrono::duration<double>(Clock::now() - start).count();
      if (WIFEXITED(status)) results[i].exit_code = WEXITSTATUS(status);
      if (WIFSIGNALED(status)) results[i].signal = WTERMSIG(status);
    }
    if (running > 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (size_t i = 0; i < ranks.size(); ++i) {
    std::ifstream in(dir / ("rank" + std::to_string(ranks[i]) + ".log"));
    std::stringstream ss;
    ss << in.rdbuf();
    results[i].log = ss.str();
  }
  fs::remove_all(dir);
  return results;
}

std::string describe(const std::vector<RankResult>& results) {
  std::string out;
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    out += "--- rank " + std::to_string(i) + ": exit " + std::to_string(r.exit_code) +
           (r.signal ? " signal " + std::to_string(r.signal) : "") +
           (r.timed_out ? " (killed at the deadline)" : "") + " after " +
           std::to_string(r.seconds) + " s\n" + r.log;
  }
  return out;
}

void expect_all_passed(const std::vector<RankResult>& results) {
  for (const auto& r : results) {
    EXPECT_EQ(r.exit_code, 0) << describe(results);
    if (r.exit_code != 0) return;
  }
}

class Collectives : public ::testing::TestWithParam<int> {};

// Every collective, dtype and reduce op, sync and async, new_group and send/recv on 2, 3 and 4
// processes, through env:// (a TCP store on rank 0).
TEST_P(Collectives, EveryCollectiveDtypeAndOp) {
  expect_all_passed(run_ranks({.scenario = "collectives", .world = GetParam()}));
}

INSTANTIATE_TEST_SUITE_P(World, Collectives, ::testing::Values(2, 3, 4));

TEST(Distributed, CollectivesOverAFileStore) {
  expect_all_passed(run_ranks({.scenario = "collectives", .world = 2, .init_method = "file"}));
}

TEST(Distributed, CollectivesOnCudaTensorsOfTheFakeBackend) {
  // CUDA tensors through the gloo backend are staged through host copies, as in PyTorch.
  expect_all_passed(run_ranks({.scenario = "collectives_fake_cuda", .world = 2}));
}

TEST(Distributed, RankThatExitsFailsTheOthersWithinTheTimeout) {
  auto results = run_ranks({.scenario = "rank_exits", .world = 3, .pg_timeout_s = 20});
  EXPECT_EQ(results[1].exit_code, 9) << describe(results);
  for (int r : {0, 2}) {
    EXPECT_EQ(results[r].exit_code, 0) << describe(results);  // it caught the error it expected
    EXPECT_LT(results[r].seconds, 20.0) << describe(results);
    EXPECT_NE(results[r].log.find("caught:"), std::string::npos) << describe(results);
  }
}

TEST(Distributed, StalledRankFailsTheCollectiveAtTheTimeout) {
  auto results = run_ranks({.scenario = "rank_stalls", .world = 2, .pg_timeout_s = 2});
  EXPECT_EQ(results[0].exit_code, 0) << describe(results);
  EXPECT_LT(results[0].seconds, 5.5) << describe(results);  // rank 1 sleeps 6 s
  EXPECT_NE(results[0].log.find("timeout 2 s"), std::string::npos) << describe(results);
}

TEST(Distributed, MismatchedShapesAreReportedInDetailMode) {
  expect_all_passed(run_ranks({.scenario = "mismatch", .world = 2}));
}

TEST(Distributed, MissingRankFailsTheRendezvousNamingIt) {
  auto results = run_ranks(
      {.scenario = "rendezvous", .world = 3, .ranks = {0, 1}, .pg_timeout_s = 2, .deadline_s = 30});
  for (const auto& r : results) {
    EXPECT_EQ(r.exit_code, 3) << describe(results);
    EXPECT_LT(r.seconds, 5.0) << describe(results);
  }
  EXPECT_NE(results[0].log.find("waiting for rank(s) 2 to join"), std::string::npos)
      << describe(results);
  // Rank 1 times out the same way, or sees rank 0 leave first.
  bool named = results[1].log.find("waiting for rank(s) 2 to join") != std::string::npos;
  bool left = results[1].log.find("ended before every rank joined") != std::string::npos;
  EXPECT_TRUE(named || left) << describe(results);
}

TEST(Distributed, WrongMasterPortFailsTheRendezvousAfterTheTimeout) {
  // Rank 1 looks for the store on a port nothing listens on.
  auto results = run_ranks({.scenario = "rendezvous",
                            .world = 2,
                            .pg_timeout_s = 2,
                            .deadline_s = 30,
                            .env = {{1, {{"MASTER_PORT", std::to_string(free_port())}}}}});
  EXPECT_EQ(results[1].exit_code, 3) << describe(results);
  EXPECT_NE(results[1].log.find("could not reach the rendezvous store"), std::string::npos)
      << describe(results);
  EXPECT_NE(results[1].log.find("MASTER_PORT"), std::string::npos) << describe(results);
  EXPECT_EQ(results[0].exit_code, 3) << describe(results);
  EXPECT_NE(results[0].log.find("waiting for rank(s) 1 to join"), std::string::npos)
      << describe(results);
}

class DataParallelTraining : public ::testing::TestWithParam<int> {};

// DistributedDataParallel against single-process references (dist_ddp_checks.cpp).
TEST_P(DataParallelTraining, MatchesTheSingleProcessReference) {
  expect_all_passed(run_ranks({.scenario = "ddp", .world = GetParam()}));
}

INSTANTIATE_TEST_SUITE_P(World, DataParallelTraining, ::testing::Values(1, 2, 3));

TEST(Distributed, DataParallelOnCudaTensorsOfTheFakeBackend) {
  expect_all_passed(run_ranks({.scenario = "ddp_fake_cuda", .world = 2}));
}

TEST(Distributed, KillingOneRankMidTrainingFailsTheOthers) {
  auto results = run_ranks({.scenario = "ddp_rank_killed", .world = 3, .pg_timeout_s = 20});
  EXPECT_EQ(results[1].signal, SIGKILL) << describe(results);
  for (int r : {0, 2}) {
    EXPECT_EQ(results[r].exit_code, 0) << describe(results);
    EXPECT_LT(results[r].seconds, 20.0) << describe(results);
  }
}

}  // namespace
