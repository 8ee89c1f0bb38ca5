#!/usr/bin/env bash
# Install one candidate at its exact pinned version into the field cache.
#   install.sh REGISTRY NAME VERSION [CACHE [CONSTRAINT...]]
# npm: `npm install` into CACHE/npm-<name>-<version>/ (install scripts allowed:
# native modules such as better-sqlite3 build there). PyPI: a venv per server
# in CACHE/pypi-<name>-<version>/venv. Prints `ok DIR` or `fail DIR: reason`.
set -u
registry=$1 name=$2 version=$3
cache=${4:-${MCP_WITNESS_FIELD_DIR:-$HOME/.cache/mcp-witness/field}}
# CONSTRAINTs (PyPI only) are requirements installed with the package, as
# witness.toml's [install] constraints lists them: "mcp<2" for a server
# written for the mcp 1.x API whose metadata does not exclude mcp 2, and
# "NAME[extra]==VERSION" where the README runs the MCP server from an extra.
constraints=("${@:5}")
dir="$cache/$registry-${name//\//+}-$version"
mkdir -p "$dir"
if [ -f "$dir/.installed" ]; then echo "ok $dir"; exit 0; fi
# Two installers may walk one queue from both ends: the first to a package takes it.
mkdir "$dir/.lock" 2>/dev/null || { echo "busy $dir"; exit 0; }
trap 'rmdir "$dir/.lock"' EXIT
log="$dir/install.log"
case $registry in
  npm)
    ( cd "$dir" && [ -f package.json ] || echo '{"private":true}' > package.json
      timeout 300 npm install --no-audit --no-fund --ignore-scripts=false "$name@$version" ) >"$log" 2>&1 ;;
  pypi)
    ( python3 -m venv "$dir/venv" &&
      timeout 300 "$dir/venv/bin/pip" install --disable-pip-version-check -q "$name==$version" "${constraints[@]}" ) >"$log" 2>&1 ;;
  *) echo "fail $dir: unknown registry $registry"; exit 2 ;;
esac
rc=$?
if [ $rc -eq 0 ]; then touch "$dir/.installed"; echo "ok $dir"; else
  echo "fail $dir: exit $rc: $(grep -iE 'error|requires|ERR!' "$log" | head -2 | tr '\n' ' ' | cut -c1-200)"; fi
