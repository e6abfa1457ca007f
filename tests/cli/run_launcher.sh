#!/usr/bin/env bash
# tests/cli/run_launcher.sh EMBER: `ember run`, the torchrun-style launcher -- every rank's
# environment, the "[rankK]: " prefixes on stdout and stderr, program arguments taken verbatim,
# stopping the other ranks when one fails (SIGTERM, then SIGKILL after EMBER_RUN_GRACE_S), a
# signalled launcher, a missing program, and one-line errors for bad options.
set -uo pipefail
ember=$1
fail() { echo "FAIL: $*"; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
out=$dir/out err=$dir/err
now_ms() { echo $((${EPOCHREALTIME/./} / 1000)); }
run() { env -u OMP_NUM_THREADS "$ember" run "$@" > "$out" 2> "$err"; }

# The environment of each rank: RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE MASTER_ADDR MASTER_PORT.
show_env='echo "$RANK $WORLD_SIZE $LOCAL_RANK $LOCAL_WORLD_SIZE $MASTER_ADDR $MASTER_PORT"'
run --nproc-per-node 3 sh -c "$show_env" || fail "--nproc-per-node 3 exited $?: $(cat "$err")"
want='[rank0]: 0 3 0 3 127.0.0.1 29500
[rank1]: 1 3 1 3 127.0.0.1 29500
[rank2]: 2 3 2 3 127.0.0.1 29500'
[ "$(sort "$out")" = "$want" ] || fail "--nproc-per-node 3 environment: $(cat "$out")"
grep -q "OMP_NUM_THREADS=1" "$err" || fail "no note about OMP_NUM_THREADS=1: $(cat "$err")"
run --nproc-per-node 3 sh -c 'echo "$OMP_NUM_THREADS $GROUP_RANK $ROLE_RANK $ROLE_WORLD_SIZE"' ||
  fail "OMP_NUM_THREADS run exited $?"
[ "$(sort "$out")" = "$(printf '[rank%s]: 1 0 %s 3\n' 0 0 1 1 2 2)" ] ||
  fail "OMP_NUM_THREADS, GROUP_RANK, ROLE_RANK, ROLE_WORLD_SIZE: $(cat "$out")"

run --nproc-per-node 2 --nnodes 2 --node-rank 1 --master-addr 10.1.2.3 --master-port 1234 \
  sh -c "$show_env" || fail "--nnodes 2 --node-rank 1 exited $?: $(cat "$err")"
want='[rank2]: 2 4 0 2 10.1.2.3 1234
[rank3]: 3 4 1 2 10.1.2.3 1234'
[ "$(sort "$out")" = "$want" ] || fail "--nnodes 2 --node-rank 1 environment: $(cat "$out")"

# Prefixes: stdout lines to stdout, stderr lines to stderr, a last line without '\n' flushed.
run --nproc-per-node 2 sh -c 'echo "out $RANK"; echo "err $RANK" >&2; printf "tail $RANK"' ||
  fail "prefix run exited $?"
want='[rank0]: out 0
[rank0]: tail 0
[rank1]: out 1
[rank1]: tail 1'
[ "$(sort "$out")" = "$want" ] || fail "stdout lines and prefixes: $(cat "$out")"
[ "$(grep '^\[rank' "$err" | sort)" = "$(printf '[rank0]: err 0\n[rank1]: err 1')" ] ||
  fail "stderr lines and prefixes: $(cat "$err")"

# Everything from PROGRAM on is the program's, options included; `--` before PROGRAM works too.
run --nproc-per-node 1 sh -c 'echo "$@"' sh --nproc-per-node 5 -x -- --y || fail "verbatim args"
[ "$(cat "$out")" = "[rank0]: --nproc-per-node 5 -x -- --y" ] || fail "args not verbatim: $(cat "$out")"
run --nproc-per-node 1 -- sh -c 'echo "$0"' zero || fail "-- before PROGRAM exited $?"
[ "$(cat "$out")" = "[rank0]: zero" ] || fail "-- before PROGRAM: $(cat "$out")"
run --nproc-per-node 1 "$ember" --help || fail "ember --help under ember run exited $?"
grep -q "^\[rank0\]: Usage:" "$out" || fail "--help after PROGRAM did not reach it: $(cat "$out")"
run --nproc-per-node 2 "$ember" train --model mlp --epochs 0 && fail "train --epochs 0 should fail"
grep -q '^\[rank[01]\]: ember: error: .*--epochs' "$err" ||
  fail "the ranks' train did not get --epochs 0: $(cat "$err")"

# Rank 1 exits 3 while rank 0 sleeps: the launcher stops rank 0 (and its sleep) at once.
marker="60.$$"
start=$(now_ms)
run --nproc-per-node 2 sh -c "if [ \$RANK = 1 ]; then exit 3; fi; sleep $marker; true"
rc=$? took=$(($(now_ms) - start))
[ $rc -ne 0 ] || fail "a failing rank should make the launcher fail"
[ $took -lt 10000 ] || fail "the launcher took $took ms to stop after rank 1 failed"
grep -q "rank 1 (pid [0-9]*) failed with exit code 3" "$err" ||
  fail "no line naming rank 1 and exit code 3: $(cat "$err")"
pgrep -f "sleep $marker" > /dev/null && fail "rank 0's sleep outlived the launcher"

# A rank that ignores SIGTERM is SIGKILLed after EMBER_RUN_GRACE_S.
start=$(now_ms)
EMBER_RUN_GRACE_S=1 run --nproc-per-node 2 \
  sh -c "if [ \$RANK = 1 ]; then sleep 0.2; exit 3; fi; trap '' TERM; sleep $marker; true"
rc=$? took=$(($(now_ms) - start))
[ $rc -ne 0 ] || fail "the SIGTERM-ignoring run should fail"
[ $took -ge 1000 ] && [ $took -lt 10000 ] ||
  fail "SIGTERM-ignoring rank: took $took ms, want the 1 s grace and then SIGKILL"
grep -q "SIGKILL" "$err" || fail "no SIGKILL after the grace period: $(cat "$err")"
grep -q "rank 1 (pid [0-9]*) failed with exit code 3" "$err" || fail "summary: $(cat "$err")"
pgrep -f "sleep $marker" > /dev/null && fail "the SIGTERM-ignoring sleep outlived the launcher"

# SIGTERM and SIGINT to the launcher are forwarded; it exits with 128 + the signal.
for sig in TERM INT; do
  env -u OMP_NUM_THREADS "$ember" run --nproc-per-node 2 sh -c "echo up; sleep $marker; true" \
    > "$out" 2> "$err" &
  pid=$!
  # Up to 60 s: under the sanitizers, beside other tests on 2 cores, the two ranks once took
  # over 10 s to print.
  for _ in $(seq 600); do [ "$(grep -c up "$out")" -eq 2 ] && break; sleep 0.1; done
  [ "$(grep -c up "$out")" -eq 2 ] || fail "the ranks did not start in 60 s: $(cat "$out" "$err")"
  kill -$sig $pid
  for _ in $(seq 100); do kill -0 $pid 2> /dev/null || break; sleep 0.1; done
  kill -0 $pid 2> /dev/null && { kill -KILL $pid; fail "the launcher still ran 10 s after SIG$sig"; }
  wait $pid
  rc=$?
  want=$((128 + $(kill -l $sig)))
  [ $rc -eq $want ] || fail "SIG$sig to the launcher: exit $rc, want $want ($(cat "$err"))"
  pgrep -f "sleep $marker" > /dev/null && fail "a rank outlived the launcher after SIG$sig"
done

# A missing program: one line per rank that tried, exit code 127 in the summary.
run --nproc-per-node 2 /nonexistent/program --flag && fail "a missing program should fail"
grep -q "^\[rank0\]: .*cannot execute '/nonexistent/program'" "$err" ||
  fail "no per-rank line for the missing program: $(cat "$err")"
grep -q "rank 0 (pid [0-9]*) failed with exit code 127" "$err" ||
  fail "no summary for the missing program: $(cat "$err")"
run --nproc-per-node 1 no-such-program-on-path-$$ && fail "a missing program on PATH should fail"
grep -q "exit code 127" "$err" || fail "missing program on PATH: $(cat "$err")"

expect_error() {  # a one-line "ember: error:" and exit status 1
  local log; log=$("$ember" run "$@" 2>&1); local rc=$?
  [ $rc -eq 1 ] || fail "'ember run $*' exited $rc: $log"
  [ "$(echo "$log" | wc -l)" -eq 1 ] || fail "'ember run $*' printed more than one line: $log"
  echo "$log" | grep -q "^ember: error:" || fail "'ember run $*' printed: $log"
}
expect_error --nproc-per-node 0 true
expect_error --nproc-per-node -2 true
expect_error --nproc-per-node two true
expect_error --nnodes 0 true
expect_error --nnodes 2 --node-rank 2 true
expect_error --node-rank -1 true
expect_error --master-port -1 true
expect_error --nnodes 2 --master-port 0 true
# --master-port 0: a free port, the same for every rank.
ports=$("$ember" run --nproc-per-node 2 --master-port 0 sh -c 'echo "$MASTER_PORT"' 2>/dev/null |
        sed 's/^\[rank[0-9]\]: //' | sort -u)
[ "$(echo "$ports" | wc -l)" -eq 1 ] && [ "$ports" -gt 0 ] 2>/dev/null ||
  fail "--master-port 0 gave ports '$ports'"
expect_error --master-port 65536 true
expect_error --master-addr "" true
expect_error --nproc-per-node 2
expect_error --bogus true
EMBER_RUN_GRACE_S=soon expect_error true
echo "run launcher: ok"
