#!/usr/bin/env bash
# CI for the mcp-witness image (docs/container.md), called by .ci/run after
# the tests: as root, on a clean clone, CI=true, no stdin. It installs podman
# and mmdebstrap at their pinned versions, builds the image with podman
# (container/build.sh, base from mmdebstrap), and inside it, through
# container/run.sh (the documented run line, which the GitHub Action runs
# too), checks that:
#
#   1. `doctor` says `contained` with the network observer, and says
#      `partial` without the one option the line adds (so the line is what
#      the jail needs, and no more than it);
#   2. `lab e1` writes the same verdicts inside as outside, with the same
#      binary (container/same_verdicts.py: every E1 audit, e1.json byte for byte);
#   3. `audit npm:@modelcontextprotocol/server-memory@2026.8.31` installs and
#      runs in the image, with the same verdicts as the same audit outside;
#   4. a `podman stop` mid-audit, and a SIGTERM to run.sh, end it as
#      incomplete: exit 3 passed through, the report written, the mounted
#      store as it was and nothing else in the volume, no process of the
#      server left on the host, the container removed.
#
#   container/ci.sh [--binary PATH]
#
# The image holds the binary the tests built (target/debug/mcp-witness, or
# PATH): the profile changes nothing an audit writes (the reproduction gate
# holds the debug binary to results the release binary made), and a release
# build would cost CI more than everything here. Exit 0 when every check
# passes; any failure exits non-zero. The last line is the wall time.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
started=$(date +%s)
trap 'printf "container/ci.sh: exit %s after %ss\n" "$?" "$(($(date +%s) - started))"' EXIT
say() { printf '\n-- container: %s (at %ss)\n' "$*" "$(($(date +%s) - started))"; }
fail() { printf 'container/ci.sh: FAILED: %s\n' "$*" >&2; exit 1; }

binary=""
while [ "$#" -gt 0 ]; do
    case "$1" in
        --binary) binary="${2:?--binary needs a path}"; shift 2 ;;
        *) echo "usage: container/ci.sh [--binary PATH]" >&2; exit 2 ;;
    esac
done

# The host's tools, Debian 12 versions (runc: podman's runtime here; crun
# 1.8 fails to set the container's resource limits on some kernels).
HOST_PINS=(
    podman=4.3.1+ds1-8+deb12u1+b3
    runc=1.1.5+ds1-1+deb12u1
    mmdebstrap=1.3.5-7
)
missing=()
for pin in "${HOST_PINS[@]}"; do
    [ "$(dpkg-query -W -f='${Version}' "${pin%%=*}" 2>/dev/null || true)" = "${pin#*=}" ] || missing+=("$pin")
done
if [ "${#missing[@]}" -ne 0 ]; then
    say "installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
podman --version

if [ -z "$binary" ]; then
    cargo build --quiet --bin mcp-witness
    binary="${CARGO_TARGET_DIR:-$root/target}/debug/mcp-witness"
fi

# Podman gives a container its own resource limits, by default above what
# this machine's hard limits allow a process without CAP_SYS_RESOURCE to
# set (runc: "error setting rlimit"); the machine's own limits are passed
# instead. Nothing here concerns the jail, which sets the server's own.
nofile="$(ulimit -Hn)"
nproc="$(ulimit -Hu)"
pid_max="$(cat /proc/sys/kernel/pid_max)"
if [ "$nproc" = unlimited ] || [ "$nproc" -gt "$pid_max" ]; then nproc="$pid_max"; fi
if [ "$nofile" = unlimited ]; then nofile=1048576; fi
machine=(--ulimit "nofile=$nofile:$nofile" --ulimit "nproc=$nproc:$nproc")

image=localhost/mcp-witness:ci
say "building $image"
bash container/build.sh --engine podman --base mmdebstrap --binary "$binary" --tag "$image" -- "${machine[@]}"

# Every check runs the image through container/run.sh, the documented run
# line (what the GitHub Action runs too), with this machine's limits added.
export MCPW_ENGINE=podman MCPW_IMAGE="$image" MCPW_ENGINE_OPTIONS="${machine[*]}"
witness() { bash "$root/container/run.sh" "$@"; }

work="$(mktemp -d "${TMPDIR:-/tmp}/mcp-witness-container-ci.XXXXXX")"
trap 'code=$?; podman rm -f mcp-witness-ci-stop >/dev/null 2>&1 || true; rm -rf "$work"
      printf "container/ci.sh: exit %s after %ss\n" "$code" "$(($(date +%s) - started))"' EXIT
# As root, run.sh keeps the image's user (uid 1000): it writes here.
chown 1000:1000 "$work"
cd "$work"

say "1. doctor"
witness doctor || fail "doctor inside the container does not say contained"
witness doctor --format json >doctor.json || true
python3 - doctor.json <<'PY' || fail "doctor: not contained with the network observer"
import json, sys
d = json.load(open(sys.argv[1]))
missing = [l["layer"] for l in d["layers"] if not l["works"]]
print(f"level {d['level']}, network observer works: {d['network_observer']['works']}, layers missing: {missing or 'none'}")
sys.exit(0 if d["level"] == "contained" and d["network_observer"]["works"] else 1)
PY
# The one option the run line adds is needed: without it, partial.
without="$(podman run --rm "${machine[@]}" "$image" doctor 2>&1 || true)"
printf '%s\n' "$without" | grep -E '^(missing|isolation here)' | cut -c1-150 || true
printf '%s\n' "$without" | grep -q '^isolation here: partial' \
    || fail "without unmask=/proc/* doctor should say partial (then the option would not be needed)"

