#!/bin/bash
# tests/integration/run_exec_fail.sh - a command that cannot be started
# (exit 126/127) gets one line naming it and why: not on the jail's PATH
# (shown), not executable, a directory, a missing interpreter, or hidden by
# the profile (a private /tmp, a mask, an image root) with the option that
# shows it; the record carries the reason, and under persist = on-failure
# such a sandbox is not kept.  As root and as nobody.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"

sbx_setup_busybox

# A program "installed" under /tmp the way npm does it: bin/tool is a
# symlink into lib/.  /tmp is a private tmpfs in the default profile (and
# $BASE, nobody's home here, is copy-on-write in it: not there).
INST=$(mktemp -d /tmp/sbx-inst.XXXXXX)
trap 'tap_cleanup "$INST"' EXIT
mkdir -p "$INST/bin" "$INST/lib/tool"
printf '#!/bin/sh\necho tool-ran\n' >"$INST/lib/tool/cli.sh"
chmod 0755 "$INST/lib/tool/cli.sh"
ln -s ../lib/tool/cli.sh "$INST/bin/tool"
printf '#!/no/such/interpreter\n' >"$WD/badinterp"
chmod 0755 "$WD/badinterp" "$INST" "$INST/bin" "$INST/lib" "$INST/lib/tool"
printf '[sandbox]\nextends = default\n[filesystem]\nmask = %s/bin/tool\n' "$INST" >"$BASE/mask.ini"
chmod 0644 "$BASE/mask.ini"

as_mode() { sbx_as_mode_in "$WD" "$@"; }

for mode in $MODES; do
	capture as_mode $mode "$SBX" run -q -- no-such-cmd-xyz
	[ "$rc" -eq 127 ] && [ "$(lines "$err")" -eq 1 ] &&
		[[ "$err" == "sbx: 'no-such-cmd-xyz': not found on the jail's PATH (/"*")" ]]
	ok $? "$mode: not on PATH: 127, one line showing the PATH, even with -q ($err)"

	capture as_mode $mode "$SBX" run -q --rootfs "$IMG" -- /etc/passwd
	[ "$rc" -eq 126 ] && [[ "$err" == *"'/etc/passwd': is not executable (mode 0644"* ]]
	ok $? "$mode: a file without x: 126, says its mode ($err)"

	capture as_mode $mode "$SBX" run -q --rootfs "$IMG" -- /etc
	[ "$rc" -eq 126 ] && [[ "$err" == *"'/etc': is a directory"* ]]
	ok $? "$mode: a directory: 126 ($err)"

	capture as_mode $mode "$SBX" run -q -- "$WD/badinterp"
	[ "$rc" -eq 127 ] && [[ "$err" == *"its interpreter '/no/such/interpreter' is not in the jail"* ]]
	ok $? "$mode: a script whose interpreter is missing: 127, names it ($err)"

	capture as_mode $mode env PATH="$INST/bin:/usr/bin:/bin" "$SBX" run -q -- tool
	[ "$rc" -eq 127 ] && [ "$(lines "$err")" -eq 1 ] &&
		[[ "$err" == *"'$INST/bin/tool' is on the host, but /tmp is a private tmpfs in the jail (profile default); --ro-bind $INST shows it"* ]]
	ok $? "$mode: hidden by the private /tmp: says so and names the option ($rc: $err)"
	capture as_mode $mode env PATH="$INST/bin:/usr/bin:/bin" "$SBX" run -q --ro-bind "$INST" -- tool
	[ "$rc" -eq 0 ] && [ "$out" = tool-ran ]
	ok $? "$mode: the option the hint names does show it ($rc, $out, $err)"

	capture as_mode $mode "$SBX" run -q -p "$BASE/mask.ini" --ro-bind "$INST" -- "$INST/bin/tool"
	[ "$rc" -eq 126 ] && [[ "$err" == *"the profile hides it (mask = $INST/bin/tool)"* ]]
	ok $? "$mode: hidden by a mask: says which ($err)"

	JQ=$(command -v jq)
	capture as_mode $mode "$SBX" run -q --rootfs "$IMG" -- "$JQ"
	[ "$rc" -eq 127 ] && [[ "$err" == *"'$JQ' is on the host, but the jail's root is the image $IMG; --ro-bind ${JQ%/*} shows it"* ]]
	ok $? "$mode: not in the image: says so ($err)"

	# Never started: not a failure to keep under persist = on-failure.
	capture as_mode $mode "$SBX" run -- no-such-cmd-xyz
	[ "$rc" -eq 127 ] && [[ "$err" == *"removed sandbox"*"never started"* ]] &&
		[[ "$err" != *"kept sandbox"* ]]
	ok $? "$mode: on-failure does not keep a command that never started"
	capture as_mode $mode "$SBX" ps -a --json
	[ "$(jq length <<<"$out")" = 0 ]
	ok $? "$mode: nothing left in ps -a ($out)"

	# The record carries the reason.
	capture as_mode $mode "$SBX" run -q --keep --name "nf-$mode" -- no-such-cmd-xyz
	capture as_mode $mode "$SBX" inspect --json "nf-$mode"
	[ "$(jq -r .exit.reason <<<"$out")" = not-found ] &&
		[[ "$(jq -r .exit.exec_error <<<"$out")" == "'no-such-cmd-xyz': not found on the jail's PATH"* ]]
	ok $? "$mode: the record says not-found and why"
	capture as_mode $mode "$SBX" inspect "nf-$mode"
	[[ "$out" == *"not found on the jail's PATH"* ]]
	ok $? "$mode: inspect shows why it never started"
	as_mode $mode "$SBX" destroy "nf-$mode" >/dev/null 2>&1
done

done_testing
