#!/bin/bash
# sbx-test-timeout: 600
# sbx-test-lane: long
# tests/integration/run_build_subid.sh - image jobs as root inside a real
# distribution: the `build` profile's root keeps Docker's default
# capabilities minus NET_RAW, in the jail's own user namespace, so apt-get
# installs a package in a Debian minbase image (made with debootstrap)
# through the proxy, tar restores owners and setgroups works; the other
# built-in profiles keep none.  As an ordinary user with a range in
# /etc/subuid and /etc/subgid (this test's own, below), the
# jail maps that range as podman does, says so in the run log, and the same
# apt-get works; what the range's ids made is removed with the sandbox.
#
# The suite runs two files at a time, and others read /etc/subuid (every
# ordinary user's run looks itself up there; root's jails move above the
# ranges in it): the ranges are bound over /etc/subuid and /etc/subgid in a
# mount namespace of this test's own, so no other file ever sees them.
. "$(dirname "$0")/../lib/mntns.sh"
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"

if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP needs root (debootstrap, and /etc/subuid entries for nobody)"
	exit 77
fi
sbx_base
MB=$("$TAP_ROOT/tests/lib/minbase.sh" 2>"$TAP_TMP/minbase.err") || {
	echo "Bail out! cannot build the Debian minbase image: $(tail -n 3 "$TAP_TMP/minbase.err")"
	exit 1
}
cp "$TAP_ROOT/$MB" "$BASE/minbase.tar.gz" && chmod 0644 "$BASE/minbase.tar.gz"
IMG=$BASE/minbase.tar.gz
sbx_wd
ok 0 "a Debian bookworm minbase image ($(du -k "$IMG" | cut -f1) KiB)"

apt_job='apt-get update -q >/tmp/u.log 2>&1 || { tail -3 /tmp/u.log; exit 1; }
apt-get install -y -q --no-install-recommends hello >/tmp/i.log 2>&1 || { tail -3 /tmp/i.log; exit 1; }
hello'

# --- as root ------------------------------------------------------------
capture sbx_as_mode_in "$WD" root "$SBX" run -p build --rootfs "$IMG" -- sh -c "$apt_job"
[ "$rc" -eq 0 ] && [ "$out" = "Hello, world!" ] && grep -q "net: allowed deb.debian.org:80" <<<"$err"
ok $? "root, -p build: apt-get installs a package through the proxy ($rc: $out $(tail -n 3 <<<"$err"))"
capture sbx_as_mode_in "$WD" root "$SBX" run -q -p build --rootfs "$IMG" -- sh -c '
	mkdir -p /t/src && echo x >/t/src/f && chown 1234:2345 /t/src/f &&
	tar -C /t/src -cf /t/a.tar f && rm -rf /t/src && mkdir /t/dst && tar -C /t/dst -xpf /t/a.tar &&
	stat -c %u:%g /t/dst/f && setpriv --reuid=_apt --regid=nogroup --init-groups id -u'
[ "$rc" -eq 0 ] && [ "$out" = "$(printf '1234:2345\n42')" ]
ok $? "root, -p build: tar restores owners, initgroups and a drop to _apt work ($rc: $out $err)"
capture sbx_as_mode_in "$WD" root "$SBX" run -q -p build --rootfs "$IMG" -- sh -c 'grep CapEff /proc/self/status'
[ "$out" = "CapEff:	00000000a80405fb" ]
ok $? "root, -p build: Docker's default capabilities, without NET_RAW ($out)"
printf '[sandbox]\nextends = build\n[security]\ncapabilities = none\n' >"$BASE/nocaps.ini"
chmod 0644 "$BASE/nocaps.ini"
capture sbx_as_mode_in "$WD" root "$SBX" run -q -p "$BASE/nocaps.ini" --rootfs "$IMG" -- sh -c "$apt_job"
[ "$rc" -ne 0 ]
ok $? "root: the same job with no capabilities fails (the test sees the difference; $rc)"
for p in default agent; do
	capture sbx_as_mode_in "$WD" root "$SBX" run -q -p "$p" --net none -- sh -c 'grep CapEff /proc/self/status'
	[ "$out" = "CapEff:	0000000000000000" ]
	ok $? "root, -p $p keeps no capabilities ($out)"
done
capture sbx_as_mode_in "$WD" root "$SBX" run -q -p strict --rootfs "$IMG" -- sh -c 'grep CapEff /proc/self/status'
[ "$out" = "CapEff:	0000000000000000" ]
ok $? "root, -p strict keeps no capabilities ($out)"

# --- as nobody, one id, then with a subordinate range --------------------
capture sbx_as_mode_in "$WD" user "$SBX" run --rm -p build --rootfs "$IMG" -- sh -c 'cat /proc/self/uid_map; chown 42 /tmp 2>&1'
[ "$(lines "$out")" -ge 2 ] && [[ "$err" == *"one id mapped"* ]] && [[ "$out" == *"Operation not permitted"* ]]
ok $? "nobody without a range: one id, the run log says so, chown to another id is EPERM as on the host ($out)"

