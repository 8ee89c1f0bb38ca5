#!/usr/bin/env bash
# Validates kubernetes-indexed-job.yaml against the Kubernetes API schema,
# offline and strictly (unknown fields are errors), with kubernetes-validate
# from PyPI, pinned in validator-requirements.txt: it ships the API's JSON
# schemas for every Kubernetes release, so nothing is fetched to validate.
# Then it shows the check can fail: a copy with a misspelt field and one
# with a wrong type must both be refused.
#
#   bash experiments/sweeps/cluster/validate.sh [VENV]
#
# VENV (default: a temporary directory, removed after) is where the validator is
# installed. Where a network namespace can be made (root, as in CI), the
# validation itself runs in a new, empty one: proof that it is offline.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
kubernetes="1.33.0"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
venv="${1:-$scratch/venv}"
if [ ! -x "$venv/bin/kubernetes-validate" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/validator-requirements.txt"
fi
offline=()
if unshare --net true 2>/dev/null; then
    offline=(unshare --net)
fi
validate() {
    "${offline[@]}" "$venv/bin/kubernetes-validate" --strict --kubernetes-version "$kubernetes" "$@"
}
validate "$here/kubernetes-indexed-job.yaml"

sed 's/^  completionMode: Indexed/  completionsMode: Indexed/' \
    "$here/kubernetes-indexed-job.yaml" >"$scratch/misspelt.yaml"
sed 's/^  parallelism: 4/  parallelism: four/' \
    "$here/kubernetes-indexed-job.yaml" >"$scratch/wrong-type.yaml"
for broken in misspelt wrong-type; do
    if cmp -s "$here/kubernetes-indexed-job.yaml" "$scratch/$broken.yaml"; then
        echo "validate.sh: the $broken copy is not broken: the manifest changed, fix this script" >&2
        exit 1
    fi
    if validate --quiet "$scratch/$broken.yaml" >/dev/null 2>&1; then
        echo "validate.sh: a $broken manifest was accepted: the validation proves nothing" >&2
        exit 1
    fi
done
echo "kubernetes-indexed-job.yaml: valid against the Kubernetes $kubernetes API schema (strict, offline); broken copies refused"
