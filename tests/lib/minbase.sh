#!/bin/sh
# tests/lib/minbase.sh - a Debian bookworm minbase rootfs tarball, built
# once and cached, for the tests that need a real distribution inside
# (apt-get in the build profile, sbx inside a podman container) and the
# image-size bench (bench/run.sh):
#
#   tests/lib/minbase.sh [OUT.tar.gz]  (default tests/out/minbase-bookworm.tar.gz)
#
# Runs `debootstrap --variant=minbase bookworm DIR MIRROR` (root; installs
# debootstrap with apt-get when it is missing) and packs DIR with numeric
# owners.  Prints the tarball's path.  An existing OUT is reused.
# MIRROR: $SBX_DEBIAN_MIRROR, default http://deb.debian.org/debian.
set -eu
cd "$(dirname "$0")/../.."
OUT=${1:-tests/out/minbase-bookworm.tar.gz}
MIRROR=${SBX_DEBIAN_MIRROR:-http://deb.debian.org/debian}
if [ -s "$OUT" ]; then
	echo "$OUT"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "minbase.sh: building $OUT needs root (debootstrap)" >&2
	exit 1
fi
if ! command -v debootstrap >/dev/null; then
	echo "minbase.sh: installing debootstrap" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >&2
fi
mkdir -p "$(dirname "$OUT")"
dir=$(mktemp -d /var/tmp/sbx-minbase.XXXXXX)
trap 'rm -rf "$dir"' EXIT
echo "minbase.sh: debootstrap --variant=minbase bookworm $dir $MIRROR" >&2
debootstrap --variant=minbase bookworm "$dir" "$MIRROR" >"$dir.log" 2>&1 || {
	tail -n 20 "$dir.log" >&2
	rm -f "$dir.log"
	exit 1
}
rm -f "$dir.log"
# The apt caches are not part of an image.
rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/*
tar --numeric-owner --xattrs -C "$dir" -czf "$OUT.tmp" .
mv "$OUT.tmp" "$OUT"
echo "$OUT"
