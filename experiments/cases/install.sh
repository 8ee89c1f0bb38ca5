#!/usr/bin/env bash
# Installs the published MCP servers the case studies audit, at exactly the
# versions pinned in package.json and package-lock.json (npm) and below (a
# Python venv, PyPI). Needs Node 20+ and npm, and Python 3.10+ with venv.
#
#   bash experiments/cases/install.sh         # into experiments/cases/{node_modules,venv}
#   bash experiments/cases/install.sh DIR     # into DIR/{node_modules,venv}
#
# Afterwards `mcp-witness lab cases --out OUT` can run (with `--cases-dir DIR`
# for the second form: the pinned package.json and package-lock.json are
# copied into DIR first, so DIR is installed from the same lock file). The
# lock file carries no registry address: npm resolves the pinned versions
# from whatever registry it is configured to use.
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
mkdir -p "$target"
target="$(cd "$target" && pwd)"
if [ "$target" != "$here" ]; then
    # Never overwrite another project's manifest: DIR must be empty of one,
    # or hold exactly ours from an earlier run.
    for file in package.json package-lock.json; do
        if [ -e "$target/$file" ] && ! cmp -s "$here/$file" "$target/$file"; then
            echo "install.sh: $target/$file exists and is not the pinned one; choose another DIR" >&2
            exit 1
        fi
    done
    cp "$here/package.json" "$here/package-lock.json" "$target/"
fi
cd "$target"
npm ci --no-audit --no-fund
for bin in mcp-server-memory mcp-server-filesystem ea-database-server mcp-server-everything; do
    if [ ! -e "node_modules/.bin/$bin" ]; then
        echo "install.sh: node_modules/.bin/$bin is missing after npm ci" >&2
        exit 1
    fi
done
# The Python servers, pinned, in their own venv (the git case study runs
# `venv/bin/python -m mcp_server_git`).
python_pins="mcp-server-git==2026.10.19 mcp-server-time==2026.10.19"
if ! command -v python3 >/dev/null; then
    echo "install.sh: python3 is needed (3.10 or later, with venv)" >&2
    exit 1
fi
python3 -m venv "$target/venv"
# shellcheck disable=SC2086 # the pins are separate words
"$target/venv/bin/pip" install --quiet --disable-pip-version-check $python_pins
for module in mcp_server_git mcp_server_time; do
    if ! "$target/venv/bin/python" -c "import $module" 2>/dev/null; then
        echo "install.sh: $module does not import after pip install" >&2
        exit 1
    fi
done
echo "case-study servers installed in $target/node_modules and $target/venv"
