#!/usr/bin/env bash
# Installs the published MCP servers the wild experiment audits, at exactly
# the versions pinned: the Node servers from package.json and
# package-lock.json (npm, Node 20+), the Python servers and everything they
# run on from requirements.txt, into a virtual environment `venv` (pip,
# Python 3.10+).
#
#   bash experiments/wild/install.sh DIR     # into DIR/{node_modules,venv}
#
# DIR is a cache: a second run with the same pins does nothing (the digest
# of the pin files is kept in DIR/.installed). mcp-server-sqlite-npx runs on
# sqlite3, a native module; with no prebuilt binary to fetch, npm builds it
# from its bundled sources against this Node's own headers (a C++ compiler,
# make and Python are needed; it takes minutes, once per cache).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [ "$#" -ne 1 ]; then
    echo "usage: bash $0 DIR" >&2
    exit 2
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "install.sh: node and npm are needed (Node 20 or later)" >&2
    exit 1
fi
python="${PYTHON:-python3}"
if ! "$python" -c 'import sys, venv; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
    echo "install.sh: Python 3.10 or later with the venv module is needed ($python)" >&2
    exit 1
fi
mkdir -p "$1"
target="$(cd "$1" && pwd)"
pins=(package.json package-lock.json requirements.txt .npmrc relay.py)
digest="$(cd "$here" && cat "${pins[@]}" | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$target/.installed" 2>/dev/null || true)" = "$digest" ] \
    && [ -d "$target/node_modules" ] && [ -x "$target/venv/bin/python" ]; then
    echo "wild servers already installed in $target"
    exit 0
fi
rm -f "$target/.installed"
for file in "${pins[@]}"; do
    cp "$here/$file" "$target/$file"
done
cd "$target"
# Node's own headers, when its prefix has them, so node-gyp needs no download.
node_prefix="$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")"
if [ -e "$node_prefix/include/node/node.h" ]; then
    export npm_config_nodedir="$node_prefix"
fi
npm ci --no-audit --no-fund
for bin in mcp-server-memory-bank mcp-obsidian mcp-server-sqlite-npx mcp-sqlite-server; do
    if [ ! -e "node_modules/.bin/$bin" ]; then
        echo "install.sh: node_modules/.bin/$bin is missing after npm ci" >&2
        exit 1
    fi
done
if [ ! -e node_modules/sqlite3/build/Release/node_sqlite3.node ]; then
    echo "install.sh: sqlite3's native module was not built" >&2
    exit 1
fi
if [ ! -x venv/bin/python ]; then
    "$python" -m venv venv
fi
venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps -r requirements.txt
for module in mcp_server_duckdb mcp_server_sqlite mcp_sqlite_tool sqlite_mcp todo_mcp; do
    if ! venv/bin/python -c "import $module" 2>/dev/null; then
        echo "install.sh: the venv cannot import $module after pip install" >&2
        exit 1
    fi
done
printf '%s\n' "$digest" >.installed
echo "wild servers installed in $target/node_modules and $target/venv"
