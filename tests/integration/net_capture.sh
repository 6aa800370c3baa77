#!/bin/bash
# tests/integration/net_capture.sh - proxy mode against a test host of the
# test's own (tests/lib/testhost.sh: a network namespace joined by a veth
# pair, an HTTPS server with its own CA that logs the headers it received,
# two plain HTTP servers, one allowed and one not, and TCP echoes), as root
# and as nobody:
#   - curl through the proxy variables and with them unset, Node's fetch
#     and Python's urllib reach the allowed hosts and are refused for the
#     other, each connection logged with its verdict (and "via");
#   - credential injection: the HTTPS server receives the real value, the
#     jail's env, every readable file under /run and /proc/self, the
#     captured output and the state directory hold only the placeholder;
#     the placeholder sent to the allowed plain host arrives unchanged;
#     echoed back in a response header it is the placeholder again; a Host
#     that is not the TLS host gets 421 and nothing; a redirect to another
#     host carries only the placeholder;
#   - DNS: a name outside the allowlist fails fast (NXDOMAIN) and is logged;
#   - git clone over https from an allowed host:port through capture;
#   - raw TCP to an address is allowed only through a host:port entry;
#   - the jail's own 127.0.0.1 is never captured.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"
. "$(dirname "$0")/../lib/testhost.sh"

if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP needs root: the test host is a network namespace joined by a veth pair"
	exit 77
fi
need_tools ip curl python3 node git openssl jq unshare setpriv

sbx_modes
sbx_base
trap 'testhost_down; tap_cleanup' EXIT
testhost_up "$BASE/th" || {
	echo "Bail out! cannot make the test host (netns, veth, servers)"
	exit 1
}
KEY="sk-real-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
cat >"$BASE/p.ini" <<EOP
[sandbox]
persist = always
[filesystem]
tmpfs = /var/tmp
[network]
mode = proxy
allow = api.sbx.test
allow = plain.sbx.test
allow = git.sbx.test:8443
allow = git.sbx.test:2222
upstream-ca = $TH_CA
[secrets]
API_KEY = env:SBX_T_KEY inject api.sbx.test
EOP
chmod 0644 "$BASE/p.ini"

# in_mode MODE CMD...: CMD as root or nobody, with the test host's names.
in_mode() {
	local mode=$1
	shift
	if [ "$mode" = root ]; then
		in_hosts env SBX_STATE_DIR="$BASE/state-root" SBX_CACHE_DIR="$BASE/cache-root" \
			SBX_T_KEY="$KEY" "$@"
	else
		in_hosts setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all -- \
			env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$BASE" SBX_T_KEY="$KEY" \
			SBX_STATE_DIR="$BASE/state-user" SBX_CACHE_DIR="$BASE/cache-user" "$@"
	fi
}

# What the servers received since the mark, as JSON lines.
mark() { : >"$TH_DIR/requests.jsonl"; }
got() { cat "$TH_DIR/requests.jsonl"; }

cat >"$BASE/fetch.js" <<'EOF2'
const [url, hdr] = process.argv.slice(2);
fetch(url, {headers: hdr ? {authorization: hdr} : {}, redirect: "manual"})
  .then(async r => console.log("node", r.status, (await r.text()).trim()))
  .catch(e => console.log("node error", e.cause ? e.cause.code || e.cause.message : e.message));
EOF2
cat >"$BASE/fetch_url.py" <<'EOF2'
import sys, urllib.request, urllib.error
req = urllib.request.Request(sys.argv[1], headers={"x-api-key": sys.argv[2]} if len(sys.argv) > 2 else {})
try:
    r = urllib.request.urlopen(req, timeout=10)
    print("python", r.status, r.read().decode().strip())
except urllib.error.HTTPError as e:
    print("python", e.code, e.headers.get("X-Sbx-Deny", ""))
except Exception as e:
    print("python error", e)
EOF2
cat >"$BASE/raw.py" <<'EOF2'
import socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5)
s.sendall(b"SSH-2.0-sbxtest\r\n")
try:
    print("raw", s.recv(100).decode().strip() or "closed")
except Exception as e:
    print("raw error", e)
