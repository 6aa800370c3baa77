#!/bin/bash
# tests/integration/net_capture_setup.sh - how proxy mode's jail is set up,
# as root and as nobody (the jail is looked at from the host as root):
#   - the capture rules in the jail's network namespace are exactly what
#     nft(8) makes of the ruleset capture.c documents (nft list, and the
#     netlink expressions of nft --debug=netlink);
#   - init sets them up itself (libnftnl, not libnftables): it forks
#     nothing but the command;
#   - the CA bundle: a run that only trusts an upstream-ca forks no helper
#     (init copies the files); one that injects a secret forks one, for the
#     sandbox's CA, unless it took one made ahead (its run log says which:
#     tests/integration/net_ca_ahead.sh);
#   - without libnftnl: the run log says capture is off and why, and doctor
#     says so with the fix.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"

if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP needs root: the jail's network namespace is read from the host"
	exit 77
fi
need_tools nft nsenter strace openssl setpriv python3
sbx_modes
sbx_base
sbx_ca_profiles || {
	echo "Bail out! openssl cannot make a test CA"
	exit 1
}

# The reference: the ruleset in capture.c's comment, through nft itself.
sed -n '/^ \*   table inet sbx_capture {$/,/^ \*   }$/s/^ \*   //p' "$TAP_ROOT/lib/jail/capture.c" >"$BASE/ref.nft"
[ "$(grep -cE '^  +[a-z]' "$BASE/ref.nft" | tr -d ' ')" = 11 ] &&
	[ "$(grep -cE '^  +(ip|ip6|udp|meta) ' "$BASE/ref.nft")" = 9 ]
ok $? "the reference ruleset read from lib/jail/capture.c (9 rules)"
# want PORT: what nft lists for the reference with the proxy on PORT
want() {
	sed "s/:PORT\$/:$1/" "$BASE/ref.nft" >"$BASE/ref-$1.nft"
	unshare -rn sh -c "nft -f '$BASE/ref-$1.nft' && nft list ruleset >'$BASE/want.list' &&
		nft --debug=netlink list ruleset 2>&1 | grep '^ *\[' >'$BASE/want.netlink'"
}
want 3128
[ -s "$BASE/want.list" ] && [ -s "$BASE/want.netlink" ]
ok $? "nft loads the reference ruleset in a namespace of its own"

# strace -ff: one file per process (-f alone splits a call that another
# process's line interrupts into "<unfinished ...>" and "<... resumed>",
# which the checks below would miss on a busy host).  trace_dir F makes
# F.d (writable by nobody); trace_join F puts its files together in F, each
# line led by its pid, as strace -f writes them.
trace_dir() {
	mkdir -p "$1.d" && chmod 0777 "$1.d" && echo "$1.d"
}
trace_join() {
	local t
	for t in "$1.d"/t.*; do sed "s/^/${t##*.} /" "$t"; done >"$1"
}

