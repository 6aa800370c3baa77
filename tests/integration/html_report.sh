#!/bin/bash
# sbx-test-timeout: 900  (a first run installs chromium, ~100 MB)
# sbx-test-lane: long
# tests/integration/html_report.sh - `sbx inspect --html` opened in headless
# Chromium (Debian's chromium package): a kept sandbox that exited 3 after
# an allowed and a denied proxy request and a few file changes renders with
# its exit status, network events and change list; the page makes no
# request outside itself (checked in Chromium's net log, with a control page
# that does, so the check is known to see requests) and has no external
# src/href/url(); screenshots are kept as artifacts:
#
#   tests/out/html_report.png        the page as opened (1280x2000)
#   tests/out/html_report_lower.png  the top sections folded: network
#                                    events, output and changes in view
#
# Chromium is big (~100 MB installed), so it is not in tests/deps.sh: as root
# this test installs it when missing; otherwise it is skipped, saying so.
# The report of a sandbox run by nobody (setpriv) is checked too.
. "$(dirname "$0")/../lib/tap.sh"
export SBX_STATE_DIR=$TAP_TMP/state SBX_CACHE_DIR=$TAP_TMP/cache
OUT=$TAP_ROOT/tests/out
mkdir -p "$OUT"

. "$(dirname "$0")/../lib/chrome.sh"
chrome_ensure

page_requests() {
	python3 - "$1" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
start = d["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
for e in d["events"]:
    p = e.get("params", {})
    if e["type"] == start and "file://" in p.get("network_isolation_key", "") \
            and not p.get("url", "").startswith(("file:", "data:", "about:", "blob:")):
        print(p["url"])
EOF
}

# png_size FILE: "WxH" of a PNG, or nothing.

"$TAP_ROOT/tests/lib/mkrootfs.sh" "$TAP_TMP/rootfs.tar.gz" >/dev/null 2>&1
ok $? "busybox rootfs fixture built"

# A server on host loopback the jail may reach through the proxy.
mkdir -p "$TAP_TMP/www"
echo "hello from the host" >"$TAP_TMP/www/index.html"
python3 -c 'import http.server, functools, sys
h = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), h)
open(sys.argv[2], "w").write(str(s.server_address[1]))
s.serve_forever()' "$TAP_TMP/www" "$TAP_TMP/port.tmp" >/dev/null 2>&1 &
srv=$!
trap 'kill $srv 2>/dev/null; tap_cleanup' EXIT
for ((i = 0; i < 50; i++)); do [ -s "$TAP_TMP/port.tmp" ] && break; sleep 0.1; done
port=$(cat "$TAP_TMP/port.tmp")

inside="wget -q -O - http://127.0.0.1:$port/; wget -q -O - http://denied.example/ || echo denied;
mkdir -p /srv/data; echo x >/srv/data/new.txt; echo y >>/etc/passwd; rm /etc/hostname;
echo 'to stderr' >&2; exit 3"
# make_report WHO PRE...: a kept sandbox run by PRE (nothing or setpriv),
# its report in $TAP_TMP/WHO.html.
make_report() {
	local who=$1 st=$TAP_TMP/$1-state
	shift
	mkdir -p "$st" "$TAP_TMP/$who-cache" && chmod 0777 "$st" "$TAP_TMP/$who-cache"
	(cd "$TAP_TMP" && "$@" env SBX_STATE_DIR="$st" SBX_CACHE_DIR="$TAP_TMP/$who-cache" "$SBX" run \
		-q --keep -n report --rootfs "$TAP_TMP/rootfs.tar.gz" --net proxy \
		--allow "127.0.0.1:$port" -w / -- sh -c "$inside" >"$TAP_TMP/$who.out" 2>&1)
	echo $? >"$TAP_TMP/$who.rc"
	"$@" env SBX_STATE_DIR="$st" "$SBX" inspect --html "$st/$who.html" report &&
		cp "$st/$who.html" "$TAP_TMP/$who.html"
}

make_report root
rc=$?
[ "$(cat "$TAP_TMP/root.rc")" = 3 ] && [ "$rc" = 0 ] && [ -s "$TAP_TMP/root.html" ] &&
	grep -q 'hello from the host' "$TAP_TMP/root.out"
ok $? "a kept sandbox exited 3 after proxy requests; inspect --html wrote the report"
[ $? = 0 ] || diag "$(cat "$TAP_TMP/root.out")"
H=$TAP_TMP/root.html

# Static: nothing in the page points outside it.
! grep -Eiq "(src|href|action|poster|srcset|data)[[:space:]]*=[[:space:]]*[\"']?[[:space:]]*([a-z]+:)?//" "$H" &&
	! grep -Eiq "url\([[:space:]]*[\"']?[[:space:]]*([a-z]+:)?//|@import" "$H"
ok $? "the HTML has no external src/href/action/url()/@import"
grep -q "Content-Security-Policy\" content=\"default-src 'none'" "$H"
ok $? "the page forbids every load of its own with a CSP default-src 'none'"

