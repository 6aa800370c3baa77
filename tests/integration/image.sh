#!/bin/bash
# tests/integration/image.sh - rootfs tarballs through the real binary:
# `sbx image unpack` (the cache `run --rootfs` uses) and `unpack-to`, as root
# and as nobody: content keys, ownership (kept as in the tarball for root,
# the invoking user's otherwise), the cache hit, hostile tarballs leaving
# the host untouched, bombs stopped with no half image left, usage errors.
. "$(dirname "$0")/../lib/tap.sh"

NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --)
BASE=$TAP_TMP/base
mkdir -p "$BASE" && chmod 0777 "$BASE"
OUTSIDE=$TAP_TMP/outside
mkdir -p "$OUTSIDE/sub" && echo SECRET >"$OUTSIDE/secret" && chmod -R a+rwX "$OUTSIDE"

# mktar OUT KIND: write a tarball with python's tarfile (exact names, owners).
mktar() {
	python3 - "$1" "$2" "$OUTSIDE" <<'EOF'
import io, sys, tarfile
out, kind, outside = sys.argv[1:4]
mode = "w:gz" if out.endswith(".gz") else "w"
t = tarfile.open(out, mode, format=tarfile.PAX_FORMAT)
def add(name, type=tarfile.REGTYPE, data=b"", mode=0o644, uid=1234, gid=2345, link="", size=None):
    ti = tarfile.TarInfo(name)
    ti.type, ti.mode, ti.uid, ti.gid, ti.linkname, ti.mtime = type, mode, uid, gid, link, 1500000000
    if type == tarfile.CHRTYPE:
        ti.devmajor, ti.devminor = 1, 3
    if size is not None:
        ti.size = size
        t.addfile(ti, io.BytesIO(b"\0" * size))
    else:
        ti.size = len(data)
        t.addfile(ti, io.BytesIO(data))
if kind == "normal":
    add("./", tarfile.DIRTYPE, mode=0o755, uid=0, gid=0)
    add("./etc/", tarfile.DIRTYPE, mode=0o755, uid=0, gid=0)
    add("./etc/hostname", data=b"image\n", uid=0, gid=0)
    add("./home/", tarfile.DIRTYPE, mode=0o755, uid=0, gid=0)
    add("./home/u/", tarfile.DIRTYPE, mode=0o700)
    add("./home/u/file", data=b"owned by 1234\n", mode=0o600)
    add("./bin/", tarfile.DIRTYPE, mode=0o755, uid=0, gid=0)
    add("./bin/su", data=b"#!/bin/sh\n", mode=0o4755, uid=0, gid=0)
    add("./bin/sh", tarfile.SYMTYPE, link="busybox", uid=0, gid=0)
    add("./bin/link", tarfile.LNKTYPE, link="./etc/hostname", uid=0, gid=0)
elif kind == "hostile":
    add("ok", data=b"fine\n")
    add("../escape", data=b"escaped\n")
    add("a/../../escape2", data=b"escaped\n")
    add(outside + "/abs", data=b"escaped\n")
    add("l", tarfile.SYMTYPE, link=outside)
    add("l/pwned", data=b"escaped\n")
    add("l/secret", data=b"overwritten\n")
    add("hl", tarfile.LNKTYPE, link="/etc/passwd")
    add("hl2", tarfile.LNKTYPE, link="l/secret")
    add("dev/null", tarfile.CHRTYPE, mode=0o666)
    add("fifo", tarfile.FIFOTYPE)
    add("s", tarfile.SYMTYPE, link=outside + "/secret")
    add("s", data=b"replaced\n")
elif kind == "bomb":
    add("small", data=b"s")
    add("zeros", size=64 << 20)
t.close()
EOF
}

# snap: everything outside the cache that a hostile tarball could touch.
snap() {
	{
		find "$OUTSIDE" -printf '%p %m %n %s %T@\n' | sort
		ls -A "$TAP_TMP"
		find "$TAP_TMP" -name 'escape*' -o -name pwned
		cat "$OUTSIDE/secret"
		stat -c '%h %s %Y' /etc/passwd
	} | md5sum
}

