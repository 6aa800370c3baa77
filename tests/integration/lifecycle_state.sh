#!/bin/bash
# tests/integration/lifecycle_state.sh - ps, inspect, export and destroy on
# hand-built sandboxes (record.json + a hostile writable layer), so they are
# tested without `sbx run`: states, prefixes and names, error paths, odd
# names, planted symlinks, fifos, deep trees.  As root and as nobody.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"

if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP needs root (runs the unprivileged half through setpriv)"
	exit 77
fi

sbx_base

as_mode() { sbx_as_mode "$@"; }

# mk_fixture MODE: builds the sandboxes below in the state dir of MODE.
#   aaaaaaaaaaa1  "web", exited 3, changes: A C D (both whiteout forms), opaque,
#                 symlink x -> $VICTIM, fifo, odd names, 300-deep tree
#   aaaaaaaaaab2  running per its record, lock free: lost
#   bbbbbbbbbbb3  killed by SIGKILL, no writable layer
#   cccccccccccc  no record at all (a leftover)
mk_fixture() {
	local mode=$1 S L U
	S=$BASE/state-$mode
	L=$BASE/lower-$mode
	rm -rf "$S" "$L"
	mkdir -p "$S/sandboxes" "$L/etc" "$L/old/sub" "$L/usr/lib"
	echo root > "$L/etc/passwd"; echo 127.0.0.1 > "$L/etc/hosts"; echo g > "$L/etc/group"
	echo old > "$L/old/sub/f"
	U=$S/sandboxes/aaaaaaaaaaa1/upper
	mkdir -p "$U/etc" "$U/old" "$U/new"
	echo changed > "$U/etc/passwd"
	echo added > "$U/etc/added"
	echo n > "$U/old/newf"
	ln -s "$VICTIM" "$U/x"
	ln -s /etc "$U/hostetc"
	mkfifo "$U/fifo"
	printf 'nl' > "$U/new/with
newline"
	printf 'bad' > "$U/new/bad$(printf '\377')name"
	printf 'esc' > "$U/new/$(printf '\033')[31mred"
	(cd "$U" && d=deep; mkdir -p deep && for i in $(seq 300); do d=$d/d; done && mkdir -p "$d" && echo bottom > "$d/f")
	mkdir -p "$U/locked/inner" && echo x > "$U/locked/inner/f" && chmod 0 "$U/locked/inner" && chmod 0500 "$U/locked"
	if [ "$mode" = root ]; then
		mknod "$U/etc/hosts" c 0 0
		python3 -c 'import os,sys; os.setxattr(sys.argv[1], "trusted.overlay.opaque", b"y")' "$U/old"
		: > "$U/etc/group"
		python3 -c 'import os,sys; os.setxattr(sys.argv[1], "trusted.overlay.whiteout", b"")' "$U/etc/group"
	else
		: > "$U/etc/hosts"
		python3 -c 'import os,sys; os.setxattr(sys.argv[1], "user.overlay.whiteout", b"")' "$U/etc/hosts"
		python3 -c 'import os,sys; os.setxattr(sys.argv[1], "user.overlay.opaque", b"y")' "$U/old"
		: > "$U/etc/group"
		python3 -c 'import os,sys; os.setxattr(sys.argv[1], "user.overlay.whiteout", b"")' "$U/etc/group"
	fi
	cat > "$S/sandboxes/aaaaaaaaaaa1/record.json" <<JSON
{"version":1,"id":"aaaaaaaaaaa1","name":"web","state":"exited","created":"2026-01-01T00:00:00.000Z",
 "ended":"2026-01-01T00:00:01.000Z","command":["sh","-c","echo hi; exit 3"],"workdir":"/work",
 "profile":{"name":"default","sources":["builtin:default"],"ini":"[sandbox]\npersist = on-failure\n"},
 "rootfs":{"spec":"/x/busybox.tar.gz","dir":"$L","sha256":null,"cached":true},
 "policy":{"user":{"uid":0,"gid":0,"host_uid":100000,"host_gid":100000,"root_inside":true,"root_on_host":false},
  "network":{"mode":"proxy","allow":["example.com:443"],"proxy":"127.0.0.1:3128"},
  "secrets":[{"name":"API_KEY","source":"env","inject":"env"}],
  "filesystem":{"writable_layer":"private","upper":"upper","shared":[]},"persist":"on-failure",
  "limits":{"memory":{"value":536870912,"enforced":"cgroup1"}},"seccomp":"default","capabilities":[],"no_new_privs":true},
 "timings_ms":{"image":1.5,"namespaces":0.5,"mounts":2.5,"seccomp":0.25,"exec":0.5,"total":5.25},
 "exit":{"status":3,"reason":"exited","code":3,"signal":null,"error":null},
 "resources":{"wall_ms":12.0,"cpu_ms":3.0,"mem_peak":1048576,"pids_peak":2,"output_bytes":11,"output_truncated":false},
 "kept":true,"keep_reason":"--keep",
 "network_events":[{"host":"example.com","port":443,"address":"93.184.216.34","allowed":true,"reason":"allowlist","bytes_up":1,"bytes_down":2},
                   {"host":"evil.test<script>alert(1)</script>","port":443,"address":null,"allowed":false,"reason":"not allowed"}],
 "seccomp_events":[]}
JSON
	printf 'hi\n\033[2Jbye\n' > "$S/sandboxes/aaaaaaaaaaa1/output.log"
	echo '{"ts":"2026-01-01T00:00:00.100Z","event":"start","id":"aaaaaaaaaaa1"}' > "$S/sandboxes/aaaaaaaaaaa1/log.jsonl"
	mkdir -p "$S/sandboxes/aaaaaaaaaab2"
	echo '{"version":1,"id":"aaaaaaaaaab2","state":"running","created":"2026-01-01T00:00:00.000Z","command":["sleep","1000"],"profile":{"name":"ci"}}' > "$S/sandboxes/aaaaaaaaaab2/record.json"
	mkdir -p "$S/sandboxes/bbbbbbbbbbb3"
	echo '{"version":1,"id":"bbbbbbbbbbb3","state":"exited","created":"2026-01-01T00:00:00.000Z","command":["x"],"exit":{"status":137,"reason":"signaled","signal":9}}' > "$S/sandboxes/bbbbbbbbbbb3/record.json"
	mkdir -p "$S/sandboxes/cccccccccccc/upper"
	chmod 0700 "$S" "$S/sandboxes"
	if [ "$mode" = user ]; then chown -R 65534:65534 "$S" "$L"; fi
}

