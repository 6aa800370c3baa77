#!/bin/bash
# tests/integration/net_bundle.sh - the jail's CA bundle in proxy mode
# (/run/sbx/ca-bundle.pem, SSL_CERT_FILE and the like), as root and as
# nobody, with the host root (no test host: nothing connects):
#   - [network] upstream-ca alone: the bundle is the host's CAs, then the
#     upstream-ca file, byte for byte;
#   - an injected secret adds the sandbox's CA last: a self-signed P-256
#     CA named after the sandbox, its key nowhere in the jail;
#   - an upstream-ca that is a FIFO, a directory, a device or too large for
#     the bundle: exit 125 at once, one line naming it and what to give,
#     no sandbox and no process left (a FIFO used to hang the run).
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"

need_tools openssl jq setpriv timeout
sbx_modes
sbx_base
host_cas=
for f in /etc/ssl/certs/ca-certificates.crt /etc/pki/tls/certs/ca-bundle.crt /etc/ssl/cert.pem; do
	[ -f "$f" ] && { host_cas=$f; break; }
done
sbx_ca_profiles
ok $? "a test upstream CA and the profiles made"

# The bundle as the host's CAs, a newline, the upstream CA (and more).
expect_prefix() {
	{
		[ -n "$host_cas" ] && cat "$host_cas" && echo
		cat "$BASE/up.pem"
	} >"$BASE/want"
}
expect_prefix

for mode in $MODES; do
	capture sbx_as_mode $mode "$SBX" run -q -p "$BASE/up.ini" -- \
		sh -c 'for v in SSL_CERT_FILE NODE_EXTRA_CA_CERTS REQUESTS_CA_BUNDLE CURL_CA_BUNDLE GIT_SSL_CAINFO; do
			eval "echo \$v=\$$v"; done >&2; cat /run/sbx/ca-bundle.pem'
	printf '%s\n' "$out" >"$BASE/got-$mode"
	[ "$rc" = 0 ] && cmp -s "$BASE/want" "$BASE/got-$mode" &&
		[ "$(grep -c '=/run/sbx/ca-bundle.pem$' <<<"$err")" = 5 ]
	r=$?
	ok $r "$mode: upstream-ca alone: the bundle is the host's CAs then upstream-ca, byte for byte, in the five variables"
	[ $r = 0 ] || diag "rc=$rc err=$err $(cmp "$BASE/want" "$BASE/got-$mode" 2>&1)"

	capture sbx_as_mode $mode env SBX_T_KEY=sk-test-0123456789 "$SBX" run -q -p "$BASE/inject.ini" -- \
		sh -c 'cat /run/sbx/ca-bundle.pem; grep -rls "PRIVATE KEY" /run /proc/self/environ 2>/dev/null | sed "s/^/KEYFILE /"'
	printf '%s\n' "$out" | grep -v '^KEYFILE ' >"$BASE/inj-$mode"
	n=$(wc -c <"$BASE/want")
	# The rest, after the upstream CA and a newline: one certificate.
	tail -c +$((n + 2)) "$BASE/inj-$mode" >"$BASE/ca-$mode"
	subj=$(openssl x509 -in "$BASE/ca-$mode" -noout -subject 2>/dev/null)
	[ "$rc" = 0 ] && cmp -s -n "$n" "$BASE/want" "$BASE/inj-$mode" &&
		[ "$(grep -c 'BEGIN CERTIFICATE' "$BASE/ca-$mode")" = 1 ] &&
		grep -q "CN *= *sbx sandbox CA [0-9a-f]\{12\}" <<<"$subj" &&
		openssl verify -CAfile "$BASE/ca-$mode" "$BASE/ca-$mode" >/dev/null 2>&1 &&
		openssl x509 -in "$BASE/ca-$mode" -noout -text | grep -q "ASN1 OID: prime256v1" &&
		! grep -q '^KEYFILE ' <<<"$out"
	r=$?
	ok $r "$mode: an injected secret: the bundle ends with the sandbox's own self-signed P-256 CA ($subj), no key in the jail"
	[ $r = 0 ] || diag "rc=$rc err=$err $(grep "^KEYFILE" <<<"$out") $(cmp -n "$n" "$BASE/want" "$BASE/inj-$mode" 2>&1) $(grep -c "BEGIN CERTIFICATE" "$BASE/ca-$mode")"
done

mkfifo "$BASE/fifo"
mkdir "$BASE/dir"
# Larger than the bundle's 1 MiB with the host's CAs.
head -c $((1024 * 1024)) /dev/zero >"$BASE/big.pem"
chmod 0644 "$BASE/big.pem"
for mode in $MODES; do
	for bad in "$BASE/fifo" "$BASE/dir" /dev/zero; do
		capture sbx_as_mode $mode timeout 20 "$SBX" run -q -p "$BASE/up.ini" --upstream-ca "$bad" -- true
		[ "$rc" = 125 ] &&
			[ "$err" = "sbx: [network] upstream-ca '$bad' is not a regular file (give a PEM file of CA certificates)" ]
		r=$?
		ok $r "$mode: upstream-ca $bad (not a file): exit 125, one line naming it"
		[ $r = 0 ] || diag "rc=$rc err=$err"
	done
	capture sbx_as_mode $mode "$SBX" run -q -p "$BASE/up.ini" --upstream-ca "$BASE/big.pem" -- true
	[ "$rc" = 125 ] && grep -q "^sbx: \[network\] upstream-ca '$BASE/big.pem' is too large: 1024 KiB, and the jail's CA bundle holds 1024 KiB with the host's CAs ([0-9]* KiB)$" <<<"$err" &&
		[ "$(wc -l <<<"$err")" = 1 ]
	r=$?
	ok $r "$mode: an upstream-ca too large for the bundle: exit 125, one line with the sizes"
	[ $r = 0 ] || diag "rc=$rc err=$err"
	[ -z "$(sbx_sandbox_entries "$BASE/state-$mode/sandboxes")" ] &&
		! pgrep -f "$SBX run" >/dev/null
	ok $? "$mode: no sandbox and no sbx process left"
done
done_testing
