#!/usr/bin/env bash
# The example sweep through a real Slurm cluster, as a user runs it
# (docs/sweeps.md, "On a cluster"): a one-node cluster of its own (munge,
# slurmctld, slurmd; every file under one temporary directory, nothing in
# /etc), the example submitted unedited as an array of 3 shards with the
# merge job's per-task dependency, one task cancelled while it audits and
# retried alone (`sbatch --array=K`, which must stay shard K of 3), the merge
# job's dependency pointed at the retry, and the merged output compared with
# the committed example: dataset, sweep.json and page byte for byte, every
# audit and result by the rule (witness_model::measure, applied by merging
# the committed directory with the cluster's: a different audit is refused).
# The cluster is stopped and its directory removed however this ends.
#
#   bash experiments/sweeps/cluster/slurm-roundtrip.sh
#
# Needs root (slurmd starts tasks as the submitting user and the daemons
# run as root here), Debian's slurm-wlm and munge (.ci/run installs them),
# the built binary (MCP_WITNESS, default target/debug/mcp-witness) and an
# install cache (MCP_WITNESS_INSTALLS, default the example test's,
# target/tmp/sweep-installs; an empty one is filled from the registries).
set -euo pipefail
repo="$(cd "$(dirname "$0")/../../.." && pwd)"
witness="${MCP_WITNESS:-$repo/target/debug/mcp-witness}"
export MCP_WITNESS="$witness"
export MCP_WITNESS_INSTALLS="${MCP_WITNESS_INSTALLS:-$repo/target/tmp/sweep-installs}"
committed="$repo/experiments/sweeps/published"
shards=3
# A bound on the whole round-trip, so a stuck cluster fails CI in minutes.
limit_s="${SLURM_ROUNDTRIP_LIMIT_S:-600}"
started=$(date +%s)

fail() {
    echo "slurm round-trip: FAILED: $*" >&2
    exit 1
}
[ "$(id -u)" = 0 ] || fail "run it as root (the daemons and the tasks run as root here)"
for tool in munged mungekey slurmctld slurmd sbatch scontrol squeue scancel sinfo; do
    command -v "$tool" >/dev/null || fail "$tool is not installed (slurm-wlm and munge)"
done
[ -x "$witness" ] || fail "$witness is not built (cargo build)"
mkdir -p "$MCP_WITNESS_INSTALLS"

