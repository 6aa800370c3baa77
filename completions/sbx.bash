# bash completion for sbx(1)                               -*- shell-script -*-
#
# The command list, each command's options and the built-in profile names
# come from the binary itself (sbx --list-commands, sbx help CMD,
# sbx profile list), sandbox ids and names from `sbx ps -a`, so this file
# cannot drift from the binary.  Per command it knows only which options
# take a value and what the positional arguments are.

# The sbx being completed: the word typed, if it runs, else the one in PATH.
_sbx_bin()
{
	local b=${COMP_WORDS[0]}
	b=${b/#\~/$HOME}
	if [[ $b == */* && -x $b ]]; then
		printf '%s\n' "$b"
	else
		printf 'sbx\n'
	fi
}

_sbx_commands()
{
	"$1" --list-commands 2>/dev/null
}

# Long and short options from the command's --help text: those of its
# usage lines and those that start an option line (not options of other
# commands mentioned in the prose).
_sbx_options()
{
	"$1" help "$2" 2>/dev/null |
		sed -nE -e '/^(usage:)?[[:space:]]*sbx /p' \
			-e 's/^[[:space:]]+(-[[:alnum:]],[[:space:]]*)?(--?[[:alnum:]][-[:alnum:]]*).*/\1 \2/p' |
		grep -oE -- '(^|[^-[:alnum:]])--?[[:alpha:]][-[:alnum:]]*' |
		sed 's/^[^-]*//' | sort -u
}

_sbx_profiles()
{
	"$1" profile list 2>/dev/null | awk 'NF && $1 !~ /^#/ {print $1}'
}

# Ids and names of all sandboxes, from the table of `sbx ps -a` (with the
# --state-dir typed before the command, if any): the first column is the
# id, the second the name ("-" when it has none).
_sbx_gopts=()
_sbx_sandboxes()
{
	"$1" "${_sbx_gopts[@]}" ps -a 2>/dev/null | awk '
		$1 ~ /^[0-9a-f]+$/ && length($1) >= 4 {
			print $1
			if (NF > 1 && $2 != "-" && $2 !~ /^(running|exited|killed|timeout|oom|lost|error|unknown|created)$/)
				print $2
		}'
}

# Options that take a value, per command ("" for global options).
_sbx_valued()
{
	case $1 in
	"") echo "--state-dir" ;;
	run) echo "-p --profile --rootfs -n --name -e --env --bind --ro-bind --overlay --tmpfs --net --allow --secret --upstream-ca --publish --memory --pids --cpus --time --stop-timeout -w --workdir -u --user --hostname --log-json" ;;
	exec) echo "-e --env -w --workdir" ;;
	inspect) echo "--html" ;;
	logs) echo "-n --tail" ;;
	stop) echo "-t --time" ;;
	export) echo "-o --output --oci --max-file --max-total" ;;
	destroy | doctor | ps | profile | help | diff | apply | wait) echo "" ;;
	esac
}

# Complete the value of option $2 of command $3.
_sbx_value()
{
	local sbx=$1 opt=$2 cur=$4
	case $opt in
	-p | --profile)
		COMPREPLY=($(compgen -W "$(_sbx_profiles "$sbx")" -- "$cur"))
		COMPREPLY+=($(compgen -f -X '!*.ini' -- "$cur") $(compgen -d -- "$cur"))
		;;
	--rootfs)
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -W host -- "$cur") $(compgen -f -- "$cur"))
		;;
	--net)
		COMPREPLY=($(compgen -W "none loopback proxy host" -- "$cur"))
		;;
	-u | --user)
		COMPREPLY=($(compgen -W "root inherit $(id -u)" -- "$cur"))
		;;
	-e | --env)
		COMPREPLY=($(compgen -e -- "$cur"))
		;;
	--bind | --ro-bind | --overlay | --state-dir | -w | --workdir | --tmpfs)
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -d -- "$cur"))
		;;
	--log-json | --html | -o | --output)
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -f -- "$cur"))
		;;
	*)
		COMPREPLY=()
		;;
	esac
}

