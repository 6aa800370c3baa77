#!/bin/bash
# tests/integration/completion.sh - shell completions: bash (sourced, _sbx
# driven through COMP_WORDS/COMP_CWORD and checked like compgen results),
# fish (complete -C) and zsh (syntax, and the command list it offers).
. "$(dirname "$0")/../lib/tap.sh"
export SBX_STATE_DIR=$TAP_TMP/state SBX_CACHE_DIR=$TAP_TMP/cache
COMPDIR=$TAP_ROOT/completions

# shellcheck source=/dev/null
. "$COMPDIR/sbx.bash"
complete -p sbx >/dev/null 2>&1
ok $? "sourcing completions/sbx.bash registers a completion for sbx"

# comp WORD... : complete the last word (may be "") of `sbx WORD...`.
comp() {
	COMP_WORDS=("$SBX" "$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMP_LINE="${COMP_WORDS[*]}"
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	_sbx sbx "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
	[ ${#COMPREPLY[@]} -gt 0 ] && printf '%s\n' "${COMPREPLY[@]}" | LC_ALL=C sort -u
}
# has LIST WORD...: every WORD is a line of LIST.
has() {
	local list=$1 w
	shift
	for w in "$@"; do
		printf '%s\n' "$list" | grep -qxF -- "$w" || { diag "missing '$w' in: $(echo $list)"; return 1; }
	done
}
# hasnt LIST WORD...: no WORD is a line of LIST.
hasnt() {
	local list=$1 w
	shift
	for w in "$@"; do
		printf '%s\n' "$list" | grep -qxF -- "$w" && { diag "unexpected '$w' in: $(echo $list)"; return 1; }
	done
	return 0
}

# The options a command's --help offers: on its usage lines, and the ones
# starting an option line (not other commands' options named in the prose).
help_options() {
	"$SBX" help "$1" 2>/dev/null |
		sed -nE -e '/^(usage:)?[[:space:]]*sbx /p' \
			-e 's/^[[:space:]]+(-[[:alnum:]],[[:space:]]*)?(--?[[:alnum:]][-[:alnum:]]*).*/\1 \2/p' |
		grep -oE -- '(^|[^-[:alnum:]])--?[[:alpha:]][-[:alnum:]]*' | sed 's/^[^-]*//' | sort -u
}

cmds=$("$SBX" --list-commands)
ok $((${#cmds} == 0)) "sbx --list-commands is not empty"

# Commands.
r=$(comp "")
# shellcheck disable=SC2086
has "$r" $cmds help
ok $? "sbx <TAB> offers every command of --list-commands and help"
hasnt "$r" image proxy
ok $? "sbx <TAB> does not offer hidden commands"
r=$(comp r)
[ "$r" = run ]
ok $? "sbx r<TAB> completes to run ($r)"
r=$(comp p)
[ "$r" = "$(printf 'profile\nps')" ]
ok $? "sbx p<TAB> offers profile and ps"
r=$(comp --)
has "$r" --state-dir --help --version
ok $? "sbx --<TAB> offers the global options"
r=$(comp --state-dir "$TAP_TMP" i)
has "$r" inspect
ok $? "the value of --state-dir is not taken for the command"
mkdir -p "$TAP_TMP/dirs/alpha"
r=$(comp --state-dir "$TAP_TMP/dirs/al")
has "$r" "$TAP_TMP/dirs/alpha"
ok $? "--state-dir <TAB> completes directories"

# Options per command, from each command's --help.
for c in $cmds; do
	want=$(help_options "$c" | grep -- '^--')
	r=$(comp "$c" --)
	# shellcheck disable=SC2086
	[ -z "$want" ] || { [ -n "$r" ] && has "$r" $want; }
	ok $? "sbx $c --<TAB> offers every long option of 'sbx help $c'"
done
r=$(comp run --)
has "$r" --profile --rootfs --net --keep --memory --time --log-json
ok $? "sbx run --<TAB> offers the run options of sbx(1)"
r=$(comp run --net "")
[ "$r" = "$(printf 'host\nloopback\nnone\nproxy')" ]
ok $? "sbx run --net <TAB> offers the four modes"
r=$(comp run --net p)
[ "$r" = proxy ]
ok $? "sbx run --net p<TAB> completes to proxy"
r=$(comp run --net = p)
[ "$r" = proxy ]
ok $? "sbx run --net=p<TAB> (split at '=' by bash) completes to proxy"
r=$(comp run --net =)
[ "$r" = "$(printf 'host\nloopback\nnone\nproxy')" ]
ok $? "sbx run --net=<TAB> offers the four modes"
r=$(comp run --net = none l)
has "$r" ls
ok $? "after --net=none the payload command is completed"
profiles=$("$SBX" profile list 2>/dev/null | awk 'NF {print $1}')
ok $((${#profiles} == 0)) "sbx profile list names the built-in profiles"
r=$(comp run -p "")
# shellcheck disable=SC2086
[ -n "$profiles" ] && has "$r" $profiles
ok $? "sbx run -p <TAB> offers every built-in profile"
r=$(comp run --profile de)
has "$r" default
ok $? "sbx run --profile de<TAB> offers default"
r=$(comp run --rootfs "")
has "$r" host
ok $? "sbx run --rootfs <TAB> offers host"
touch "$TAP_TMP/dirs/image.tar.gz"
r=$(comp run --rootfs "$TAP_TMP/dirs/im")
has "$r" "$TAP_TMP/dirs/image.tar.gz"
ok $? "sbx run --rootfs <TAB> completes tarball paths"
r=$(comp run --keep --net none ls --)
hasnt "$r" --profile --keep --net
ok $? "after the payload command, sbx's options are no longer offered"
r=$(comp run -- l)
has "$r" ls
ok $? "sbx run -- l<TAB> completes command names"
r=$(comp run --memory 1g --bind /tmp -- ls)
has "$r" ls
ok $? "option values are skipped before the payload command"

r=$(comp profile "")
[ "$r" = "$(printf 'check\nlist\nshow')" ]
ok $? "sbx profile <TAB> offers list, show and check"
r=$(comp profile show "")
# shellcheck disable=SC2086
[ -n "$profiles" ] && has "$r" $profiles
ok $? "sbx profile show <TAB> offers the built-in profiles"
r=$(comp help "")
# shellcheck disable=SC2086
has "$r" $cmds
ok $? "sbx help <TAB> offers every command"
r=$(comp ps --)
has "$r" --json
ok $? "sbx ps --<TAB> offers --json"

# Sandbox ids and names from `sbx ps -a`.
"$SBX" run --keep --name comp-one -- true >/dev/null 2>&1
"$SBX" run --keep -- true >/dev/null 2>&1
ids=$("$SBX" ps -a --json 2>/dev/null | python3 -c '
import json, sys
for s in json.load(sys.stdin):
    print(s["id"])' 2>/dev/null)
ok $(($(lines "$ids") != 2)) "two kept sandboxes exist for the next checks ($(echo $ids))"
for c in inspect destroy exec export diff apply; do
	r=$(comp "$c" "")
	# shellcheck disable=SC2086
	[ -n "$ids" ] && has "$r" $ids comp-one
	ok $? "sbx $c <TAB> offers every sandbox id and name"
done
r=$(comp inspect comp-)
[ "$r" = comp-one ]
ok $? "sbx inspect comp-<TAB> completes the name"
r=$(comp exec comp-one "")
hasnt "$r" comp-one
ok $? "after exec's sandbox, the payload command is completed, not sandboxes"
# --state-dir before the command: sandboxes of that state directory.
other=$TAP_TMP/other-state
SBX_STATE_DIR=$other "$SBX" run -q --keep --name comp-other -- true >/dev/null 2>&1
r=$(comp --state-dir "$other" inspect "")
has "$r" comp-other && hasnt "$r" comp-one
ok $? "sbx --state-dir DIR inspect <TAB> offers the sandboxes of DIR"
r=$(comp --state-dir="$other" destroy comp-)
[ "$r" = comp-other ]
ok $? "sbx --state-dir=DIR destroy <TAB> too"

# With bash-completion loaded, the payload command's own completion runs.
bc=/usr/share/bash-completion/bash_completion
if [ -r "$bc" ]; then
	r=$(bash -c '. "$1"; . "$2"; COMP_WORDS=("$3" run --net none ls --al); COMP_CWORD=5
		COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}; _sbx sbx --al none
		printf "%s\n" "${COMPREPLY[@]}"' _ "$bc" "$COMPDIR/sbx.bash" "$SBX" | sort -u)
	has "$r" --all --almost-all && hasnt "$r" --allow
	ok $? "with bash-completion, sbx run ... ls --al<TAB> completes ls's options, not sbx's"
	r=$(bash -c '. "$1"; . "$2"; COMP_WORDS=("$3" exec comp-one ls --al); COMP_CWORD=4
		COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}; _sbx sbx --al comp-one
		printf "%s\n" "${COMPREPLY[@]}"' _ "$bc" "$COMPDIR/sbx.bash" "$SBX" | sort -u)
	has "$r" --all
	ok $? "with bash-completion, sbx exec SANDBOX ls --al<TAB> completes ls's options"
else
	skip "payload completion through bash-completion" "bash-completion is not installed"
fi

# fish: complete -C runs the real completion.
if command -v fish >/dev/null; then
	fish -n "$COMPDIR/sbx.fish"
	ok $? "completions/sbx.fish parses (fish -n)"
	fcomp() {
		fish --no-config -c "function sbx; '$SBX' \$argv; end; source '$COMPDIR/sbx.fish'; complete -C '$1'" 2>&1 |
			cut -f1 | LC_ALL=C sort -u
	}
	r=$(fcomp "sbx ")
	# shellcheck disable=SC2086
	has "$r" $cmds
	ok $? "fish: sbx <TAB> offers every command"
	hasnt "$r" image proxy
	ok $? "fish: hidden commands are not offered"
	r=$(fcomp "sbx run --")
	has "$r" --profile --rootfs --net --keep
	ok $? "fish: sbx run --<TAB> offers run's options"
	r=$(fcomp "sbx run --net ")
	[ "$r" = "$(printf 'host\nloopback\nnone\nproxy')" ]
	ok $? "fish: sbx run --net <TAB> offers the four modes"
	r=$(fcomp "sbx run -p ")
	# shellcheck disable=SC2086
	[ -n "$profiles" ] && has "$r" $profiles
	ok $? "fish: sbx run -p <TAB> offers the built-in profiles"
	r=$(fcomp "sbx profile ")
	has "$r" list show check
	ok $? "fish: sbx profile <TAB> offers list, show and check"
	r=$(fcomp "sbx inspect ")
	has "$r" comp-one && hasnt "$r" comp-other
	ok $? "fish: sbx inspect <TAB> offers sandbox names"
	r=$(fcomp "sbx diff ")
	has "$r" comp-one && hasnt "$r" comp-other
	ok $? "fish: sbx diff <TAB> offers sandbox names"
	r=$(fcomp "sbx --state-dir $other destroy ")
	has "$r" comp-other && hasnt "$r" comp-one
	ok $? "fish: sbx --state-dir DIR destroy <TAB> offers the sandboxes of DIR"
else
	skip "fish completion" "fish is not installed (make deps)"
fi

# zsh: syntax, registration through compinit, and _sbx driven with the
# completion builtins replaced by functions that print what they are given.
if command -v zsh >/dev/null; then
	zsh -n "$COMPDIR/_sbx"
	ok $? "completions/_sbx parses (zsh -n)"
	r=$(zsh -f -c "fpath=('$COMPDIR' \$fpath); autoload -Uz compinit; compinit -u -D; print -r -- \${_comps[sbx]}" 2>&1)
	[ "$r" = _sbx ]
	ok $? "zsh: compinit registers _sbx for sbx from fpath ($r)"
	zcomp() {
		zsh -f -c '
			compadd() {
				while [[ $1 == -* ]]; do [[ $1 == -- ]] && { shift; break }; shift; done
				local x; for x in "$@"; do [[ $x == ${PREFIX}* ]] && print -r -- $x; done
			}
			_files() { print -r -- __files__ }
			_directories() { print -r -- __dirs__ }
			_command_names() { print -r -- __commands__ }
			_parameters() { print -r -- __params__ }
			_message() { : }
			source "$1"; shift
			words=("$@"); CURRENT=$#; PREFIX=${words[CURRENT]}
			_sbx' zsh "$COMPDIR/_sbx" "$SBX" "$@" 2>&1 | LC_ALL=C sort -u
	}
	r=$(zcomp "")
	# shellcheck disable=SC2086
	has "$r" $cmds help && hasnt "$r" image proxy
	ok $? "zsh: sbx <TAB> offers every command of --list-commands, no hidden one"
	r=$(zcomp r)
	[ "$r" = run ]
	ok $? "zsh: sbx r<TAB> completes to run ($r)"
	r=$(zcomp --state-dir /tmp pro)
	[ "$r" = profile ]
	ok $? "zsh: the value of --state-dir is not taken for the command"
	r=$(zcomp run --net "")
	[ "$r" = "$(printf 'host\nloopback\nnone\nproxy')" ]
	ok $? "zsh: sbx run --net <TAB> offers the four modes"
	r=$(zcomp run --)
	has "$r" --profile --rootfs --net --keep
	ok $? "zsh: sbx run --<TAB> offers run's options"
	r=$(zcomp run -p "")
	# shellcheck disable=SC2086
	[ -n "$profiles" ] && has "$r" $profiles
	ok $? "zsh: sbx run -p <TAB> offers the built-in profiles"
	r=$(zcomp run --keep "")
	[ "$r" = __commands__ ]
	ok $? "zsh: sbx run --keep <TAB> completes a command name"
	r=$(zcomp run ls "")
	[ "$r" = __files__ ]
	ok $? "zsh: arguments of the payload command are files, not sbx options"
	r=$(zcomp profile "")
	[ "$r" = "$(printf 'check\nlist\nshow')" ]
	ok $? "zsh: sbx profile <TAB> offers list, show and check"
	r=$(zcomp inspect "")
	has "$r" comp-one && hasnt "$r" comp-other
	ok $? "zsh: sbx inspect <TAB> offers sandbox names"
	r=$(zcomp apply "")
	has "$r" comp-one && hasnt "$r" comp-other
	ok $? "zsh: sbx apply <TAB> offers sandbox names"
	r=$(zcomp --state-dir "$other" exec "")
	has "$r" comp-other && hasnt "$r" comp-one
	ok $? "zsh: sbx --state-dir DIR exec <TAB> offers the sandboxes of DIR"
else
	skip "zsh completion" "zsh is not installed (make deps)"
fi

"$SBX" destroy --all >/dev/null 2>&1
SBX_STATE_DIR=$other "$SBX" destroy --all >/dev/null 2>&1
done_testing
