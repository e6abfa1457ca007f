#!/usr/bin/env bash
# tests/distributed/netns.sh WORKER: two "hosts" for real -- network namespaces joined by a veth
# pair (10.77.R.1 and 10.77.R.2), rank 0 in one and rank 1 in the other, so the rendezvous store
# and Gloo's connections cross a network interface instead of loopback: the collectives and the
# DDP scenarios must pass there too. Needs root and iproute2; exits 77 (skipped) when namespaces
# cannot be made.
set -uo pipefail
worker=$1
command -v ip >/dev/null || { echo "no iproute2 (ip): skipped"; exit 77; }
tag=$(( $$ % 250 + 1 ))
a=ember-a-$$ b=ember-b-$$ net=10.77.$tag
cleanup() { ip netns del "$a" 2>/dev/null; ip netns del "$b" 2>/dev/null; }
trap cleanup EXIT
if ! ip netns add "$a" 2>/dev/null || ! ip netns add "$b" 2>/dev/null; then
  echo "cannot create network namespaces here (needs root / CAP_NET_ADMIN): skipped"
  exit 77
fi
ip link add "va$tag" netns "$a" type veth peer name "vb$tag" netns "$b" || exit 1
ip -n "$a" addr add "$net.1/24" dev "va$tag" && ip -n "$a" link set "va$tag" up &&
  ip -n "$a" link set lo up || exit 1
ip -n "$b" addr add "$net.2/24" dev "vb$tag" && ip -n "$b" link set "vb$tag" up &&
  ip -n "$b" link set lo up || exit 1
log=$(mktemp -d)
status=0
for scenario in collectives ddp; do
  common=(env MASTER_ADDR="$net.1" MASTER_PORT=29577 WORLD_SIZE=2 OMP_NUM_THREADS=1
          EMBER_TEST_TIMEOUT_S=60)
  ip netns exec "$a" "${common[@]}" RANK=0 LOCAL_RANK=0 timeout 300 "$worker" "$scenario" \
    > "$log/0" 2>&1 &
  p0=$!
  ip netns exec "$b" "${common[@]}" RANK=1 LOCAL_RANK=0 timeout 300 "$worker" "$scenario" \
    > "$log/1" 2>&1 &
  p1=$!
  wait $p0; s0=$?
  wait $p1; s1=$?
  if [ $s0 -ne 0 ] || [ $s1 -ne 0 ]; then
    echo "FAIL: $scenario across namespaces: rank 0 exit $s0, rank 1 exit $s1"
    echo "--- rank 0"; cat "$log/0"; echo "--- rank 1"; cat "$log/1"
    status=1
  else
    echo "$scenario across two network namespaces: ok"
  fi
done
rm -rf "$log"
exit $status
