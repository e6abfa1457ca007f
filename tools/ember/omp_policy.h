// tools/ember/omp_policy.h: how long idle OpenMP threads spin before sleeping, for the ember
// program.
#pragma once

namespace ember::cli {

// GNU OpenMP reads its spin policy once, when it loads: by default an idle thread spins about
// 300000 times before it sleeps. On a machine where other processes keep the cores busy, those
// spinning threads take the core that the thread doing the work needs, and every parallel region
// waits for a time slice (measured on 2 cores with one busy: an MLP training step 1 ms -> 4-8 ms).
// Unless the user set GOMP_SPINCOUNT or OMP_WAIT_POLICY, this re-runs the program with
// GOMP_SPINCOUNT=10000 (about 10-40 us of spinning, which still covers the gaps between the
// regions of one step). Returns only when it did not re-run (already set, or exec failed).
void apply_omp_spin_policy(char** argv);

}  // namespace ember::cli