say "2. E1 inside and outside"
mkdir e1-outside e1-inside
chown 1000:1000 e1-inside
"$binary" lab e1 --out e1-outside >/dev/null 2>e1-outside.log || { cat e1-outside.log; fail "lab e1 outside"; }
witness lab e1 --out e1-inside >/dev/null 2>e1-inside.log || { cat e1-inside.log; fail "lab e1 in the image"; }
python3 "$root/container/same_verdicts.py" e1-outside e1-inside || fail "E1 verdicts differ"

say "3. audit npm:@modelcontextprotocol/server-memory@2026.8.31"
# The same command, store and output paths on both sides (the run line
# mounts the working directory at its own path), one after the other.
memory_audit=(audit npm:@modelcontextprotocol/server-memory@2026.8.31 --env 'MEMORY_FILE_PATH={mem}'
    --store mem=jsonl:memory.jsonl --out npm)
"$binary" "${memory_audit[@]}" >npm-outside.log 2>&1 || { tail -5 npm-outside.log; fail "the memory audit outside"; }
mv npm npm-outside
set +e
witness "${memory_audit[@]}" >npm-inside.log 2>&1
code=$?
set -e
tail -1 npm-inside.log
[ "$code" -eq 0 ] || { tail -5 npm-inside.log; fail "the memory audit in the image exited $code"; }
python3 "$root/container/same_verdicts.py" npm-outside/audit.json npm/audit.json \
    || fail "the memory audit's verdicts differ"

# A hanging call (tests/hostile/setsid_survivor.py, whose setsid child
# outlives its group), then $1: the engine's stop, or SIGTERM to run.sh.
stopped_mid_audit() {
    local how="$1" dir="$work/stop-$1" mark="mcp-witness-ci-stop-$1-$$" pid code left
    mkdir -p "$dir/data"
    printf '{"type":"entity","name":"mine","entityType":"note","observations":[]}\n' >"$dir/data/memory.jsonl"
    chown -R 1000:1000 "$dir"
    cd "$dir"
    local before
    before="$(find . -mindepth 1 -printf '%p %s %T@ %m\n' | sort | sha256sum)"
    MCPW_ENGINE_OPTIONS="${machine[*]} --name mcp-witness-ci-stop -v $root/tests/hostile:/opt/hostile:ro" \
        bash "$root/container/run.sh" audit --timeout-ms 60000 --settle-ms 0 --out out \
        --store mem=jsonl:data/memory.jsonl -- python3 /opt/hostile/setsid_survivor.py "$mark" hang \
        >../"stop-$how.log" 2>&1 &
    pid=$!
    # The survivor (the container's processes are visible from here)
    # starts once the hanging call is under way.
    for _ in $(seq 300); do
        pgrep -f "recreated.*$mark" >/dev/null && break
        sleep 0.1
    done
    pgrep -f "recreated.*$mark" >/dev/null || { tail -5 ../"stop-$how.log"; fail "$how: the audit never reached its hanging call"; }
    sleep 1
    case "$how" in
        podman-stop) podman stop --time 20 mcp-witness-ci-stop >/dev/null ;;
        sigterm) kill -TERM "$pid" ;;
    esac
    set +e
    wait "$pid"
    code=$?
    set -e
    tail -1 ../"stop-$how.log"
    [ "$code" = 3 ] || fail "$how: the audit exited $code, not 3 (incomplete)"
    python3 - out/audit.json <<'PY' || fail "$how: the stopped audit's report"
import json, sys
d = json.load(open(sys.argv[1]))
reason = d.get("incomplete_reason") or ""
sys.exit(0 if d["complete"] is False and reason.startswith("interrupted by SIGTERM") else 1)
PY
    left="$(cd out && find . -mindepth 1 | sort | tr '\n' ' ')"
    [ "$left" = "./audit.json ./report.html " ] || fail "$how: the output holds more than the report: $left"
    rm -r out
    [ "$(find . -mindepth 1 -printf '%p %s %T@ %m\n' | sort | sha256sum)" = "$before" ] \
        || fail "$how: the mounted directory changed beyond the report"
    ! pgrep -f "$mark" >/dev/null || fail "$how: a process of the stopped server is left: $(pgrep -af "$mark")"
    for _ in $(seq 50); do podman container exists mcp-witness-ci-stop || break; sleep 0.1; done
    ! podman container exists mcp-witness-ci-stop || fail "$how: the container was not removed"
    echo "$how: exit 3, the report written, nothing else in the volume, no process left"
    cd "$work"
}
say "4. a stop mid-audit: podman stop, then SIGTERM to the run line"
stopped_mid_audit podman-stop
stopped_mid_audit sigterm

podman image inspect --format '{{.Size}}' "$image" | awk '{printf "image size: %d MiB (with the debug binary)\n", $1 / 1048576}'
