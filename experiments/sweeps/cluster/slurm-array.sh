#!/usr/bin/env bash
# A sweep on Slurm: one array job, one task per shard. Every task runs the
# same plain `mcp-witness sweep`, which reads its shard from the array's
# variables (SLURM_ARRAY_TASK_ID, _MIN, _STEP, _COUNT), and writes its own
# directory under RESULTS. Submit N shards, then merge when all are done:
#
#   jobid=$(sbatch --parsable --array=0-3 experiments/sweeps/cluster/slurm-array.sh \
#       experiments/sweeps/published.toml /shared/results)
#   sbatch --dependency=afterok:$jobid --wrap \
#       'mcp-witness sweep merge /shared/results/shard-* --out /shared/results/merged'
#
# Each node needs the mcp-witness binary (MCP_WITNESS names it, default
# from PATH), node/npm and python3 for the installs, and the package
# registries. MCP_WITNESS_INSTALLS moves the install cache (default: the
# node's temporary directory); one cache per node is shared by its tasks.
#SBATCH --job-name=mcp-witness-sweep
#SBATCH --cpus-per-task=2
#SBATCH --mem=4G
#SBATCH --time=04:00:00
#SBATCH --output=mcp-witness-sweep-%A_%a.log
set -uo pipefail

sweep="${1:?usage: sbatch --array=0-N slurm-array.sh SWEEP.toml RESULTS}"
results="${2:?usage: sbatch --array=0-N slurm-array.sh SWEEP.toml RESULTS}"
task="${SLURM_ARRAY_TASK_ID:?submit this with sbatch --array}"
witness="${MCP_WITNESS:-mcp-witness}"
installs="${MCP_WITNESS_INSTALLS:-${TMPDIR:-/tmp}/mcp-witness-installs}"

"$witness" sweep "$sweep" --out "$results/shard-$task" \
    --installs "$installs" --jobs "${SLURM_CPUS_PER_TASK:-1}"
status=$?
# Exit 1 (a check failed) and 3 (a target could not conclude) are results,
# written to the shard's directory, so the task succeeded and the merge
# may run; anything else (2: an invalid invocation) fails the task.
case "$status" in
    0 | 1 | 3) exit 0 ;;
    *) exit "$status" ;;
esac
