#!/bin/bash
# tests/integration/net_secrets.sh - [secrets] through `sbx run`: present
# inside as specified (env var, /run/secrets/NAME 0400 owned by the jail
# user), absent from every file under the state directory, redacted in
# output.log, and a missing source is exit 125 naming the secret, not a value.
. "$(dirname "$0")/../lib/tap.sh"
export SBX_STATE_DIR=$TAP_TMP/state SBX_CACHE_DIR=$TAP_TMP/cache

tok="tok-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
key="key-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
printf '%s\n' "$key" >"$TAP_TMP/key"
chmod 0600 "$TAP_TMP/key"
cat >"$TAP_TMP/p.ini" <<EOF
[sandbox]
persist = always
[secrets]
TOKEN = env:SBX_T_TOKEN
KEYF = file:$TAP_TMP/key as file
OPT = env:SBX_T_UNSET?
EOF
unset SBX_T_UNSET
"$TAP_ROOT/tests/lib/mkrootfs.sh" "$TAP_TMP/rootfs.tar.gz" >/dev/null 2>&1
ok $? "busybox rootfs fixture built"

inside='echo "token=$TOKEN"; echo "key=$(cat /run/secrets/KEYF)";
stat -c "mode=%a uid=%u" /run/secrets/KEYF; echo "me=$(id -u)"; echo "opt=${OPT-unset}";
cat /run/secrets/KEYF >/dev/null && echo "again $TOKEN"'
capture env SBX_T_TOKEN="$tok" "$SBX" run -q -p "$TAP_TMP/p.ini" --rootfs "$TAP_TMP/rootfs.tar.gz" \
	-w / -- sh -c "$inside"
[ "$rc" = 0 ] || diag "rc=$rc err=$err"
line() { sed -n "$1p" <<<"$out"; }
[ "$(line 1)" = "token=$tok" ]
ok $? "an env secret is in the command's environment"
[ "$(line 2)" = "key=$key" ]
ok $? "a file secret is in /run/secrets/KEYF (trailing newline removed)"
me=$(line 4)
[ "$(line 3)" = "mode=400 uid=${me#me=}" ]
ok $? "/run/secrets/KEYF is mode 0400 and owned by the jail user ($(line 3), $me)"
[ "$(line 5)" = "opt=unset" ]
ok $? "an optional secret whose source is missing is skipped"

