#!/bin/bash
# sbx-test-timeout: 600
# sbx-test-lane: long
# tests/integration/live_publish.sh - live sandboxes: `sbx run -d` (returns
# at once with the name, in its own session, holding none of the caller's
# pipes), `sbx ps`, `sbx logs [-f] [--tail N]`, `sbx stop [--time]`, `sbx
# wait`; published ports with preview tokens (401 without, a cookie and a
# redirect with, the cookie taken out before the jail, over 127.0.0.1 and
# ::1, another user locked out, ':open'), headless Chromium opening the
# printed URL (the screenshot kept in tests/out), a dev server started by
# one `sbx exec` answering after it returned, persist never / on-failure /
# --keep after a stop, and nothing left running.  As root and as nobody.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"

if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP needs root (runs the unprivileged half through setpriv)"
	exit 77
fi
need_tools python3 curl
. "$(dirname "$0")/../lib/chrome.sh"
chrome_ensure
CHROME_RULES='MAP * ~NOTFOUND, EXCLUDE 127.0.0.1' # the previews, nothing else

sbx_modes
sbx_base
sbx_wd
OUT=$TAP_ROOT/tests/out
mkdir -p "$OUT" 2>/dev/null

# A page and a server: files, /headers echoes the request's headers, and
# every request is a log line on stderr (http.server's own).
WWW=$WD/www # under the working directory: the jail sees it (copy-on-write)
mkdir -p "$WWW"
cat >"$WWW/index.html" <<'EOF'
<!DOCTYPE html><html><head><title>sbx-preview-ok</title></head>
<body style="margin:0;background:#00c040"><h1>preview from the jail</h1></body></html>
EOF
cat >"$WWW/server.py" <<'EOF'
import http.server, os, sys
os.chdir(os.path.dirname(os.path.abspath(__file__)))
class H(http.server.SimpleHTTPRequestHandler):
    def do_GET(self):
        if self.path.startswith("/headers"):
            body = str(self.headers).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
EOF
chmod -R a+rX "$WWW"

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# url MODE NAME [N]: the preview URL of a sandbox's Nth published port.
url() { sbx_as_mode "$1" "$SBX" inspect --json "$2" | jq -r ".publish[${3:-0}].url"; }
code() { curl -s -g -o /dev/null -w '%{http_code}' --max-time 5 "$@"; }

# wait_up URL: until it answers 200 through the token (10 s).
wait_up() {
	for _ in $(seq 100); do
		[ "$(code -L -b '' "$1")" = 200 ] && return 0
		sleep 0.1
	done
	return 1
}