EOF2
chmod 0644 "$BASE"/*.js "$BASE"/*.py

# events FILTER: the run's net events (from --log-json) through jq -c.
events() { jq -c "select(.event == \"net\") | $1" "$BASE/log.json"; }

for mode in ${SBX_T_MODES:-$MODES}; do
	rm -f "$BASE/log.json"
	mark
	noproxy='unset http_proxy HTTP_PROXY https_proxy HTTPS_PROXY all_proxy ALL_PROXY'
	inside="
echo \"env: \$(env | grep -c 'sk-real-') holds-placeholder: \$(printenv API_KEY | grep -c '^sbx-placeholder-')\"
echo \"ph: \$API_KEY\"
curl -s -m 10 -H \"x-api-key: \$API_KEY\" https://api.sbx.test/echo
curl -s -m 10 -o /dev/null -w 'proxy-denied %{http_code}\n' http://denied.sbx.test/
python3 $BASE/fetch_url.py https://api.sbx.test/echo \"\$API_KEY\"
python3 $BASE/fetch_url.py http://denied.sbx.test/
$noproxy
curl -s -m 10 -D - -H \"Authorization: Bearer \$API_KEY\" https://api.sbx.test/echo | tr -d '\r' | grep -i -e '^x-echo-auth' -e '^echo'
curl -s -m 10 -H \"Authorization: Bearer \$API_KEY\" http://plain.sbx.test/plain
curl -s -m 10 -o /dev/null -w 'captured-denied %{http_code}\n' http://denied.sbx.test/
curl -s -m 10 -o /dev/null -w 'misdirected %{http_code}\n' -H 'Host: plain.sbx.test' https://api.sbx.test/echo
curl -s -m 10 -L --location-trusted -H \"Authorization: Bearer \$API_KEY\" https://api.sbx.test/redirect
node $BASE/fetch.js https://api.sbx.test/echo \"Bearer \$API_KEY\"
node $BASE/fetch.js http://denied.sbx.test/
python3 $BASE/fetch_url.py https://api.sbx.test/echo \"\$API_KEY\"
python3 $BASE/fetch_url.py http://denied.sbx.test/
t0=\$(date +%s%N); getent hosts nope.sbx.test; echo \"dns-nope rc=\$? ms=\$(( (\$(date +%s%N) - t0) / 1000000 ))\"
busybox nslookup api.sbx.test 2>/dev/null | grep -c '$TH_A' | sed 's/^/dns-allowed /'
git clone -q https://git.sbx.test:8443/repo.git /var/tmp/repo && git -C /var/tmp/repo log --format='git %s'
python3 $BASE/raw.py $TH_A 2222
python3 $BASE/raw.py $TH_B 2222
cd /var/tmp && (python3 -m http.server 8765 --bind 127.0.0.1 >/dev/null 2>&1 &) && sleep 0.5
curl -s -m 5 -o /dev/null -w 'loopback %{http_code}\n' http://127.0.0.1:8765/
"
	capture in_mode $mode "$SBX" run -p "$BASE/p.ini" --log-json "$BASE/log.json" -- sh -c "$inside"
	[ "$rc" = 0 ] || diag "$mode: rc=$rc err=$(tail -5 <<<"$err")"
	[ -n "$SBX_T_DEBUG" ] && { echo "$out"; echo "$err"; got; cat "$BASE/log.json"; }
	has() { grep -qxF -- "$1" <<<"$out"; }
	PH=$(sed -n 's/^ph: //p' <<<"$out")

	# Every readable file under /run and /proc/self (not task/, the same
	# again, nor mem and pagemap, the address space), out on stdout: this
	# command line holds no value, so only the jail could have put it there.
	in_mode $mode "$SBX" run -q -p "$BASE/p.ini" --rm -- sh -c \
		'find /run /proc/self/ -path "*/task" -prune -o -type f ! -name pagemap ! -name mem -print0 |
		 xargs -0 cat 2>/dev/null; echo; echo "env: $(env | grep -c "^API_KEY=sbx-placeholder-")"' \
		>"$BASE/dump" 2>/dev/null
	has "env: 0 holds-placeholder: 1" && ! grep -qaF "$KEY" "$BASE/dump" &&
		grep -qax "env: 1" "$BASE/dump" && grep -qaF "API_KEY=sbx-placeholder-" "$BASE/dump"
	ok $? "$mode: the jail's env and every file under /run and /proc/self hold only the placeholder" || { grep -caF "sbx-placeholder-" "$BASE/dump"; grep -aF "$KEY" "$BASE/dump" | head -3 | cut -c1-200; tail -2 "$BASE/dump"; }
	[ "$(got | jq -r 'select(.server == "https" and .path == "/echo") | .headers["x-api-key"] // .headers.authorization' | sort -u)" = \
		"$(printf 'Bearer %s\n%s' "$KEY" "$KEY" | sort -u)" ]
	ok $? "$mode: the HTTPS server received the real value (x-api-key and Authorization, proxied and captured)"
	[ "$(got | jq -r 'select(.server == "https" and .path == "/echo")' | jq -s length)" = 5 ]
	ok $? "$mode: curl, Python (proxy variables) and curl, Node (captured) reached the HTTPS host"
	has "X-Echo-Auth: Bearer $PH" && has "echo ok" && ! grep -qF "$KEY" <<<"$out$err"
	ok $? "$mode: a value echoed in a response header comes back as the placeholder; the output never holds the value"
	has "hello from plain" &&
		[ "$(got | jq -r 'select(.server == "plain" and .path == "/plain") | .headers.authorization')" = "Bearer $PH" ]
	ok $? "$mode: the placeholder sent to the allowed plain host arrives unchanged"
	has "proxy-denied 403" && has "captured-denied 403" && has "python 403 denied.sbx.test port 80 is not in the allowlist" &&
		[ -z "$(got | jq -r 'select(.server == "denied")')" ]
	ok $? "$mode: curl and Python are refused for the other host, proxied and captured; it got nothing"
	grep -qx "node 200 echo ok" <<<"$out" && grep -q "^node \(403\|error\)" <<<"$out"
	ok $? "$mode: Node's fetch (no proxy support) reaches the allowed host and is refused the other"
	has "misdirected 421" && [ -z "$(got | jq -r 'select(.headers.host == "plain.sbx.test" and .server == "https")')" ]
	ok $? "$mode: a Host that is not the TLS host gets 421 and nothing reaches the server"
	[ "$(got | jq -r 'select(.path == "/landing") | .server + " " + .headers.authorization')" = "plain Bearer $PH" ]
	ok $? "$mode: a redirect from the injection host to another host carries only the placeholder"
	ms=$(sed -n 's/^dns-nope rc=2 ms=//p' <<<"$out")
	[ -n "$ms" ] && [ "$ms" -lt 3000 ] && has "dns-allowed 1" &&
		[ "$(events 'select(.via == "dns" and .host == "nope.sbx.test") | .rcode' | sort -u)" = '"NXDOMAIN"' ] &&
		[ -n "$(events 'select(.via == "dns" and .host == "api.sbx.test" and .address == "'"$TH_A"'")')" ] &&
		[ "$(events 'select(.via == "dns" and .host == "api.sbx.test" and .query == "AAAA") | .rcode' | sort -u)" = '"NOERROR"' ]
	ok $? "$mode: DNS: an unlisted name fails fast (${ms:-?} ms) and is logged NXDOMAIN; a listed one resolves (AAAA of an IPv4-only name: NOERROR, no records)"
	has "git test commit"
	ok $? "$mode: git clone over https from an allowed host:port through capture"
	has "raw echo SSH-2.0-sbxtest" && grep -qx "raw \(closed\|error .*reset by peer\)" <<<"$out" &&
		[ -n "$(events 'select(.method == "TCP" and .host == "git.sbx.test" and .port == 2222 and .allowed)')" ] &&
		[ -n "$(events 'select(.method == "TCP" and .address == "'"$TH_B"'" and .allowed == false)')" ]
	ok $? "$mode: raw TCP to an address: allowed through 'git.sbx.test:2222', refused for another"
	has "loopback 200" && [ -z "$(events 'select(.port == 8765)')" ]
	ok $? "$mode: the jail's own 127.0.0.1 reaches its own server and is not captured"
	[ "$(events 'select(.host == "api.sbx.test" and .tls == "terminated") | .via + ":" + (.injected | join(","))' | sort | uniq -c | tr -s ' ' | tr '\n' ';')" = \
		' 1 "capture:"; 4 "capture:API_KEY"; 2 "proxy:API_KEY";' ] &&
		[ -n "$(events 'select(.host == "denied.sbx.test" and .via == "capture" and .allowed == false)')" ] &&
		[ -n "$(events 'select(.host == "denied.sbx.test" and .via == "proxy" and .allowed == false)')" ]
	ok $? "$mode: each connection is logged with its verdict, how it came (proxy, capture) and what was injected"
	grep -q "^sbx: secrets: API_KEY (injected by the proxy for api.sbx.test; the jail's env var holds a placeholder)" <<<"$err" &&
		grep -q "^sbx: network: every TCP connection and DNS query from the jail is captured" <<<"$err"
	ok $? "$mode: the run log says the secret is injected for its host and that capture is on"
	st=$BASE/state-$mode
	id=$(ls "$st/sandboxes" | head -1)
	[ -n "$id" ] && ! grep -rqsaF --exclude=disk.img --exclude-dir=disk-templates -e "$KEY" "$st" &&
		! grep -rqsa -e "PRIVATE KEY" "$st" &&
		[ "$(jq -c '.policy.secrets[0] | [.proxy_hosts, .jail_holds]' "$st/sandboxes/$id/record.json")" = '[["api.sbx.test"],"placeholder"]' ] &&
		[ "$(jq -r '.proxy_stats.capture' "$st/sandboxes/$id/record.json")" = true ]
	ok $? "$mode: no value and no private key in the state directory; the record says how the secret went in"
	[ -n "$SBX_T_DEBUG" ] && { ls "$st/sandboxes"; grep -rlsaF -e "$KEY" -e "PRIVATE KEY" "$st"; jq -c '.policy.secrets, .proxy_stats' "$st/sandboxes/$id/record.json"; }
	capture in_mode $mode "$SBX" inspect "$id"
	! grep -qF "$KEY" <<<"$out$err" && grep -q "API_KEY" <<<"$out"
	ok $? "$mode: inspect names the secret and never shows the value"
	in_mode $mode "$SBX" destroy --all >/dev/null 2>&1

	# The value injected over TLS with each kind of CA: one made at the
	# run's start, one an earlier run's purger made ahead (the run log
	# says which; another test's runs may take or spoil the waiting CAs
	# meanwhile, hence up to 4 tries for the two).
	seen=
	for try in 1 2 3 4; do
		[[ "$seen" = *at* ]] || in_mode $mode python3 -c "$(cat "$TAP_ROOT/tests/lib/ca_ahead.py")" drop
		capture in_mode $mode "$SBX" run -p "$BASE/p.ini" -- \
			sh -c 'curl -s -m 10 -H "x-api-key: $API_KEY" https://api.sbx.test/echo'
		kind=$(grep -o "CA for that TLS is this sandbox's own, made [a-z]*" <<<"$err" | sed 's/.* made //')
		[ "$rc" = 0 ] && grep -qx "echo ok" <<<"$out" &&
			[ "$(got | tail -n 1 | jq -r '.headers["x-api-key"]')" = "$KEY" ] &&
			[[ " $seen " != *" $kind "* ]] && seen="$seen $kind"
		[[ "$seen" = *at* && "$seen" = *ahead* ]] && break
		in_mode $mode "$SBX" destroy --stale >/dev/null 2>&1 # its purger done
	done
	[[ "$seen" = *at* && "$seen" = *ahead* ]]
	ok $? "$mode: the HTTPS server receives the value with a CA made at the start and with one made ahead (seen:$seen)"
	in_mode $mode "$SBX" destroy --all >/dev/null 2>&1
done

# A value that could not go into a header is refused, naming the secret.
capture in_mode root env SBX_T_KEY="$(printf 'a\nb-long')" "$SBX" run -q -p "$BASE/p.ini" -- true
[ "$rc" = 125 ] && grep -q "secret 'API_KEY': the value from env:SBX_T_KEY is not one line of printable ASCII" <<<"$err"
ok $? "a value with a newline cannot be injected: exit 125 naming the secret"
capture in_mode root "$SBX" run -q -p "$BASE/p.ini" --net none -- true
[ "$rc" = 125 ] && grep -q "secret 'API_KEY' is injected by the proxy for api.sbx.test, but the network mode is 'none': use --net proxy" <<<"$err"
ok $? "injection without proxy mode: exit 125 saying what to do"
capture in_mode root "$SBX" run -q -p "$BASE/p.ini" --upstream-ca "$BASE/no-such-ca.pem" -- true
[ "$rc" = 125 ] && [ "$err" = "sbx: [network] upstream-ca '$BASE/no-such-ca.pem' cannot be read: No such file or directory" ] &&
	[ -z "$(ls "$BASE/state-root/sandboxes")" ]
ok $? "a missing upstream-ca: one line naming it and why, exit 125, no sandbox left"
done_testing
