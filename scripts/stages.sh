# scripts/stages.sh: sourced by scripts/test.sh and .ci/run. `stage NAME COMMAND...` runs COMMAND
# under a "=== NAME" heading and records its wall time; the script that sourced this file first
# (the others see EMBER_STAGE_LOG set) prints every stage's time when it exits, with the total
# against its budget in seconds (`stage_budget SECONDS`): a cold .ci/run on the 2-core machine in
# at most 35 minutes, scripts/test.sh in at most 20 (README, Testing).
if [ -z "${EMBER_STAGE_LOG:-}" ]; then
  EMBER_STAGE_LOG=$(mktemp)
  export EMBER_STAGE_LOG
  ember_stage_owner=1
  ember_stage_start=$SECONDS
  ember_stage_budget=0
  trap ember_stage_report EXIT
fi

stage() {
  local name=$1 t0=$SECONDS
  shift
  echo "=== $name"
  "$@"
  printf '%s\t%d\n' "$name" $((SECONDS - t0)) >>"$EMBER_STAGE_LOG"
}

stage_budget() {
  ember_stage_budget=$1
}

ember_stage_report() {
  local rc=$? total=$((SECONDS - ember_stage_start))
  [ -n "${ember_stage_owner:-}" ] || return "$rc"
  echo "=== Wall time by stage"
  awk -F'\t' '{ printf "%7d s  %s\n", $2, $1 }' "$EMBER_STAGE_LOG"
  printf '%7d s  total' "$total"
  if [ "$ember_stage_budget" -gt 0 ]; then
    printf ' (budget %d s, cold on 2 cores)' "$ember_stage_budget"
    [ "$total" -le "$ember_stage_budget" ] || printf ' -- OVER BUDGET: see docs/ARCHITECTURE.md, Build'
  fi
  echo
  rm -f "$EMBER_STAGE_LOG"
  return "$rc"
}