for mode in $MODES; do
	P=$(free_port)
	P2=$(free_port)
	t0=$(date +%s%N)
	out=$(sbx_as_mode_in "$WD" $mode "$SBX" run -d --name "web-$mode" --publish "$P:8000" \
		--publish 8001 -- python3 "$WWW/server.py" 8000 2>"$TAP_TMP/run.err")
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	err=$(cat "$TAP_TMP/run.err")
	[ $rc -eq 0 ] && [ "$out" = "web-$mode" ] && [ $ms -lt 10000 ]
	ok $? "$mode: run -d returns at once ($ms ms; inside \$(...), so no pipe of the caller is held) and prints the name ($out, rc $rc)"
	U=$(url $mode "web-$mode")
	TOKEN=${U##*sbx_token=}
	printf '%s\n' "$err" | grep -qF "preview: http://127.0.0.1:$P/?sbx_token=$TOKEN" &&
		printf '%s\n' "$err" | grep -q "preview: http://127.0.0.1:[0-9]*/?sbx_token=$TOKEN (jail port 8001"
	ok $? "$mode: the run log prints both URLs to click (the one for 8001 on a free host port)"
	P2=$(sbx_as_mode $mode "$SBX" inspect --json "web-$mode" | jq -r '.publish[1].host_port')
	U2=$(url $mode "web-$mode" 1)
	capture sbx_as_mode $mode "$SBX" ps
	printf '%s\n' "$out" | grep -q "web-$mode  *running" &&
		printf '%s\n' "$out" | grep -qF "preview $U -> jail port 8000"
	ok $? "$mode: sbx ps shows it running, with its preview URL"
	sup=$(sbx_as_mode $mode "$SBX" inspect --json "web-$mode" | jq -r .supervisor_pid)
	[ "$(ps -o sid= -p "$sup" | tr -d ' ')" = "$sup" ] && [ "$(ps -o tty= -p "$sup" | tr -d ' ')" = "?" ] &&
		[ "$(readlink /proc/"$sup"/fd/0)" = /dev/null ] && [ "$(readlink /proc/"$sup"/fd/1)" = /dev/null ]
	ok $? "$mode: its supervisor leads a session of its own without a terminal, stdin and stdout /dev/null"

	wait_up "$U"
	ok $? "$mode: the page answers through the token"
	[ "$(code "http://127.0.0.1:$P/")" = 401 ] && [ "$(code "http://[::1]:$P/")" = 401 ] &&
		[ "$(code "http://127.0.0.1:$P/?sbx_token=0123456789abcdef0123456789abcdef")" = 401 ] &&
		[ "$(code -b "sbx_preview_$P=0123456789abcdef0123456789abcdef" "http://127.0.0.1:$P/")" = 401 ]
	ok $? "$mode: without the token, with a wrong one or a forged cookie: 401 (127.0.0.1 and ::1)"
	curl -s -D "$TAP_TMP/h" -o /dev/null --max-time 5 "$U"
	cookie=$(sed -n "s/^Set-Cookie: \(sbx_preview_$P=[0-9a-f]*\);.*/\1/p" "$TAP_TMP/h" | tr -d '\r')
	grep -q '^HTTP/1.1 302' "$TAP_TMP/h" && grep -q '^Location: /' "$TAP_TMP/h" &&
		grep -q "^Set-Cookie: sbx_preview_$P=[0-9a-f]\{32\}; Path=/; HttpOnly; SameSite=Lax" "$TAP_TMP/h" &&
		[ "${cookie#*=}" != "$TOKEN" ]
	ok $? "$mode: the token gets a 302 to the clean URL and a cookie of this port's own (not the token)"
	capture curl -s --max-time 5 -b "$cookie; theme=dark" "http://127.0.0.1:$P/headers"
	printf '%s\n' "$out" | grep -q '^Cookie: theme=dark' && ! printf '%s\n' "$out" | grep -q sbx_preview &&
		printf '%s\n' "$out" | grep -q '^Connection: close'
	ok $? "$mode: with the cookie the request reaches the jail, the cookie taken out of it"
	capture curl -s -g -L -b '' --max-time 5 "http://[::1]:$P/?sbx_token=$TOKEN"
	printf '%s\n' "$out" | grep -q '<title>sbx-preview-ok</title>'
	ok $? "$mode: the page over ::1 with the token"
	# another user: cannot read the token, and loopback alone gets 401
	other="--reuid=1 --regid=1"
	[ $mode = user ] || other="--reuid=2 --regid=2"
	! setpriv $other --clear-groups --inh-caps=-all cat "$BASE/state-$mode/sandboxes/"*/record.json >/dev/null 2>&1 &&
		[ "$(setpriv $other --clear-groups --inh-caps=-all curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$P/")" = 401 ]
	ok $? "$mode: another local user cannot read the token and gets 401"

	# sbx logs -f shows the server's request lines as they come
	sbx_as_mode $mode "$SBX" logs -f "web-$mode" >"$TAP_TMP/follow-$mode" 2>&1 &
	FOLLOW=$!
	sleep 0.5
	for i in 1 2 3; do curl -s -o /dev/null --max-time 5 -b "$cookie" "http://127.0.0.1:$P/req-$i"; done
	for _ in $(seq 50); do grep -q 'GET /req-3' "$TAP_TMP/follow-$mode" && break; sleep 0.1; done
	grep -q 'GET /req-1' "$TAP_TMP/follow-$mode" && grep -q 'GET /req-3' "$TAP_TMP/follow-$mode" &&
		kill -0 $FOLLOW 2>/dev/null
	ok $? "$mode: sbx logs -f shows the request lines as they come, and keeps following"
	capture sbx_as_mode $mode "$SBX" logs --tail 1 "web-$mode"
	[ "$(lines "$out")" = 1 ] && printf '%s\n' "$out" | grep -q 'GET /req-3'
	ok $? "$mode: sbx logs --tail 1 is the last line"
	# the run log has the refused ones
	grep '"event":"connection"' "$BASE/state-$mode/sandboxes/"*/log.jsonl | grep -q '"result":"refused"' &&
		sbx_as_mode $mode "$SBX" inspect "web-$mode" | grep -q 'refused .*(no preview token or cookie)'
	ok $? "$mode: refused requests are logged connection events (and inspect lists them)"

	# Headless Chromium opens the printed URL: redirect, cookie, page.
	dom=$(chrome --dump-dom "$U")
	printf '%s\n' "$dom" | grep -q 'preview from the jail'
	ok $? "$mode: headless Chromium opens the printed URL and gets the page (dump-dom)" ||
		grep -v dbus "$TAP_TMP/chrome.err" | tail -n 3 | sed 's/^/# /'
	chrome --screenshot="$TAP_TMP/preview-$mode.png" --window-size=800,600 "$U" >/dev/null
	green=$(python3 - "$TAP_TMP/preview-$mode.png" <<'EOF'
import sys, zlib, struct
d = open(sys.argv[1], "rb").read()
w, h, bd, ct = struct.unpack(">IIBB", d[16:26])
pos, idat = 8, b""
while pos < len(d):
    n, t = struct.unpack(">I4s", d[pos:pos + 8])
    if t == b"IDAT":
        idat += d[pos + 8:pos + 8 + n]
    pos += 12 + n
raw = zlib.decompress(idat)
bpp = {2: 3, 6: 4}[ct]
stride = w * bpp
prev = bytearray(stride)
rows = []
i = 0
for y in range(h):
    f = raw[i]; line = bytearray(raw[i + 1:i + 1 + stride]); i += 1 + stride
    for x in range(stride):
        a = line[x - bpp] if x >= bpp else 0
        b = prev[x]; c = prev[x - bpp] if x >= bpp else 0
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + b) & 255
        elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(line); prev = line
px = rows[h * 3 // 4][(w // 2) * bpp:(w // 2) * bpp + 3]
print("%02x%02x%02x" % tuple(px))
EOF
)
	[ "$(png_size "$TAP_TMP/preview-$mode.png")" = 800x600 ] && [ "$green" = 00c040 ]
	ok $? "$mode: the screenshot shows the page (800x600, the page's green at its lower middle: $green)"
	cp "$TAP_TMP/preview-$mode.png" "$OUT/live_preview_$mode.png" 2>/dev/null &&
		diag "kept: tests/out/live_preview_$mode.png"

	# A dev server started by one exec answers after that exec returned
	# (its output still open: the supervisor takes it).
	t0=$(date +%s%N)
	capture sbx_as_mode $mode timeout 20 "$SBX" exec "web-$mode" sh -c "python3 $WWW/server.py 8001 & sleep 0.3; echo started"
	ms=$((($(date +%s%N) - t0) / 1000000))
	[ $rc -eq 0 ] && [ "$out" = started ] && [ $ms -lt 10000 ]
	ok $? "$mode: an exec that leaves a server running in the background returns ($ms ms, rc $rc)"
	wait_up "$U2" && [ "$(code "${U2%%\?*}")" = 401 ]
	ok $? "$mode: that server answers after the exec returned, on its own published port (token too)"
	curl -s -o /dev/null --max-time 5 -L -b '' "${U2%%\?*}exec-bg?sbx_token=$TOKEN"
	for _ in $(seq 30); do sbx_as_mode $mode "$SBX" logs "web-$mode" | grep -q 'GET /exec-bg' && break; sleep 0.1; done
	sbx_as_mode $mode "$SBX" logs "web-$mode" | grep -q 'GET /exec-bg'
	ok $? "$mode: its request lines, written after the exec returned, are in sbx logs"

	# stop: SIGTERM, the policy (on-failure: a stop is no failure), gone
	capture sbx_as_mode $mode "$SBX" stop "web-$mode"
	[ $rc -eq 0 ] && printf '%s\n' "$out" | grep -qx "web-$mode: stopped (exit 143; removed)"
	ok $? "$mode: sbx stop ends it and says how ($out)"
	for _ in $(seq 30); do kill -0 $FOLLOW 2>/dev/null || break; sleep 0.1; done
	! kill -0 $FOLLOW 2>/dev/null
	ok $? "$mode: sbx logs -f ended with the sandbox"
	for _ in $(seq 30); do kill -0 "$sup" 2>/dev/null || break; sleep 0.1; done
	capture sbx_as_mode $mode "$SBX" ps -a
	! printf '%s\n' "$out" | grep -q "web-$mode" && [ "$(code "http://127.0.0.1:$P/")" = 000 ] &&
		! kill -0 "$sup" 2>/dev/null
	ok $? "$mode: removed (persist = on-failure), the port closed, the supervisor gone"

	# persist = never removes it; --keep keeps it (and logs still read it)
	printf '[sandbox]\npersist = never\n' >"$BASE/never.ini"
	sbx_as_mode_in "$WD" $mode "$SBX" run -d -q -p "$BASE/never.ini" --name "nv-$mode" -- sleep 300 >/dev/null
	sbx_as_mode_in "$WD" $mode "$SBX" run -d -q --keep --name "kp-$mode" -- sh -c 'echo kept-output; exec sleep 300' >/dev/null
	capture sbx_as_mode $mode "$SBX" stop --time 2s "nv-$mode" "kp-$mode"
	[ $rc -eq 0 ] && printf '%s\n' "$out" | grep -q "nv-$mode: stopped (.*removed)" &&
		printf '%s\n' "$out" | grep -q "kp-$mode: stopped (.*kept)"
	ok $? "$mode: stop of two at once: persist = never removed, --keep kept ($(echo $out))"
	capture sbx_as_mode $mode "$SBX" ps -a
	! printf '%s\n' "$out" | grep -q "nv-$mode" && printf '%s\n' "$out" | grep -q "kp-$mode  *stopped"
	ok $? "$mode: ps -a has the kept one only"
	[ "$(sbx_as_mode $mode "$SBX" logs "kp-$mode")" = kept-output ]
	ok $? "$mode: sbx logs of the kept one"
	# --time: a command that ignores SIGTERM is killed after the grace time
	sbx_as_mode_in "$WD" $mode "$SBX" run -d -q --name "hang-$mode" -- sh -c 'trap "" TERM; sleep 300' >/dev/null
	t0=$(date +%s%N)
	capture sbx_as_mode $mode "$SBX" stop --time 1s "hang-$mode"
	ms=$((($(date +%s%N) - t0) / 1000000))
	[ $rc -eq 0 ] && printf '%s\n' "$out" | grep -q "exit 137" && [ $ms -ge 900 ] && [ $ms -lt 8000 ]
	ok $? "$mode: stop --time 1s kills one that ignores SIGTERM after the grace ($ms ms: $out)"

	# wait: the exit status
	sbx_as_mode_in "$WD" $mode "$SBX" run -d -q --keep --name "w-$mode" -- sh -c 'sleep 1; exit 3' >/dev/null
	capture sbx_as_mode $mode "$SBX" wait "w-$mode"
	[ $rc -eq 3 ] && printf '%s\n' "$err" | grep -q 'exit 3'
	ok $? "$mode: sbx wait returns the command's status (rc $rc)"
	capture sbx_as_mode $mode "$SBX" wait -q "w-$mode"
	[ $rc -eq 3 ] && [ -z "$err" ]
	ok $? "$mode: sbx wait of the kept, ended one: its recorded status at once"
	sbx_as_mode $mode "$SBX" destroy "kp-$mode" "w-$mode" "hang-$mode" >/dev/null 2>&1

	# :open forwards raw TCP without a token, and the run log says so
	P3=$(free_port)
	sbx_as_mode_in "$WD" $mode "$SBX" run -d --name "op-$mode" --publish "$P3:8000:open" \
		-- python3 "$WWW/server.py" 8000 >/dev/null 2>"$TAP_TMP/op.err"
	for _ in $(seq 100); do [ "$(code "http://127.0.0.1:$P3/")" = 200 ] && break; sleep 0.1; done
	[ "$(code "http://127.0.0.1:$P3/")" = 200 ] && grep -q "port $P3 -> jail port 8000: OPEN" "$TAP_TMP/op.err"
	ok $? "$mode: ':open' needs no token, and the run log says the port is open"
	sbx_as_mode $mode "$SBX" stop --time 0 "op-$mode" >/dev/null
done

# The jail gets no way out through a published port: network none stays none.
sbx_as_mode_in "$WD" root "$SBX" run -d -q --name noway --publish "$(free_port):8000" -- sleep 60 >/dev/null
capture sbx_as_mode root "$SBX" exec noway sh -c 'cat /proc/net/route | wc -l; ls /sys/class/net'
[ "$(printf '%s\n' "$out" | head -1)" = 1 ] && [ "$(printf '%s\n' "$out" | tail -n +2 | tr '\n' ' ')" = "lo " ]
ok $? "root: with a published port the jail still has only lo and no route ($(echo $out))"
sbx_as_mode root "$SBX" stop --time 0 noway >/dev/null

# sbx logs redacts secret values as the captured output does.
sbx_as_mode_in "$WD" root env LIVE_SECRET=s3cr3t-value-for-logs "$SBX" run -d -q --keep --name sec \
	--secret LIVE=env:LIVE_SECRET -- sh -c 'echo "value=$LIVE"; sleep 60' >/dev/null
for _ in $(seq 30); do sbx_as_mode root "$SBX" logs sec | grep -q value= && break; sleep 0.1; done
capture sbx_as_mode root "$SBX" logs sec
[ "$out" = 'value=[secret LIVE]' ]
ok $? "root: sbx logs has [secret LIVE] in place of the value ($out)"
sbx_as_mode root "$SBX" stop --time 0 sec >/dev/null
sbx_as_mode root "$SBX" destroy sec >/dev/null

# Every network mode: the published port reaches the jail's loopback.
for net in loopback proxy host; do
	jp=8000
	[ $net = host ] && jp=$(free_port) # the host's own loopback: a free port
	P4=$(free_port)
	sbx_as_mode_in "$WD" root "$SBX" run -d -q --net $net --name "m-$net" --publish "$P4:$jp" \
		-- python3 "$WWW/server.py" "$jp" >/dev/null
	U4=$(url root "m-$net")
	wait_up "$U4" && [ "$(code "http://127.0.0.1:$P4/")" = 401 ]
	ok $? "root: --net $net: the preview answers through the token, 401 without"
	sbx_as_mode root "$SBX" stop --time 0 "m-$net" >/dev/null
done

# A hang-up of the caller's whole session (a closed terminal) leaves it running.
{ setsid bash -c 'cd "$1" && SBX_STATE_DIR="$2" "$3" run -d -q --name hup -- sleep 60 >/dev/null; kill -HUP -- -$$' \
	sh "$WD" "$BASE/state-root" "$SBX"; } 2>/dev/null
sleep 0.3
capture sbx_as_mode root "$SBX" ps
printf '%s\n' "$out" | grep -q "hup  *running" &&
	[ "$(sbx_as_mode root "$SBX" inspect --json hup | jq -r .detached)" = true ]
ok $? "root: the caller's session hung up: the detached sandbox runs on (recorded as detached)"
sbx_as_mode root "$SBX" stop --time 0 hup >/dev/null

# A command that cannot start is said and returned, as by a foreground run.
capture sbx_as_mode_in "$WD" root "$SBX" run -d -- no-such-command-here
[ $rc -eq 127 ] && [ -z "$out" ] && printf '%s\n' "$err" | grep -q "no-such-command-here"
ok $? "run -d of a missing command: exit 127, the reason on stderr, no name on stdout"

# Errors say what to do.
capture sbx_as_mode_in "$WD" root "$SBX" run --publish 99999 -- true
[ $rc -eq 125 ] && [ "$err" = "sbx: --publish '99999': a port must be 1..65535 (the host port may be 0: a free one)" ]
ok $? "a bad port is refused, naming it ($err)"
python3 -c 'import socket,time; s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(); print(s.getsockname()[1], flush=True); time.sleep(20)' >"$TAP_TMP/busy" &
BUSY=$!
for _ in $(seq 50); do [ -s "$TAP_TMP/busy" ] && break; sleep 0.1; done
capture sbx_as_mode_in "$WD" root "$SBX" run --publish "$(cat "$TAP_TMP/busy"):80" -- true
kill $BUSY 2>/dev/null
[ $rc -eq 125 ] && printf '%s\n' "$err" | grep -q "the host port is in use"
ok $? "a host port in use stops the run before it starts ($err)"
capture sbx_as_mode_in "$WD" root "$SBX" run -d -t -- true
[ $rc -eq 125 ] && printf '%s\n' "$err" | grep -q 'a detached sandbox has none'
ok $? "-d with -t is refused"
capture sbx_as_mode_in "$WD" root "$SBX" stop nosuch
[ $rc -eq 1 ] && printf '%s\n' "$err" | grep -q "nosuch"
ok $? "stop of an unknown sandbox fails naming it"

# Nothing is left running.
sleep 0.3
! pgrep -f "$BASE/sbx" >/dev/null && ! pgrep -x sbx-netsock >/dev/null &&
	! pgrep -f "$WWW/server.py" >/dev/null
ok $? "nothing left running (no supervisor, socket helper or server)"
done_testing