VICTIM=$BASE/victim
echo "precious" > "$VICTIM"
chmod 0666 "$VICTIM"
mkdir -p "$BASE/victimdir" && echo keep > "$BASE/victimdir/f" && chmod -R 0777 "$BASE/victimdir"
victim_sum() { sha256sum "$VICTIM" "$BASE/victimdir/f" /etc/passwd | sha256sum; }
SUM0=$(victim_sum)

for mode in root user; do
	mk_fixture $mode
	export_dir=$BASE/export-$mode
	mkdir -p "$export_dir" && chmod 0777 "$export_dir"

	# ps: running and lost by default, everything with -a
	capture as_mode $mode "$SBX" ps
	[ $rc -eq 0 ] && printf '%s\n' "$out" | grep -q '^aaaaaaaaaab2 .* lost ' &&
		! printf '%s\n' "$out" | grep -q aaaaaaaaaaa1
	ok $? "$mode: ps lists the lost sandbox, not the exited one"
	capture as_mode $mode "$SBX" ps -a
	printf '%s\n' "$out" | grep -q '^aaaaaaaaaaa1  web .*exited 3 ' &&
		printf '%s\n' "$out" | grep -q '^bbbbbbbbbbb3 .*killed (SIGKILL)'
	ok $? "$mode: ps -a shows exited 3 with the name, and killed (SIGKILL)"
	capture as_mode $mode "$SBX" ps -a --json
	printf '%s' "$out" | python3 -c '
import json, sys
a = json.load(sys.stdin)
d = {x["id"]: x for x in a}
assert d["aaaaaaaaaaa1"]["state"] == "exited" and d["aaaaaaaaaaa1"]["exit_code"] == 3
assert d["aaaaaaaaaaa1"]["name"] == "web" and d["aaaaaaaaaaa1"]["command"] == ["sh", "-c", "echo hi; exit 3"]
assert d["aaaaaaaaaab2"]["state"] == "lost"
assert d["bbbbbbbbbbb3"]["state"] == "killed" and d["bbbbbbbbbbb3"]["signal"] == 9
'
	ok $? "$mode: ps -a --json parses and holds states, names, commands"
	# -q: the ids alone, one per line, for scripts (sbx destroy $(sbx ps -q))
	capture as_mode $mode "$SBX" ps -q
	[ $rc -eq 0 ] && [ "$out" = aaaaaaaaaab2 ]
	ok $? "$mode: ps -q prints the ids alone ($rc: $out)"
	capture as_mode $mode "$SBX" ps -a --quiet
	[ $rc -eq 0 ] && [ "$(printf '%s\n' "$out" | sort | tr '\n' ' ')" = "aaaaaaaaaaa1 aaaaaaaaaab2 bbbbbbbbbbb3 cccccccccccc " ]
	ok $? "$mode: ps -a --quiet: every id ($rc: $(printf '%s' "$out" | tr '\n' ' '))"
	capture as_mode $mode "$SBX" ps -q --json
	[ $rc -eq 2 ] && [ -z "$out" ] && [[ "$err" == *"-q"*"--json"* ]]
	ok $? "$mode: ps -q --json: one line, exit 2 ($rc: $err)"

	# lookups: name, unique prefix, ambiguous prefix, unknown
	capture as_mode $mode "$SBX" inspect --json web
	[ $rc -eq 0 ] && printf '%s' "$out" | python3 -c '
