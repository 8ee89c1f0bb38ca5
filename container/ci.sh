#!/usr/bin/env bash
# CI for the mcp-witness image (docs/container.md), called by .ci/run after
# the tests: as root, on a clean clone, CI=true, no stdin. It installs podman
# and mmdebstrap at their pinned versions, builds the image with podman
# (container/build.sh, base from mmdebstrap), and inside it, with the
# documented run line, checks that:
#
#   1. `doctor` says `contained` with the network observer, and says
#      `partial` without the one option the line adds (so the line is what
#      the jail needs, and no more than it);
#   2. `lab e1` writes the same verdicts inside as outside, with the same
#      binary (container/same_verdicts.py: every E1 audit, e1.json byte for byte);
#   3. `audit npm:@modelcontextprotocol/server-memory@2026.8.31` installs and
#      runs in the image, with the same verdicts as the same audit outside;
#   4. a `podman stop` mid-audit ends it as incomplete: exit 3 passed
#      through, the report written, the store volume as it was, nothing
#      else in the volumes, no process of the server left on the host.
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

# The documented run line (docs/container.md), its option that the jail needs.
jail=(--security-opt 'unmask=/proc/*')
run() { podman run --rm "${machine[@]}" "$@"; }

work="$(mktemp -d "${TMPDIR:-/tmp}/mcp-witness-container-ci.XXXXXX")"
cleanup_work() { podman rm -f mcp-witness-ci-stop >/dev/null 2>&1 || true; rm -rf "$work"; }
trap 'code=$?; cleanup_work; printf "container/ci.sh: exit %s after %ss\n" "$code" "$(($(date +%s) - started))"' EXIT
# The image's user (uid 1000) writes the volumes, at the same paths as
# outside so that every path an audit records is the same on both sides.
chown 1000:1000 "$work"

say "1. doctor"
run "${jail[@]}" "$image" doctor || fail "doctor inside the container does not say contained"
run "${jail[@]}" "$image" doctor --format json >"$work/doctor.json" || true
python3 - "$work/doctor.json" <<'EOF' || fail "doctor: not contained with the network observer"
import json, sys
d = json.load(open(sys.argv[1]))
missing = [l["layer"] for l in d["layers"] if not l["works"]]
print(f"level {d['level']}, network observer works: {d['network_observer']['works']}, layers missing: {missing or 'none'}")
sys.exit(0 if d["level"] == "contained" and d["network_observer"]["works"] else 1)
EOF
without="$(run "$image" doctor 2>&1 || true)"
printf '%s\n' "$without" | grep -E '^isolation here' || true
printf '%s\n' "$without" | grep -q '^isolation here: partial' \
    || fail "without ${jail[*]} doctor should say partial (the option would not be needed)"

say "2. E1 inside and outside"
mkdir "$work/e1-outside" "$work/e1-inside"
chown 1000:1000 "$work/e1-inside"
"$binary" lab e1 --out "$work/e1-outside" >/dev/null 2>"$work/e1-outside.log" \
    || { cat "$work/e1-outside.log"; fail "lab e1 outside"; }
run "${jail[@]}" -v "$work/e1-inside:$work/e1-inside" "$image" lab e1 --out "$work/e1-inside" >/dev/null \
    || fail "lab e1 inside the container"
python3 container/same_verdicts.py "$work/e1-outside" "$work/e1-inside" || fail "E1 verdicts differ"

say "3. audit npm:@modelcontextprotocol/server-memory@2026.8.31"
# The pinned installs outside the work tree, kept between CI runs as the
# example sweep keeps its own.
cache="${CARGO_TARGET_DIR:-$root/target}/tmp/container-cache"
mkdir -p "$cache" "$work/npm-outside" "$work/npm-inside"
chown 1000:1000 "$cache" "$work/npm-inside"
# A machine whose TLS is intercepted names its extra certificates in
# NODE_EXTRA_CA_CERTS; the container's npm needs them too.
trust=()
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -r "$NODE_EXTRA_CA_CERTS" ]; then
    trust=(-v "$NODE_EXTRA_CA_CERTS:/etc/mcp-witness/extra-ca.crt:ro" -e NODE_EXTRA_CA_CERTS=/etc/mcp-witness/extra-ca.crt)
