#!/bin/bash
# tests/integration/net_jail.sh - `sbx run --net proxy` seen from inside
# the jail (host rootfs, so curl and python3 are there), with two HTTP
# servers on host loopback: the proxy variables are set, allowed requests
# pass (GET and CONNECT), others get 403, a direct connection ignoring the
# variables fails, allowed names resolving to loopback or the metadata
# address are refused, and the `net` events in log.jsonl and the record
# match exactly.  (Other modes: net_modes.sh.)
. "$(dirname "$0")/../lib/tap.sh"
export SBX_STATE_DIR=$TAP_TMP/state SBX_CACHE_DIR=$TAP_TMP/cache

need_tools curl python3 jq

# proxy: two servers on host loopback
cat >"$TAP_TMP/server.py" <<'EOF'
import socket, sys, threading, os
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
        path = req.split(b" ")[1].decode() if b" " in req else "/"
        open(d + "/" + name + path.replace("/", "-") + ".req", "wb").write(req)
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
os.rename(d + "/ports.tmp", d + "/ports")
threading.Event().wait()
EOF
python3 "$TAP_TMP/server.py" "$TAP_TMP" &
srv=$!
trap 'kill $srv 2>/dev/null; tap_cleanup' EXIT
for _ in $(seq 50); do [ -s "$TAP_TMP/ports" ] && break; sleep 0.1; done
read -r A B <"$TAP_TMP/ports"