dir=$(ls -d "$SBX_STATE_DIR"/sandboxes/*/ 2>/dev/null | head -1)
[ -n "$dir" ] && [ -f "$dir/output.log" ] &&
	grep -qx 'token=\[secret TOKEN\]' "$dir/output.log" &&
	grep -qx 'key=\[secret KEYF\]' "$dir/output.log" &&
	grep -qx 'again \[secret TOKEN\]' "$dir/output.log"
ok $? "output.log has [secret NAME] in place of each value"
# Not the layers' ext4 images (as root: a sparse file the size of the disk
# cap, minutes of holes to read), which hold only what the jail wrote: it
# wrote no value.  Export below reads what is in them.
! grep -rqsaF --exclude=disk.img --exclude-dir=disk-templates -e "$tok" -e "$key" "$SBX_STATE_DIR"
ok $? "no value in any file under the state directory"
[ -n "$dir" ] && [ "$(jq -c '[.policy.secrets[] | {name, source, inject}]' "$dir/record.json")" = \
	'[{"name":"TOKEN","source":"env","inject":"env"},{"name":"KEYF","source":"file","inject":"file"},{"name":"OPT","source":"env","inject":"env"}]' ]
ok $? "the record names each secret, its source and injection"
capture "$SBX" inspect "$(basename "$dir")"
[ "$rc" = 0 ] && ! grep -qF -e "$tok" -e "$key" <<<"$out$err" && grep -q TOKEN <<<"$out"
ok $? "inspect names the secrets and shows no value"
capture "$SBX" inspect --html "$TAP_TMP/report.html" "$(basename "$dir")"
[ "$rc" = 0 ] && [ -s "$TAP_TMP/report.html" ] && grep -q TOKEN "$TAP_TMP/report.html" &&
	! grep -qF -e "$tok" -e "$key" "$TAP_TMP/report.html"
ok $? "the HTML report names the secrets and shows no value"
capture "$SBX" export "$(basename "$dir")" -o "$TAP_TMP/export.tar"
[ "$rc" = 0 ] && [ -s "$TAP_TMP/export.tar" ] && ! grep -qaF -e "$tok" -e "$key" "$TAP_TMP/export.tar"
ok $? "export holds no value"

# The human run log (stderr) and --log-json name the secrets, never values.
capture env SBX_T_TOKEN="$tok" "$SBX" run --rm -p "$TAP_TMP/p.ini" --rootfs "$TAP_TMP/rootfs.tar.gz" \
	--log-json "$TAP_TMP/run.jsonl" -w / -- sh -c 'echo "$TOKEN"'
[ "$rc" = 0 ] && [ "$out" = "$tok" ] && grep -q TOKEN <<<"$err" && ! grep -qF "$tok" <<<"$err" &&
	[ -s "$TAP_TMP/run.jsonl" ] && ! grep -qF -e "$tok" -e "$key" "$TAP_TMP/run.jsonl"
ok $? "the run log on stderr and --log-json name the secrets without values"
grep -qx 'sbx: secrets: TOKEN (env var), KEYF (file /run/secrets/); absent (optional): OPT' <<<"$err"
ok $? "the secrets line names what went in and the optional one that was absent ($(grep 'secrets:' <<<"$err"))"
jq -s -e 'map(select(.event == "policy"))[0].secrets | map({(.name): .present}) | add == {"TOKEN": true, "KEYF": true, "OPT": false}' \
	"$TAP_TMP/run.jsonl" >/dev/null
ok $? "the policy event says which secrets were present ($(grep policy "$TAP_TMP/run.jsonl" | jq -c .secrets))"

# Owned by the jail user when that is not root.
capture env SBX_T_TOKEN="$tok" "$SBX" run -q --rm -p "$TAP_TMP/p.ini" --rootfs "$TAP_TMP/rootfs.tar.gz" \
	-u 1000:1000 -w / -- sh -c 'stat -c "%a %u %g" /run/secrets/KEYF; cat /run/secrets/KEYF'
[ "$rc" = 0 ] && [ "$out" = "$(printf '400 1000 1000\n%s' "$key")" ]
ok $? "with --user 1000:1000 the file is 0400 1000:1000 and readable by it"
[ "$rc" = 0 ] || diag "rc=$rc out=$out err=$err"

# An image that brings its own /run/secrets (a file of the secret's name,
# and another): the jail's /run/secrets is sbx's own fresh tmpfs, so the
# secret is what sbx wrote, and nothing of the image's is there.
printf 'planted-by-the-image\n' >"$TAP_TMP/planted"
"$TAP_ROOT/tests/lib/mkrootfs.sh" "$TAP_TMP/planted.tar.gz" "$TAP_TMP/planted:/run/secrets/KEYF" \
	"$TAP_TMP/planted:/run/secrets/OTHER" >/dev/null 2>&1
capture env SBX_T_TOKEN="$tok" "$SBX" run -q --rm -p "$TAP_TMP/p.ini" \
	--rootfs "$TAP_TMP/planted.tar.gz" -w / -- sh -c 'cat /run/secrets/KEYF; echo; ls /run/secrets'
[ "$rc" = 0 ] && [ "$out" = "$(printf '%s\nKEYF' "$key")" ]
ok $? "an image's own /run/secrets/KEYF and OTHER are not there: the secret is sbx's file"
[ "$rc" = 0 ] || diag "rc=$rc out=$out err=$err"

# The host's root (read-only) as rootfs gets /run/secrets too.
"$SBX" destroy --stale >/dev/null # waits for the purgers at work there
rm -rf "$SBX_STATE_DIR"
capture env SBX_T_TOKEN="$tok" "$SBX" run -q --rm -p "$TAP_TMP/p.ini" -w / -- \
	sh -c 'cat /run/secrets/KEYF; echo " $TOKEN"'
[ "$rc" = 0 ] && [ "$out" = "$key $tok" ]
ok $? "with the host's root as rootfs: /run/secrets/KEYF and \$TOKEN are there"
[ "$rc" = 0 ] || diag "rc=$rc err=$err"

# A file whose path has blanks (~/My Keys/token, a home with a space):
# the path is the source's, up to the words at the end
mkdir -p "$TAP_TMP/My  Keys" && printf '%s\n' "$key" >"$TAP_TMP/My  Keys/t" && chmod 0600 "$TAP_TMP/My  Keys/t"
printf '[secrets]\nSP = file:%s/My  Keys/t as file\nSE = file:%s/My  Keys/t\n' "$TAP_TMP" "$TAP_TMP" >"$TAP_TMP/sp.ini"
capture "$SBX" run -q --rm -p "$TAP_TMP/sp.ini" -w / -- sh -c 'cat /run/secrets/SP; echo " $SE"'
[ "$rc" = 0 ] && [ "$out" = "$key $key" ]
ok $? "a file secret whose path has blanks is read whole, as file and as env ($rc: $out $err)"

# A missing source: exit 125 before the jail starts, naming the secret.
capture env -u SBX_T_TOKEN "$SBX" run -q -p "$TAP_TMP/p.ini" -- true
[ "$rc" = 125 ] && grep -q "TOKEN" <<<"$err" && grep -q "SBX_T_TOKEN" <<<"$err"
ok $? "a missing env source is exit 125 naming the secret and its variable ($err)"
mv "$TAP_TMP/key" "$TAP_TMP/key.gone"
capture env SBX_T_TOKEN="$tok" "$SBX" run -q -p "$TAP_TMP/p.ini" -- true
[ "$rc" = 125 ] && grep -q "KEYF" <<<"$err" && ! grep -qF "$tok" <<<"$err"
ok $? "a missing file source is exit 125 naming the secret ($err)"
printf 'abc' >"$TAP_TMP/key"
capture env SBX_T_TOKEN="$tok" "$SBX" run -q -p "$TAP_TMP/p.ini" -- true
[ "$rc" = 125 ] && grep -q "KEYF" <<<"$err" && ! grep -q "abc" <<<"$err"
ok $? "a value too short to redact is exit 125, without the value ($err)"
done_testing
