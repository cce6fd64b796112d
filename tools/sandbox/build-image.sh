#!/usr/bin/env bash
# Builds the Cognition sandbox image WITHOUT a registry:
#   1. lay out a root filesystem locally and `docker import` it as a base image;
#   2. `docker build` tools/sandbox/Dockerfile FROM that base (adds the non-root user etc.).
#
# Usage: build-image.sh [--force] [--debootstrap] [--image NAME:TAG]
#   --force        rebuild even when the image already exists (default: skip, so it is idempotent)
#   --debootstrap  realistic Debian bookworm (minbase + procps, ~1 min, ~200 MB) instead of the
#                  busybox-static rootfs (seconds, ~2 MB)
#   --image        image name (default cognition-sandbox:latest, or $COGNITION_DOCKER_IMAGE)
# Where a registry is reachable, the plain alternative is:
#   docker build -t cognition-sandbox:latest -f tools/sandbox/Dockerfile.registry tools/sandbox
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
log() { printf '[build-image] %s\n' "$*" >&2; }

image="${COGNITION_DOCKER_IMAGE:-cognition-sandbox:latest}"
force=0
flavour=busybox
while (($#)); do
  case "$1" in
    --force) force=1 ;;
    --debootstrap) flavour=debootstrap ;;
    --image) image="${2:?--image needs a value}"; shift ;;
    -h | --help) sed -n '2,14p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) log "unknown argument: $1"; exit 2 ;;
  esac
  shift
done

if ((force == 0)) && docker image inspect "${image}" >/dev/null 2>&1; then
  log "${image} already exists (use --force to rebuild)"
  exit 0
fi

apt_install() {
  if [[ "$(id -u)" != 0 ]]; then
    log "need the Debian package(s) $* (install them as root)"
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends "$@" >/dev/null 2>&1 \
    || { apt-get update -qq && apt-get install -y -qq --no-install-recommends "$@" >/dev/null; }
}

work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
rootfs="${work}/rootfs"
mkdir -p "${rootfs}"
started=${SECONDS}

case "${flavour}" in
  busybox)
    base="cognition-sandbox-base:busybox"
    # Debian's busybox-static: one statically linked binary, so the rootfs needs no libc.
    dpkg -s busybox-static >/dev/null 2>&1 || apt_install busybox-static
    mkdir -p "${rootfs}"/{bin,sbin,usr/bin,usr/sbin,etc,tmp,home,root,workspace,proc,sys,dev,var/tmp}
    cp /bin/busybox "${rootfs}/bin/busybox"
    for applet in $("${rootfs}/bin/busybox" --list-full); do
      [[ "${applet}" == bin/busybox ]] && continue
      mkdir -p "${rootfs}/$(dirname "${applet}")"
      ln -sf /bin/busybox "${rootfs}/${applet}"
    done
    printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' \
      >"${rootfs}/etc/passwd"
    printf 'root:x:0:\nnogroup:x:65534:\n' >"${rootfs}/etc/group"
    chmod 1777 "${rootfs}/tmp" "${rootfs}/var/tmp"
    ;;
  debootstrap)
    base="cognition-sandbox-base:bookworm"
    command -v debootstrap >/dev/null 2>&1 || apt_install debootstrap
    # Use the mirror apt is already configured with (the only archive reachable here).
    mirror="$(grep -h -o -E '^URIs: *[^ ]+' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1 | awk '{print $2}')"
    mirror="${mirror:-http://deb.debian.org/debian}"
    log "debootstrap bookworm from ${mirror} (about a minute)"
    debootstrap --variant=minbase --include=procps bookworm "${rootfs}" "${mirror}" >"${work}/debootstrap.log" 2>&1 \
      || { tail -n 30 "${work}/debootstrap.log" >&2; exit 1; }
    rm -rf "${rootfs}/var/cache/apt/archives/"*.deb "${rootfs}/var/lib/apt/lists/"*
    ;;
esac

log "importing ${base}"
tar -C "${rootfs}" --numeric-owner -c . | docker import - "${base}" >/dev/null

log "building ${image} FROM ${base}"
# The legacy builder resolves FROM against the local image store; BuildKit may try a registry.
DOCKER_BUILDKIT=0 docker build -q --build-arg "BASE_IMAGE=${base}" -t "${image}" \
  -f "${here}/Dockerfile" "${here}" >/dev/null 2>"${work}/build.log" \
  || { cat "${work}/build.log" >&2; exit 1; }
log "built ${image} (${flavour}) in $((SECONDS - started))s"
