#!/bin/bash
# tests/integration/net_proxy.sh - `sbx proxy` on the host, driven with curl:
# allowlist decisions, the 403 reply, names resolving to loopback or the
# cloud metadata address, and the JSON events (matched exactly).
#
# Names come from a private /etc/hosts bind-mounted in a private mount
# namespace (`unshare -rm`, which works as root and as a plain user).
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"

need_tools curl python3 jq

# Two HTTP servers on host loopback: each answers every request with a
# fixed body and saves the request head it got (to count bytes_up).
cat >"$TAP_TMP/server.py" <<'EOF'
import socket, sys, threading
d = sys.argv[1]
def serve(s, name):
    while True:
        c, _ = s.accept()
        req = b""
        while b"\r\n\r\n" not in req:
            b = c.recv(65536)
            if not b:
                break
            req += b
        open(d + "/" + name + ".req", "wb").write(req)
        body = ("hello from " + name + "\n").encode()
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
                  % len(body) + body)
        c.close()
ports = []
for name in ("a", "b"):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(8)
    ports.append(str(s.getsockname()[1]))
    threading.Thread(target=serve, args=(s, name), daemon=True).start()
open(d + "/ports.tmp", "w").write(" ".join(ports) + "\n")
import os; os.rename(d + "/ports.tmp", d + "/ports")
threading.Event().wait()
EOF
python3 "$TAP_TMP/server.py" "$TAP_TMP" &
srv=$!
trap 'kill $srv $prx 2>/dev/null; tap_cleanup' EXIT
for _ in $(seq 50); do [ -s "$TAP_TMP/ports" ] && break; sleep 0.1; done
read -r A B <"$TAP_TMP/ports"

# The host's own address (of the default route), if it has a public-looking one.
hostip=$(python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    s.connect(("192.0.2.1", 9)); print(s.getsockname()[0])
except OSError:
    pass')
case "$hostip" in 127.* | 10.* | 192.168.* | 169.254.* | 172.1[6-9].* | 172.2?.* | 172.3[01].* | "")
	hostip= ;;
esac
printf '127.0.0.1 localhost\n127.0.0.1 loop.test\n169.254.169.254 metadata.test\n' \
	>"$TAP_TMP/hosts"
[ -n "$hostip" ] && echo "$hostip hostaddr.test" >>"$TAP_TMP/hosts"
chmod 0644 "$TAP_TMP/hosts"
launch=(unshare -rm sh -c 'mount --bind "$0" /etc/hosts && exec "$@"' "$TAP_TMP/hosts")
if ! "${launch[@]}" getent hosts metadata.test >/dev/null 2>&1; then
	launch=()
	diag "no private /etc/hosts (namespaces unavailable): name cases skipped"
fi
"${launch[@]}" "$SBX" proxy --listen 127.0.0.1:0 --allow "127.0.0.1:$A" \
	--allow "localhost:$A" --allow "loop.test:$B" --allow metadata.test --allow hostaddr.test \
	--log-json "$TAP_TMP/events.jsonl" >"$TAP_TMP/stdout.jsonl" 2>"$TAP_TMP/proxy.err" &
prx=$!
P=$(sbx_proxy_port "$TAP_TMP/proxy.err")
[ -n "$P" ]
ok $? "sbx proxy listens on 127.0.0.1 port 0 and prints the port it got ($P)"

px=(-s -x "http://127.0.0.1:$P" --max-time 20)
expect=()	# the events we expect, as jq objects without ts and ms

# want METHOD HOST PORT ADDRESS ALLOWED REASON STATUS UP DOWN
want() {
	expect+=("$(jq -cn --arg m "$1" --arg h "$2" --argjson p "$3" --arg a "$4" \
		--argjson al "$5" --arg r "$6" --argjson s "$7" --argjson u "$8" --argjson d "$9" \
		'{method:$m, host:$h, port:$p, address:(if $a == "" then null else $a end),
		  allowed:$al, result:(if $al then "ok" else "denied" end), reason:$r, status:$s,
		  bytes_up:$u, bytes_down:$d, via:"proxy"}')")
}

# 1. plain GET to an allowed IP:port
capture curl "${px[@]}" -o "$TAP_TMP/body" -w '%{http_code} %{size_header} %{size_download}' \
	"http://127.0.0.1:$A/x?y=1"
read -r code hdr body <<<"$out"
[ "$code" = 200 ] && [ "$(cat "$TAP_TMP/body")" = "hello from a" ]
ok $? "allowed 127.0.0.1:$A: GET through the proxy returns the server's body"
head -1 "$TAP_TMP/a.req" | grep -q "^GET /x?y=1 HTTP/1.1"$'\r'"$" &&
	grep -q "^Host: 127.0.0.1:$A"$'\r'"$" "$TAP_TMP/a.req" &&
	grep -q "^Connection: close"$'\r'"$" "$TAP_TMP/a.req" &&
	! grep -qi "^Proxy-Connection" "$TAP_TMP/a.req"
ok $? "the request reaches the server in origin form with Host and Connection: close"
want GET 127.0.0.1 "$A" 127.0.0.1 true "allowed by '127.0.0.1:$A'" 200 \
	"$(stat -c %s "$TAP_TMP/a.req")" $((hdr + body))

# 2. CONNECT tunnel to an allowed localhost:port
rm -f "$TAP_TMP/a.req"
capture curl "${px[@]}" -p -o "$TAP_TMP/body" \
	-w '%{http_connect} %{http_code} %{size_header} %{size_download}' \
	"http://localhost:$A/tunnel"
