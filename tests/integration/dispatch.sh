#!/bin/bash
# tests/integration/dispatch.sh - sbx.c: help, version, the command table,
# unknown commands and options, and the stdout/stderr split.
. "$(dirname "$0")/../lib/tap.sh"
export SBX_STATE_DIR=$TAP_TMP/state SBX_CACHE_DIR=$TAP_TMP/cache
unset NO_COLOR

# --help and -h: usage on stdout, nothing on stderr, exit 0, every command.
for h in --help -h; do
	capture "$SBX" "$h"
	ok $((rc != 0)) "sbx $h exits 0"
	case "$out" in "usage: sbx"*) r=0 ;; *) r=1 ;; esac
	ok $r "sbx $h prints usage on stdout"
	ok $((${#err} != 0)) "sbx $h prints nothing on stderr"
done
capture "$SBX" --help
help=$out

# --list-commands: the visible commands, sorted, each in --help.
capture "$SBX" --list-commands
cmds=$out
ok $((rc != 0 || ${#cmds} == 0)) "sbx --list-commands lists commands"
[ "$cmds" = "$(printf '%s\n' "$cmds" | LC_ALL=C sort)" ]
ok $? "the command list is sorted"
for want in destroy exec export inspect profile ps run; do
	printf '%s\n' "$cmds" | grep -qx "$want"
	ok $? "--list-commands contains '$want'"
done
missing=
for c in $cmds; do
	printf '%s\n' "$help" | grep -Eq "^  $c +[a-z]" || missing="$missing $c"
done
ok $((${#missing} != 0)) "sbx --help describes every listed command${missing:+ (missing:$missing)}"
for hidden in image proxy; do
	printf '%s\n' "$cmds" | grep -qx "$hidden"
	ok $((!$?)) "hidden command '$hidden' is not listed"
done

# --version: one line "sbx X.Y.Z" on stdout.
capture "$SBX" --version
ok $rc "sbx --version exits 0"
[[ $out =~ ^sbx\ [0-9]+\.[0-9]+\.[0-9]+[^[:space:]]*$ ]]
ok $? "sbx --version prints 'sbx VERSION' ($out)"
ok $((${#err} != 0)) "sbx --version prints nothing on stderr"

# No command: usage on stderr, exit 2.
capture "$SBX"
ok $((rc != 2)) "sbx with no command exits 2 (got $rc)"
ok $((${#out} != 0)) "sbx with no command prints nothing on stdout"
case "$err" in "usage: sbx"*) r=0 ;; *) r=1 ;; esac
ok $r "sbx with no command prints usage on stderr"

# Unknown commands: one line on stderr naming the closest command, exit 2.
for pair in rn:run rnu:run inspct:inspect destory:destroy xec:exec pss:ps \
	profiel:profile exprot:export; do
	typo=${pair%%:*} near=${pair#*:}
	capture "$SBX" "$typo"
	ok $((rc != 2)) "unknown command '$typo' exits 2 (got $rc)"
	[ -z "$out" ] && [ "$(lines "$err")" -eq 1 ] && [[ $err == "sbx: "*"'$typo'"*"'$near'"* ]]
	ok $? "unknown command '$typo': one stderr line suggesting '$near' ($err)"
done
capture "$SBX" zzzzzzzzzzzz
ok $((rc != 2)) "a command far from every name exits 2"
[ -z "$out" ] && [ "$(lines "$err")" -eq 1 ] && [[ $err == "sbx: "* ]]
ok $? "a command far from every name: one line on stderr ($err)"
capture "$SBX" RUN
ok $((rc != 2)) "commands match exactly: 'RUN' is unknown"
capture "$SBX" ru
ok $((rc != 2)) "no prefix matching: 'ru' is unknown"

# Unknown global option, and --state-dir without its argument.
capture "$SBX" --no-such-option ps
ok $((rc != 2)) "unknown global option exits 2"
[ -z "$out" ] && [ "$(lines "$err")" -eq 1 ] && [[ $err == *"--no-such-option"* ]]
ok $? "unknown global option: one stderr line naming it"
capture "$SBX" --state-dir
ok $((rc != 2)) "--state-dir without a directory exits 2"
ok $((${#out} != 0)) "--state-dir without a directory prints nothing on stdout"

# An option that takes a value, given last without one: one line naming it
# and saying it needs a value, never "unknown option" (a user who typed
# `sbx run --memory` has the right option).  Every command's, from its
# --help: each option written with a value (`--memory SIZE`).
for c in $("$SBX" --list-commands) proxy; do
	for o in $("$SBX" help "$c" 2>/dev/null |
		grep -oE '^ +(-[a-zA-Z], )?--[a-z-]+ ([A-Z[]|host[|])' |
		sed -E 's/ ([A-Z[]|host[|])$//; s/^ +//; s/, / /'); do
		capture "$SBX" "$c" "$o"
		[ "$rc" -ne 0 ] && [ -z "$out" ] && [ "$(lines "$err")" -eq 1 ] &&
			[[ $err == "sbx: "*"needs a value"*"'$o'"* || $err == "sbx: "*"'$o'"*"needs a value"* ]] &&
			[[ $err != *"unknown option"* ]]
		ok $? "sbx $c $o without a value: one line saying it needs one (rc $rc: $err)"
	done
done

# --log-json -: not a file named '-' in the working directory, nor the
# command's stdout: one line saying what to give instead.
for c in "run --log-json - -- true" "proxy --log-json -"; do
	capture sh -c 'cd "$1" && shift && "$@"' sh "$TAP_TMP" "$SBX" $c
	[ "$rc" -ne 0 ] && [ -z "$out" ] && [ "$(lines "$err")" -eq 1 ] &&
		[[ $err == "sbx: "*"--log-json -: "*"give a file"* ]] && [ ! -e "$TAP_TMP/-" ]
	ok $? "sbx $c: refused in one line, no file '-' made (rc $rc: $err)"
done

# help CMD and CMD --help: usage of that command on stdout, exit 0.
for c in $cmds; do
	capture "$SBX" help "$c"
	a_out=$out a_rc=$rc a_err=$err
	ok $((a_rc != 0)) "sbx help $c exits 0"
	[[ $a_out == "usage: sbx $c"* ]]
	ok $? "sbx help $c prints 'usage: sbx $c' on stdout"
	ok $((${#a_err} != 0)) "sbx help $c prints nothing on stderr"
	capture "$SBX" "$c" --help
	[ "$rc" -eq 0 ] && [ "$out" = "$a_out" ] && [ -z "$err" ]
	ok $? "sbx $c --help prints the same as sbx help $c"
done
capture "$SBX" help nosuchcommand
ok $((rc != 2)) "sbx help of an unknown command exits 2"
[ -z "$out" ] && [ "$(lines "$err")" -eq 1 ]
ok $? "sbx help of an unknown command: one line on stderr"
capture "$SBX" help
ok $((rc != 0)) "sbx help with no command exits 0"
[ "$out" = "$help" ]
ok $? "sbx help with no command prints the general usage"

# Errors on stderr only, data on stdout only; no colour when not a terminal.
capture "$SBX" profile list
ok $((rc != 0)) "sbx profile list exits 0"
[ -n "$out" ] && [ -z "$err" ]
ok $? "sbx profile list: data on stdout, nothing on stderr"
capture "$SBX" ps -a
ok $((rc != 0)) "sbx ps -a exits 0 with an empty state directory"
ok $((${#err} != 0)) "sbx ps -a prints nothing on stderr"
capture "$SBX" inspect 000000000000
[ "$rc" -eq 1 ] && [ -z "$out" ] && [ "$(lines "$err")" -eq 1 ] && [[ $err == "sbx: "* ]]
ok $? "inspect of an unknown sandbox: exit 1, one 'sbx:' line on stderr only (rc $rc: $err)"
capture "$SBX" destroy no-such-name
[ "$rc" -eq 0 ] && [ -z "$err" ] && [ "$out" = "no-such-name: no such sandbox, nothing to destroy" ]
ok $? "destroy of an unknown name: idempotent, exit 0, says there was nothing to destroy (rc $rc: $out $err)"
capture "$SBX" destroy 000000000000
[ "$rc" -eq 0 ] && [ -z "$err" ]
ok $? "destroy of an id already gone succeeds quietly on stderr (idempotent; rc $rc: $out)"
capture "$SBX" profile show no-such-profile-xyz
[ "$rc" -eq 1 ] && [ -z "$out" ] && [ "$(lines "$err")" -eq 1 ] && [[ $err == "sbx: "*no-such-profile-xyz* ]]
ok $? "profile show of an unknown name: exit 1, one line naming it (rc $rc: $err)"
esc=0
for args in "--help" "profile list" "ps -a" "inspect 000000000000" "rn"; do
	# shellcheck disable=SC2086
	"$SBX" $args 2>&1 | grep -q $'\033' && esc=1
done
ok $esc "no escape sequences when stdout and stderr are not terminals"
# Usage errors in subcommands: exit 2.
capture "$SBX" ps --no-such-flag
[ "$rc" -eq 2 ] && [ -z "$out" ] && [[ $err == "sbx: "* ]]
ok $? "an unknown option of a subcommand exits 2 with an error on stderr (rc $rc)"
capture "$SBX" run
[ "$rc" -eq 125 ] || [ "$rc" -eq 2 ]
ok $? "sbx run without a command is a usage error (rc $rc)"

# A typo gets one line, no errno text, and the closest option or value.
export SBX_STATE_DIR=$TAP_TMP/state SBX_CACHE_DIR=$TAP_TMP/cache
typo() { # WANT-RC WANT-STDERR ARGS...
	local want_rc=$1 want=$2
	shift 2
	capture "$SBX" "$@"
	[ "$rc" -eq "$want_rc" ] && [ "$err" = "$want" ] && [ -z "$out" ]
	ok $? "sbx $*: exit $want_rc, '$want' (got $rc: $err)"
}
typo 125 "sbx: run: unknown option '--memroy' (did you mean '--memory'?) (see 'sbx run --help')" \
	run --memroy 1g -- true
typo 125 "sbx: run: unknown option '--hostnme=box' (did you mean '--hostname'?) (see 'sbx run --help')" \
	run --hostnme=box -- true
typo 125 "sbx: exec: unknown option '--wokdir' (did you mean '--workdir'?) (see 'sbx exec --help')" \
	exec --wokdir / x true
typo 2 "sbx: unknown option '--jsno' (did you mean '--json'?) (see 'sbx ps --help')" ps --jsno
typo 125 "sbx: run: --keep and --rm contradict each other" run --keep --rm -- true
typo 125 "sbx: bad sandbox name 'abc' (it looks like a sandbox id; add a letter other than a-f)" \
	run --name abc -- true
typo 125 "sbx: --pids 'lots': bad number 'lots' (expected a positive integer or unlimited)" \
	run --pids lots -- true
typo 125 "sbx: --net 'nonee': bad network mode 'nonee' (did you mean 'none'?)" run --net nonee -- true
typo 125 "sbx: --memory '1': memory limit '1' is too small: a jail needs at least 4m (its init, the command and the kernel's own pages count against it)" \
	run --memory 1 -- true
typo 125 "sbx: --rootfs '/missing.tar.gz': does not exist" run --rootfs /missing.tar.gz -- true
typo 125 "sbx: bind '/no/such/dir': does not exist on the host (a leading '-' makes an entry optional)" \
	run --bind /no/such/dir -- true
typo 125 "sbx: run: no command given (usage: sbx run [options] [--] CMD [ARG...])" run
typo 125 "sbx: run: no command given (usage: sbx run [options] [--] CMD [ARG...])" run -p default --
typo 125 "sbx: exec: no sandbox given (usage: sbx exec [options] SANDBOX [--] CMD...)" exec
capture "$SBX" run --memory 4m -- true
[ "$rc" -eq 0 ]
ok $? "sbx run --memory 4m starts ($rc: $(tail -1 <<<"$err"))"

done_testing
