#!/bin/bash
# tests/integration/net_ca_ahead.sh - the sandbox CAs made ahead (lib/run/
# run_extras.c), as root and as nobody, with the host root:
#   - after a run that injects a secret, its purger leaves CAs in the
#     user's kernel keyring, possessor-only; the next runs each take one:
#     the run log says "made ahead", and every run's CA is another one (a
#     valid self-signed P-256 CA, no key in the jail);
#   - a value in a slot that is too old, from the future or not a CA is
#     dropped: that run makes its own CA at its start, and its purger
#     fills the slots again;
#   - a jail whose seccomp policy file allows keyctl, started from a
#     login's session keyring (one that links the user's keyring), finds
#     none of them and cannot read them by serial: its command has a
#     session keyring of its own.
# Other test files running beside this one may take CAs too: a check that
# needs one waiting tries three times.  The CAs this file's runs leave
# wait in root's and nobody's keyrings (at most 12 hours), as a user's do.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"

need_tools openssl python3 setpriv
sbx_modes
sbx_base
sbx_ca_profiles
ok $? "a test upstream CA and the profiles made"

CA_PY=$(cat "$TAP_ROOT/tests/lib/ca_ahead.py")
printf 'allow keyctl\nallow add_key\nallow request_key\n' >"$BASE/keys.policy"
printf '[sandbox]\npersist = never\n[security]\nseccomp = %s\n' "$BASE/keys.policy" >"$BASE/keys.ini"
chmod 0644 "$BASE/keys.policy" "$BASE/keys.ini"

keys() { sbx_as_mode $mode python3 -c "$CA_PY" "$@"; }
# An injecting run: $out the bundle's last certificate, $err the run log.
inject_run() {
	capture sbx_as_mode $mode env SBX_T_KEY=sk-test-0123456789 "$SBX" run -p "$BASE/inject.ini" -- \
		sh -c 'sed -n "/BEGIN CERT/h; /BEGIN CERT/!H; \${x;p}" /run/sbx/ca-bundle.pem
			grep -rls "PRIVATE KEY" /run /proc/self/environ 2>/dev/null | sed "s/^/KEYFILE /"'
}
purgers_done() { sbx_as_mode $mode "$SBX" destroy --stale >/dev/null 2>&1; }
AHEAD="the proxy's CA for that TLS is this sandbox's own, made ahead by an earlier run's purger (it waited in the kernel keyring, never on disk)"
START="the proxy's CA for that TLS is this sandbox's own, made at its start"

for mode in $MODES; do
	if ! keys avail; then
		skip "$mode: CAs made ahead" "no kernel keyrings here"
		continue
	fi
	# 1. Runs in a row: each after the one before and its purger.
	inject_run
	purgers_done
	got=0
	for try in 1 2 3; do
		n=$(keys count)
		inject_run
		[ "$rc" = 0 ] && grep -qF "$AHEAD" <<<"$err" && { got=1; break; }
		purgers_done
	done
	[ "$got" = 1 ] && [ "$n" -ge 1 ]
	r=$?
	ok $r "$mode: after an injecting run, CAs wait in the keyring ($n) and the next run's log says made ahead"
	[ $r = 0 ] || diag "rc=$rc n=$n err=$err"

	rm -f "$BASE/cas-$mode"
	bad=
	for i in 1 2 3 4 5; do
		inject_run
		printf '%s\n' "$out" | grep -v '^KEYFILE ' >"$BASE/ca-$mode-$i"
		subj=$(openssl x509 -in "$BASE/ca-$mode-$i" -noout -subject 2>/dev/null)
		{ [ "$rc" = 0 ] && grep -q "CN *= *sbx sandbox CA [0-9a-f]\{12\}" <<<"$subj" &&
			openssl verify -CAfile "$BASE/ca-$mode-$i" "$BASE/ca-$mode-$i" >/dev/null 2>&1 &&
			openssl x509 -in "$BASE/ca-$mode-$i" -noout -text | grep -q "ASN1 OID: prime256v1" &&
			! grep -q '^KEYFILE ' <<<"$out"; } || bad="$bad $i(rc=$rc $subj)"
		openssl x509 -in "$BASE/ca-$mode-$i" -noout -fingerprint -sha256 >>"$BASE/cas-$mode" 2>/dev/null
		grep -qF "$AHEAD" <<<"$err" && echo ahead >>"$BASE/ahead-$mode"
	done
	distinct=$(sort -u "$BASE/cas-$mode" | wc -l)
	[ -z "$bad" ] && [ "$distinct" = 5 ]
	r=$?
	ok $r "$mode: 5 runs in a row: 5 valid self-signed P-256 CAs, each another one ($(wc -l <"$BASE/ahead-$mode" 2>/dev/null || echo 0) made ahead), no key in the jail"
	[ $r = 0 ] || diag "bad:$bad distinct=$distinct"

	# 2. Bad values in every slot: dropped, the run makes its own.
	purgers_done
	keys plant
	inject_run
	rc1=$rc err1=$err
	purgers_done
	n=$(keys count)
	[ "$rc1" = 0 ] && grep -qF "$START" <<<"$err1" && [ "$n" -ge 1 ]
	r=$?
	ok $r "$mode: a CA too old, one from the future and two that are not CAs: dropped, the run makes its own, its purger fills the slots ($n)"
	[ $r = 0 ] || diag "rc=$rc1 n=$n err=$err1"

	# 3. A jail allowed keyctl, from a login's session keyring; outside
	# it, the same reads succeed (tried again if another test's run took
	# a CA in between).
	r=1
	for try in 1 2 3; do
		serials=$(keys serials)
		[ -n "$serials" ] || { inject_run; purgers_done; continue; }
		capture keys session "$SBX" run -q -p "$BASE/keys.ini" -- python3 -c "$CA_PY" jail $serials
		want="found 0 reads$(for s in $serials; do printf ' -13'; done)"
		host=$(keys session python3 -c "$CA_PY" jail $serials)
		[ "$rc" = 0 ] && [ "$out" = "$want" ] && [[ "$host" =~ ^found\ [1-4]\ reads(\ [0-9]+)+$ ]] &&
			{ r=0; break; }
	done
	ok $r "$mode: a jail whose policy allows keyctl finds no waiting CA and reads none by serial ($out; outside: $host)"
	[ $r = 0 ] || diag "rc=$rc serials=$serials want=$want err=$err"
done
done_testing
