#!/bin/sh
# tests/lib/mkrootfs.sh OUT.tar[.gz|.xz|.zst] [EXTRA_FILE:DEST ...]
#
# Build a minimal busybox rootfs tarball from Debian's busybox-static
# (/bin/busybox): applet symlinks, /etc/passwd and group, empty /proc,
# /dev, /sys, /tmp.  Extra files (e.g. static test programs) are copied to
# DEST inside.  Owned by root in the tarball whoever builds it.
set -eu
out=$1
shift
bb=/bin/busybox
[ -x "$bb" ] || { echo "mkrootfs: $bb missing (apt-get install busybox-static)" >&2; exit 1; }
case "$(file -b "$bb" 2>/dev/null || echo static)" in
*dynamic*) echo "mkrootfs: $bb is not static" >&2; exit 1 ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
r=$tmp/root
mkdir -p "$r/bin" "$r/sbin" "$r/usr/bin" "$r/usr/sbin" "$r/etc" "$r/proc" "$r/dev" \
	"$r/sys" "$r/tmp" "$r/root" "$r/home" "$r/run" "$r/var/tmp"
chmod 1777 "$r/tmp" "$r/var/tmp"
chmod 0700 "$r/root"
cp "$bb" "$r/bin/busybox"
for a in $("$bb" --list-full); do
	[ "$a" = bin/busybox ] && continue
	mkdir -p "$r/$(dirname "$a")"
	ln -sf /bin/busybox "$r/$a"
done
cat > "$r/etc/passwd" <<'P'
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/sh
P
cat > "$r/etc/group" <<'G'
root:x:0:
nogroup:x:65534:
G
echo "sbx-test" > "$r/etc/hostname"
for spec in "$@"; do
	src=${spec%%:*}
	dst=${spec#*:}
	mkdir -p "$r/$(dirname "$dst")"
	cp "$src" "$r/$dst"
done
case "$out" in
*.tar.gz | *.tgz) comp=--gzip ;;
*.tar.xz) comp=--xz ;;
*.tar.zst) comp=--zstd ;;
*.tar.bz2) comp=--bzip2 ;;
*) comp= ;;
esac
# shellcheck disable=SC2086
tar -C "$r" --numeric-owner --owner=0 --group=0 $comp -cf "$out.tmp" .
mv "$out.tmp" "$out"