mktar "$TAP_TMP/normal.tar" normal
mktar "$TAP_TMP/hostile.tar" hostile
mktar "$TAP_TMP/bomb.tar.gz" bomb
chmod a+r "$TAP_TMP"/*.tar*
SHA=$(sha256sum "$TAP_TMP/normal.tar" | cut -d' ' -f1)

# ---- as root ----
if [ "$(id -u)" = 0 ]; then
	export SBX_CACHE_DIR=$TAP_TMP/root-cache SBX_STATE_DIR=$TAP_TMP/root-state
	capture "$SBX" image unpack "$TAP_TMP/normal.tar"
	ok $((rc != 0)) "root: image unpack exits 0 ($err)"
	D=$out
	[ "$D" = "$SBX_CACHE_DIR/images/$SHA" ]
	ok $? "root: image directory is CACHE/images/<sha256 of the tarball>"
	[ "$(cat "$D/etc/hostname" 2>/dev/null)" = image ]
	ok $? "root: content unpacked"
	[ "$(stat -c %u:%g "$D/home/u/file")" = 1234:2345 ] && [ "$(stat -c %u:%g "$D/home/u")" = 1234:2345 ]
	ok $? "root: owners kept as in the tarball (files and dirs)"
	[ "$(stat -c %a "$D/bin/su")" = 755 ] && [[ $err == *setuid*"bin/su"* ]]
	ok $? "root: setuid bit cleared, with a warning"
	[ -L "$D/bin/sh" ] && [ "$(stat -c %i "$D/bin/link")" = "$(stat -c %i "$D/etc/hostname")" ]
	ok $? "root: symlink kept as a symlink, hardlink inside the image"
	capture "$SBX" image unpack --json "$TAP_TMP/normal.tar"
	[ "$rc" = 0 ] && [[ $out == *'"cached":true'* ]] && [[ $out == *"\"sha256\":\"$SHA\""* ]]
	ok $? "root: second use is a cache hit ($out)"
	capture "$SBX" image unpack --json --no-cache "$TAP_TMP/normal.tar"
	[ "$rc" = 0 ] && [[ $out == *'"cached":false'* ]] && [[ $out == *'"entries":10'* ]] &&
		[ "$(find "$SBX_CACHE_DIR/images" -mindepth 1 -maxdepth 1 -type d ! -name by-stat | wc -l)" = 1 ]
	ok $? "root: --no-cache unpacks again and keeps one image"

	before=$(snap)
	capture "$SBX" image unpack "$TAP_TMP/hostile.tar"
	H=$out
	ok $((rc != 0)) "root: hostile tarball unpacks what is safe ($(printf %s "$err" | head -c 300))"
	[ "$before" = "$(snap)" ] && [ ! -e "$TAP_TMP/escape" ] && [ ! -e "$OUTSIDE/pwned" ] && [ ! -e "$OUTSIDE/abs" ]
	ok $? "root: hostile tarball left the host untouched"
	[ -f "$H/ok" ] && [ -L "$H/l" ] && [ ! -e "$H/hl" ] && [ ! -e "$H/dev/null" ] && [ ! -e "$H/fifo" ] &&
		[ -f "$H/s" ] && [ ! -L "$H/s" ] && [ "$(cat "$H/s")" = replaced ]
	ok $? "root: devices, fifos and outward hardlinks skipped; duplicate replaced the symlink"
	n=$(printf '%s\n' "$err" | grep -c "warning: image entry")
	[ "$n" = 8 ] && grep -qx "sbx: warning: 1 device node in the image skipped (dev/null): the jail's /dev is made by sbx" <<<"$err"
	ok $? "root: one warning per refused entry, devices summed up ($n)"

	capture "$SBX" image unpack --max-size 1m "$TAP_TMP/bomb.tar.gz"
	[ "$rc" = 1 ] && [[ $err == *image-size* ]] && [[ $err == *zeros* ]] &&
		[ -z "$(find "$SBX_CACHE_DIR/images" -maxdepth 1 -name '.tmp-*')" ] &&
		[ "$(find "$SBX_CACHE_DIR/images" -mindepth 1 -maxdepth 1 -type d ! -name by-stat | wc -l)" = 2 ]
	ok $? "root: a decompression bomb is stopped, no half image left ($err)"
	capture "$SBX" image unpack --max-entries 5 "$TAP_TMP/normal.tar"
	ok $? "root: the entry cap does not apply to a cached image"
	capture "$SBX" image unpack --no-cache --max-entries 5 "$TAP_TMP/normal.tar"
	[ "$rc" = 1 ] && [[ $err == *image-entries* ]]
	ok $? "root: too many entries is an error ($err)"
else
	skip "root cases" "not running as root"
fi

# ---- as nobody ----
if [ "$(id -u)" = 0 ]; then
	RUNAS=("${NOBODY[@]}")
else
	RUNAS=()
fi
ME=$("${RUNAS[@]}" id -u)
export SBX_CACHE_DIR=$BASE/cache SBX_STATE_DIR=$BASE/state
capture "${RUNAS[@]}" "$SBX" image unpack "$TAP_TMP/normal.tar"
ok $((rc != 0)) "user $ME: image unpack exits 0 ($err)"
D=$out
[ "$D" = "$SBX_CACHE_DIR/images/$SHA-u$ME" ]
ok $? "user $ME: image directory keyed by content and owner ($D)"
[ "$(stat -c %u:%g "$D/home/u/file")" = "$ME:$("${RUNAS[@]}" id -g)" ] && [ "$(stat -c %u "$D")" = "$ME" ]
ok $? "user $ME: files belong to the invoking user"
[ "$(stat -c %a "$D/home/u")" = 700 ] && [ "$(stat -c %a "$D/bin/su")" = 755 ]
ok $? "user $ME: modes restored, setuid cleared"
capture "${RUNAS[@]}" "$SBX" image unpack --json "$TAP_TMP/normal.tar"
[[ $out == *'"cached":true'* ]]
ok $? "user $ME: second use is a cache hit"
before=$(snap)
capture "${RUNAS[@]}" "$SBX" image unpack "$TAP_TMP/hostile.tar"
H=$out
[ "$rc" = 0 ] && [ "$before" = "$(snap)" ] && [ ! -e "$OUTSIDE/pwned" ] && [ -f "$H/ok" ] && [ ! -e "$H/hl" ]
ok $? "user $ME: hostile tarball left the host untouched"
capture "${RUNAS[@]}" "$SBX" image unpack --max-size 1m "$TAP_TMP/bomb.tar.gz"
[ "$rc" = 1 ] && [[ $err == *image-size* ]] && [ -z "$(find "$SBX_CACHE_DIR/images" -maxdepth 1 -name '.tmp-*')" ]
ok $? "user $ME: bomb stopped, no half image"
capture "${RUNAS[@]}" "$SBX" image unpack-to "$TAP_TMP/normal.tar" "$BASE/to"
[ "$rc" = 0 ] && [ "$(cat "$BASE/to/etc/hostname")" = image ] && [ -L "$BASE/to/bin/sh" ]
ok $? "user $ME: unpack-to writes into a new directory"
capture "${RUNAS[@]}" "$SBX" image unpack-to "$TAP_TMP/normal.tar" "$BASE/to"
[ "$rc" = 1 ] && [[ $err == *"not empty"* ]]
ok $? "user $ME: unpack-to refuses a non-empty directory"

# ---- anyone ----
capture "$SBX" image unpack "$OUTSIDE"
[ "$rc" = 0 ] && [ "$out" = "$(realpath "$OUTSIDE")" ]
ok $? "a directory rootfs is used as is"
echo "not an archive" >"$TAP_TMP/text"
capture "$SBX" image unpack "$TAP_TMP/text"
[ "$rc" = 1 ] && [[ $err == "sbx: cannot unpack '$TAP_TMP/text': cannot read archive"* ]] &&
	[ -z "$(find "$SBX_CACHE_DIR/images" -maxdepth 1 -name '.tmp-*')" ]
ok $? "a file that is not an archive: one clear error ($err)"
mkfifo "$TAP_TMP/fifo"
capture timeout 10 "$SBX" image unpack "$TAP_TMP/fifo"
[ "$rc" = 1 ] && [[ $err == *"neither a directory nor a tarball"* ]]
ok $? "a fifo as rootfs is refused at once ($err)"
capture "$SBX" image
[ "$rc" = 2 ]
ok $? "image without a subcommand is a usage error"
capture "$SBX" image frobnicate x
[ "$rc" = 2 ] && [[ $err == *frobnicate* ]]
ok $? "unknown image subcommand is a usage error"
capture "$SBX" image unpack --max-size lots "$TAP_TMP/normal.tar"
[ "$rc" = 2 ] && [[ $err == *lots* ]]
ok $? "bad --max-size is a usage error"

# ---- a damaged cached image is an error, not a silently broken rootfs ----
D=$("${RUNAS[@]}" "$SBX" image unpack "$TAP_TMP/normal.tar" 2>/dev/null)
rm -f "$D/etc/hostname"
capture "${RUNAS[@]}" "$SBX" image unpack "$TAP_TMP/normal.tar"
[ "$rc" = 1 ] && [[ $err == *damaged* ]] && [[ $err == *remove* ]]
ok $? "user $ME: a cached image that lost a file is refused ($err)"
rm -rf "$D"
capture "${RUNAS[@]}" "$SBX" image unpack "$TAP_TMP/normal.tar"
[ "$rc" = 0 ] && [ "$out" = "$D" ] && [ -f "$D/etc/hostname" ]
ok $? "user $ME: removing it, as the error says, unpacks it again"

# ---- the progress bar: only on a terminal, only for a large tarball ----
if command -v script >/dev/null; then
	truncate -s 70M "$TAP_TMP/zeros" && tar -C "$TAP_TMP" -cf "$TAP_TMP/big.tar" zeros && rm -f "$TAP_TMP/zeros"
	tty_out=$(script -qec "'$SBX' image unpack --no-cache '$TAP_TMP/big.tar'" /dev/null 2>&1)
	rc=$?
	[ "$rc" = 0 ] && [[ $tty_out == *"unpacking"*"100%"* ]] && [[ $tty_out == *$'\e[36m'* ]]
	ok $? "progress bar drawn (in colour) when stderr is a terminal"
	tty_out=$(NO_COLOR=1 script -qec "'$SBX' image unpack --no-cache '$TAP_TMP/big.tar'" /dev/null 2>&1)
	[[ $tty_out == *"unpacking"*"100%"* ]] && [[ $tty_out != *$'\e['* ]]
	ok $? "NO_COLOR: the bar has no escape sequences"
	capture "$SBX" image unpack --no-cache "$TAP_TMP/big.tar"
	[ "$rc" = 0 ] && [[ $err != *unpacking* ]]
	ok $? "no progress bar when stderr is not a terminal"
	tty_out=$(script -qec "'$SBX' image unpack --no-cache '$TAP_TMP/normal.tar'" /dev/null 2>&1)
	[[ $tty_out != *unpacking* ]]
	ok $? "no progress bar for a small tarball"
else
	skip "progress bar" "script(1) missing"
fi

# sbx run shows the unpacker's warnings like sbx image unpack (not with -q).
mkdir -p "$TAP_TMP/fifo-root/bin" && mkfifo "$TAP_TMP/fifo-root/pipe" &&
	cp /bin/busybox "$TAP_TMP/fifo-root/bin/true" &&
	tar -C "$TAP_TMP/fifo-root" -cf "$TAP_TMP/fifo.tar" . && chmod a+r "$TAP_TMP/fifo.tar"
capture env SBX_CACHE_DIR="$TAP_TMP/fifo-cache" SBX_STATE_DIR="$TAP_TMP/fifo-state" \
	"$SBX" run --rootfs "$TAP_TMP/fifo.tar" -- /bin/true
[ "$rc" = 0 ] && [[ $err == *"warning: image entry './pipe': fifo skipped"* ]]
ok $? "sbx run: the unpacker's warnings reach the run log (rc $rc)"
# A distribution image's /dev entries: one line, not one per node.
mkdir -p "$TAP_TMP/dev-root/bin" && cp /bin/busybox "$TAP_TMP/dev-root/bin/true" &&
	python3 - "$TAP_TMP/dev-root" "$TAP_TMP/dev.tar" <<'EOF'
import sys, tarfile
t = tarfile.open(sys.argv[2], "w")
t.add(sys.argv[1], ".")
for name in ("null", "zero", "full", "random", "urandom", "tty"):
    i = tarfile.TarInfo("./dev/" + name)
    i.type, i.devmajor, i.devminor = tarfile.CHRTYPE, 1, 3
    t.addfile(i)
i = tarfile.TarInfo("./dev/loop0")
i.type, i.devmajor = tarfile.BLKTYPE, 7
t.addfile(i)
t.close()
EOF
chmod a+r "$TAP_TMP/dev.tar"
capture env SBX_CACHE_DIR="$TAP_TMP/dev-cache" SBX_STATE_DIR="$TAP_TMP/fifo-state" \
	"$SBX" run --rootfs "$TAP_TMP/dev.tar" -- /bin/true
[ "$rc" = 0 ] && [ "$(grep -c warning <<<"$err")" = 1 ] &&
	grep -qx "sbx: warning: 7 device nodes in the image skipped (./dev/null, ./dev/zero, ./dev/full, ...): the jail's /dev is made by sbx" <<<"$err"
ok $? "sbx run: an image's device nodes are summed up in one line ($(grep warning <<<"$err" | head -3))"
capture env SBX_CACHE_DIR="$TAP_TMP/fifo-cache-q" SBX_STATE_DIR="$TAP_TMP/fifo-state" \
	"$SBX" run -q --rootfs "$TAP_TMP/fifo.tar" -- /bin/true
[ "$rc" = 0 ] && [ -z "$err" ]
ok $? "sbx run -q: and nothing with -q ($err)"

done_testing
