#!/bin/bash
# tests/integration/build_deps.sh - `make` on a fresh Debian machine finds
# every library it compiles against: each pkg-config module of the
# Makefile's PKGS and TEST_PKGS, and each module their .pc files require
# (pkg-config fails without them, even for a library sbx only dlopen()s),
# comes from a package tests/deps.sh installs, or from one that such a
# package depends on (apt installs no recommended package there).
# (libnftnl.pc requires libmnl, whose -dev package nothing pulls in.)
. "$(dirname "$0")/../lib/tap.sh"

need_tools pkg-config dpkg dpkg-query # a Debian machine
cd "$TAP_ROOT" || exit 1
mods=$(sed -n 's/^\(TEST_\)\{0,1\}PKGS *:= *//p' Makefile | tr '\n' ' ')
list=" $(sh tests/deps.sh --list) "
[ -n "$mods" ] && [ "$list" != "  " ]
ok $? "the Makefile's pkg-config modules ($mods) and tests/deps.sh's packages read"

allowed=$list
for p in $list; do
	d=$(dpkg-query -W -f='${Depends},${Pre-Depends}' "$p" 2>/dev/null | tr ',|' '\n\n' |
		sed 's/(.*//; s/:any//; s/ //g' | grep .)
	allowed="$allowed $(echo $d) "
done

seen=
# check MODULE: its .pc file's package is allowed; then what it requires
check() {
	local m=$1 dir pc owner r
	case " $seen " in *" $m "*) return 0 ;; esac
	seen="$seen $m"
	dir=$(pkg-config --variable=pcfiledir "$m" 2>/dev/null)
	pc=$dir/$m.pc
	owner=
	[ -n "$dir" ] && owner=$(dpkg -S "$pc" 2>/dev/null | head -n 1 | cut -d: -f1)
	[ -n "$dir" ] && [ -z "$owner" ] &&
		owner=$(dpkg -S "$(readlink -f "$pc")" 2>/dev/null | head -n 1 | cut -d: -f1)
	case "$allowed" in
	*" $owner "*) ok 0 "pkg-config module $m: $owner" ;;
	*) ok 1 "pkg-config module $m: ${owner:-no package} is not installed by tests/deps.sh" ;;
	esac
	for r in $(pkg-config --print-requires --print-requires-private "$m" 2>/dev/null | awk '{print $1}'); do
		check "$r"
	done
}
for m in $mods; do
	check "$m"
done
done_testing
