#!/usr/bin/env bash
# Installs the published MCP servers the case studies audit, at exactly the
# versions pinned in package.json and package-lock.json, into
# experiments/cases/node_modules. Needs Node 20+ and npm.
#
#   bash experiments/cases/install.sh
#
# Afterwards `mcp-witness lab cases --out DIR` can run. The lock file carries
# no registry address: npm resolves the pinned versions from whatever
# registry it is configured to use.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "install.sh: node and npm are needed (Node 20 or later)" >&2
    exit 1
fi
npm ci --no-audit --no-fund
for bin in mcp-server-memory mcp-server-filesystem ea-database-server mcp-server-everything; do
    if [ ! -e "node_modules/.bin/$bin" ]; then
        echo "install.sh: node_modules/.bin/$bin is missing after npm ci" >&2
        exit 1
    fi
done
echo "case-study servers installed in $(pwd)/node_modules"
