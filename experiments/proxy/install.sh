#!/usr/bin/env bash
# Installs the official MCP TypeScript SDK at exactly the version pinned in
# package.json and package-lock.json, for tests/published/proxy_sdk.rs. Needs Node 20+.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund
test -e node_modules/@modelcontextprotocol/sdk/package.json
echo "MCP TypeScript SDK installed in $(pwd)/node_modules"
