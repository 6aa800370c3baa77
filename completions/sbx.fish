# fish completion for sbx(1)
#
# Commands, options, profile names and sandboxes come from the binary
# (sbx --list-commands, sbx help CMD, sbx profile list, sbx ps -a); this
# file only knows which options take a value and the positional arguments
# of each command.

# The sbx being completed: the word typed, if it runs, else `sbx`.
function __sbx_bin
    set -l w (commandline -opc)[1]
    if string match -q -- '*/*' $w; and test -x $w
        echo $w
    else
        echo sbx
    end
end

function __sbx_run
    set -l b (__sbx_bin)
    if test "$b" = sbx
        sbx $argv 2>/dev/null
    else
        $b $argv 2>/dev/null
    end
end

# Options taking a value, per command ("" = global options).
function __sbx_valued
    switch "$argv[1]"
        case ''
            echo --state-dir
        case run
            string split ' ' -- '-p --profile --rootfs -n --name -e --env --bind --ro-bind --overlay --tmpfs --net --allow --secret --upstream-ca --publish --memory --pids --cpus --time --stop-timeout -w --workdir -u --user --hostname --log-json'
        case exec
            string split ' ' -- '-e --env -w --workdir'
        case inspect
            echo --html
        case logs
            string split ' ' -- '-n --tail'
        case stop
            string split ' ' -- '-t --time'
        case export
            string split ' ' -- '-o --output --oci --max-file --max-total'
    end
end

# Parse the words before the cursor: prints the command, then the number
# of positional arguments, then "payload" if the run/exec payload started.
function __sbx_state
    set -l words (commandline -opc)
    set -e words[1]
    set -l cmd ''
    set -l npos 0
    set -l payload ''
    set -l valued (__sbx_valued '')
    set -l skip 0
    set -l dd 0
    for w in $words
        if test $skip -eq 1
            set skip 0
            continue
        end
        if test -z "$cmd"
            if contains -- $w $valued
                set skip 1
            else if not string match -q -- '-*' $w
                set cmd $w
                set valued (__sbx_valued $cmd)
            end
            continue
        end
        if test $dd -eq 0; and test "$w" = --
            set dd 1
            continue
        end
        if test $dd -eq 0; and string match -q -- '-*' $w
            contains -- $w $valued; and set skip 1
            continue
        end
        set npos (math $npos + 1)
        if test "$cmd" = run; or begin
                test "$cmd" = exec; and test $npos -ge 2
            end
            set dd 1
            set payload payload
        end
    end
    echo $cmd
    echo $npos
    echo $payload
end

function __sbx_no_command
    test -z (__sbx_state)[1]
end

# __sbx_at CMD [NPOS]: the command is CMD (and NPOS positionals typed), the
# cursor is before any payload, the previous word is not an option's value.
function __sbx_at
    set -l st (__sbx_state)
    test "$st[1]" = "$argv[1]"; or return 1
    test -z "$st[3]"; or return 1
    if set -q argv[2]
        test "$st[2]" = "$argv[2]"; or return 1
    end
    set -l prev (commandline -opc)[-1]
    not contains -- $prev (__sbx_valued $argv[1])
end

# __sbx_value CMD OPT...: the previous word is one of OPT of command CMD.
function __sbx_value
    set -l st (__sbx_state)
    test "$st[1]" = "$argv[1]"; or return 1
    test -z "$st[3]"; or return 1
    set -l prev (commandline -opc)[-1]
    contains -- $prev $argv[2..-1]
end

function __sbx_payload
    set -l st (__sbx_state)
    test -n "$st[3]"
end

function __sbx_dash
    string match -q -- '-*' (commandline -ct)
end

# Options of the command's usage lines and option lines of its --help.
function __sbx_options
    __sbx_run help $argv[1] |
        sed -nE -e '/^(usage:)?[[:space:]]*sbx /p' \
            -e 's/^[[:space:]]+(-[[:alnum:]],[[:space:]]*)?(--?[[:alnum:]][-[:alnum:]]*).*/\1 \2/p' |
        grep -oE -- '(^|[^-[:alnum:]])--?[[:alpha:]][-[:alnum:]]*' |
        sed 's/^[^-]*//' | sort -u
end

function __sbx_profiles
    __sbx_run profile list | string match -r -- '^[^#\s]\S*'
end

# The --state-dir typed before the command, if any.
function __sbx_gopts
    set -l words (commandline -opc)
    for i in (seq 2 (count $words))
        switch $words[$i]
            case --state-dir
                set -l j (math $i + 1)
                set -q words[$j]; and printf '%s\n' --state-dir $words[$j]
                return
            case '--state-dir=*'
                echo $words[$i]
                return
            case '-*'
            case '*'
                return
        end
    end
