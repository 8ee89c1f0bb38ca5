#!/usr/bin/env bash
# Runs mcp-witness in its image (container/build.sh) with the run line of
# docs/container.md: the least privilege the jail needs, the working
# directory mounted at the same path (stores and outputs named relative to
# it, or absolute beneath it, mean the same inside), the pinned installs of
# `audit npm:`/`pypi:` kept in the volume mcp-witness-cache. The exit status
# is mcp-witness's; a signal to this script (Ctrl-C, a stop) reaches it, and
# the audit ends as incomplete (exit 3) with its report written.
#
#   container/run.sh doctor
#   container/run.sh audit npm:@modelcontextprotocol/server-memory@2026.8.31 \
#       --store mem=jsonl:memory.jsonl --env 'MEMORY_FILE_PATH={mem}' --out results
#
# MCPW_ENGINE          podman or docker (default: podman where installed, else docker)
# MCPW_IMAGE           the image (default localhost/mcp-witness:dev)
# MCPW_ENGINE_OPTIONS  further options for `ENGINE run`, split on blanks
# NODE_EXTRA_CA_CERTS, PIP_CERT
#                      when set, that file is given to the container's npm
#                      or pip too (a network that intercepts TLS)
set -euo pipefail

engine="${MCPW_ENGINE:-}"
if [ -z "$engine" ]; then
    if command -v podman >/dev/null; then engine=podman; else engine=docker; fi
fi
image="${MCPW_IMAGE:-localhost/mcp-witness:dev}"

# What each engine's defaults take from bubblewrap (docs/container.md says
# what doctor prints without each).
case "$engine" in
    podman)
        # Podman masks parts of /proc; the kernel then refuses the fresh
        # /proc of bubblewrap's PID namespace. Its seccomp profile allows
        # the namespaces already.
        jail=(--security-opt 'unmask=/proc/*')
        ;;
    docker)
        # Docker's only switch for the masked /proc is systempaths; its
        # seccomp profile refuses unshare, mount and namespace clones to a
        # process without CAP_SYS_ADMIN; AppArmor's docker-default (where
        # the host runs AppArmor) refuses mount.
        jail=(--security-opt systempaths=unconfined --security-opt seccomp=unconfined
            --security-opt apparmor=unconfined)
        ;;
    *)
        printf 'run.sh: MCPW_ENGINE must be podman or docker, not %s\n' "$engine" >&2
        exit 2
        ;;
esac

options=()
# Files written into the working directory belong to the caller on a Linux
# host. As root the image's own user (uid 1000) is kept: root inside would
# lose the processes bound (the kernel exempts root from RLIMIT_NPROC).
if [ "$(uname -s)" = Linux ] && [ "$(id -u)" -ne 0 ]; then
    options+=(--user "$(id -u):$(id -g)")
fi
# Certificates for npm (added to Node's own) and pip (instead of its own).
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -r "$NODE_EXTRA_CA_CERTS" ]; then
    options+=(-v "$NODE_EXTRA_CA_CERTS:/etc/mcp-witness/node-extra-ca.crt:ro"
        -e NODE_EXTRA_CA_CERTS=/etc/mcp-witness/node-extra-ca.crt)
fi
if [ -n "${PIP_CERT:-}" ] && [ -r "$PIP_CERT" ]; then
    options+=(-v "$PIP_CERT:/etc/mcp-witness/pip-ca.crt:ro" -e PIP_CERT=/etc/mcp-witness/pip-ca.crt)
fi
# shellcheck disable=SC2206 # split on blanks, as documented
extra=(${MCPW_ENGINE_OPTIONS:-})

# ${a[@]+"${a[@]}"}: an empty array is "unbound" to macOS's bash 3.2 under set -u.
exec "$engine" run --rm "${jail[@]}" ${options[@]+"${options[@]}"} ${extra[@]+"${extra[@]}"} \
    -v "$PWD:$PWD" -w "$PWD" -v mcp-witness-cache:/home/witness/.cache \
    "$image" "$@"
