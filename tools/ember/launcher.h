// tools/ember/launcher.h: `ember run`, a torchrun-style launcher -- starts N processes of a
// program on this node with the rendezvous environment (RANK, WORLD_SIZE, MASTER_ADDR, ...),
// prefixes their output with "[rankK]: ", and stops them all when one fails. Standard library and
// POSIX only, so it can be built and tested without the rest of ember.
#pragma once

#include <string>
#include <vector>

namespace ember::cli {

struct LaunchOptions {
  int nproc_per_node = 1;  // processes on this node
  int nnodes = 1;
  int node_rank = 0;  // 0 .. nnodes-1
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;           // 0: a free port of this machine (single-node jobs)
  std::vector<std::string> command;  // PROGRAM ARGS..., run with execvp
  // More than kRanksPerCore processes per CPU core of this machine is refused without it: a
  // mistyped count would otherwise fork thousands of processes.
  bool oversubscribe = false;
};

inline constexpr int kRanksPerCore = 4;

// Starts options.nproc_per_node copies of options.command, each with
//   MASTER_ADDR, MASTER_PORT, WORLD_SIZE = nproc_per_node * nnodes,
//   RANK = node_rank * nproc_per_node + LOCAL_RANK, LOCAL_RANK, LOCAL_WORLD_SIZE,
//   GROUP_RANK = node_rank, GROUP_WORLD_SIZE = nnodes, ROLE_RANK = RANK,
//   ROLE_WORLD_SIZE = WORLD_SIZE,
// and OMP_NUM_THREADS=1 when it is unset and nproc_per_node > 1 (with a note on stderr). Every
// line a child writes goes to the same stream of this process prefixed with "[rankK]: ".
//
// When a child exits non-zero or is killed by a signal, the others get SIGTERM, then SIGKILL
// after a grace period (5 s; EMBER_RUN_GRACE_S seconds if set), and one line on stderr names the
// first failing rank. SIGINT or SIGTERM to this process is forwarded the same way; a second one
// sends SIGKILL at once.
//
// A rank whose program cannot be executed exits 127, after a "[rankK]: ember run: cannot
// execute ..." line; the ranks after it are not started. The ranks get a process group (a
// session) each and PR_SET_PDEATHSIG, so they die with the launcher even when it is SIGKILLed.
//
// Returns the status for main: 0 when every rank exited 0, 128 + the signal when this process was
// signalled, else 1. Throws std::invalid_argument for bad options (the message names the option)
// or a bad EMBER_RUN_GRACE_S, before starting anything.
int run_launcher(const LaunchOptions& options);

}  // namespace ember::cli