read -r cc code hdr body <<<"$out"
[ "$cc" = 200 ] && [ "$code" = 200 ] && [ "$(cat "$TAP_TMP/body")" = "hello from a" ]
ok $? "allowed localhost:$A: CONNECT tunnel works (curl -p)"
# curl's size_header counts the CONNECT reply too; the tunnel carried the rest.
established=$(printf 'HTTP/1.1 200 Connection established\r\nProxy-Agent: sbx-proxy\r\n\r\n' | wc -c)
tunnel_down=$((hdr - established + body))
want CONNECT localhost "$A" 127.0.0.1 true "allowed by 'localhost:$A'" 200 \
	"$(stat -c %s "$TAP_TMP/a.req")" "$tunnel_down"

# 3. another port: 403 with the sbx headers, for GET and for CONNECT
capture curl "${px[@]}" -D "$TAP_TMP/h" -o "$TAP_TMP/body" -w '%{http_code}' \
	"http://127.0.0.1:$B/"
reason="127.0.0.1 port $B is not in the allowlist"
[ "$out" = 403 ] && grep -q "^X-Sbx-Deny: $reason"$'\r'"$" "$TAP_TMP/h" &&
	grep -q "^Server: sbx-proxy"$'\r'"$" "$TAP_TMP/h" &&
	[ "$(cat "$TAP_TMP/body")" = "sbx-proxy: $reason" ] && [ ! -e "$TAP_TMP/b.req" ]
ok $? "port $B (not listed): 403, X-Sbx-Deny and Server: sbx-proxy, server untouched"
want GET 127.0.0.1 "$B" "" false "$reason" 403 0 0

capture curl "${px[@]}" -p -o /dev/null -w '%{http_connect}' "http://localhost:$B/"
[ "$out" = 403 ] && [ "$rc" != 0 ]
ok $? "CONNECT to localhost:$B (not listed): 403, curl fails"
want CONNECT localhost "$B" "" false "localhost port $B is not in the allowlist" 403 0 0

# 4. the metadata address as a literal, not listed
capture curl "${px[@]}" -o /dev/null -w '%{http_code}' "http://169.254.169.254/latest/meta-data/"
[ "$out" = 403 ]
ok $? "http://169.254.169.254/ (not listed): 403"
want GET 169.254.169.254 80 "" false "169.254.169.254 port 80 is not in the allowlist" 403 0 0

# 5. names that are allowed but resolve to restricted addresses
if [ ${#launch[@]} -gt 0 ]; then
	capture curl "${px[@]}" -D "$TAP_TMP/h" -o /dev/null -w '%{http_code}' \
		"http://loop.test:$B/"
	reason="address 127.0.0.1 is loopback and no allow entry names it"
	[ "$out" = 403 ] && grep -q "^X-Sbx-Deny: $reason" "$TAP_TMP/h" && [ ! -e "$TAP_TMP/b.req" ]
	ok $? "allowed name loop.test resolving to 127.0.0.1: refused, server untouched"
	want GET loop.test "$B" 127.0.0.1 false "$reason" 403 0 0
	capture curl "${px[@]}" -p -o /dev/null -w '%{http_connect}' "https://metadata.test/"
	reason="address 169.254.169.254 is link-local and no allow entry names it"
	[ "$out" = 403 ]
	ok $? "allowed name metadata.test resolving to 169.254.169.254: refused"
	want CONNECT metadata.test 443 169.254.169.254 false "$reason" 403 0 0
	if [ -n "$hostip" ]; then
		capture curl "${px[@]}" -o /dev/null -w '%{http_code}' "http://hostaddr.test/"
		reason="address $hostip is a host address and no allow entry names it"
		[ "$out" = 403 ]
		ok $? "allowed name hostaddr.test resolving to the host's own $hostip: refused"
		want GET hostaddr.test 80 "$hostip" false "$reason" 403 0 0
	else
		skip "allowed name resolving to the host's own address is refused" "no such address"
	fi
else
	skip "allowed name resolving to 127.0.0.1 is refused" "no private /etc/hosts"
	skip "allowed name resolving to 169.254.169.254 is refused" "no private /etc/hosts"
fi

# 6. not a proxy request
capture curl -s --max-time 10 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$P/"
[ "$out" = 400 ]
ok $? "an origin-form request to the proxy itself: 400"
want GET "" 0 "" false "not a proxy request: expected an absolute http:// URI" 400 0 0

# Stop, then compare the events line by line.
kill -INT $prx
wait $prx
prc=$?
ok $prc "sbx proxy exits 0 on SIGINT"
n=${#expect[@]}
cmp -s "$TAP_TMP/events.jsonl" "$TAP_TMP/stdout.jsonl"
ok $? "--log-json FILE gets the same lines as stdout"
[ "$(wc -l <"$TAP_TMP/events.jsonl")" -eq "$n" ]
ok $? "one event per connection ($n)"
i=0
for e in "${expect[@]}"; do
	i=$((i + 1))
	got=$(sed -n "${i}p" "$TAP_TMP/events.jsonl" |
		jq -c 'if (.ts | test("^[0-9-]+T[0-9:.]+Z$")) and (.ms | type == "number")
		       then del(.ts, .ms) else "bad ts/ms" end')
	norm=$(jq -c 'if .host == "" then .host = null else . end |
		      if .port == 0 then .port = null else . end' <<<"$e")
	[ "$(jq -S . <<<"$got")" = "$(jq -S . <<<"$norm")" ]
	r=$?
	ok $r "event $i matches exactly: $(jq -r '"\(.method) \(.host):\(.port) \(.status)"' <<<"$norm")"
	[ $r = 0 ] || diag "got $got, want $norm"
done
allowed=$(grep -c '"allowed":true' "$TAP_TMP/events.jsonl")
grep -q "^$n connections, $allowed allowed, 0 failed, $((n - allowed)) denied$" "$TAP_TMP/proxy.err"
ok $? "the exit summary counts $n connections, $allowed allowed"
done_testing
