#!/usr/bin/env bash
# The field study on Slurm: one array job, one task per shard, the task id
# being the shard. SERVERS is a half (development, evaluation, all: its ids
# from split.json) or a file of development servers' ids (one a line, `#`
# a comment: the CI slice is experiments/field/ci-slice.txt). Task K of N
# runs `mcp-witness lab field ... --shard K/N` (the servers in id order,
# dealt round: the K-th, the (K+N)-th, ...) into RESULTS/shard-K, and
# appends its log to RESULTS/logs/shard-K.log. Merge when all are done; the
# merge is byte for byte what one `lab field` over the same servers writes:
#
#   jobid=$(sbatch --parsable --array=0-3 experiments/field/slurm-array.sh \
#       development /shared/field 4)
#   sbatch --dependency=afterok:${jobid}_0:${jobid}_1:${jobid}_2:${jobid}_3 \
#       --wrap 'mcp-witness lab field --half development --out /shared/field/merged \
#           --merge /shared/field/shard-0 --merge /shared/field/shard-1 ...'
#
# (for a file of ids, the merge takes no --half: its servers are development.)
# A task reruns all its servers when retried (`sbatch --array=K`, the same
# three arguments): `lab field` does not resume.
#
# Each node needs the mcp-witness binary (MCP_WITNESS, default from PATH;
# built from a checkout, which holds experiments/field), node/npm and
# python3 for the installs, PostgreSQL for the SQL servers, and the package
# registries. MCP_WITNESS_FIELD_DIR moves the install cache (default
# ~/.cache/mcp-witness/field); the servers are installed there on first use,
# each by the one task that runs it.
#SBATCH --job-name=mcp-witness-field
#SBATCH --cpus-per-task=1
#SBATCH --mem=4G
#SBATCH --time=04:00:00
# The task's own log is under RESULTS (below), not in the submit directory.
#SBATCH --output=/dev/null
#SBATCH --open-mode=append
set -uo pipefail

usage="usage: sbatch --array=0-N-1 slurm-array.sh SERVERS RESULTS N (SERVERS: development, evaluation, all, or a file of ids)"
if [ -z "${3:-}" ]; then
    echo "slurm-array.sh: $usage" >&2
    exit 2
fi
servers="$1"
results="$2"
shards="$3"
mkdir -p "$results/logs" || exit 2
task="${SLURM_ARRAY_TASK_ID:-}"
exec >>"$results/logs/shard-${task:-none}.log" 2>&1
echo "slurm-array.sh: $(date -u +%FT%TZ) job ${SLURM_JOB_ID:-?} task ${task:-none} on $(hostname)"
case "$task" in
    '' | *[!0-9]*)
        echo "slurm-array.sh: SLURM_ARRAY_TASK_ID is not set: $usage"
        exit 2
        ;;
esac
witness="${MCP_WITNESS:-mcp-witness}"
case "$servers" in
    development | evaluation | all) chosen=(--half "$servers") ;;
    *)
        # The file's ids as --server arguments; `lab field` checks each is
        # a development server.
        ids="$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$servers")" || {
            echo "slurm-array.sh: cannot read the servers file $servers"
            exit 2
        }
        chosen=()
        for id in $ids; do chosen+=(--server "$id"); done
        [ "${#chosen[@]}" -gt 0 ] || {
            echo "slurm-array.sh: no server in $servers"
            exit 2
        }
        ;;
esac
"$witness" lab field "${chosen[@]}" --shard "$task/$shards" --out "$results/shard-$task" &
field_pid=$!
trap 'echo "slurm-array.sh: $(date -u +%FT%TZ) stopped by a signal (cancelled, or past the time limit)"; kill -TERM "$field_pid" 2>/dev/null' TERM INT
wait "$field_pid"
status=$?
while kill -0 "$field_pid" 2>/dev/null; do
    wait "$field_pid"
    status=$?
done
echo "slurm-array.sh: $(date -u +%FT%TZ) shard $task/$shards: lab field exit $status"
# Exit 1 (a lie escaped) and 3 (a server or an audit did not finish) are
# results written to the shard's directory, so the task succeeded and the
# merge may run; anything else (2: an invalid invocation) fails the task.
case "$status" in
    0 | 1 | 3) exit 0 ;;
    *) exit "$status" ;;
esac