fi
memory_audit=(audit npm:@modelcontextprotocol/server-memory@2026.8.31 --env 'MEMORY_FILE_PATH={mem}')
"$binary" "${memory_audit[@]}" --store "mem=jsonl:$work/npm-outside/memory.jsonl" --out "$work/npm-outside/out" \
    >"$work/npm-outside.log" 2>&1 || { tail -5 "$work/npm-outside.log"; fail "the memory audit outside"; }
set +e
run "${jail[@]}" "${trust[@]}" -v "$cache:/home/witness/.cache" -v "$work/npm-inside:$work/npm-outside" \
    "$image" "${memory_audit[@]}" --store "mem=jsonl:$work/npm-outside/memory.jsonl" --out "$work/npm-outside/out" \
    >"$work/npm-inside.log" 2>&1
code=$?
set -e
tail -1 "$work/npm-inside.log"
[ "$code" -eq 0 ] || { tail -5 "$work/npm-inside.log"; fail "the memory audit in the image exited $code"; }
python3 container/same_verdicts.py "$work/npm-outside/out/audit.json" "$work/npm-inside/out/audit.json" \
    || fail "the memory audit's verdicts differ"

say "4. podman stop mid-audit"
stop="$work/stop"
mkdir -p "$stop/out" "$stop/data"
printf '{"type":"entity","name":"mine","entityType":"note","observations":[]}\n' >"$stop/data/memory.jsonl"
chown -R 1000:1000 "$stop"
volume_state() { (cd "$stop" && find . -path ./out -prune -o -printf '%p %s %T@ %m\n' | sort | sha256sum); }
before="$(volume_state)"
mark="mcp-witness-ci-stop-$$"
podman run -d --name mcp-witness-ci-stop "${machine[@]}" "${jail[@]}" \
    -v "$stop/out:/out" -v "$stop/data:/data" -v "$root/tests/hostile:/opt/hostile:ro" \
    "$image" audit --timeout-ms 60000 --settle-ms 0 --out /out --store mem=jsonl:/data/memory.jsonl \
    -- python3 /opt/hostile/setsid_survivor.py "$mark" hang >/dev/null
# The server's survivor (its processes are visible from here) starts once
# the hanging call is under way.
for _ in $(seq 300); do
    pgrep -f "recreated.*$mark" >/dev/null && break
    sleep 0.1
done
pgrep -f "recreated.*$mark" >/dev/null || { podman logs mcp-witness-ci-stop | tail -5; fail "the audit never reached its hanging call"; }
sleep 1
podman stop --time 20 mcp-witness-ci-stop >/dev/null
code="$(podman wait mcp-witness-ci-stop)"
podman logs mcp-witness-ci-stop 2>&1 | tail -2
podman rm mcp-witness-ci-stop >/dev/null
[ "$code" = 3 ] || fail "a stopped audit exited $code, not 3 (incomplete)"
python3 - "$stop/out/audit.json" <<'EOF' || fail "the stopped audit's report"
import json, sys
d = json.load(open(sys.argv[1]))
reason = d.get("incomplete_reason") or ""
print(f"complete {d['complete']}, exit code {d['exit_code']}: {reason[:60]}")
sys.exit(0 if d["complete"] is False and reason.startswith("interrupted by SIGTERM") else 1)
EOF
left="$(cd "$stop/out" && find . -mindepth 1 | sort | tr '\n' ' ')"
[ "$left" = "./audit.json ./report.html " ] || fail "the output volume holds more than the report: $left"
[ "$(volume_state)" = "$before" ] || fail "the store volume changed"
! pgrep -f "$mark" >/dev/null || fail "a process of the stopped server is left: $(pgrep -af "$mark")"
echo "stopped: exit 3, report written, volumes as they were, no process left"

podman image inspect --format '{{.Size}}' "$image" | awk '{printf "image size: %d MiB (with the debug binary)\n", $1 / 1048576}'
