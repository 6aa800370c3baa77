# tests/lib/chrome.sh - headless Chromium for the tests that render pages.
#
#   . "$(dirname "$0")/../lib/chrome.sh"
#   chrome_ensure        installs Debian's chromium when missing (as root),
#                        or skips the whole file (exit 77) when it cannot
#   chrome ARGS...       chromium --headless with a private profile and no
#                        network (every name resolves to nothing; set
#                        CHROME_RULES to other --host-resolver-rules, e.g. to
#                        let it reach 127.0.0.1); stderr in $TAP_TMP/chrome.err
#   png_size FILE        "WxH" of a PNG

chrome_ensure() {
	if ! command -v chromium >/dev/null; then
		if [ "$(id -u)" != 0 ]; then
			echo "1..0 # SKIP chromium is not installed and we are not root (apt-get install chromium)"
			exit 77
		fi
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium \
			>"$TAP_TMP/apt.log" 2>&1 || { apt-get update -qq >/dev/null 2>&1 &&
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium \
				>"$TAP_TMP/apt.log" 2>&1; }
	fi
	command -v chromium >/dev/null
	ok $? "chromium is installed ($(chromium --version 2>/dev/null))"
	[ $? = 0 ] || { tail -n 5 "$TAP_TMP/apt.log" | sed 's/^/# /'; done_testing; }
}

chrome() {
	local ud
	ud=$(mktemp -d "$TAP_TMP/chrome.XXXXXX")
	HOME=$ud timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic \
		--no-first-run --disable-background-networking --disable-component-update \
		--disable-sync --user-data-dir="$ud" --host-resolver-rules="${CHROME_RULES:-MAP * ~NOTFOUND}" \
		"$@" 2>"$TAP_TMP/chrome.err"
}

png_size() {
	python3 -c 'import struct,sys
d = open(sys.argv[1], "rb").read(24)
if d[:8] == b"\x89PNG\r\n\x1a\n": print("%dx%d" % struct.unpack(">II", d[16:24]))' "$1" 2>/dev/null
}
