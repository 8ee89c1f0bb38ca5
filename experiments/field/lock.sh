#!/usr/bin/env bash
# Writes the lock of one field server's dependencies beside its server.json,
# from its install in the field cache: servers/<id>/package-lock.json (npm)
# or servers/<id>/requirements.lock (PyPI, a `pip freeze`). `lab field`
# passes the lock to install.sh, so that a fresh install of the server gets
# the dependencies of the install that made its committed results (the CI
# slice's servers have one: ci-slice.txt).
#   lock.sh ID [CACHE]     (CACHE: $MCP_WITNESS_FIELD_DIR, else ~/.cache/mcp-witness/field)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
id=${1:?usage: lock.sh ID [CACHE]}
cache=${2:-${MCP_WITNESS_FIELD_DIR:-$HOME/.cache/mcp-witness/field}}
entry="$here/servers/$id"
[ -f "$entry/server.json" ] || { echo "lock.sh: no server $id in $here/servers" >&2; exit 2; }
read -r registry name version < <(python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["packages"][0]
print(p["registryType"], p["identifier"], p["version"])' "$entry/server.json")
dir="$cache/$registry-${name//\//+}-$version"
[ -f "$dir/.installed" ] || { echo "lock.sh: $id is not installed in $dir (lab field --server $id installs it)" >&2; exit 2; }
case $registry in
  npm)
    # The root names the package at its exact version, as install.sh's
    # package.json does for `npm ci`; the directory's name is dropped.
    python3 - "$dir/package-lock.json" "$entry/package-lock.json" "$name" "$version" <<'PY'
import json, sys
source, target, name, version = sys.argv[1:]
lock = json.load(open(source))
lock.pop("name", None)
lock["packages"][""] = {"dependencies": {name: version}}
with open(target, "w") as f:
    json.dump(lock, f, indent=2)
    f.write("\n")
PY
    echo "lock.sh: wrote $entry/package-lock.json" ;;
  pypi)
    { echo "# pip freeze of $name $version's venv; lab field installs exactly these (install.sh --lock)."
      "$dir/venv/bin/pip" freeze --disable-pip-version-check; } >"$entry/requirements.lock"
    echo "lock.sh: wrote $entry/requirements.lock" ;;
  *) echo "lock.sh: unknown registry $registry" >&2; exit 2 ;;
esac