state="$(mktemp -d "${TMPDIR:-/tmp}/mcp-witness-slurm.XXXXXX")"
chmod 755 "$state"
results="$state/results"
jobs_submitted=()
teardown() {
    status=$?
    trap - EXIT
    if [ "${#jobs_submitted[@]}" -gt 0 ]; then
        scancel "${jobs_submitted[@]}" 2>/dev/null || true
    fi
    for pidfile in slurmd.pid slurmctld.pid munged.pid; do
        pid="$(cat "$state/$pidfile" 2>/dev/null || true)"
        if [ -n "$pid" ]; then
            kill -TERM "$pid" 2>/dev/null || true
            for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
            kill -KILL "$pid" 2>/dev/null || true
        fi
    done
    if [ "$status" != 0 ]; then
        for log in "$state"/*.log "$results"/logs/*.log "$results"/merge.log; do
            [ -f "$log" ] || continue
            echo "--- ${log#"$state"/} (last lines)" >&2
            tail -n 30 "$log" >&2
        done
    fi
    rm -rf "$state"
    exit "$status"
}
trap teardown EXIT
trap 'exit 130' INT TERM

# munge: a key of our own and a socket of our own.
# The key's directory is the daemon's alone; the socket's, everyone's.
mkdir -m 700 "$state/munge"
mkdir -m 755 "$state/run"
mungekey --create --keyfile "$state/munge/munge.key" >/dev/null
munged --force --key-file "$state/munge/munge.key" --socket "$state/run/munge.socket" \
    --pid-file "$state/munged.pid" --log-file "$state/munged.log" \
    --seed-file "$state/munge/seed" 2>>"$state/munged.log"

host="$(hostname -s)"
# Ports of our own, away from a cluster the machine may already belong to.
ctld_port="${SLURM_ROUNDTRIP_PORT:-16817}"
export SLURM_CONF="$state/slurm.conf"
cat >"$SLURM_CONF" <<EOF
ClusterName=mcp-witness-ci
SlurmctldHost=$host
SlurmctldPort=$ctld_port
SlurmdPort=$((ctld_port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$state/run/munge.socket
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/slurmd
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/slurmctld.log
SlurmdLogFile=$state/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
# The example script asks 2 CPUs and 4G a task: declare room for the three
# at once (nothing enforces either without cgroups; the machine decides).
SlurmdParameters=config_overrides
NodeName=$host CPUs=$((2 * shards)) RealMemory=$((4096 * shards)) State=UNKNOWN
PartitionName=ci Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
mkdir -p "$state/ctld" "$state/slurmd"
slurmctld -i
slurmd

elapsed() { echo $(($(date +%s) - started)); }
# Polls `condition` (a command) every 0.2 s until it holds.
wait_for() {
    local what="$1"
    shift
    until "$@"; do
        [ "$(elapsed)" -lt "$limit_s" ] || fail "gave up after ${limit_s}s waiting for $what"
        sleep 0.2
    done
}
node_idle() { [ "$(sinfo -h -n "$host" -o %t 2>/dev/null)" = idle ]; }
wait_for "the node to come up idle" node_idle
echo "slurm round-trip: one-node cluster $host up in $(elapsed)s"

# Submitted as the docs say, from a directory that must stay clean.
mkdir -p "$results"
cd "$state"
script="$repo/experiments/sweeps/cluster/slurm-array.sh"
sweep="$repo/experiments/sweeps/published.toml"
array="$(sbatch --parsable --array=0-$((shards - 1)) "$script" "$sweep" "$results" "$shards")"
jobs_submitted+=("$array")
dependency="afterok:${array}_0"
for task in $(seq 1 $((shards - 1))); do dependency="$dependency:${array}_$task"; done
merge="$(sbatch --parsable --dependency="$dependency" --output="$results/merge.log" \
    --wrap "'$witness' sweep merge $results/shard-* --out $results/merged; echo \"merge exit \$?\"")"
jobs_submitted+=("$merge")

# Cancel the first task seen in the middle of an audit: while an attempt
# runs, a note in its shard's .work/ names its scratch directory, where the
# worker that audits writes its log once the target is installed.
auditing() {
    local task note scratch
    for task in $(seq 0 $((shards - 1))); do
        for note in "$results/shard-$task"/.work/*.scratch; do
            scratch="$(cat "$note" 2>/dev/null || true)"
            if [ -n "$scratch" ] && [ -e "$scratch/worker.log" ]; then
                cancelled="$task"
                return 0
            fi
        done
    done
    return 1
}
wait_for "a task to start an audit" auditing
scancel "${array}_$cancelled"
state_of() { squeue -h -j "$1" -o %T 2>/dev/null; }
gone() { [ -z "$(state_of "${array}_$cancelled")" ]; }
wait_for "task $cancelled to end" gone
[ ! -e "$results/shard-$cancelled/sweep.json" ] \
    || fail "task $cancelled finished before it was cancelled"
echo "slurm round-trip: task $cancelled cancelled mid-audit at $(elapsed)s"
# The merge waits on each task; the cancelled one can no longer satisfy
# it, and Slurm says so (docs/sweeps.md: the dependency must be moved).
reason_of() { squeue -h -j "$1" -o %r 2>/dev/null; }
never() { [ "$(reason_of "$merge")" = DependencyNeverSatisfied ]; }
wait_for "the merge job to see its dependency fail" never

# Retry it alone, the obvious way: an array of one task, which must stay
# shard K of 3 and resume into its directory.
retry="$(sbatch --parsable --array="$cancelled" "$script" "$sweep" "$results" "$shards")"
jobs_submitted+=("$retry")
dependency="afterok"
for task in $(seq 0 $((shards - 1))); do
    if [ "$task" = "$cancelled" ]; then
        dependency="$dependency:${retry}_$task"
    else
        dependency="$dependency:${array}_$task"
    fi
done
scontrol update jobid="$merge" dependency="$dependency"

merged() { [ -z "$(state_of "$merge")" ] && grep -q '^merge exit' "$results/merge.log" 2>/dev/null; }
wait_for "the merge job" merged
merge_exit="$(sed -n 's/^merge exit //p' "$results/merge.log")"

# What each shard says it was.
for task in $(seq 0 $((shards - 1))); do
    shard="$(python3 -c 'import json, sys; s = json.load(open(sys.argv[1]))["shard"]; print("%d/%d" % (s["index"], s["count"]))' \
        "$results/shard-$task/sweep.json")"
    [ "$shard" = "$task/$shards" ] || fail "shard-$task holds shard $shard, not $task/$shards"
done
grep -q "stopped by a signal" "$results/logs/shard-$cancelled.log" \
    || fail "the cancelled task's log does not record the cancel"
[ "$(grep -c 'slurm-array.sh: .* job .* task' "$results/logs/shard-$cancelled.log")" = 2 ] \
    || fail "the retry did not append to the cancelled task's log"
[ -z "$(ls -A "$state" | grep -v -x -e results -e ctld -e slurmd -e munge -e run -e '.*\.log' -e '.*\.pid' -e slurm.conf)" ] \
    || fail "the submit directory gained files: $(ls -A "$state")"

# Compared with the committed example: the dataset, sweep.json and the page
# byte for byte; the documents of every target by the rule, which is what
# merging the two directories applies (two audits of one key that measure
# differently are refused, exit 2); and the merge of the two must write the
# committed dataset again.
expected_exit="$("$witness" sweep merge "$committed" --out "$state/committed" >/dev/null 2>&1; echo $?)"
[ "$merge_exit" = "$expected_exit" ] || fail "the merge exited $merge_exit, the committed example $expected_exit"
for name in dataset.jsonl dataset.csv sweep.json index.html; do
    cmp -s "$committed/$name" "$results/merged/$name" || fail "$name differs from the committed example"
done
"$witness" sweep merge "$committed" "$results/merged" --out "$state/both" 2>"$state/both.log" \
    || [ $? = "$expected_exit" ] || fail "the cluster's audits differ from the committed ones: $(cat "$state/both.log")"
for name in dataset.jsonl dataset.csv sweep.json index.html; do
    cmp -s "$committed/$name" "$state/both/$name" || fail "$name of the two merged differs"
done
targets="$(ls "$results/merged/targets" | wc -l)"
echo "slurm round-trip: ok: $shards shards on Slurm $(sinfo -V | cut -d' ' -f2), task $cancelled cancelled mid-audit and retried alone as shard $cancelled/$shards (job $retry), merged by its dependency job (exit $merge_exit): dataset, sweep.json and page byte for byte the committed example, $targets targets' audits equal by the rule; $(elapsed)s"