end

function __sbx_sandboxes
    __sbx_run (__sbx_gopts) ps -a | awk '$1 ~ /^[0-9a-f]+$/ && length($1) >= 4 {
        print $1
        if (NF > 1 && $2 != "-" && $2 !~ /^(running|exited|killed|timeout|oom|lost|error|unknown|created)$/) print $2
    }'
end

complete -c sbx -f

# Global options and the command.
complete -c sbx -n __sbx_no_command -l state-dir -x -a '(__fish_complete_directories)' -d 'state directory'
complete -c sbx -n __sbx_no_command -l version -d 'print the version'
complete -c sbx -n __sbx_no_command -s h -l help -d 'usage'
complete -c sbx -n __sbx_no_command -a '(__sbx_run --list-commands)'
complete -c sbx -n __sbx_no_command -a help -d 'usage of a command'

# Options of each command, from its --help.
for c in run exec inspect ps destroy export profile doctor diff apply logs stop wait
    complete -c sbx -n "__sbx_at $c; and __sbx_dash" -a "(__sbx_options $c)"
end

# run
complete -c sbx -n '__sbx_value run -p --profile' -a '(__sbx_profiles)' -d 'built-in profile'
complete -c sbx -n '__sbx_value run -p --profile' -F
complete -c sbx -n '__sbx_value run --rootfs' -a host -d 'the host root, read-only'
complete -c sbx -n '__sbx_value run --rootfs' -F
complete -c sbx -n '__sbx_value run --net' -a 'none loopback proxy host'
complete -c sbx -n '__sbx_value run -u --user' -a 'root inherit'
complete -c sbx -n '__sbx_value run -e --env' -a '(set -xn)'
complete -c sbx -n '__sbx_value run --bind --ro-bind --overlay --tmpfs' -a '(__fish_complete_directories)'
complete -c sbx -n '__sbx_value run -w --workdir' -a '(__fish_complete_directories)'
complete -c sbx -n '__sbx_value run --log-json' -F
complete -c sbx -n '__sbx_at run 0; and not __sbx_dash' -a '(__fish_complete_command)'
complete -c sbx -n __sbx_payload -F

# exec
complete -c sbx -n '__sbx_value exec -w --workdir' -a '(__fish_complete_directories)'
complete -c sbx -n '__sbx_value exec -e --env' -a '(set -xn)'
complete -c sbx -n '__sbx_at exec 0; and not __sbx_dash' -a '(__sbx_sandboxes)' -d sandbox
complete -c sbx -n '__sbx_at exec 1; and not __sbx_dash' -a '(__fish_complete_command)'

# inspect, export, destroy
complete -c sbx -n '__sbx_at inspect 0; and not __sbx_dash' -a '(__sbx_sandboxes)' -d sandbox
complete -c sbx -n '__sbx_value inspect --html' -F
complete -c sbx -n '__sbx_at export 0; and not __sbx_dash' -a '(__sbx_sandboxes)' -d sandbox
complete -c sbx -n '__sbx_value export -o --output' -F
complete -c sbx -n '__sbx_at destroy; and not __sbx_dash' -a '(__sbx_sandboxes)' -d sandbox
complete -c sbx -n '__sbx_at stop; and not __sbx_dash' -a '(__sbx_sandboxes)' -d sandbox
complete -c sbx -n '__sbx_at logs 0; and not __sbx_dash' -a '(__sbx_sandboxes)' -d sandbox
complete -c sbx -n '__sbx_at wait 0; and not __sbx_dash' -a '(__sbx_sandboxes)' -d sandbox

# diff, apply: the sandbox, then host paths
complete -c sbx -n '__sbx_at diff 0; and not __sbx_dash' -a '(__sbx_sandboxes)' -d sandbox
complete -c sbx -n '__sbx_at apply 0; and not __sbx_dash' -a '(__sbx_sandboxes)' -d sandbox

# ps, doctor: options only.

# profile
complete -c sbx -n '__sbx_at profile 0; and not __sbx_dash' -a list -d 'list the built-in profiles'
complete -c sbx -n '__sbx_at profile 0; and not __sbx_dash' -a show -d 'print a profile as resolved'
complete -c sbx -n '__sbx_at profile 0; and not __sbx_dash' -a check -d 'validate a profile file'
complete -c sbx -n '__sbx_at profile 1; and contains show (commandline -opc)' -a '(__sbx_profiles)'
complete -c sbx -n '__sbx_at profile 1; and contains show (commandline -opc)' -F
complete -c sbx -n '__sbx_at profile 1; and contains check (commandline -opc)' -F

# help
complete -c sbx -n '__sbx_at help 0' -a '(__sbx_run --list-commands)'
