#!/usr/bin/env bash
# A sweep on Slurm: one array job, one task per shard, the task id being the
# shard. Every task runs the same plain `mcp-witness sweep` as shard
# TASK/SHARDS, into RESULTS/shard-TASK, and appends its log to
# RESULTS/logs/shard-TASK.log. Submit N shards as tasks 0 to N-1, naming N,
# and merge when all are done:
#
#   jobid=$(sbatch --parsable --array=0-3 experiments/sweeps/cluster/slurm-array.sh \
#       experiments/sweeps/published.toml /shared/results 4)
#   merge=$(sbatch --parsable --dependency=afterok:${jobid}_0:${jobid}_1:${jobid}_2:${jobid}_3 \
#       --wrap 'mcp-witness sweep merge /shared/results/shard-* --out /shared/results/merged')
#
# Retry one task, here 2, after it failed or was cancelled: submit it again
# as an array of one. It stays shard 2 of 4 and resumes into its directory.
# Then set the merge's dependency anew: once a task it waited on was
# cancelled, Slurm marks it DependencyNeverSatisfied for good, even after a
# rerun of that task completed.
#
#   retry=$(sbatch --parsable --array=2 experiments/sweeps/cluster/slurm-array.sh \
#       experiments/sweeps/published.toml /shared/results 4)
#   scontrol update jobid=$merge dependency=afterok:${jobid}_0:${jobid}_1:${retry}_2:${jobid}_3
#
# (`scontrol requeue ${jobid}_2` reruns it under its own id instead; the
# merge's dependency must be set again all the same.)
#
# The number of shards is the third argument (or MCP_WITNESS_SHARD_COUNT),
# never the size of the array that happens to run: a retry of one task is
# an array of one.
#
# Each node needs the mcp-witness binary (MCP_WITNESS names it, default
# from PATH), node/npm and python3 for the installs, and the package
# registries. MCP_WITNESS_INSTALLS moves the install cache (default: the
# node's temporary directory); one cache per node is shared by its tasks.
#SBATCH --job-name=mcp-witness-sweep
#SBATCH --cpus-per-task=2
#SBATCH --mem=4G
#SBATCH --time=04:00:00
# The task's own log is under RESULTS (below); Slurm's file would land in
# the submit directory, a checkout's working tree as often as not. Given
# another --output on the command line, a requeue appends to it.
#SBATCH --output=/dev/null
#SBATCH --open-mode=append
set -uo pipefail

usage="usage: sbatch --array=0-N-1 slurm-array.sh SWEEP.toml RESULTS N (or MCP_WITNESS_SHARD_COUNT=N)"
if [ -z "${2:-}" ]; then
    echo "slurm-array.sh: $usage" >&2
    exit 2
fi
sweep="$1"
results="$2"
mkdir -p "$results/logs" || exit 2
task="${SLURM_ARRAY_TASK_ID:-}"
exec >>"$results/logs/shard-${task:-none}.log" 2>&1
echo "slurm-array.sh: $(date -u +%FT%TZ) job ${SLURM_JOB_ID:-?} task ${task:-none} on $(hostname)"
if [ -z "$task" ]; then
    echo "slurm-array.sh: SLURM_ARRAY_TASK_ID is not set: $usage"
    exit 2
fi
shards="${3:-${MCP_WITNESS_SHARD_COUNT:-}}"
case "$shards" in
    '' | *[!0-9]*)
        echo "slurm-array.sh: the number of shards is missing or not a number (${shards:-unset}): $usage"
        exit 2
        ;;
esac
witness="${MCP_WITNESS:-mcp-witness}"
installs="${MCP_WITNESS_INSTALLS:-${TMPDIR:-/tmp}/mcp-witness-installs}"

# Given as MCP_WITNESS_SHARD, the shard wins over the array's own variables;
# a task id past the count is refused by the sweep (exit 2).
MCP_WITNESS_SHARD="$task/$shards" "$witness" sweep "$sweep" --out "$results/shard-$task" \
    --installs "$installs" --jobs "${SLURM_CPUS_PER_TASK:-1}" &
sweep_pid=$!
# scancel signals every process of the task; the sweep stops its workers
# and servers. Say so in the log, which otherwise ends mid-line.
said_stopped=""
say_stopped() {
    [ -n "$said_stopped" ] && return
    said_stopped=yes
    echo "slurm-array.sh: $(date -u +%FT%TZ) stopped by a signal ($1; cancelled, or past the time limit)"
}
trap 'say_stopped "the task script got it"; kill -TERM "$sweep_pid" 2>/dev/null' TERM INT
wait "$sweep_pid"
status=$?
# A signal interrupted `wait`: wait for the sweep itself.
while kill -0 "$sweep_pid" 2>/dev/null; do
    wait "$sweep_pid"
    status=$?
done
# Slurm may signal the sweep before this shell (it walks the task's
# processes one by one): the sweep's own status still tells.
if [ "$status" -gt 128 ]; then
    say_stopped "the sweep died of SIG$(kill -l $((status - 128)) 2>/dev/null || echo $((status - 128)))"
fi
echo "slurm-array.sh: $(date -u +%FT%TZ) shard $task/$shards: sweep exit $status"
# A stopped shard is unfinished whatever the sweep returned; it is resumed
# by running the task again.
[ -z "$said_stopped" ] || exit 143
# Exit 1 (a check failed) and 3 (a target could not conclude) are results,
# written to the shard's directory, so the task succeeded and the merge
# may run; anything else (2: an invalid invocation) fails the task.
case "$status" in
    0 | 1 | 3) exit 0 ;;
    *) exit "$status" ;;
esac
