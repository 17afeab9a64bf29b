#!/usr/bin/env bash
# Build the images the Compose tests run, on an engine with no registry and builds with no
# network (scripts/ci-docker.sh starts one and makes the debootstrap base image):
#
#   kozyri-arena:ci-<hash>            the platform (Dockerfile), from wheels built on the host
#   kozyri-arena-postgres:ci-<hash>   PostgreSQL from Debian's packages (postgres.Dockerfile)
#   kozyri-arena-redis:ci-<hash>      Redis from Debian's packages (redis.Dockerfile)
#
# <hash> covers everything that goes into an image, so an image whose tag exists is reused and
# older tags are removed. Prints the three names as shell assignments (ARENA_IMAGE=...).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BASE_IMAGE="${ARENA_DOCKER_BASE:-arena-base}"
WORK="$ROOT/build/ci-images"
log() { echo "build-images: $*" >&2; }

tree_hash() {
    # Content hash of files and folders (relative to ROOT), caches and build output left out.
    (cd "$ROOT" && find "$@" -type f ! -path '*/__pycache__/*' ! -name '*.pyc' -print0 |
        sort -z | xargs -0 sha256sum | sha256sum | cut -c1-12)
}

image_exists() { docker image inspect "$1" >/dev/null 2>&1; }

drop_older() {
    # Keep the disk bounded: other ci-* tags of this repository are stale builds (unless
    # ARENA_CI_KEEP_OLDER=1: another checkout may be about to start a stack from one).
    local repo=$1 keep=$2
    [[ ${ARENA_CI_KEEP_OLDER:-0} == 1 ]] && return 0
    docker images --format '{{.Repository}}:{{.Tag}}' "$repo" | grep ":ci-" | grep -v ":ci-build-stage" |
        grep -vx "$keep" |
        xargs -r docker rmi >/dev/null 2>&1 || true
}

quiet_build() {
    # quiet_build TAG ARGS...: the classic builder (no buildx needed), output only on failure.
    local tag=$1
    shift
    DOCKER_BUILDKIT=0 docker build --force-rm --network none --build-arg "BASE_IMAGE=$BASE_IMAGE" \
        -t "$tag" "$@" >"$WORK/build.log" 2>&1 || { tail -30 "$WORK/build.log" >&2; exit 1; }
}

fetch_debs() {
    # The .deb files of $@ and their dependencies missing from the base image, resolved
    # against the base image's own package list, so dpkg -i in the build needs nothing else.
    local dest=$1
    shift
    local status
    status="$(mktemp)"
    docker run --rm --network none "$BASE_IMAGE" cat /var/lib/dpkg/status >"$status"
    rm -rf "$dest" && mkdir -p "$dest/partial"
    local apt=(apt-get -q -y -o "Dir::State::status=$status" -o "Dir::Cache::archives=$dest"
        -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= -o Debug::NoLocking=1
        -o APT::Install-Recommends=false -o APT::Sandbox::User=root --download-only install "$@")
    if ! "${apt[@]}" >"$dest.log" 2>&1; then
        log "package lists look stale; apt-get update"
        apt-get update -qq
        "${apt[@]}" >"$dest.log" 2>&1 || { tail -20 "$dest.log" >&2; exit 1; }
    fi
    rm -rf "$dest/partial" "$status"
}

build_service() {
    # build_service NAME PACKAGES...: a Debian-packaged service image from docker/ci.
    local name=$1
    shift
    local repo="kozyri-arena-$name" tag
    local inputs=("docker/ci/$name.Dockerfile")
    [[ -e $ROOT/docker/ci/$name-entrypoint.sh ]] && inputs+=("docker/ci/$name-entrypoint.sh")
    tag="$repo:ci-$(tree_hash "${inputs[@]}")"
    if image_exists "$tag"; then
        log "$tag is cached"
    else
        local ctx="$WORK/$name"
        log "building $tag (packages: $*)"
        rm -rf "$ctx" && mkdir -p "$ctx"
        fetch_debs "$ctx/debs" "$@"
        cp "$ROOT"/docker/ci/"$name"-entrypoint.sh "$ctx/" 2>/dev/null || true
        quiet_build "$tag" -f "$ROOT/docker/ci/$name.Dockerfile" "$ctx"
        rm -rf "$ctx"
        drop_older "$repo" "$tag"
    fi
    echo "$tag"
}

build_platform() {
    local tag
    tag="kozyri-arena:ci-$(tree_hash Dockerfile .dockerignore docker/entrypoint.sh \
        docker/wait_for_services.py docker/preflight.py docker/install-python.sh \
        docker/requirements.txt \
        pyproject.toml README.md arena sandbox web seeds sample_bots)"
    if image_exists "$tag"; then
        log "$tag is cached"
    else
        log "building $tag from $BASE_IMAGE (wheels built here, no network in the build)"
        "$ROOT/docker/build-wheels.sh" >&2
        # The build stage keeps a tag of its own, so its dependency layers stay cached and the
        # stages of earlier builds (now untagged) can be removed.
        quiet_build kozyri-arena:ci-build-stage --target build "$ROOT"
        quiet_build "$tag" "$ROOT"
        drop_older kozyri-arena "$tag"
        [[ ${ARENA_CI_KEEP_OLDER:-0} == 1 ]] ||
            docker image prune -f --filter label=org.kozyri-arena.stage=build >/dev/null
    fi
    echo "$tag"
}

mkdir -p "$WORK"
image_exists "$BASE_IMAGE" || { log "no $BASE_IMAGE image: run scripts/ci-docker.sh"; exit 1; }
echo "ARENA_CI_POSTGRES_IMAGE=$(build_service postgres postgresql-15)"
echo "ARENA_CI_REDIS_IMAGE=$(build_service redis redis-server)"
echo "ARENA_IMAGE=$(build_platform)"
