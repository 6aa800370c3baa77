#!/bin/bash
# tests/integration/consistency.sh - git-style consistency checks: every
# command of the dispatch table has a man section, completion entries in
# all three shells and a working --help; every option and profile key is
# documented; every built-in profile is listed and documented.
. "$(dirname "$0")/../lib/tap.sh"
export SBX_STATE_DIR=$TAP_TMP/state SBX_CACHE_DIR=$TAP_TMP/cache
MAN=$TAP_ROOT/man
COMP=$TAP_ROOT/completions

cmds=$("$SBX" --list-commands)
ok $((${#cmds} == 0)) "sbx --list-commands lists the dispatch table"

# The man text of one command: sbx-CMD.1 if it exists, else the .SS CMD
# section of sbx.1 (up to the next .SS or .SH).
man_section() {
	if [ -f "$MAN/sbx-$1.1" ]; then
		cat "$MAN/sbx-$1.1"
	else
		awk -v c="$1" '
			/^\.S[SH] / { on = ($0 == ".SS " c) }
			on' "$MAN/sbx.1"
	fi
}

# shellcheck source=/dev/null
. "$COMP/sbx.bash"

for c in $cmds; do
	sect=$(man_section "$c")
	[ -n "$sect" ]
	ok $? "$c: has a man page section (man/sbx-$c.1 or '.SS $c' in man/sbx.1)"
	grep -q "^\.B sbx $c\$\|^\.B sbx $c \|^\.B sbx $c$" <<<"$sect" || grep -q "sbx $c" <<<"$sect"
	ok $? "$c: its man section shows its synopsis"
	grep -q "^\.\(B\|BR\) $c\b\|\.BR sbx\\\\-$c\|^\.B sbx $c" "$MAN/sbx.1"
	ok $? "$c: sbx(1) mentions it in the SYNOPSIS"

	# Completion entries: a case label in bash and zsh, a condition in fish.
	grep -Eq "^[[:space:]]*([a-z|[:space:]]+\|[[:space:]]*)?$c([[:space:]]*\|[^)]*)?\)" "$COMP/sbx.bash"
	ok $? "$c: completions/sbx.bash has a case for it"
	grep -Eq "^[[:space:]]*([a-z|]+\|)?$c(\|[^)]*)?\)" "$COMP/_sbx"
	ok $? "$c: completions/_sbx has a case for it"
	grep -Eq "__sbx_(at|value) $c\b|^for c in .*\b$c\b" "$COMP/sbx.fish"
	ok $? "$c: completions/sbx.fish has an entry for it"

	# --help and help CMD.
	capture "$SBX" "$c" --help
	[ "$rc" -eq 0 ] && [[ $out == "usage: sbx $c"* ]] && [ -z "$err" ]
	ok $? "$c: 'sbx $c --help' exits 0 with its usage on stdout only (rc $rc)"
	help=$out
	capture "$SBX" help "$c"
	[ "$rc" -eq 0 ] && [ "$out" = "$help" ]
	ok $? "$c: 'sbx help $c' prints the same usage"

	# Every long option of --help is documented in its man section, and
	# those that take a value are known to the completions.
	# Options on its usage lines and starting its option lines (not other
	# commands' options named in the prose).
	opts=$(sed -nE -e '/^(usage:)?[[:space:]]*sbx /p' \
		-e 's/^[[:space:]]+(-[[:alnum:]],[[:space:]]*)?(--?[[:alnum:]][-[:alnum:]]*).*/\1 \2/p' <<<"$help" |
		grep -oE -- '(^|[^-[:alnum:]])--[[:alpha:]][-[:alnum:]]*' | sed 's/^[^-]*//' | sort -u)
	undoc=
	for o in $opts; do
		[ "$o" = --help ] && continue
		grep -q -- "${o//-/\\\\-}" <<<"$sect" || undoc="$undoc $o"
	done
	ok $((${#undoc} != 0)) "$c: every option of 'sbx $c --help' is in its man section${undoc:+ (missing:$undoc)}"
	valued_help=$(grep -oE -- '--[[:alpha:]][-[:alnum:]]*[ =]([A-Z]|[a-z]+\|)' <<<"$help" |
		sed -E 's/[ =]([A-Z]|[a-z]+\|)$//' | sort -u)
	valued_comp=" $(_sbx_valued "$c") "
	miss=
	for o in $valued_help; do
		[[ $valued_comp == *" $o "* ]] || miss="$miss $o"
	done
	ok $((${#miss} != 0)) "$c: completions know every option of --help that takes a value${miss:+ (missing:$miss)}"
	stale=
	for o in $valued_comp; do
		case "$o" in --*) grep -q -- "$o\b" <<<"$help" || stale="$stale $o" ;; esac
	done
	ok $((${#stale} != 0)) "$c: no completion entry for an option --help does not have${stale:+ (stale:$stale)}"
done

# No stale documentation: every .SS under COMMANDS in sbx(1) is a command
# (or help), and every option a section defines (.TP then .B/.BR/.BI
# \-\-opt) is in that command's --help.
stale_sect=
for sec in $(awk '/^\.SH /{on = ($2 == "COMMANDS")} on && /^\.SS /{print $2}' "$MAN/sbx.1"); do
	[ "$sec" = help ] && continue
	grep -qx "$sec" <<<"$cmds" || stale_sect="$stale_sect $sec"
done
ok $((${#stale_sect} != 0)) "every command section of sbx(1) is a real command${stale_sect:+ (stale:$stale_sect)}"
for c in $cmds; do
	help=$("$SBX" help "$c" 2>/dev/null)
	stale=
	for o in $(man_section "$c" | awk 'prev == ".TP" {print} {prev = $0}' |
		grep -E '^\.B[RI]? ' | grep -oE '\\-\\-[[:alnum:]][[:alnum:]\\-]*' |
		sed 's/\\//g' | sort -u); do
		grep -q -- "$o\b" <<<"$help" || stale="$stale $o"
	done
	ok $((${#stale} != 0)) "$c: every option its man section defines is in 'sbx $c --help'${stale:+ (not in --help:$stale)}"
done

# The synopsis of sbx(1) and the usage of `sbx --help` agree on the list.
for c in $cmds; do
	"$SBX" --help | grep -Eq "^  $c " || { diag "$c missing from sbx --help"; false; }
done
ok $? "sbx --help lists every command"

# Profile keys: the one table in lib/profile/profile_keys.c, each in sbx-profile(5).
keys=$(grep -oE '^[[:space:]]*K\("[a-z]+", *"[^"]+"' "$TAP_ROOT/lib/profile/profile_keys.c" 2>/dev/null |
	sed -E 's/^[[:space:]]*K\("([a-z]+)", *"([^"]+)"/\1 \2/' | sort -u)
ok $((${#keys} == 0)) "the profile key table is found in lib/profile/profile_keys.c"
sections=$(awk '{print $1}' <<<"$keys" | sort -u)
for s in $sections; do
	grep -q "^\.SS \[$s\]" "$MAN/sbx-profile.5"
	ok $? "sbx-profile(5) has a section [$s]"
done
undoc=
while read -r s k; do
	[ -z "$k" ] || [ "$k" = "*" ] && continue
	# The key's .BR/.B line inside the section's part of the page.
	awk -v s="[$s]" '/^\.SS /{on = ($2 == s)} on' "$MAN/sbx-profile.5" |
		grep -Eq "^\.(B|BR) ${k//-/\\\\-}( |$)" || undoc="$undoc [$s]$k"
done <<<"$keys"
ok $((${#undoc} != 0)) "sbx-profile(5) documents every profile key${undoc:+ (missing:$undoc)}"

# Built-in profiles: every profiles/*.ini is listed, and documented.
capture "$SBX" profile list
listed=$(awk 'NF {print $1}' <<<"$out")
ok $((rc != 0 || ${#listed} == 0)) "sbx profile list lists the built-in profiles"
for f in "$TAP_ROOT"/profiles/*.ini; do
	p=$(basename "$f" .ini)
	grep -qx "$p" <<<"$listed"
	ok $? "profile '$p' (profiles/$p.ini) is listed by sbx profile list"
	grep -Eq "^\.(B|BR) .*\b$p\b" "$MAN/sbx-profile.5"
	ok $? "profile '$p' is described in sbx-profile(5)"
done

# README: every command, built-in profile and profile key is named, and
# every `sbx run -p NAME` it shows names a real profile.
README=$TAP_ROOT/README.md
miss=
for c in $cmds; do grep -q "sbx $c\b" "$README" || miss="$miss $c"; done
ok $((${#miss} != 0)) "README shows every command${miss:+ (missing:$miss)}"
miss=
for p in $listed; do grep -q "\`$p\`" "$README" || miss="$miss $p"; done
ok $((${#miss} != 0)) "README names every built-in profile${miss:+ (missing:$miss)}"
miss=
while read -r s k; do
	[ -z "$k" ] || [ "$k" = "*" ] && continue
	grep -q "\`$k\`" "$README" || miss="$miss [$s]$k"
done <<<"$keys"
ok $((${#miss} != 0)) "README's key summary names every profile key${miss:+ (missing:$miss)}"
bad=
for p in $(grep -oE 'sbx run -p +[a-z0-9_-]+' "$README" | awk '{print $NF}' | sort -u); do
	grep -qx "$p" <<<"$listed" || bad="$bad $p"
done
ok $((${#bad} != 0)) "every 'sbx run -p NAME' in README names a built-in profile${bad:+ (unknown:$bad)}"

# Exit statuses: the run/exec table of sbx(1) has each status of the contract.
for s in 124 125 126 127 "128+"; do
	grep -q "^\.B $s\|^\.BR $s" "$MAN/sbx.1"
	ok $? "sbx(1) EXIT STATUS documents $s"
done

# Every man page installs: it is named in the Makefile's install loop.
for m in "$MAN"/*.[1-8]; do
	case "$m" in
	*.1) grep -q 'man/\*\.1' "$TAP_ROOT/Makefile" ;;
	*.5) grep -q 'man/\*\.5' "$TAP_ROOT/Makefile" ;;
	*) false ;;
	esac
	ok $? "$(basename "$m") is installed by make install"
done

done_testing
