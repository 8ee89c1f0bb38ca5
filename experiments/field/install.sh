#!/usr/bin/env bash
# Install one candidate at its exact pinned version into the field cache.
#   install.sh [--lock FILE] REGISTRY NAME VERSION [CACHE [CONSTRAINT...]]
# npm: `npm install` into CACHE/npm-<name>-<version>/ (install scripts allowed:
# native modules such as better-sqlite3 build there). PyPI: a venv per server
# in CACHE/pypi-<name>-<version>/venv. Prints `ok DIR` or `fail DIR: reason`.
#
# --lock pins the dependencies too, for a server whose audits are held to
# committed bytes (the CI slice): a pinned package alone still resolves its
# dependencies to whatever is newest the day it is installed. For npm the
# FILE is a package-lock.json (`npm ci`); for PyPI a `pip freeze` of the
# venv the committed results were made with, installed as it is (--no-deps).
# `lab field` passes servers/<id>/package-lock.json or requirements.lock
# when the server has one.
set -u
lock=
if [ "${1:-}" = --lock ]; then lock=$2; shift 2; fi
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
    if [ -n "$lock" ]; then
      # The lock's root names the package at its exact version; package.json
      # must say the same for `npm ci`, which installs the lock as it is.
      ( cd "$dir" && cp "$lock" package-lock.json &&
        printf '{"private":true,"dependencies":{"%s":"%s"}}\n' "$name" "$version" > package.json &&
        timeout 300 npm ci --no-audit --no-fund --ignore-scripts=false ) >"$log" 2>&1
    else
      ( cd "$dir" && [ -f package.json ] || echo '{"private":true}' > package.json
        timeout 300 npm install --no-audit --no-fund --ignore-scripts=false "$name@$version" ) >"$log" 2>&1
    fi ;;
  pypi)
    # With a lock, exactly the venv it froze: no resolution (a venv made
    # before a dependency's new release may not be what the resolver picks
    # from the same pins today), so the constraints are in it already.
    if [ -n "$lock" ]; then
      wanted=(--no-deps "$name==$version" -r "$lock")
    else
      wanted=("$name==$version" "${constraints[@]}")
    fi
    ( python3 -m venv "$dir/venv" &&
      timeout 300 "$dir/venv/bin/pip" install --disable-pip-version-check -q "${wanted[@]}" ) >"$log" 2>&1 ;;
  *) echo "fail $dir: unknown registry $registry"; exit 2 ;;
esac
rc=$?
if [ $rc -eq 0 ]; then touch "$dir/.installed"; echo "ok $dir"; else
  echo "fail $dir: exit $rc: $(grep -iE 'error|requires|ERR!' "$log" | head -2 | tr '\n' ' ' | cut -c1-200)"; fi
