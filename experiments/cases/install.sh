#!/usr/bin/env bash
# Installs the published MCP servers the case studies and the coverage
# experiment audit, at exactly the versions pinned: the Node servers from
# package.json and package-lock.json (npm, Node 20+), the Python servers
# (mcp-server-git, mcp-server-time) and everything they run on from
# requirements.txt, into a virtual environment `venv` (pip, Python 3.11).
#
#   bash experiments/cases/install.sh         # into experiments/cases/{node_modules,venv}
#   bash experiments/cases/install.sh DIR     # into DIR/{node_modules,venv}
#
# Afterwards `mcp-witness lab cases --out OUT` and `lab coverage` can run
# (with `--cases-dir DIR` for the second form: the pinned package.json,
# package-lock.json and requirements.txt are copied into DIR first, so DIR is
# installed from the same pins). Neither pin file carries a registry address:
# npm and pip resolve the pinned versions from whatever registry they are
# configured to use.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [ "$#" -gt 1 ]; then
    echo "usage: bash $0 [DIR]" >&2
    exit 2
fi
target="${1:-$here}"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "install.sh: node and npm are needed (Node 20 or later)" >&2
    exit 1
fi
python="${PYTHON:-python3}"
if ! "$python" -c 'import sys, venv; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
    echo "install.sh: Python 3.10 or later with the venv module is needed ($python)" >&2
    exit 1
fi
mkdir -p "$target"
target="$(cd "$target" && pwd)"
if [ "$target" != "$here" ]; then
    # Never overwrite another project's manifest: DIR must be empty of one,
    # or hold exactly ours from an earlier run.
    for file in package.json package-lock.json requirements.txt; do
        if [ -e "$target/$file" ] && ! cmp -s "$here/$file" "$target/$file"; then
            echo "install.sh: $target/$file exists and is not the pinned one; choose another DIR" >&2
            exit 1
        fi
    done
    cp "$here/package.json" "$here/package-lock.json" "$here/requirements.txt" "$target/"
fi
cd "$target"
npm ci --no-audit --no-fund
for bin in mcp-server-memory mcp-server-filesystem ea-database-server mcp-server-everything mcp-server-postgres dbhub; do
    if [ ! -e "node_modules/.bin/$bin" ]; then
        echo "install.sh: node_modules/.bin/$bin is missing after npm ci" >&2
        exit 1
    fi
done
# The Python servers: a virtual environment of exactly the pinned set, and
# nothing else (--no-deps: every dependency is pinned in the file itself).
if [ ! -x venv/bin/python ]; then
    "$python" -m venv venv
fi
venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps -r requirements.txt
for module in mcp_server_git mcp_server_time; do
    if ! venv/bin/python -c "import $module" 2>/dev/null; then
        echo "install.sh: the venv cannot import $module after pip install" >&2
        exit 1
    fi
done
echo "case-study servers installed in $target/node_modules and $target/venv"
