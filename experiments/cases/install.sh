#!/usr/bin/env bash
# Installs the published MCP servers that the case studies and the end-to-end
# tests run, at the exact versions pinned in package.json (node_modules/ is
# not committed). Servers are then launched as
#   node "$PWD/node_modules/.bin/<bin>" ...
# never through npx, which adds hundreds of milliseconds per start.
#
#   ./install.sh        npm install (refreshes package-lock.json if the pins change)
#   ./install.sh --ci   npm ci: exactly what package-lock.json records
set -euo pipefail
cd "$(dirname "$0")"
if [ "${1:-}" = "--ci" ]; then
    npm ci --no-audit --no-fund
else
    npm install --no-audit --no-fund
fi
