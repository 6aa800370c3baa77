#!/bin/bash
# tests/integration/build_static.sh - how `make` links sbx: -static-pie
# when the four libraries' .a files are there (Debian's -dev packages ship
# them), so that a run pays no loader work and maps no whole libc (make
# bench: start-up and peak RSS); dynamic with STATIC=0 or SANITIZE.  And
# that the static binary still loads what it dlopen()s on first use.
. "$(dirname "$0")/../lib/tap.sh"
export SBX_STATE_DIR=$TAP_TMP/state SBX_CACHE_DIR=$TAP_TMP/cache
CC=${CC:-cc}

have_all=1
for a in libseccomp.a libcap.a libinih.a libjansson.a; do
	case $("$CC" -print-file-name=$a) in /*) ;; *) have_all=0 ;; esac
done
interp=$(readelf -l "$SBX" 2>/dev/null | grep -c 'Requesting program interpreter')
if readelf -s "$SBX" 2>/dev/null | grep -q '__asan_init\|__ubsan_handle'; then
	skip "make links sbx -static-pie when the .a files are there" "a SANITIZE build (always dynamic)"
elif [ "${STATIC:-auto}" = 0 ]; then
	[ "$interp" -eq 1 ]
	ok $? "STATIC=0: sbx is linked dynamically"
elif [ "$have_all" = 1 ]; then
	[ "$interp" -eq 0 ] && readelf -h "$SBX" | grep -q 'DYN'
	ok $? "make links sbx -static-pie when libseccomp.a, libcap.a, libinih.a and libjansson.a are there (no program interpreter: $interp)"
else
	[ "$interp" -eq 1 ]
	ok $? "without all four .a files, make links sbx dynamically"
fi

# What a static sbx loads on first use: libarchive (a first unpack into an
# empty cache), libgit2 (sbx diff), user names (export's tar headers).
"$TAP_ROOT/tests/lib/mkrootfs.sh" "$TAP_TMP/bb.tar.gz" >/dev/null 2>&1
mkdir -p "$TAP_TMP/wd"
cd "$TAP_TMP/wd" || exit 1
capture "$SBX" run -q --keep --name st --rootfs "$TAP_TMP/bb.tar.gz" -- /bin/sh -c 'echo hello > new.txt; exit 3'
[ "$rc" -eq 3 ]
ok $? "a first run unpacks the image into an empty cache (libarchive) and exits 3 (rc=$rc: ${err:0:200})"
capture "$SBX" diff st
[ "$rc" -eq 0 ] && grep -q '^+hello$' <<<"$out"
ok $? "sbx diff shows the file the run wrote (libgit2; rc=$rc: ${err:0:200})"
capture "$SBX" export st -o "$TAP_TMP/st.tar"
tar -tvf "$TAP_TMP/st.tar" 2>/dev/null | grep -q 'new.txt'
ok $? "sbx export writes a tarball holding it (rc=$rc: ${err:0:200})"
"$SBX" destroy st >/dev/null 2>&1
done_testing
