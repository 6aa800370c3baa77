#!/bin/bash
# tests/integration/install.sh - make install / uninstall into a DESTDIR:
# the installed binary runs, man pages, completions and example profiles
# land where bash-completion, zsh, fish and man look, and uninstall leaves
# no file behind.
. "$(dirname "$0")/../lib/tap.sh"
export SBX_STATE_DIR=$TAP_TMP/state SBX_CACHE_DIR=$TAP_TMP/cache
cd "$TAP_ROOT" || exit 1
# Install the binary as built (-o sbx: never rebuild it from here).
unset MAKEFLAGS MFLAGS
[ -x sbx ] || { echo "1..0 # SKIP ./sbx is not built"; exit 77; }

for prefix in /usr /usr/local; do
	D=$TAP_TMP/dest${prefix//\//_}
	make -s -o sbx install DESTDIR="$D" PREFIX="$prefix" >"$TAP_TMP/install.log" 2>&1
	r=$?
	ok $r "make install DESTDIR=... PREFIX=$prefix succeeds"
	[ $r -eq 0 ] || sed 's/^/# /' "$TAP_TMP/install.log"
	P=$D$prefix

	bin=$P/bin/sbx
	[ -x "$bin" ] && [ "$(stat -c %a "$bin")" = 755 ]
	ok $? "$prefix/bin/sbx is installed, mode 755"
	capture "$bin" --version
	[ "$rc" -eq 0 ] && [ "$out" = "$("$SBX" --version)" ]
	ok $? "the installed binary runs: $out"
	capture "$bin" profile list
	[ "$rc" -eq 0 ] && [ -n "$out" ] && [ -z "$err" ]
	ok $? "the installed binary lists its built-in profiles with no file needed (rc $rc)"
	listed=$(awk 'NF {print $1}' <<<"$out")

	for m in man/*.[1-8]; do
		n=$(basename "$m")
		sec=${n##*.}
		f=$P/share/man/man$sec/$n
		[ -f "$f" ] && cmp -s "$m" "$f" && [ "$(stat -c %a "$f")" = 644 ]
		ok $? "man page $n installed in $prefix/share/man/man$sec"
		MANWIDTH=80 man -l "$f" 2>/dev/null | grep -q "^NAME"
		ok $? "installed $n renders with man -l"
	done

	f=$P/share/bash-completion/completions/sbx
	[ -f "$f" ] && cmp -s completions/sbx.bash "$f"
	ok $? "bash completion installed as $prefix/share/bash-completion/completions/sbx"
	if [ "$prefix" = /usr ] && pkg-config --exists bash-completion 2>/dev/null; then
		[ "$(pkg-config --variable=completionsdir bash-completion)" = /usr/share/bash-completion/completions ]
		ok $? "that is bash-completion's own completionsdir"
	fi
	# The installed completion, loaded as bash-completion would, completes
	# with the installed binary.
	r=$(bash -c '. "$1"; COMP_WORDS=("$2" r); COMP_CWORD=1; _sbx; printf "%s\n" "${COMPREPLY[@]}"' \
		_ "$f" "$bin")
	[ "$r" = run ]
	ok $? "the installed bash completion completes 'sbx r' to run ($r)"
	f=$P/share/zsh/site-functions/_sbx
	[ -f "$f" ] && cmp -s completions/_sbx "$f"
	ok $? "zsh completion installed as $prefix/share/zsh/site-functions/_sbx"
	f=$P/share/fish/vendor_completions.d/sbx.fish
	[ -f "$f" ] && cmp -s completions/sbx.fish "$f"
	ok $? "fish completion installed in $prefix/share/fish/vendor_completions.d"

	n=0
	for p in profiles/*.ini; do
		f=$P/share/sbx/profiles/$(basename "$p")
		[ -f "$f" ] && cmp -s "$p" "$f" || { diag "missing $f"; n=$((n + 1)); }
		grep -qx "$(basename "$p" .ini)" <<<"$listed" || { diag "$p not built in"; n=$((n + 1)); }
	done
	ok $n "every profiles/*.ini is installed as an example and built into the binary"
	bad=
	for f in "$P"/share/sbx/profiles/*.ini; do
		[ -f "$f" ] || continue
		case "$(basename "$f")" in strict.ini) continue ;; esac # needs --rootfs
		"$bin" profile check "$f" >/dev/null 2>&1 || bad="$bad $(basename "$f")"
	done
	ok $((${#bad} != 0)) "the installed binary accepts the installed example profiles${bad:+ (refused:$bad)}"

	# Nothing is installed outside PREFIX.
	out=$(cd "$D" && find . \( -type f -o -type l \) ! -path ".$prefix/*")
	ok $((${#out} != 0)) "nothing is installed outside $prefix${out:+ ($out)}"

	make -s -o sbx uninstall DESTDIR="$D" PREFIX="$prefix" >"$TAP_TMP/uninstall.log" 2>&1
	ok $? "make uninstall succeeds"
	left=$(cd "$D" && find . \( -type f -o -type l \))
	ok $((${#left} != 0)) "make uninstall leaves no file behind${left:+ (left: $(echo $left))}"
	[ ! -e "$P/share/sbx" ]
	ok $? "make uninstall removes $prefix/share/sbx"
	make -s -o sbx uninstall DESTDIR="$D" PREFIX="$prefix" >/dev/null 2>&1
	ok $? "make uninstall twice is fine"
done

done_testing