for mode in $MODES; do
	tag="7.$$$([ $mode = root ] && echo 1 || echo 2)"
	sbx_as_mode $mode "$SBX" run -q -p "$BASE/proxy.ini" -- sleep "$tag" &
	run=$!
	pid=
	for _ in $(seq 100); do
		pid=$(pgrep -f "^sleep $tag\$" | head -n 1)
		[ -n "$pid" ] && break
		sleep 0.05
	done
	nsenter -t "$pid" -n nft list ruleset >"$BASE/got.list" 2>&1
	nsenter -t "$pid" -n nft --debug=netlink list ruleset 2>&1 | grep '^ *\[' >"$BASE/got.netlink"
	port=$(sed -n 's/.*meta l4proto tcp redirect to :\([0-9]*\)$/\1/p' "$BASE/got.list")
	want "${port:-0}"
	kill "$pid" 2>/dev/null
	wait $run
	[ -n "$pid" ] && cmp -s "$BASE/want.list" "$BASE/got.list"
	r=$?
	ok $r "$mode: the jail's capture rules are the reference ruleset (nft list; proxy port $port)"
	[ $r = 0 ] || diag "$(diff "$BASE/want.list" "$BASE/got.list")"
	[ -n "$pid" ] && cmp -s "$BASE/want.netlink" "$BASE/got.netlink"
	r=$?
	ok $r "$mode: ... expression for expression (nft --debug=netlink)"
	[ $r = 0 ] || diag "$(diff "$BASE/want.netlink" "$BASE/got.netlink")"

	f=$TAP_TMP/trace-$mode
	sbx_as_mode $mode strace -ff -qq -e trace=clone,clone3,fork,vfork,openat -o "$(trace_dir "$f")/t" \
		"$SBX" run -q -p "$BASE/proxy.ini" -- /bin/true
	trace_join "$f"
	init=$(sed -n 's/^[0-9]* *clone(.*CLONE_NEWPID.* = \([0-9]*\)$/\1/p' "$f" | head -n 1)
	forks=$(grep -cE "^$init +(clone|clone3|fork|vfork)\(" "$f")
	[ -n "$init" ] && [ "$forks" = 1 ] &&
		grep -qE "^$init +(clone|clone3)\(.*CLONE_VM.*CLONE_VFORK" "$f" &&
		grep -q "^$init .*openat(.*libnftnl\.so" "$f" && ! grep -q 'libnftables' "$f"
	r=$?
	ok $r "$mode: init sets capture up itself with libnftnl and forks only the command ($forks clone)"
	[ $r = 0 ] || diag "$(grep -E "^$init " "$f" | grep -E 'clone|fork|libnft')"

	# The supervisor's children that are neither the jail (new
	# namespaces) nor its threads and purger (CLONE_VM): CA helpers.  An
	# injecting run forks one unless it took a CA made ahead (which its
	# run log's secrets line says); the second of two in a row takes one.
	# The CAs waiting in the user's keyring dropped first, so that the
	# first injecting run makes its own (unless another test's purger
	# made some meanwhile).
	sbx_as_mode $mode python3 -c "$(cat "$TAP_ROOT/tests/lib/ca_ahead.py")" drop
	i=0
	for c in up:0 inject:x inject:x; do
		i=$((i + 1))
		f=$TAP_TMP/ca-$mode-$i
		rm -rf "$f" "$f.d"
		sbx_as_mode $mode env SBX_T_KEY=sk-test-0123456789 strace -ff -qq -e trace=clone,clone3,fork,vfork \
			-o "$(trace_dir "$f")/t" "$SBX" run -p "$BASE/${c%:*}.ini" -- /bin/true 2>"$f.log"
		trace_join "$f"
		want=${c#*:}
		if [ "$want" = x ]; then
			want=1
			grep -q "made ahead by an earlier run's purger" "$f.log" && want=0
		fi
		sup=$(sed -n 's/^\([0-9]*\) *clone(.*CLONE_NEWPID.*/\1/p' "$f" | head -n 1)
		helpers=$(grep -E "^$sup +(clone|clone3|fork|vfork)\(" "$f" | grep -vcE 'CLONE_VM|CLONE_NEWPID')
		[ -n "$sup" ] && [ "$helpers" = "$want" ] &&
			{ [ "${c%:*}" = up ] || grep -qE "CA for that TLS is this sandbox's own, made (at its start|ahead)" "$f.log"; }
		ok $? "$mode: ${c%:*}: the supervisor forks $want CA helper ($helpers; $(grep -o "CA for that TLS.*" "$f.log" | cut -c1-80))"
		sbx_as_mode $mode "$SBX" destroy --stale >/dev/null 2>&1
	done
done

# Without libnftnl (hidden by an empty file in a mount namespace of the
# test's own): the run says capture is off and why, the proxy variables
# still reach the proxy, and doctor says the same with the fix.
lib=$(readlink -f "$(ldconfig -p 2>/dev/null | sed -n 's/.*libnftnl\.so\.11 (libc6,x86-64) => //p' | head -n 1)")
if [ -f "$lib" ]; then
	cat >"$BASE/hide.sh" <<EOF
#!/bin/sh
# hide.sh MODE CMD...: CMD with libnftnl hidden, as root or nobody
mode=\$1
shift
mount --bind /dev/null '$lib' || exit 99
[ "\$mode" = root ] && exec env SBX_STATE_DIR='$BASE/state-root' SBX_CACHE_DIR='$BASE/cache-root' "\$@"
exec setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all -- env -i PATH="\$PATH" \\
	HOME='$BASE' SBX_STATE_DIR='$BASE/state-user' SBX_CACHE_DIR='$BASE/cache-user' "\$@"
EOF
	chmod 0755 "$BASE/hide.sh"
	for mode in $MODES; do
		capture unshare -m "$BASE/hide.sh" $mode "$SBX" run -p "$BASE/proxy.ini" -- \
			curl -sS -m 10 -o /dev/null -w '%{http_code}\n' http://denied.sbx.test/
		grep -qx "sbx: network: capture OFF: libnftnl.so.11 cannot be loaded (install libnftnl11)" <<<"$err" &&
			[ "$out" = 403 ] && [ "$rc" = 0 ]
		r=$?
		ok $r "$mode: without libnftnl: the run log says capture is off and why; the proxy variables still work"
		[ $r = 0 ] || diag "rc=$rc out=$out err=$(grep -i capture <<<"$err")"
		capture unshare -m "$BASE/hide.sh" $mode "$SBX" doctor
		grep -qE '^  fallback +capture \(nf_tables\) +libnftnl.so.11 cannot be loaded \(install libnftnl11\): proxy mode captures nothing' <<<"$out" &&
			grep -q 'install libnftnl11 (apt-get install libnftnl11)' <<<"$out" && [ "$rc" = 0 ]
		r=$?
		ok $r "$mode: without libnftnl: doctor says capture falls back, why, and the fix (exit $rc)"
		[ $r = 0 ] || diag "$(grep -A1 -i capture <<<"$out")"
	done
else
	skip "without libnftnl: the run and doctor say so" "libnftnl.so.11 not found by ldconfig"
fi
done_testing