# The test's own /etc/subuid and /etc/subgid: copies of the host's (or
# empty files where it has none), bound over the host's in this test's
# mount namespace; set_subids replaces what they hold.
for f in subuid subgid; do
	if [ -e /etc/$f ]; then cp "/etc/$f" "$BASE/$f.host"; else : >"$BASE/$f.host"; fi
	cp "$BASE/$f.host" "$BASE/$f" && chmod 0644 "$BASE/$f"
	if [ ! -e /etc/$f ]; then
		# nothing to bind over: an empty file means no ranges, as none does
		: >"/etc/$f" && made_etc+=("/etc/$f")
	fi
	mount --bind "$BASE/$f" "/etc/$f" || {
		echo "Bail out! cannot bind $BASE/$f over /etc/$f"
		exit 1
	}
done
trap 'for f in subuid subgid; do umount "/etc/$f" 2>/dev/null; done; rm -f "${made_etc[@]}"; tap_cleanup' EXIT
trap 'exit 143' TERM INT
set_subids() { # "$@": lines added to the host's
	for f in subuid subgid; do
		{ cat "$BASE/$f.host"; printf '%s\n' "$@"; } >"$BASE/$f.new" && cat "$BASE/$f.new" >"$BASE/$f"
	done
}
set_subids "65534:300000:65536"
grep -q '^65534:300000:65536$' /etc/subuid && ! grep -q '^65534:300000:65536$' /proc/1/root/etc/subuid 2>/dev/null &&
	grep -q '^65534:300000:65536$' /etc/subgid && ! grep -q '^65534:300000:65536$' /proc/1/root/etc/subgid 2>/dev/null
ok $? "the range is in this test's /etc/subuid and /etc/subgid; the host's, which the other test files read, are unchanged"

capture sbx_as_mode_in "$WD" user "$SBX" run --rm -p build --rootfs "$IMG" -- cat /proc/self/uid_map
[ "$(printf '%s\n' "$out" | tr -s ' ' | sed 's/^ //')" = "$(printf '0 65534 1\n1 300000 65536')" ] &&
	[[ "$err" == *"root inside, uid 65534 on the host (not root); its other ids are the subordinate range 300000-365535 of /etc/subuid (newuidmap)"* ]]
ok $? "nobody with a range: mapped as podman does, and the run log says which mapping ($out)"
capture sbx_as_mode_in "$WD" user "$SBX" run -q --rm -p default -- sh -c 'id -u; tr -s " " <"/proc/self/uid_map"'
[ "$(head -1 <<<"$out")" = 65534 ] && grep -q '^ *65534 65534 1$' <<<"$out"
ok $? "nobody with a range, default profile: the jail's user is still nobody, mapped to itself ($out)"
capture sbx_as_mode_in "$WD" user "$SBX" run --keep -n aptjob -p build --rootfs "$IMG" -- sh -c "$apt_job"
[ "$rc" -eq 0 ] && [ "$out" = "Hello, world!" ]
ok $? "nobody with a range, -p build: apt-get drops to _apt and installs the package ($rc: $out $(tail -n 3 <<<"$err"))"
capture sbx_as_mode_in "$WD" user "$SBX" exec aptjob hello
[ "$rc" -eq 0 ] && [ "$out" = "Hello, world!" ]
ok $? "nobody with a range: exec into the kept sandbox runs what it installed ($rc: $err)"
capture sbx_as_mode_in "$WD" user "$SBX" destroy aptjob
left=$(sbx_sandbox_entries "$BASE/state-user/sandboxes")
[ "$rc" -eq 0 ] && [ -z "$left" ]
ok $? "nobody with a range: destroy removes what the range's ids made ($rc: $out $err; left: $left)"
capture sbx_as_mode_in "$WD" user "$SBX" run -q -p build --rootfs "$IMG" -- sh -c "$apt_job; exit 0"
[ "$rc" -eq 0 ] && [ -z "$(sbx_sandbox_entries "$BASE/state-user/sandboxes")" ]
ok $? "nobody with a range: an ephemeral sandbox leaves nothing behind ($rc: $err)"
# A user whose range is the one root's jails would use (Debian's useradd
# gives the first user 100000-165535): root's jails move above it, so that
# the user cannot act as their ids.
set_subids "65534:100000:65536"
capture sbx_as_mode_in "$WD" root "$SBX" run --rm -- cat /proc/self/uid_map
[ "$(tr -s ' ' <<<"$out" | sed 's/^ //')" = "0 196608 65536" ] &&
	[[ "$err" == *"root inside, uid 196608 on the host (not root); ids 0-65535 are host 196608-262143 (above every /etc/subuid range)"* ]]
ok $? "root: a user's range over 100000-165535 moves root's jails above it ($out)"
capture sbx_as_mode_in "$WD" root "$SBX" doctor --json
[ "$(jq .host_base <<<"$out")" = 196608 ]
ok $? "root: doctor says which range root's jails use"
set_subids
sbx_as_mode root "$SBX" destroy --all >/dev/null 2>&1
sbx_as_mode user "$SBX" destroy --all >/dev/null 2>&1
done_testing