import json, sys
r = json.load(sys.stdin)
assert r["exit"]["status"] == 3 and r["command"][0] == "sh" and r["timings_ms"]["mounts"] == 2.5
assert r["derived"]["state"] == "exited"'
	ok $? "$mode: inspect --json by name: exit status, command, timings"
	capture as_mode $mode "$SBX" inspect bbb
	[ $rc -eq 0 ] && printf '%s\n' "$out" | grep -q 'signal  *9 (SIGKILL)'
	ok $? "$mode: inspect by unique prefix"
	capture as_mode $mode "$SBX" inspect aaaa
	[ $rc -eq 1 ] && [[ $err == *"ambiguous"*aaaaaaaaaaa1*aaaaaaaaaab2* ]] && [ -z "$out" ]
	ok $? "$mode: ambiguous prefix: exit 1 and the candidates"
	capture as_mode $mode "$SBX" inspect nosuch
	[ $rc -eq 1 ] && [[ $err == "sbx: no such sandbox 'nosuch'" ]]
	ok $? "$mode: unknown sandbox: exit 1, one clear line"
	capture as_mode $mode "$SBX" inspect
	[ $rc -eq 2 ]
	ok $? "$mode: inspect without a sandbox is a usage error (2)"

	# the human report answers the questions, escaped
	capture as_mode $mode "$SBX" inspect web
	printf '%s\n' "$out" | grep -q 'on the host  *uid 100000 gid 100000 (not root)' &&
		printf '%s\n' "$out" | grep -q 'DENY  *evil.test<script>' &&
		printf '%s\n' "$out" | grep -q '1 allowed, 0 failed, 1 denied' &&
		printf '%s\n' "$out" | grep -q 'API_KEY  *from env, injected as env' &&
		printf '%s\n' "$out" | grep -q 'memory  *512.0 MiB (enforced: cgroup1)' &&
		printf '%s\n' "$out" | grep -q 'mounts  *2.5 ms'
	ok $? "$mode: inspect text: uid on host, connections with a count, secrets, limits, timings"

	# --output is raw; the record's output never goes through the terminal escaping of the report
	capture as_mode $mode "$SBX" inspect --output web
	[ $rc -eq 0 ] && [ "$out" = "$(printf 'hi\n\033[2Jbye')" ]
	ok $? "$mode: inspect --output prints output.log as is"

	# --changes: A/C/D, opaque, symlinks not followed, odd names escaped, no hang on the fifo
	capture as_mode $mode timeout 60 "$SBX" inspect --changes web
	[ $rc -eq 0 ]
	ok $? "$mode: inspect --changes finishes (fifo, mode-000 dir, 300-deep tree)"
	missing=0
	for want in 'C /etc' 'A /etc/added' 'C /etc/passwd' 'D /etc/hosts' 'D /etc/group' 'A /x' \
		'A /hostetc' 'A /fifo' 'A /new/with\nnewline' 'A /new/bad\xffname' 'A /new/\x1b[31mred'; do
		printf '%s\n' "$out" | grep -qxF -- "$want" || { diag "missing: $want"; missing=1; }
	done
	[ $missing = 0 ]
	ok $? "$mode: --changes lists added, changed, deleted (both whiteout forms), escaped odd names"
	printf '%s\n' "$out" | grep -qxF "$(printf 'C /old\t(opaque: old contents hidden)')" &&
		printf '%s\n' "$out" | grep -qxF 'A /old/newf' && ! printf '%s\n' "$out" | grep -q '^. /old/sub'
	ok $? "$mode: --changes marks the opaque dir and does not list the hidden lower entries"
	! printf '%s\n' "$out" | grep -q -e '^. /hostetc/' -e '^. /x/' && [ "$(printf '%s\n' "$out" | grep -c '/deep')" -ge 300 ]
	ok $? "$mode: --changes never follows planted symlinks, walks the deep tree"
	! printf '%s' "$out" | LC_ALL=C grep -q "$(printf '\033')"
	ok $? "$mode: no terminal escape reaches stdout"
	capture as_mode $mode "$SBX" inspect --changes --json web
	printf '%s' "$out" | python3 -c '