# NO_PROXY names loopback (the jail's own services stay direct), so curl
# is told to use the proxy for these host-loopback servers: --noproxy ''.
cat >"$TAP_TMP/inside.sh" <<EOF
echo "env \$HTTP_PROXY \$https_proxy \$NO_PROXY"
curl -s --noproxy '' --max-time 10 http://127.0.0.1:$A/one
curl -s --noproxy '' --max-time 10 -o /dev/null -w 'get-b %{http_code}\n' http://127.0.0.1:$B/
curl -s --noproxy '' --max-time 10 -p -o /dev/null -w 'connect-a %{http_connect} %{http_code}\n' http://localhost:$A/two
curl -s --max-time 5 --noproxy '*' -o /dev/null http://127.0.0.1:$A/ || echo "direct-loopback failed"
EOF
hostip=$(python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    s.connect(("192.0.2.1", 9)); print(s.getsockname()[0])
except OSError:
    pass')
if [ -n "$hostip" ] && [ "${hostip#127.}" = "$hostip" ]; then
	echo "curl -s --max-time 5 --noproxy '*' -o /dev/null -w 'direct-host %{http_code}\n' http://$hostip:$A/ || echo direct-host failed" \
		>>"$TAP_TMP/inside.sh"
fi
capture "$SBX" run -q --keep -w / --net proxy --allow "127.0.0.1:$A" --allow "localhost:$A" \
	-- sh -c "$(cat "$TAP_TMP/inside.sh")"
diag "proxy run: rc=$rc err=$err"
prefix="http://127.0.0.1:"
line() { sed -n "$1p" <<<"$out"; }
[[ "$(line 1)" =~ ^env\ ${prefix}[0-9]+\ ${prefix}[0-9]+\ .*127\.0\.0\.1 ]]
ok $? "--net proxy: HTTP_PROXY, https_proxy and NO_PROXY are set ($(line 1))"
[ "$(line 2)" = "hello from a" ]
ok $? "--net proxy: an allowed 127.0.0.1:$A GET goes through"
[ "$(line 3)" = "get-b 403" ] && [ -z "$(ls "$TAP_TMP"/b*.req 2>/dev/null)" ]
ok $? "--net proxy: port $B (not listed) gets 403 and the server sees nothing"
[ "$(line 4)" = "connect-a 200 200" ]
ok $? "--net proxy: CONNECT to an allowed localhost:$A works"
[ "$(line 5)" = "direct-loopback failed" ]
ok $? "--net proxy: a direct connection to 127.0.0.1:$A ignoring the proxy fails"
if [ -n "$hostip" ] && [ "${hostip#127.}" = "$hostip" ]; then
	[ "$(line 6)" = "direct-host 403" ] &&
		[ "$(jq -c 'select(.event == "net" and .via == "capture") | [.host, .allowed]' "$(ls "$SBX_STATE_DIR"/sandboxes/*/log.jsonl | head -1)")" = "[\"$hostip\",false]" ]
	ok $? "--net proxy: a direct connection to the host's $hostip is captured and refused (403)"
else
	skip "--net proxy: a direct connection to the host's address fails" "no host address"
fi

resp=$(printf 'HTTP/1.1 200 OK\r\nContent-Length: 13\r\nConnection: close\r\n\r\nhello from a\n' | wc -c)
log=$(ls "$SBX_STATE_DIR"/sandboxes/*/log.jsonl 2>/dev/null | head -1)
net=$( [ -n "$log" ] && jq -c 'select(.event == "net" and .via == "proxy") | del(.ts, .ms)' "$log")
w1=$(jq -cn --argjson p "$A" '{event:"net", via:"proxy", method:"GET", host:"127.0.0.1", port:$p,
	address:"127.0.0.1", allowed:true, result:"ok", reason:"allowed by '\''127.0.0.1:\($p)'\''",
	status:200}')
w2=$(jq -cn --argjson p "$B" '{event:"net", via:"proxy", method:"GET", host:"127.0.0.1", port:$p,
	address:null, allowed:false, result:"denied", reason:"127.0.0.1 port \($p) is not in the allowlist",
	status:403, bytes_up:0, bytes_down:0}')
w3=$(jq -cn --argjson p "$A" '{event:"net", via:"proxy", method:"CONNECT", host:"localhost", port:$p,
	address:"127.0.0.1", allowed:true, result:"ok", reason:"allowed by '\''localhost:\($p)'\''",
	status:200}')
[ "$(jq -s length <<<"$net")" = 3 ]
ok $? "--net proxy: log.jsonl has one net event per proxied connection (3)"
got() { sed -n "$1p" <<<"$net" | jq -cS "$2"; }
[ "$(got 1 'del(.bytes_up, .bytes_down)')" = "$(jq -cS . <<<"$w1")" ] &&
	[ "$(got 1 .bytes_down)" = "$resp" ] &&
	[ "$(got 1 .bytes_up)" = "$(stat -c %s "$TAP_TMP/a-one.req")" ]
ok $? "--net proxy: the allowed GET event matches exactly"
[ "$(got 2 .)" = "$(jq -cS . <<<"$w2")" ]
ok $? "--net proxy: the denied GET event matches exactly"
[ "$(got 3 'del(.bytes_up, .bytes_down)')" = "$(jq -cS . <<<"$w3")" ] &&
	[ "$(got 3 .bytes_down)" = "$resp" ] &&
	[ "$(got 3 .bytes_up)" = "$(stat -c %s "$TAP_TMP/a-two.req")" ]
ok $? "--net proxy: the CONNECT event matches exactly"
rec=$(dirname "$log")/record.json
[ -n "$log" ] && [ "$(jq -c '[.network_events[] | select(.via == "proxy")] | length' "$rec")" = 3 ] &&
	[ "$(jq -r .policy.network.mode "$rec")" = proxy ]
ok $? "--net proxy: the record holds the mode and the 3 events"

# Allowed names that resolve to loopback or the metadata address: the
# supervisor's resolver needs a private /etc/hosts (a private mount
# namespace; as root only, since sbx must stay the plain invoking user).
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
	printf '127.0.0.1 localhost\n127.0.0.1 loop.test\n169.254.169.254 metadata.test\n' \
		>"$TAP_TMP/hosts"
	chmod 0644 "$TAP_TMP/hosts"
	"$SBX" destroy --stale >/dev/null # waits for the purgers at work there
	rm -rf "$SBX_STATE_DIR"
	capture unshare -m sh -c 'mount --bind "$0" /etc/hosts && exec "$@"' "$TAP_TMP/hosts" \
		"$SBX" run -q --keep -w / --net proxy --allow "loop.test:$A" --allow metadata.test \
		-- sh -c "curl -s --noproxy '' -o /dev/null -w '%{http_code}\n' http://loop.test:$A/;
			  curl -s --noproxy '' -o /dev/null -w '%{http_code}\n' http://metadata.test/"
	[ "$out" = "$(printf '403\n403')" ] && [ -z "$(ls "$TAP_TMP"/a-.req 2>/dev/null)" ]
	ok $? "--net proxy: allowed names resolving to 127.0.0.1 and 169.254.169.254 get 403"
	log=$(ls "$SBX_STATE_DIR"/sandboxes/*/log.jsonl 2>/dev/null | head -1)
	net=$( [ -n "$log" ] && jq -c 'select(.event == "net" and .via == "proxy") | del(.ts, .ms)' "$log")
	w1=$(jq -cn --argjson p "$A" '{event:"net", via:"proxy", method:"GET", host:"loop.test", port:$p,
		address:"127.0.0.1", allowed:false, result:"denied",
		reason:"address 127.0.0.1 is loopback and no allow entry names it", status:403,
		bytes_up:0, bytes_down:0}')
	w2=$(jq -cn '{event:"net", via:"proxy", method:"GET", host:"metadata.test", port:80,
		address:"169.254.169.254", allowed:false, result:"denied",
		reason:"address 169.254.169.254 is link-local and no allow entry names it",
		status:403, bytes_up:0, bytes_down:0}')
	[ "$(got 1 .)" = "$(jq -cS . <<<"$w1")" ] && [ "$(got 2 .)" = "$(jq -cS . <<<"$w2")" ]
	ok $? "--net proxy: their events in log.jsonl match exactly"
else
	skip "--net proxy: allowed names resolving to restricted addresses get 403" \
		"needs root for a private /etc/hosts (covered as any user by net_proxy.sh)"
	skip "--net proxy: their events match" "as above"
fi
# Allowed but never reached (no such name, nothing listening): failed,
# counted apart from the connections that got through.
closed=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$SBX" destroy --stale >/dev/null # waits for the purgers at work there
rm -rf "$SBX_STATE_DIR"
capture "$SBX" run --keep -n failed -w / --net proxy --allow "127.0.0.1:$closed" --allow no-such-host.invalid \
	-- sh -c "curl -s --noproxy '' -o /dev/null -w '%{http_code}\n' http://127.0.0.1:$closed/;
		  curl -s --noproxy '' -o /dev/null -w '%{http_code}\n' http://no-such-host.invalid/"
[ "$out" = "$(printf '502\n502')" ] &&
	grep -q "^sbx: net: FAILED 127.0.0.1:$closed (allowed, but cannot connect to 127.0.0.1 port $closed: Connection refused)$" <<<"$err" &&
	grep -q "^sbx: net: FAILED no-such-host.invalid:80 (allowed, but " <<<"$err" &&
	grep -q "^sbx: network: 0 connections allowed, 2 failed, 0 denied$" <<<"$err"
ok $? "--net proxy: allowed connections that fail are shown and counted as failed ($(grep 'net' <<<"$err" | tr '\n' '|'))"
capture "$SBX" inspect failed
grep -q "connections total  *0 allowed, 2 failed, 0 denied" <<<"$out" && grep -q "FAILED 127.0.0.1:$closed" <<<"$out"
ok $? "--net proxy: inspect counts them as failed"
capture "$SBX" inspect --json failed
[ "$(jq -c '[.network_events[].result]' <<<"$out")" = '["failed","failed"]' ]
ok $? "--net proxy: the record's events say result failed"
"$SBX" destroy failed >/dev/null

done_testing
