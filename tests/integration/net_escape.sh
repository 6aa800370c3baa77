#!/bin/bash
# tests/integration/net_escape.sh - network escapes tried from inside the
# jail, as an attacker would, in the none, loopback and proxy modes:
# raw, packet and vsock sockets, bringing an interface up or adding an
# address (ioctl and netlink), connecting to a host loopback listener
# directly, and to a host abstract Unix socket.  The host listeners must
# see no connection afterwards.  (Host rootfs: python3 is the attacker.)
. "$(dirname "$0")/../lib/tap.sh"
export SBX_STATE_DIR=$TAP_TMP/state SBX_CACHE_DIR=$TAP_TMP/cache
command -v python3 >/dev/null || { echo "1..0 # SKIP needs python3"; exit 77; }

# Host side: a TCP listener on 127.0.0.1 and an abstract Unix socket; each
# records any connection it gets in $TAP_TMP/hits.
abstract="sbx-escape-$$-$RANDOM"
python3 - "$TAP_TMP" "$abstract" <<'EOF' &
import os, socket, sys, threading
d, name = sys.argv[1], sys.argv[2]
tcp = socket.socket()
tcp.bind(("127.0.0.1", 0))
tcp.listen(8)
unix = socket.socket(socket.AF_UNIX)
unix.bind("\0" + name)
unix.listen(8)
def watch(s, what):
    while True:
        c, _ = s.accept()
        open(d + "/hits", "a").write(what + "\n")
        c.close()
for s, w in ((tcp, "tcp"), (unix, "unix")):
    threading.Thread(target=watch, args=(s, w), daemon=True).start()
open(d + "/port.tmp", "w").write("%d\n" % tcp.getsockname()[1])
os.rename(d + "/port.tmp", d + "/port")
threading.Event().wait()
EOF
lsn=$!
trap 'kill $lsn 2>/dev/null; tap_cleanup' EXIT
for _ in $(seq 50); do [ -s "$TAP_TMP/port" ] && break; sleep 0.1; done
port=$(cat "$TAP_TMP/port")

# The attacks; each prints "NAME blocked" or "NAME ESCAPED (detail)".
cat >"$TAP_TMP/attack.py" <<'EOF'
import errno, fcntl, socket, struct, sys
port, abstract = int(sys.argv[1]), sys.argv[2]
def attempt(name, fn):
    try:
        detail = fn()
    except OSError as e:
        print(name, "blocked", errno.errorcode.get(e.errno, e.errno))
        return
    print(name, "ESCAPED", detail)
def raw():
    socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP); return "raw socket"
def packet():
    socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3)); return "packet socket"
def vsock():
    s = socket.socket(40, socket.SOCK_STREAM)     # AF_VSOCK
    s.settimeout(3); s.connect((2, port)); return "vsock connect to the host"
def link_up():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    fcntl.ioctl(s.fileno(), 0x8914, struct.pack("16sH", b"lo", 0x1 | 0x8)); return "SIOCSIFFLAGS"
def add_addr():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sin = struct.pack("HH4s8x", socket.AF_INET, 0, socket.inet_aton("10.99.0.1"))
    fcntl.ioctl(s.fileno(), 0x8916, b"lo".ljust(16, b"\0") + sin); return "SIOCSIFADDR"
def netlink_route():
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)    # NETLINK_ROUTE
    # RTM_NEWADDR 10.98.0.1/32 on ifindex 1, acked
    ifa = struct.pack("BBBBI", socket.AF_INET, 32, 0, 0, 1)
    rta = struct.pack("HH4s", 8, 2, socket.inet_aton("10.98.0.1"))    # IFA_LOCAL
    body = ifa + rta
    hdr = struct.pack("IHHII", 16 + len(body), 20, 0x1 | 0x4 | 0x400 | 0x200, 1, 0)
    s.send(hdr + body)
    r = s.recv(4096)
    err = struct.unpack("i", r[16:20])[0]
    if err < 0:
        raise OSError(-err, "netlink")
    return "RTM_NEWADDR accepted"
def host_tcp():
    socket.create_connection(("127.0.0.1", port), timeout=3); return "host 127.0.0.1 listener"
def host_abstract():
    s = socket.socket(socket.AF_UNIX); s.settimeout(3); s.connect("\0" + abstract)
    return "host abstract socket"
for n, f in (("raw", raw), ("packet", packet), ("vsock", vsock), ("link-up", link_up),
             ("add-address", add_addr), ("netlink-route", netlink_route),
             ("host-loopback", host_tcp), ("host-abstract", host_abstract)):
    attempt(n, f)
EOF
attack=$(cat "$TAP_TMP/attack.py")

total=0 contained=0
for mode in none loopback proxy; do
	capture "$SBX" run -q --rm -w / --net "$mode" --allow example.com -- \
		python3 -c "$attack" "$port" "$abstract"
	[ "$rc" = 0 ] || diag "$mode: rc=$rc err=$err"
	for a in raw packet vsock link-up add-address netlink-route host-loopback host-abstract; do
		l=$(grep "^$a " <<<"$out")
		total=$((total + 1))
		case "$l" in
		"$a blocked"*) contained=$((contained + 1)); r=0 ;;
		*) r=1 ;;
		esac
		ok $r "--net $mode: $a is contained (${l:-no result})"
	done
done
[ ! -e "$TAP_TMP/hits" ]
ok $? "the host's loopback listener and abstract socket saw no connection"
[ -e "$TAP_TMP/hits" ] && diag "hits: $(tr '\n' ' ' <"$TAP_TMP/hits")"
# Control: with the host's network the same probes do reach the host, so a
# "blocked" above is the jail's doing, not a broken probe.
capture "$SBX" run -q --rm -w / --net host -- python3 -c "$attack" "$port" "$abstract"
grep -q "^host-loopback ESCAPED" <<<"$out" && grep -q "^host-abstract ESCAPED" <<<"$out"
ok $? "control: with --net host the probes reach the host listeners"
echo "# net escape: $total attacks, $contained contained, $((total - contained)) escaped"
done_testing
