#!/bin/bash
# tests/integration/net_modes.sh - network modes of `sbx run` seen from
# inside the jail (host rootfs, so curl and python3 are there):
#   none      only lo, and it is down
#   loopback  lo up; a server inside is reachable from inside only
#   host      the host's interfaces
# (proxy mode: net_jail.sh)
. "$(dirname "$0")/../lib/tap.sh"
export SBX_STATE_DIR=$TAP_TMP/state SBX_CACHE_DIR=$TAP_TMP/cache

need_tools curl python3 jq

# Interface names (/proc/net/dev: netlink may be filtered) and whether lo
# is up (SIOCGIFFLAGS), printed by python inside the jail.
cat >"$TAP_TMP/ifs.py" <<'EOF'
import fcntl, socket, struct
names = sorted(l.split(":")[0].strip() for l in open("/proc/net/dev").readlines()[2:])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
flags = struct.unpack("16sH", fcntl.ioctl(s.fileno(), 0x8913, struct.pack("16sH", b"lo", 0))[:18])[1]
print(" ".join(names), "up" if flags & 1 else "down")
EOF
# A TCP echo server on 127.0.0.1:PORT inside, then a client to it.
cat >"$TAP_TMP/loop.py" <<'EOF'
import socket, sys, threading, time
port = int(sys.argv[1])
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", port))
srv.listen(4)
def serve():
    while True:
        c, _ = srv.accept()
        c.sendall(b"inside\n")
        c.close()
threading.Thread(target=serve, daemon=True).start()
print(socket.create_connection(("127.0.0.1", port)).recv(64).decode().strip(), flush=True)
if len(sys.argv) > 2:            # stay up until the host has tried
    open(sys.argv[2], "w").write("ready\n")
    for _ in range(100):
        time.sleep(0.1)
        try:
            open(sys.argv[3]).close()
            break
        except OSError:
            pass
EOF
chmod 0644 "$TAP_TMP"/*.py
# /tmp is private in the jail: scripts go in as arguments.
ifs_py=$(cat "$TAP_TMP/ifs.py")
loop_py=$(cat "$TAP_TMP/loop.py")
run() { "$SBX" run -q --rm -w / "$@"; }

# none: its own lo, up (a program talks to itself), nothing outside
capture run --net none -- python3 -c "$ifs_py"
[ "$rc" = 0 ] && [ "$out" = "lo up" ]
ok $? "--net none: only lo, and it is up ($out)"
capture run --net none -- curl -s --max-time 5 http://127.0.0.1:1/
[ "$rc" != 0 ]
ok $? "--net none: no connection at all"
capture run --net none -- python3 -c '
import socket, threading
for fam, addr in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
    s = socket.socket(fam); s.bind((addr, 0)); s.listen()
    threading.Thread(target=lambda: s.accept()[0].sendall(b"pong"), daemon=True).start()
    c = socket.create_connection(s.getsockname()[:2], timeout=5)
    print(addr, c.recv(4).decode())'
[ "$rc" = 0 ] && [ "$out" = "$(printf '127.0.0.1 pong\n::1 pong')" ]
ok $? "--net none: a server in the jail is reachable from the jail, IPv4 and IPv6 ($out $err)"
capture "$SBX" run --rm -w / --net none -- true
[[ "$err" == *"network: none (own network namespace: its own lo, up; nothing outside)"* ]]
ok $? "--net none: the run log says what none gives"

# loopback
capture run --net loopback -- python3 -c "$ifs_py"
[ "$rc" = 0 ] && [ "$out" = "lo up" ]
ok $? "--net loopback: only lo, and it is up ($out)"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -m 0777 "$TAP_TMP/flags"
run --net loopback --bind "$TAP_TMP/flags" -- python3 -c "$loop_py" "$port" \
	"$TAP_TMP/flags/ready" "$TAP_TMP/flags/done" >"$TAP_TMP/loop.out" 2>&1 &
lpid=$!
for _ in $(seq 100); do [ -e "$TAP_TMP/flags/ready" ] && break; sleep 0.1; done
[ -e "$TAP_TMP/flags/ready" ]
ok $? "--net loopback: a server inside starts"
python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', $port), timeout=3)" 2>/dev/null
[ $? != 0 ]
ok $? "--net loopback: the server inside is not reachable from the host"
touch "$TAP_TMP/flags/done"
wait $lpid
lrc=$?
[ "$lrc" = 0 ] && [ "$(cat "$TAP_TMP/loop.out")" = inside ]
ok $? "--net loopback: the server inside is reachable from inside"

# host: the same interfaces as the host's, but for the veth pairs the
# suite's other files make and remove meanwhile (sbx's own, sbxth*)
stable() { tr ' ' '\n' | grep -v '^sbx' | tr '\n' ' '; }
capture run --net host -- python3 -c "$ifs_py"
[ "$rc" = 0 ] && [ "$(stable <<<"$out")" = "$(python3 -c "$ifs_py" | stable)" ]
ok $? "--net host: the host's interfaces ($out)"
[ "$rc" = 0 ] || diag "rc=$rc err=$err"

done_testing