_sbx()
{
	local cur prev cword=0 sbx cmd= cmdi=0 i w valued npos=0 posi=0
	local -a words=()
	COMPREPLY=()

	# Bash splits --opt=value at '=' (COMP_WORDBREAKS): drop the '=' so the
	# value follows its option as a word of its own.
	for ((i = 0; i < ${#COMP_WORDS[@]}; i++)); do
		w=${COMP_WORDS[i]}
		if [[ $w == = ]] && ((i > 0)) && [[ ${COMP_WORDS[i - 1]} == --* ]]; then
			if ((i == COMP_CWORD)); then
				words+=("")
				cword=$((${#words[@]} - 1))
			fi
			continue
		fi
		words+=("$w")
		((i == COMP_CWORD)) && cword=$((${#words[@]} - 1))
	done
	cur=${words[cword]} prev=${words[cword - 1]}
	sbx=$(_sbx_bin)

	# The subcommand: the first word that is neither an option nor its value.
	valued=" $(_sbx_valued "") "
	_sbx_gopts=()
	for ((i = 1; i < cword; i++)); do
		w=${words[i]}
		if [[ $valued == *" $w "* ]]; then
			[[ $w == --state-dir ]] && _sbx_gopts=(--state-dir "${words[i + 1]/#\~/$HOME}")
			((i++))
		elif [[ $w == --state-dir=* ]]; then
			_sbx_gopts=("$w")
		elif [[ $w != -* ]]; then
			cmd=$w cmdi=$i
			break
		fi
	done
	if [[ -z $cmd ]]; then
		if [[ $valued == *" $prev "* ]]; then
			_sbx_value "$sbx" "$prev" "" "$cur"
		elif [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--state-dir --help --version" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$(_sbx_commands "$sbx") help" -- "$cur"))
		fi
		return 0
	fi

	# Positional arguments of the command before the cursor.
	valued=" $(_sbx_valued "$cmd") "
	local -a pos=()
	local dashdash=0
	for ((i = cmdi + 1; i < cword; i++)); do
		w=${words[i]}
		if ((dashdash)); then
			pos+=("$w")
			[[ -z $posi || $posi == 0 ]] && posi=$i
		elif [[ $w == -- ]]; then
			dashdash=1
		elif [[ $w == -* ]]; then
			[[ $valued == *" $w "* ]] && ((i++))
		else
			pos+=("$w")
			((posi == 0)) && posi=$i
			# run and exec stop at the payload command: the rest is its own.
			if [[ $cmd == run || ($cmd == exec && ${#pos[@]} -ge 2) ]]; then
				dashdash=1
			fi
		fi
	done
	npos=${#pos[@]}

	if ((!dashdash)) && [[ $valued == *" $prev "* && $prev == -* ]]; then
		_sbx_value "$sbx" "$prev" "$cmd" "$cur"
		return 0
	fi
	if ((!dashdash)) && [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_sbx_options "$sbx" "$cmd")" -- "$cur"))
		return 0
	fi

	case $cmd in
	run)
		_sbx_payload "$cmd" "$npos" 0
		;;
	exec)
		if ((npos == 0)); then
			COMPREPLY=($(compgen -W "$(_sbx_sandboxes "$sbx")" -- "$cur"))
		else
			_sbx_payload "$cmd" "$npos" 1
		fi
		;;
	inspect | export | logs | wait)
		((npos == 0)) && COMPREPLY=($(compgen -W "$(_sbx_sandboxes "$sbx")" -- "$cur"))
		;;
	diff | apply)
		# the sandbox, then host paths
		if ((npos == 0)); then
			COMPREPLY=($(compgen -W "$(_sbx_sandboxes "$sbx")" -- "$cur"))
		else
			compopt -o filenames 2>/dev/null
			COMPREPLY=($(compgen -f -- "$cur"))
		fi
		;;
	destroy | stop)
		COMPREPLY=($(compgen -W "$(_sbx_sandboxes "$sbx")" -- "$cur"))
		;;
	doctor | ps) ;;
	profile)
		if ((npos == 0)); then
			COMPREPLY=($(compgen -W "list show check" -- "$cur"))
		elif ((npos == 1)); then
			case ${pos[0]} in
			show)
				COMPREPLY=($(compgen -W "$(_sbx_profiles "$sbx")" -- "$cur"))
				COMPREPLY+=($(compgen -f -X '!*.ini' -- "$cur") $(compgen -d -- "$cur"))
				;;
			check)
				COMPREPLY=($(compgen -f -X '!*.ini' -- "$cur") $(compgen -d -- "$cur"))
				;;
			esac
		fi
		;;
	help)
		((npos == 0)) && COMPREPLY=($(compgen -W "$(_sbx_commands "$sbx")" -- "$cur"))
		;;
	esac
	return 0
}

# The payload command of run/exec: a command name first, then its own
# arguments (through bash-completion's _command_offset when available).
_sbx_payload()
{
	local cmd=$1 npos=$2 before=$3 off i
	if ((npos == before)); then
		COMPREPLY=($(compgen -c -- "$cur"))
		return
	fi
	if declare -F _command_offset >/dev/null; then
		# Index of the payload command word.
		off=$cmdi
		local seen=0 dd=0
		for ((i = cmdi + 1; i < cword; i++)); do
			w=${words[i]}
			if ((!dd)) && [[ $w == -- ]]; then
				dd=1
				continue
			fi
			if ((!dd)) && [[ $w == -* ]]; then
				[[ $valued == *" $w "* ]] && ((i++))
				continue
			fi
			if ((seen == before)); then
				off=$i
				break
			fi
			((seen++))
		done
		_command_offset "$off"
	else
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -f -- "$cur"))
	fi
}

complete -F _sbx sbx
