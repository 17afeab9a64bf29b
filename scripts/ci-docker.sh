#!/usr/bin/env bash
# Bring up a private Docker engine for the sandbox tests and build the bot runner image.
#
# Idempotent: reuses a running engine and cached images. The engine runs WITHOUT default
# networking (no bridge, no iptables/NAT, no ip_forward change), so containers only ever get
# network "none" and the host's firewall is left alone. Image builds need no registry: the base
# image is made with debootstrap from the machine's own Debian mirror.
#
# Usage: bash scripts/ci-docker.sh     prints the export line (also written to $STATE/env)
#        source scripts/ci-docker.sh   the same, and DOCKER_HOST is then set in this shell
#        source "$(bash scripts/ci-docker.sh --env-file)"   DOCKER_HOST of an earlier run
set -euo pipefail

STATE="${ARENA_DOCKER_STATE:-/var/tmp/arena-docker}"
SOCK="$STATE/docker.sock"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$HERE")"
PACKAGES_FILE="$ROOT/sandbox/runner-packages.txt"
# The toolchain images are named after their package list, so a changed list is a new image
# (an engine with an older one cached builds the new one; sandbox/docker.py computes the same).
LANGS_TAG="$(sha256sum "$PACKAGES_FILE" | cut -c1-12)"
BASE_IMAGE="${ARENA_DOCKER_BASE:-arena-base}"
TOOLCHAINS_IMAGE="${ARENA_DOCKER_TOOLCHAINS:-arena-toolchains:$LANGS_TAG}"
RUNNER_IMAGE="${ARENA_DOCKER_IMAGE:-kozyri-arena-runner:$LANGS_TAG}"

if [[ "${1:-}" == "--env-file" ]]; then
    echo "$STATE/env"
    return 0 2>/dev/null || exit 0
fi

log() { echo "ci-docker: $*" >&2; }