# csp_check FILE: script-src allows the page's one script by its hash, not
# 'unsafe-inline'; no inline event handler anywhere.
csp_check() {
	python3 - "$1" <<'PY'
import base64, hashlib, re, sys
h = open(sys.argv[1], encoding="utf-8").read()
csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', h).group(1)
src = dict(d.strip().split(" ", 1) for d in csp.split(";") if d.strip())
scripts = re.findall(r"<script>(.*?)</script>", h, re.S)
want = ["'sha256-%s'" % base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() for s in scripts]
problems = []
if "'unsafe-inline'" in src.get("script-src", "") or src.get("script-src") is None:
    problems.append("script-src: %r" % src.get("script-src"))
if len(scripts) != 1 or src.get("script-src") != want[0]:
    problems.append("script-src %r is not the hash of the one script %r" % (src.get("script-src"), want))
if re.search(r"<[^>]*\son[a-z]+\s*=", h, re.I):
    problems.append("an inline event handler")
print("; ".join(problems))
PY
}
p=$(csp_check "$H")
[ -z "$p" ]
ok $? "CSP: script-src is the hash of the report's one script, no 'unsafe-inline', no inline handlers${p:+ ($p)}"

# Rendered: the DOM after scripts ran holds the exit status, the changes and
# the network events; the net log shows no request made by the page.
chrome --log-net-log="$TAP_TMP/report.netlog" --net-log-capture-mode=Everything \
	--dump-dom "file://$H" >"$TAP_TMP/dom.html"
rc=$?
[ "$rc" = 0 ] && grep -q '<span class="st">exited 3</span>' "$TAP_TMP/dom.html" &&
	grep -q '<td class="k">exit</td><td>exit 3</td>' "$TAP_TMP/dom.html"
ok $? "Chromium renders it; the header and the summary show exit status 3"
grep -q '<html lang="en" data-ready="1">' "$TAP_TMP/dom.html"
ok $? "the report's own script runs under its CSP"

# Script that got into the page (what an escaping bug would let a jail-chosen
# name do) does not run; the same injection runs in a page without the CSP.
inject="<script>document.documentElement.setAttribute('data-injected','1')</script><img src=x onerror=\"document.documentElement.setAttribute('data-onerror','1')\">"
sed "s|<main>|<main>$inject|" "$H" >"$TAP_TMP/injected.html"
sed -e 's|<meta http-equiv="Content-Security-Policy"[^>]*>||' "$TAP_TMP/injected.html" >"$TAP_TMP/injected-nocsp.html"
chrome --dump-dom "file://$TAP_TMP/injected.html" >"$TAP_TMP/dom-inj.html"
chrome --dump-dom "file://$TAP_TMP/injected-nocsp.html" >"$TAP_TMP/dom-inj-nocsp.html"
! grep -q '<html[^>]*data-\(injected\|onerror\)' "$TAP_TMP/dom-inj.html" && grep -q '<html[^>]*data-ready="1"' "$TAP_TMP/dom-inj.html" &&
	grep -q 'data-injected="1"' "$TAP_TMP/dom-inj-nocsp.html" && grep -q 'data-onerror="1"' "$TAP_TMP/dom-inj-nocsp.html"
ok $? "an injected inline script and event handler do not run under the CSP (control: they do without it)"
[ "$rc" = 0 ] || diag "chromium rc=$rc: $(tail -n 3 "$TAP_TMP/chrome.err")"
missing=
for p in /srv/data/new.txt /etc/passwd /etc/hostname /srv/data; do
	grep -q "<code>$p</code>" "$TAP_TMP/dom.html" || missing="$missing $p"
done
[ -z "$missing" ] && grep -q '6 changes' "$TAP_TMP/dom.html"
ok $? "the rendered change list has the added, changed and deleted paths${missing:+ (missing:$missing)}"
grep -q '<td class="deny">DENY</td><td>denied.example</td><td>80</td>' "$TAP_TMP/dom.html" &&
	grep -q "<td class=\"allow\">ALLOW</td><td>127.0.0.1</td><td>$port</td>" "$TAP_TMP/dom.html"
ok $? "the rendered network events show the allowed and the denied request"
reqs=$(page_requests "$TAP_TMP/report.netlog")
[ -s "$TAP_TMP/report.netlog" ] && [ -z "$reqs" ]
ok $? "Chromium's net log has no request made by the page${reqs:+: $reqs}"

# The control: a page with an external image and stylesheet is seen.
printf '<!DOCTYPE html><img src="http://ext.example/a.png"><link rel=stylesheet href="https://cdn.example/x.css">' \
	>"$TAP_TMP/control.html"
chrome --log-net-log="$TAP_TMP/control.netlog" --net-log-capture-mode=Everything \
	--dump-dom "file://$TAP_TMP/control.html" >/dev/null
reqs=$(page_requests "$TAP_TMP/control.netlog")
grep -q 'ext.example/a.png' <<<"$reqs" && grep -q 'cdn.example/x.css' <<<"$reqs"
ok $? "the net-log check sees the requests of a control page that makes them"

