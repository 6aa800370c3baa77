#!/bin/bash
# bench/tls.sh - credential injection's costs, side by side (root: the
# server is on a test host of its own, tests/lib/testhost.sh).
#
#   bench/tls.sh [SIZE_MB] [ROUNDS]      (defaults: 256 MiB, 5 rounds)
#
# 1. HTTPS throughput: `openssl s_server -WWW` on the test host serves a
#    SIZE_MB file; curl downloads it directly from the host (the peer),
#    and from inside `sbx run` through the proxy that terminates TLS for
#    the injection host and injects a secret (CONNECT through the proxy
#    variables, and captured with them unset).  Medians; target >= 0.5.
# 2. Start-up cost of the sandbox's CA: `sbx run --net proxy -- true` with
#    one injected secret against the same without (bench/compare.py,
#    alternating runs); target: the medians differ by less than 1 ms.
#    Alongside, the same profile with no network: what proxy mode itself
#    adds (capture, the proxy's listeners, the jail's CA bundle).
set -eu
cd "$(dirname "$0")/.."
ROOT=$PWD TAP_ROOT=$PWD
SBX=${SBX:-$ROOT/sbx}
MB=${1:-256}
ROUNDS=${2:-5}
RUNS=${BENCH_RUNS:-21}
[ "$(id -u)" = 0 ] || { echo "tls: skipped (needs root for the test host's network namespace)"; exit 0; }
. tests/lib/testhost.sh
tmp=$(mktemp -d)
chmod 0755 "$tmp"
spid=
# (A killed s_server's status must not end the trap early under set -e:
# the test host would be left behind.)
cleanup() {
	if [ -n "$spid" ]; then
		kill -KILL "$spid" 2>/dev/null || true
		wait "$spid" 2>/dev/null || true
	fi
	testhost_down || true
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
testhost_up "$tmp/th" || { echo "tls: cannot make the test host"; exit 1; }
mkdir -p "$tmp/www" && head -c $((MB * 1048576)) /dev/zero >"$tmp/www/big.bin"
(cd "$tmp/www" && exec ip netns exec "$TH_NS" openssl s_server -quiet -WWW -accept "$TH_A:9443" \
	-cert "$tmp/th/srv.pem" -key "$tmp/th/srv.key" >/dev/null 2>&1) & spid=$!
for _ in $(seq 50); do
	in_hosts curl -s -m 2 -o /dev/null --cacert "$TH_CA" https://api.sbx.test:9443/big.bin -r 0-0 && break
	sleep 0.1
done
cat >"$tmp/p.ini" <<EOP
[sandbox]
persist = never
[network]
mode = proxy
allow = api.sbx.test:9443 api.sbx.test
upstream-ca = $TH_CA
[secrets]
KEY = env:SBX_BENCH_KEY inject api.sbx.test
EOP
export SBX_BENCH_KEY=bench-key-0123456789 SBX_STATE_DIR=$tmp/state SBX_CACHE_DIR=$tmp/cache
url=https://api.sbx.test:9443/big.bin
w='%{size_download} %{speed_download}\n'
check() { # "SIZE SPEED" -> SPEED, or fail on a short transfer
	set -- $1
	[ "${1:-0}" = $((MB * 1048576)) ] || { echo "tls: short transfer (${1:-0} bytes)" >&2; exit 1; }
	echo "$2"
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
: >"$tmp/direct"; : >"$tmp/proxied"; : >"$tmp/captured"
for _ in $(seq "$ROUNDS"); do
	check "$(in_hosts curl -s -o /dev/null -w "$w" --cacert "$TH_CA" "$url")" >>"$tmp/direct"
	check "$(in_hosts "$SBX" run -q -p "$tmp/p.ini" -- sh -c \
		"exec curl -s -o /dev/null -w '$w' -H \"Authorization: Bearer \$KEY\" '$url'")" >>"$tmp/proxied"
	check "$(in_hosts "$SBX" run -q -p "$tmp/p.ini" -- sh -c \
		"unset https_proxy HTTPS_PROXY all_proxy ALL_PROXY; exec curl -s -o /dev/null -w '$w' '$url'")" >>"$tmp/captured"
done
d=$(median <"$tmp/direct") p=$(median <"$tmp/proxied") c=$(median <"$tmp/captured")
echo "tls: $MB MiB x $ROUNDS rounds, medians (peer: curl --cacert CA $url, direct)"
awk -v d="$d" -v p="$p" -v c="$c" 'BEGIN {
	printf "  direct           %7.0f MiB/s\n", d / 1048576
	printf "  injecting CONNECT%7.0f MiB/s  ratio %.2f\n", p / 1048576, p / d
	printf "  injecting capture%7.0f MiB/s  ratio %.2f\n", c / 1048576, c / d
	m = (p < c ? p : c) / d
	printf "tls ratio %.2f (target >= 0.50): %s\n", m, ((m >= 0.5) ? "ok" : "BELOW TARGET")
}'
# The CA's start-up cost.
sed -i 's/^KEY = .*//' "$tmp/p.ini"
cp "$tmp/p.ini" "$tmp/plain.ini"
echo "KEY = env:SBX_BENCH_KEY inject api.sbx.test" >>"$tmp/p.ini"
# Proxy mode's own cost (capture, the proxy, the bundle): the same run
# with no network.
sed 's/^mode = proxy$/mode = none/; /^upstream-ca = /d; /^allow = /d' "$tmp/plain.ini" >"$tmp/none.ini"
out=$(in_hosts python3 bench/compare.py --runs "$RUNS" --label "start-up, proxy mode, one injected secret (CA) vs none" \
	"inject=$SBX run -q -p $tmp/p.ini -- true" "plain=$SBX run -q -p $tmp/plain.ini -- true" \
	"none=$SBX run -q -p $tmp/none.ini -- true")
echo "$out" | grep -v '^RESULT'
awk '$1 == "inject" {i = $2} $1 == "plain" {p = $2} $1 == "none" {n = $2} END {
	printf "tls ca cost %.2f ms (target < 1 ms): %s\n", i - p, ((i - p < 1) ? "ok" : "ABOVE TARGET")
	printf "tls proxy mode cost %.2f ms (%.2f / %.2f ms)\n", p - n, p, n
}' <<<"$out"