install_packages() {
    local missing=()
    command -v bwrap >/dev/null || missing+=(bubblewrap)
    command -v dockerd >/dev/null || missing+=(docker.io)
    command -v debootstrap >/dev/null || missing+=(debootstrap)
    [[ -e /usr/lib/python3/dist-packages/seccomp.cpython-311-x86_64-linux-gnu.so ]] \
        || ls /usr/lib/python3/dist-packages/seccomp*.so >/dev/null 2>&1 || missing+=(python3-seccomp)
    command -v node >/dev/null || missing+=(nodejs)
    if ((${#missing[@]})); then
        log "installing ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        local guard=""
        if [[ ! -e /usr/sbin/policy-rc.d ]]; then
            # The packaged engine must not start itself with default networking (a bridge,
            # NAT rules, ip_forward): forbid service starts while installing.
            guard=/usr/sbin/policy-rc.d
            printf '#!/bin/sh\nexit 101\n' >"$guard" && chmod 755 "$guard"
        fi
        local rc=0
        { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" \
            >/dev/null; } || rc=$?
        [[ -z $guard ]] || rm -f "$guard"
        return "$rc"
    fi
}

engine_up() { DOCKER_HOST="unix://$SOCK" docker info >/dev/null 2>&1; }

start_engine() {
    mkdir -p "$STATE"
    if engine_up; then
        log "reusing the engine at $SOCK"
        return
    fi
    log "starting dockerd (no bridge, no iptables) under $STATE"
    # setsid: the engine must outlive this script; stop-docker.sh ends it by its pid file.
    setsid dockerd --data-root "$STATE/data" --exec-root "$STATE/exec" \
        --pidfile "$STATE/dockerd.pid" -H "unix://$SOCK" --storage-driver overlay2 \
        --iptables=false --ip6tables=false --ip-forward=false --ip-masq=false --bridge=none \
        >"$STATE/dockerd.log" 2>&1 </dev/null &
    for _ in $(seq 300); do
        engine_up && return
        sleep 0.2
    done
    log "dockerd did not come up; last lines of its log:"
    tail -20 "$STATE/dockerd.log" >&2
    return 1
}

debian_mirror() {
    local src=/etc/apt/sources.list.d/debian.sources
    if [[ -r $src ]]; then
        awk '/^URIs:/{print $2; exit}' "$src"
    else
        awk '$1=="deb"{print $2; exit}' /etc/apt/sources.list
    fi
}

runner_packages() { grep -v '^[[:space:]]*\(#\|$\)' "$PACKAGES_FILE"; }

debootstrap_rootfs() {
    # debootstrap_rootfs DIR: a minimal Debian of this machine's release, with python3 and nodejs.
    local mirror suite rootfs=$1
    mirror="$(debian_mirror)"
    suite="$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")"
    log "debootstrap $suite from $mirror (python3 and nodejs included)"
    rm -rf "$rootfs"
    debootstrap --variant=minbase --include=python3,nodejs "$suite" "$rootfs" "$mirror" \
        >"$STATE/debootstrap.log" 2>&1 || { tail -20 "$STATE/debootstrap.log" >&2; return 1; }
}

import_rootfs() {
    # import_rootfs DIR IMAGE: the folder, without apt's caches, as an image.
    chroot "$1" apt-get clean
    rm -rf "$1"/var/lib/apt/lists/*
    tar -C "$1" -c . | docker import - "$2" >/dev/null
}

add_toolchains() {
    # add_toolchains DIR: the runner's packages installed inside the rootfs (apt runs in the
    # chroot with the host's network; the image build itself never has one).
    local rootfs=$1 rc=0
    cp /etc/resolv.conf "$rootfs/etc/resolv.conf"
    mount -t proc proc "$rootfs/proc"
    # shellcheck disable=SC2064
    trap "umount '$rootfs/proc' 2>/dev/null || true" EXIT
    # shellcheck disable=SC2046
    { chroot "$rootfs" apt-get update -qq &&
        DEBIAN_FRONTEND=noninteractive chroot "$rootfs" apt-get install -y -qq \
            --no-install-recommends $(runner_packages); } >"$STATE/toolchains.log" 2>&1 || rc=$?
    umount "$rootfs/proc"
    trap - EXIT
    ((rc == 0)) || { tail -20 "$STATE/toolchains.log" >&2; return "$rc"; }
}

build_base() {
    # Two images from one debootstrap: the small base (other images build on it) and the
    # toolchain base the runner image is made from.
    local have_base=0 rootfs="$STATE/rootfs.$$"
    docker image inspect "$BASE_IMAGE" >/dev/null 2>&1 && have_base=1
    if docker image inspect "$TOOLCHAINS_IMAGE" >/dev/null 2>&1; then
        log "toolchain image $TOOLCHAINS_IMAGE is cached"
        ((have_base)) && return
    fi
    debootstrap_rootfs "$rootfs"
    ((have_base)) || import_rootfs "$rootfs" "$BASE_IMAGE"
    if ! docker image inspect "$TOOLCHAINS_IMAGE" >/dev/null 2>&1; then
        log "installing the runner's toolchains: $(runner_packages | tr '\n' ' ')"
        add_toolchains "$rootfs"
        import_rootfs "$rootfs" "$TOOLCHAINS_IMAGE"
    fi
    rm -rf "$rootfs"
}

build_runner() {
    log "building $RUNNER_IMAGE from $TOOLCHAINS_IMAGE"
    DOCKER_BUILDKIT=0 docker build -q --network none --build-arg "BASE_IMAGE=$TOOLCHAINS_IMAGE" \
        -t "$RUNNER_IMAGE" -f "$ROOT/sandbox/runner.Dockerfile" "$ROOT/sandbox" >/dev/null
}

install_packages
start_engine
export DOCKER_HOST="unix://$SOCK"
build_base
build_runner
echo "export DOCKER_HOST=$DOCKER_HOST" >"$STATE/env"
echo "export DOCKER_HOST=$DOCKER_HOST"