import base64, json, sys
a = json.load(sys.stdin)
d = {x["path"]: x for x in a}
assert d["/etc/hosts"]["kind"] == "D" and d["/etc/passwd"]["kind"] == "C" and d["/etc/added"]["kind"] == "A"
assert d["/old"]["opaque"] is True and d["/x"]["type"] == "symlink" and d["/fifo"]["type"] == "fifo"
assert "/new/with\nnewline" in d
bad = [x for x in a if x["path"].startswith("/new/bad")][0]
assert bad["path"] == "/new/bad\ufffdname" and base64.b64decode(bad["path_b64"]) == b"/new/bad\xffname"'
	ok $? "$mode: --changes --json: valid JSON, kinds, opaque, path_b64 for invalid UTF-8"

	# --html: self-contained and escaped
	capture as_mode $mode "$SBX" inspect --html "$export_dir/r.html" web
	H=$export_dir/r.html
	[ $rc -eq 0 ] && [ -s "$H" ] && ! grep -qiE '(src|href)=["'"'"']?(https?:)?//' "$H" &&
		[ "$(grep -o '<script>' "$H" | wc -l)" -eq 1 ] && grep -q 'evil.test&lt;script&gt;' "$H" &&
		grep -q 'with\\nnewline' "$H" && grep -q '/new/bad\\xffname' "$H" && grep -q 'Network events' "$H" &&
		grep -q 'Timeline' "$H" && grep -q 'Changes' "$H" && grep -q 'hi' "$H"
	ok $? "$mode: --html: one file, no external assets, hostile strings escaped, all sections"
	python3 -c 'import html.parser,sys; p=html.parser.HTMLParser(); p.feed(open(sys.argv[1], encoding="utf-8").read())' "$H"
	ok $? "$mode: --html is valid UTF-8 and parses"

	# export round trip
	bad=0
	for ext in tar tar.gz tar.xz tar.zst tar.bz2; do
		capture as_mode $mode timeout 60 "$SBX" export web -o "$export_dir/c.$ext"
		[ $rc -eq 0 ] && [[ $err == *"skipped /fifo (fifo)"* ]] && [ -s "$export_dir/c.$ext" ] ||
			{ diag "$ext: $rc $err"; bad=1; }
	done
	[ $bad = 0 ]
	ok $? "$mode: export writes .tar .tar.gz .tar.xz .tar.zst .tar.bz2, skipping the fifo with a warning"
	capture as_mode $mode timeout 60 "$SBX" export --oci web -o "$export_dir/oci.tar.zst"
	list=$(bsdtar -tf "$export_dir/oci.tar.zst")
	printf '%s\n' "$list" | grep -qx 'etc/.wh.hosts' && printf '%s\n' "$list" | grep -qx 'etc/.wh.group' &&
		printf '%s\n' "$list" | grep -qx 'old/.wh..wh..opq' && ! printf '%s\n' "$list" | grep -qx fifo
	ok $? "$mode: export --oci records deletions as .wh. whiteouts and the opaque dir as .wh..wh..opq"
	list=$(bsdtar -tf "$export_dir/c.tar.zst")
	! grep -q '\.wh\.' <<<"$list" && [ "$(tail -n 1 <<<"$list")" = .sbx-deleted ] &&
		[ "$(bsdtar -xOf "$export_dir/c.tar.zst" .sbx-deleted | tr '\0' '\n' | sort | tr '\n' ' ')" = "etc/group etc/hosts old " ]
	ok $? "$mode: export lists the deletions and the emptied dir in .sbx-deleted, no .wh. entry"
	X=$export_dir/x && mkdir -p "$X" && bsdtar -xf "$export_dir/c.tar.gz" -C "$X"
	[ "$(cat "$X/etc/passwd")" = changed ] && [ "$(cat "$X/etc/added")" = added ] &&
		[ "$(readlink "$X/x")" = "$VICTIM" ] && [ "$(cat "$X/new/with
newline")" = nl ] && [ "$(cat "$X/deep/$(printf 'd/%.0s' $(seq 300))f")" = bottom ]
	ok $? "$mode: export round-trips contents, symlinks (as symlinks), odd names and the deep tree"
	capture as_mode $mode "$SBX" export web -o "$export_dir/c.zip"
	[ $rc -eq 2 ] && [ ! -e "$export_dir/c.zip" ]
	ok $? "$mode: export to an unknown format is a usage error and writes nothing"
	# Caps on the data read and written: past one, nothing is written and
	# the file is named.
	capture as_mode $mode "$SBX" export --max-file 4 web -o "$export_dir/cap.tar"
	[ $rc -eq 1 ] && [ ! -e "$export_dir/cap.tar" ] && [ "$(lines "$err")" -eq 1 ] &&
		[[ $err =~ ^"sbx: '/"[^\']+"' holds "[0-9.]+" B of data, over the per-file cap of 4 B (--max-file SIZE raises it, or 'unlimited'); nothing was exported"$ ]]
	ok $? "$mode: export --max-file: a file over it is named, nothing written ($rc: $err)"
	capture as_mode $mode "$SBX" export --max-total 12 web -o "$export_dir/cap.tar"
	[ $rc -eq 1 ] && [ ! -e "$export_dir/cap.tar" ] && [[ $err == *"over the total cap of 12 B (--max-total SIZE raises it"* ]]
	ok $? "$mode: export --max-total: the file that passes it is named, nothing written ($rc: $err)"
	capture as_mode $mode "$SBX" export --max-file unlimited --max-total 1m web -o "$export_dir/cap.tar"
	[ $rc -eq 0 ] && [ -s "$export_dir/cap.tar" ]
	ok $? "$mode: export within raised caps writes the tarball ($rc: $err)"
	capture as_mode $mode "$SBX" export --max-file lots web -o "$export_dir/cap2.tar"
	[ $rc -eq 2 ] && [ "$err" = "sbx: --max-file 'lots': expected a size (512m, 8G) or unlimited" ]
	ok $? "$mode: a bad --max-file is a usage error ($rc: $err)"
	capture as_mode $mode "$SBX" export nosuch -o "$export_dir/n.tar"
	[ $rc -eq 1 ] && [ ! -e "$export_dir/n.tar" ]
	ok $? "$mode: export of an unknown sandbox fails"

	# destroy: stale first (lost + leftovers), then the rest; idempotent; hostile tree
	capture as_mode $mode "$SBX" destroy --stale
	[ $rc -eq 0 ] && [[ $out == *"removed aaaaaaaaaab2 (lost)"* ]] && [[ $out == *"removed cccccccccccc (unknown)"* ]] &&
		[ -d "$BASE/state-$mode/sandboxes/aaaaaaaaaaa1" ] && [ -d "$BASE/state-$mode/sandboxes/bbbbbbbbbbb3" ]
	ok $? "$mode: destroy --stale removes the lost sandbox and the leftover only"
	capture as_mode $mode timeout 60 "$SBX" destroy web
	[ $rc -eq 0 ] && [ "$out" = "removed aaaaaaaaaaa1 (web) (exited 3)" ] && [ ! -e "$BASE/state-$mode/sandboxes/aaaaaaaaaaa1" ]
	ok $? "$mode: destroy by name removes the hostile tree (mode-000 dirs, fifo, deep) and says so"
	[ "$(victim_sum)" = "$SUM0" ] && [ -f "$BASE/victimdir/f" ]
	ok $? "$mode: files the planted symlinks point at are untouched"
	capture as_mode $mode "$SBX" destroy aaaaaaaaaaa1
	[ $rc -eq 0 ] && [ "$out" = "aaaaaaaaaaa1: already gone" ]
	ok $? "$mode: destroy of an id already gone succeeds (idempotent)"
	capture as_mode $mode "$SBX" destroy nosuch
	[ $rc -eq 0 ] && [ "$out" = "nosuch: no such sandbox, nothing to destroy" ]
	ok $? "$mode: destroy of an unknown name is idempotent too, and says so ($rc: $out)"
	capture as_mode $mode "$SBX" destroy
	[ $rc -eq 2 ]
	ok $? "$mode: destroy with nothing to destroy is a usage error"
	capture as_mode $mode "$SBX" destroy --all
	[ $rc -eq 0 ] && [ -z "$(ls -A "$BASE/state-$mode/sandboxes")" ]
	ok $? "$mode: destroy --all leaves no sandbox"
	capture as_mode $mode "$SBX" destroy --all
	[ $rc -eq 0 ] && [ "$out" = "nothing to remove" ]
	ok $? "$mode: destroy --all again: nothing to remove"
done

done_testing
