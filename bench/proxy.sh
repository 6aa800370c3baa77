#!/bin/sh
# bench/proxy.sh - throughput of the allowlist proxy against its peer, a
# direct loopback transfer with the same server and client.
#
#   bench/proxy.sh [SIZE_MB] [ROUNDS]      (defaults: 1024 MiB, 5 rounds)
#
# Server: bench/zeroserver.py (HTTP, N zero bytes, Python sendall of 1 MiB).
# Client: curl -o /dev/null.  Each round runs the direct transfer, the
# plain-HTTP GET through `sbx proxy` and a CONNECT tunnel through it, one
# after the other; the medians are compared.  Target: ratio >= 0.8.
set -eu
cd "$(dirname "$0")/.."
SBX=${SBX:-./sbx}
MB=${1:-1024}
ROUNDS=${2:-5}
N=$((MB * 1024 * 1024))
tmp=$(mktemp -d)
spid='' ppid_=''
cleanup() {
	[ -n "$ppid_" ] && kill -INT "$ppid_" 2>/dev/null && wait "$ppid_" 2>/dev/null
	[ -n "$spid" ] && kill "$spid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

python3 bench/zeroserver.py "$tmp/port" & spid=$!
i=0; while [ ! -s "$tmp/port" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
sport=$(cat "$tmp/port")
"$SBX" proxy -q --listen 127.0.0.1:0 --allow "127.0.0.1:$sport" 2>"$tmp/proxy.err" & ppid_=$!
i=0; while ! grep -q listening "$tmp/proxy.err" && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
pport=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$tmp/proxy.err")
url="http://127.0.0.1:$sport/$N"

speed() {	# curl args... -> bytes/s, fails unless every byte arrived
	out=$(curl -s -o /dev/null -w '%{size_download} %{speed_download}' "$@")
	set -- $out
	[ "$1" = "$N" ] || { echo "bench: short transfer ($1 of $N bytes)" >&2; exit 1; }
	echo "$2"
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

: >"$tmp/direct"; : >"$tmp/get"; : >"$tmp/connect"
r=0
while [ $r -lt "$ROUNDS" ]; do
	speed "$url" >>"$tmp/direct"
	speed -x "http://127.0.0.1:$pport" "$url" >>"$tmp/get"
	speed -p -x "http://127.0.0.1:$pport" "$url" >>"$tmp/connect"
	r=$((r+1))
done
d=$(median <"$tmp/direct"); g=$(median <"$tmp/get"); c=$(median <"$tmp/connect")
echo "proxy: $MB MiB x $ROUNDS rounds, medians (peer: curl -o /dev/null $url, direct)"
awk -v d="$d" -v g="$g" -v c="$c" 'BEGIN {
	printf "  direct       %7.0f MiB/s\n", d / 1048576
	printf "  proxy GET    %7.0f MiB/s  ratio %.2f\n", g / 1048576, g / d
	printf "  proxy CONNECT%7.0f MiB/s  ratio %.2f\n", c / 1048576, c / d
	m = (g < c ? g : c) / d
	printf "proxy ratio %.2f (target >= 0.80): %s\n", m, ((m >= 0.8) ? "ok" : "BELOW TARGET")
}'
