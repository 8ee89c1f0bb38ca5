#!/usr/bin/env bash
# Runs the hostile battery's fastest cases N rounds in a row (default 1000;
# three runs a round) and counts hangs, panics and leftovers. Not part of
# CI: it takes minutes.
#
#   bash tests/hostile/soak.sh [N] [path/to/mcp-witness]
#
# Each round: an audit whose server leaves a setsid child behind (normal
# end), an audit of a decoy-id server, and an audit of a server that hangs
# mid-call, ended by SIGTERM. A run past 30 s is a hang; "panicked" on
# stderr is a panic; a process carrying the round's marker, or anything left
# in the round's TMPDIR, is a leftover.
set -u
N=${1:-1000}
BIN=${2:-$(dirname "$0")/../../target/debug/mcp-witness}
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
hangs=0 panics=0 leftovers=0 wrong_exit=0

check_round() { # marker tmpdir stderr-file
  if grep -q panicked "$3"; then panics=$((panics + 1)); fi
  sleep 0.05
  if pgrep -f -- "$1" >/dev/null; then
    leftovers=$((leftovers + 1)); pkill -KILL -f -- "$1"
  fi
  if [ -n "$(ls -A "$2")" ]; then leftovers=$((leftovers + 1)); rm -rf "${2:?}"/*; fi
}

run() { # expected-codes marker tmpdir args...
  local expect=$1 mark=$2 tmp=$3; shift 3
  TMPDIR=$tmp timeout -s KILL 30 "$BIN" "$@" >"$WORK/out" 2>"$WORK/err" </dev/null
  local code=$?
  if [ $code -eq 137 ]; then hangs=$((hangs + 1));
  elif [[ " $expect " != *" $code "* ]]; then
    wrong_exit=$((wrong_exit + 1)); echo "unexpected exit $code: $*" >&2; tail -3 "$WORK/err" >&2
  fi
  check_round "$mark" "$tmp" "$WORK/err"
}

for i in $(seq 1 "$N"); do
  mark="witness-soak-$$-$i"
  tmp="$WORK/tmp"; mkdir -p "$tmp"
  # Exit 1 when the survivor's write in HOME lands within the call (a
  # read-only tool may not write), 0 when a loaded machine delays it past.
  run "0 1" "$mark" "$tmp" audit --format json --settle-ms 0 --timeout-ms 5000 -- \
    python3 "$HERE/setsid_survivor.py" "$mark"
  run "0" "$mark" "$tmp" audit --format json --settle-ms 0 --era legacy -- \
    python3 "$HERE/decoy_id.py"
  TMPDIR=$tmp timeout -s KILL 30 "$BIN" audit --format json --settle-ms 0 -- \
    python3 "$HERE/setsid_survivor.py" "$mark" hang >"$WORK/out" 2>"$WORK/err" </dev/null &
  pid=$!
  for _ in $(seq 1 200); do pgrep -f -- "$mark.*recreated|recreated.*$mark" >/dev/null && break; sleep 0.05; done
  kill -TERM $pid 2>/dev/null
  wait $pid; code=$?
  if [ $code -eq 137 ]; then hangs=$((hangs + 1));
  elif [ $code -ne 3 ]; then
    wrong_exit=$((wrong_exit + 1)); echo "unexpected exit $code after SIGTERM" >&2; tail -3 "$WORK/err" >&2
  fi
  check_round "$mark" "$tmp" "$WORK/err"
  if [ $((i % 25)) -eq 0 ]; then
    echo "round $i (runs $((i * 3))): hangs=$hangs panics=$panics leftovers=$leftovers wrong_exit=$wrong_exit"
  fi
done
echo "rounds=$N runs=$((N * 3)) hangs=$hangs panics=$panics leftovers=$leftovers wrong_exit=$wrong_exit"
[ $((hangs + panics + leftovers + wrong_exit)) -eq 0 ]
