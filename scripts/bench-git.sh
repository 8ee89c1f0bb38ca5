#!/usr/bin/env bash
# The git observer's benchmark: snapshot cost on a repository of 10^4 files
# and 10^4 commits against `git status --porcelain` on the same repository,
# in the same run. Writes bench-git.json (or the path given) and prints it.
# Numbers are never asserted anywhere; docs/git-effects.md says what they
# were on the project's machine.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-bench-git.json}"
out="$(cd "$(dirname "$out")" && pwd)/$(basename "$out")"
cargo bench -p witness-observers-git --bench git_snapshot -- --out "$out"