# Nothing widens the page past a 1280 px window (long run-log lines wrap):
# a copy of the page (without its CSP, so that the measuring script runs)
# records its scroll width where --dump-dom shows it.
sed -e 's|<meta http-equiv="Content-Security-Policy"[^>]*>||' -e 's|</body>|<script>document.body.setAttribute("data-sw",document.documentElement.scrollWidth)</script></body>|' \
	"$H" >"$TAP_TMP/width.html"
sw=$(chrome --window-size=1280,2000 --dump-dom "file://$TAP_TMP/width.html" |
	grep -o 'data-sw="[0-9]*"' | grep -o '[0-9]*')
[ -n "$sw" ] && [ "$sw" -le 1280 ]
ok $? "the page fits a 1280 px wide window (scroll width ${sw:-unknown})"

# Screenshots, kept as artifacts (in tests/out when we may write there).
chrome --screenshot="$TAP_TMP/html_report.png" --window-size=1280,2000 "file://$H" >/dev/null
[ "$(png_size "$TAP_TMP/html_report.png")" = 1280x2000 ] &&
	[ "$(stat -c %s "$TAP_TMP/html_report.png")" -gt 20000 ]
ok $? "screenshot taken (1280x2000)"
sed -e 's/<details open><summary>\(Summary\|Policy answers\|Timeline\)</<details><summary>\1</' \
	-e 's/<details><summary>Output</<details open><summary>Output</' "$H" >"$TAP_TMP/lower.html"
chrome --screenshot="$TAP_TMP/html_report_lower.png" --window-size=1280,1100 \
	"file://$TAP_TMP/lower.html" >/dev/null
[ "$(png_size "$TAP_TMP/html_report_lower.png")" = 1280x1100 ]
ok $? "screenshot with the top sections folded taken (network events, output, changes)"
cp "$H" "$TAP_TMP/html_report.html"
if cp "$TAP_TMP/html_report.png" "$TAP_TMP/html_report_lower.png" "$TAP_TMP/html_report.html" \
	"$OUT/" 2>/dev/null; then
	diag "kept: tests/out/html_report.png, tests/out/html_report_lower.png, tests/out/html_report.html"
else
	diag "tests/out is not writable: the screenshots are not kept"
fi

# The Changes section has the diff of the copy-on-write host directories
# (as sbx diff makes it, escaped), and the files that run code later marked.
mkdir -p "$TAP_TMP/proj/.git/hooks" && echo 'old line' >"$TAP_TMP/proj/notes.txt"
(cd "$TAP_TMP/proj" && env SBX_STATE_DIR="$TAP_TMP/root-state" SBX_CACHE_DIR="$TAP_TMP/root-cache" \
	"$SBX" run -q --keep -n review -- sh -c 'echo "<b>new</b> line" >>notes.txt; echo hook >.git/hooks/pre-commit')
env SBX_STATE_DIR="$TAP_TMP/root-state" "$SBX" inspect --html "$TAP_TMP/review.html" review &&
	chrome --dump-dom "file://$TAP_TMP/review.html" >"$TAP_TMP/dom3.html"
grep -q 'diff --git a/notes.txt b/notes.txt' "$TAP_TMP/dom3.html" &&
	grep -q '^+&lt;b&gt;new&lt;/b&gt; line' "$TAP_TMP/dom3.html" &&
	grep -q '<li class="warn">.git/hooks/pre-commit: runs code on the host later (git-hook)' "$TAP_TMP/dom3.html" &&
	! grep -q '<b>new</b>' "$TAP_TMP/dom3.html"
ok $? "the rendered Changes section has the escaped diff and the git hook flagged"

# The report of a sandbox nobody ran.
if [ "$(id -u)" = 0 ]; then
	chmod 0755 "$TAP_TMP"
	chmod 0644 "$TAP_TMP/rootfs.tar.gz"
	make_report nobody setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --
	rc=$?
	chrome --dump-dom "file://$TAP_TMP/nobody.html" >"$TAP_TMP/dom2.html"
	[ "$(cat "$TAP_TMP/nobody.rc")" = 3 ] && [ "$rc" = 0 ] &&
		grep -q '<span class="st">exited 3</span>' "$TAP_TMP/dom2.html" &&
		grep -q '<code>/srv/data/new.txt</code>' "$TAP_TMP/dom2.html" &&
		grep -q '<td class="deny">DENY</td><td>denied.example</td>' "$TAP_TMP/dom2.html"
	ok $? "nobody: the report of its sandbox renders with exit 3, changes and network events"
	p=$(csp_check "$TAP_TMP/nobody.html")
	[ -z "$p" ]
	ok $? "nobody: its report's CSP allows only its own script by hash${p:+ ($p)}"
	[ $? = 0 ] || diag "rc=$rc run=$(cat "$TAP_TMP/nobody.rc") $(tail -n 3 "$TAP_TMP/nobody.out")"
else
	skip "the report of a sandbox nobody ran" "not root (setpriv needs root)"
fi
done_testing
