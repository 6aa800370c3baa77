#!/bin/bash
# tests/integration/net_proxy_relay.sh - the allowlist proxy's relay copies
# each direction through a 4 MiB buffer of its own: a held connection is
# relayed as its bytes come (its loopback client's send buffer fixed, not
# autotuned), with only the pages its bytes touched resident, and leaves no
# descriptor behind, 48 MiB of
# random bytes come through GET and CONNECT intact, as does a request body
# going up, and once the transfers are over the proxy's resident memory is
# back where it was (the buffers are unmapped, not kept).
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"

command -v curl >/dev/null && command -v python3 >/dev/null || {
	echo "1..0 # SKIP needs curl and python3"
	exit 77
}

head -c $((48 << 20)) /dev/urandom >"$TAP_TMP/blob"
# /blob: the random file; /hold: 1 KiB, then the connection held until
# TAP_TMP/release exists; POST /echo: the request body sent back.
cat >"$TAP_TMP/server.py" <<'PY'
import os, socket, sys, threading, time
d = sys.argv[1]
blob = open(d + "/blob", "rb").read()
def handle(c):
    req = b""
    while b"\r\n\r\n" not in req:
        b = c.recv(65536)
        if not b:
            return c.close()
        req += b
    head, rest = req.split(b"\r\n\r\n", 1)
    line = head.split(b"\r\n")[0].split()
    path = line[1].split(b"/", 3)[-1] if line[1].startswith(b"http") else line[1].lstrip(b"/")
    if path == b"blob":
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(blob))
        c.sendall(blob)
    elif path == b"hold":
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2048\r\nConnection: close\r\n\r\n" + b"x" * 1024)
        while not os.path.exists(d + "/release"):
            time.sleep(0.05)
        c.sendall(b"y" * 1024)
    elif path == b"echo":
        n = int([h.split(b":")[1] for h in head.split(b"\r\n") if h.lower().startswith(b"content-length:")][0])
        while len(rest) < n:
            rest += c.recv(1 << 20)
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % n + rest)
    c.close()
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
open(d + "/port.tmp", "w").write(str(s.getsockname()[1]))
os.rename(d + "/port.tmp", d + "/port")
while True:
    c, _ = s.accept()
    threading.Thread(target=handle, args=(c,), daemon=True).start()
PY
python3 "$TAP_TMP/server.py" "$TAP_TMP" &
srv=$!
prx=
trap 'kill $srv $prx 2>/dev/null; tap_cleanup' EXIT
for _ in $(seq 50); do [ -s "$TAP_TMP/port" ] && break; sleep 0.1; done
S=$(cat "$TAP_TMP/port")
"$SBX" proxy -q --listen 127.0.0.1:0 --allow "127.0.0.1:$S" 2>"$TAP_TMP/proxy.err" &
prx=$!
P=$(sbx_proxy_port "$TAP_TMP/proxy.err")
[ -n "$P" ]
ok $? "sbx proxy listens ($P)"
px=(-s -x "http://127.0.0.1:$P" --max-time 60)

fds() { ls /proc/$prx/fd 2>/dev/null | wc -l; }
rss() { awk '$1 == "VmRSS:" {print $2}' /proc/$prx/status; }
idle=$(fds)
rss_idle=$(rss)

# A held connection: relayed as its bytes come, its descriptors closed after.
for mode in GET CONNECT; do
	rm -f "$TAP_TMP/release" "$TAP_TMP/held"
	flag=()
	[ $mode = CONNECT ] && flag=(-p)
	curl "${px[@]}" "${flag[@]}" -N -o "$TAP_TMP/held" "http://127.0.0.1:$S/hold" &
	c=$!
	for _ in $(seq 100); do
		[ -s "$TAP_TMP/held" ] && break
		sleep 0.05
	done
	[ "$(wc -c <"$TAP_TMP/held")" = 1024 ]
	ok $? "$mode: the first 1 KiB of a held response arrives before the rest is sent"
	n=$(fds)
	[ "$n" -eq $((idle + 2)) ]
	ok $? "$mode: while the connection is relayed, the proxy holds its 2 sockets ($idle -> $n descriptors)"
	# the buffers are mapped whole but only written as far as the bytes
	# that came: a connection that moved 1 KiB is not 2 x 4 MiB resident
	r=$(rss)
	[ -n "$r" ] && [ "$r" -lt $((rss_idle + 1024)) ]
	ok $? "$mode: a relayed connection that moved 1 KiB adds less than 1 MiB resident ($rss_idle -> $r KiB)"
	# a loopback client's send buffer is fixed (128 KiB, doubled by the
	# kernel), not autotuned: less in flight, pages still in the cache
	tb=$(ss -tmnH state established "sport = :$P" | sed -n 's/.*tb\([0-9]*\).*/\1/p' | head -1)
	[ "$tb" = 262144 ]
	ok $? "$mode: the proxy's socket to the loopback client has a 256 KiB send buffer (ss: tb${tb:-?})"
	touch "$TAP_TMP/release"
	wait $c
	[ "$(wc -c <"$TAP_TMP/held")" = 2048 ] && [ "$(tr -d x <"$TAP_TMP/held" | tr -d y)" = "" ]
	ok $? "$mode: the held response arrives whole once released"
	for _ in $(seq 50); do [ "$(fds)" -eq "$idle" ] && break; sleep 0.05; done
	[ "$(fds)" -eq "$idle" ]
	ok $? "$mode: the descriptors are closed when the connection ends"
done

rss0=$(rss)
want=$(sha256sum <"$TAP_TMP/blob" | cut -d' ' -f1)
capture curl "${px[@]}" -o "$TAP_TMP/got" "http://127.0.0.1:$S/blob"
[ "$rc" = 0 ] && [ "$(sha256sum <"$TAP_TMP/got" | cut -d' ' -f1)" = "$want" ]
ok $? "48 MiB of random bytes through a plain GET arrive intact"
rm -f "$TAP_TMP/got"
capture curl "${px[@]}" -p -o "$TAP_TMP/got" "http://127.0.0.1:$S/blob"
[ "$rc" = 0 ] && [ "$(sha256sum <"$TAP_TMP/got" | cut -d' ' -f1)" = "$want" ]
ok $? "48 MiB of random bytes through a CONNECT tunnel arrive intact"
rm -f "$TAP_TMP/got"
capture curl "${px[@]}" -p -o "$TAP_TMP/got" --data-binary "@$TAP_TMP/blob" \
	-H 'Content-Type: application/octet-stream' "http://127.0.0.1:$S/echo"
[ "$rc" = 0 ] && [ "$(sha256sum <"$TAP_TMP/got" | cut -d' ' -f1)" = "$want" ]
ok $? "48 MiB going up through a tunnel (POST) come back intact"
rm -f "$TAP_TMP/got" "$TAP_TMP/blob"
rss1=$(rss)
# 3 x 48 MiB went through 4 MiB buffers; none of them is kept afterwards
[ -n "$rss0" ] && [ -n "$rss1" ] && [ "$rss1" -lt $((rss0 + 1536)) ]
ok $? "the proxy's resident memory after the transfers: $rss0 -> $rss1 KiB (less than 1.5 MiB more)"

kill -INT $prx
wait $prx
ok $? "sbx proxy exits 0 on SIGINT"
prx=
done_testing
