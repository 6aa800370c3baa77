#!/bin/bash
# tests/integration/review_apply.sh - sbx diff and sbx apply play the agent
# loop, as root and as nobody: in a git repository as the working
# directory, a kept run edits two text files (one without a trailing
# newline), adds a binary file and one with a space in its name, deletes
# one, makes one executable, replaces one with a symlink and writes
# .git/hooks/pre-commit.  `sbx diff --binary` piped to git apply in a clean
# copy gives byte for byte the tree `sbx apply` writes (and the text part
# through patch -p1 the same files); the hook is flagged and applied only
# with --git-dir; a host edit after the run is a conflict that writes
# nothing; what a hostile upper plants (device node, fifo, socket, hard
# link, symlinks pointing out, a set-user-ID bit) is refused or dropped by
# name; a second apply is refused; as root, what apply writes in a user's
# project is that user's.
# sbx-test-timeout: 300
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"
sbx_modes
sbx_base
command -v git >/dev/null && command -v patch >/dev/null || {
	echo "1..0 # SKIP git and patch are needed (apt-get install git patch)"
	exit 77
}

owner_uid() { [ "$1" = root ] && echo 0 || echo "$UID_U"; }

# A project as its owner would have it: a git repository with five files.
make_repo() { # DIR UID
	mkdir -p "$1" && (
		cd "$1" && git init -q . && printf 'one\ntwo\n' >a.txt &&
			printf 'no newline' >b.txt && echo del >gone.txt && echo 'echo run' >run.sh &&
			echo target >s.txt && git add -A &&
			git -c user.email=t@t -c user.name=t commit -qm init
	) && chown -R "$2:$2" "$1" && chmod 0755 "$1" &&
		sleep 0.1 # a change in the last 20 ms before a run reads as a conflict
}

agent='printf "one\nTWO\n" > a.txt; printf "no newline, edited" > b.txt;
printf "\0\1\2binary\0\377" > bin.dat; echo sp > "with space.txt"; rm gone.txt;
chmod +x run.sh; rm s.txt; ln -s a.txt s.txt; mkdir -p newdir/deep; echo n > newdir/deep/f;
echo "alias ls=evil" >> "$HOME/.bashrc"; mkdir -p .github/workflows .vscode .claude;
echo "on: push" > .github/workflows/ci.yml; echo "{}" > .vscode/tasks.json;
echo "{}" > .claude/settings.json; echo "job: x" > .gitlab-ci.yml;
printf "#!/bin/sh\necho hook\n" > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit'

# Usage errors are exit 2.
capture "$SBX" apply
[ "$rc" = 2 ] && grep -q "which sandbox" <<<"$err"
ok $? "apply without a sandbox is a usage error, exit 2 ($err)"
capture "$SBX" diff --stat --json x
[ "$rc" = 2 ]
ok $? "diff --stat --json is a usage error, exit 2"

for mode in $MODES; do
	u=$(owner_uid "$mode")
	R=$BASE/$mode/repo
	mkdir -p "$BASE/$mode" && chmod 0777 "$BASE/$mode"
	make_repo "$R" "$u"
	cp -a "$R" "$BASE/$mode/clean" && rm -rf "$BASE/$mode/clean/.git"
	cp -a "$BASE/$mode/clean" "$BASE/$mode/plain"
	capture sbx_as_mode_in "$R" "$mode" "$SBX" run -q --keep --name "ag-$mode" -- sh -ec "$agent"
	[ "$rc" = 0 ]
	ok $? "$mode: the agent ran in a kept sandbox (rc $rc)"
	[ "$rc" = 0 ] || diag "$err"
	[ "$(cat "$R/a.txt")" = "$(printf 'one\ntwo')" ] && [ -f "$R/gone.txt" ]
	ok $? "$mode: the host's project is unchanged after the run"

	capture sbx_as_mode_in "$R" "$mode" "$SBX" diff --name-only "ag-$mode" .
	[ "$rc" = 0 ] && [ "$out" = "$(printf '.claude/settings.json\n.github/workflows/ci.yml\n.gitlab-ci.yml\n.vscode/tasks.json\na.txt\nb.txt\nbin.dat\ngone.txt\nnewdir/deep/f\nrun.sh\ns.txt\ns.txt\nwith space.txt')" ]
	ok $? "$mode: diff --name-only lists the changed files, relative to the project"
	[ "$rc" = 0 ] || diag "rc=$rc $err"
	grep -q '\.git/hooks/pre-commit: runs code on the host later (git-hook, executable): under .git/, not in the patch' <<<"$err" &&
		grep -q 'run.sh: runs code on the host later (executable)' <<<"$err"
	ok $? "$mode: diff flags the git hook (not in the patch) and the new executable bit"
	capture sbx_as_mode_in "$R" "$mode" "$SBX" diff "ag-$mode" .
	grep -qx 'diff --git a/with space.txt b/with space.txt' <<<"$out" &&
		grep -qx 'old mode 100644' <<<"$out" && grep -qx 'new mode 100755' <<<"$out" &&
		grep -qx 'new file mode 120000' <<<"$out" && grep -qx 'deleted file mode 100644' <<<"$out" &&
		grep -qx 'Binary files /dev/null and b/bin.dat differ' <<<"$out" &&
		grep -qx '\\ No newline at end of file' <<<"$out" && ! grep -q 'pre-commit' <<<"$out"
	ok $? "$mode: the patch has git's headers: modes, symlink, deletion, binary, no newline"
	capture sbx_as_mode_in "$R" "$mode" "$SBX" diff --json "ag-$mode" .
	jq -e 'map(select(.path == ".git/hooks/pre-commit"))[0].flags == ["git-hook","executable"] and
		(map(select(.path == "run.sh"))[0] | .kind == "M" and .mode == "100755") and
		(map(select(.path == "gone.txt"))[0].kind == "D")' <<<"$out" >/dev/null
	ok $? "$mode: diff --json has kinds, modes and flags"
	jq -e '(map(select(.path == ".github/workflows/ci.yml"))[0].flags == ["ci"]) and
		(map(select(.path == ".gitlab-ci.yml"))[0].flags == ["ci"]) and
		(map(select(.path == ".vscode/tasks.json"))[0].flags == ["editor"]) and
		(map(select(.path == ".claude/settings.json"))[0].flags == ["agent-settings"])' <<<"$out" >/dev/null
	ok $? "$mode: CI definitions, editor and agent settings are flagged"

	capture sbx_as_mode_in "$R" "$mode" "$SBX" diff --json "ag-$mode"
	jq -e 'map(select(.path | endswith(".bashrc")))[0].flags == ["shell-startup"]' <<<"$out" >/dev/null
	ok $? "$mode: a changed ~/.bashrc is flagged as a shell start-up file"
	if command -v script >/dev/null; then
		c=$(cd "$R" && sbx_as_mode "$mode" script -qec "$SBX diff ag-$mode ." /dev/null 2>&1)
		n=$(cd "$R" && sbx_as_mode "$mode" env NO_COLOR=1 script -qec "$SBX diff ag-$mode ." /dev/null 2>&1)
		p=$(cd "$R" && sbx_as_mode "$mode" "$SBX" diff "ag-$mode" . 2>/dev/null)
		grep -q $'\033\[32m+TWO' <<<"$c" && ! grep -q $'\033\[' <<<"$n" && ! grep -q $'\033\[' <<<"$p"
		ok $? "$mode: colour on a terminal only, never with NO_COLOR or into a pipe"
	else
		skip "$mode: colour on a terminal only" "no script(1)"
	fi

	# A clean copy takes the patch: git apply (binary too), patch -p1 (text).
	sbx_as_mode_in "$R" "$mode" "$SBX" diff --binary "ag-$mode" . >"$BASE/$mode/p.diff" 2>/dev/null
	(cd "$BASE/$mode/clean" && git apply "$BASE/$mode/p.diff")
	ok $? "$mode: git apply takes sbx diff --binary"
	sbx_as_mode_in "$R" "$mode" "$SBX" diff --relative "ag-$mode" a.txt b.txt "with space.txt" \
		>"$BASE/$mode/text.diff" 2>/dev/null
	(cd "$BASE/$mode/plain" && patch -s -p1 <"$BASE/$mode/text.diff")
	ok $? "$mode: patch -p1 takes the text part (diff --relative of three files)"

	# The patch and the apply give the same tree, byte for byte.
	capture sbx_as_mode_in "$R" "$mode" "$SBX" apply "ag-$mode" .
	[ "$rc" = 0 ] && [ -x "$R/run.sh" ] && [ -L "$R/s.txt" ] && [ ! -e "$R/gone.txt" ] &&
		[ "$(cat "$R/newdir/deep/f")" = n ] && [ ! -e "$R/.git/hooks/pre-commit" ] &&
		grep -q '.git/hooks/pre-commit: runs code on the host later (git-hook, executable): under .git/, not applied' <<<"$err"
	ok $? "$mode: apply writes the change set; the git hook is left out (rc $rc)"
	[ "$rc" = 0 ] || diag "$err"
	diff -r --exclude=.git "$R" "$BASE/$mode/clean" >/dev/null &&
		cmp -s "$R/a.txt" "$BASE/$mode/plain/a.txt" && cmp -s "$R/b.txt" "$BASE/$mode/plain/b.txt" &&
		cmp -s "$R/with space.txt" "$BASE/$mode/plain/with space.txt"
	ok $? "$mode: sbx apply's tree is git apply's, byte for byte (and patch -p1's text)"
	diff -r --exclude=.git "$R" "$BASE/$mode/clean" >/dev/null 2>&1 ||
		diag "$(diff -r --exclude=.git "$R" "$BASE/$mode/clean" 2>&1 | head -5)"

	# A host edit after the run: a conflict, nothing written.
	C=$BASE/$mode/conflict
	make_repo "$C" "$u"
	capture sbx_as_mode_in "$C" "$mode" "$SBX" run -q --keep --name "cf-$mode" -- sh -ec "$agent"
	echo 'host edit' >>"$C/b.txt"
	capture sbx_as_mode_in "$C" "$mode" "$SBX" apply "cf-$mode" .
	[ "$rc" = 1 ] && grep -q "conflict: 'b.txt' changed on the host after the sandbox started" <<<"$err" &&
		[ "$(cat "$C/a.txt")" = "$(printf 'one\ntwo')" ] && [ -f "$C/gone.txt" ] && [ ! -e "$C/bin.dat" ]
	ok $? "$mode: a host edit after the run is a conflict that writes nothing (rc $rc)"
	capture sbx_as_mode_in "$C" "$mode" "$SBX" apply --dry-run --force "cf-$mode" .
	[ "$rc" = 0 ] && grep -qx 'A with space.txt' <<<"$out" && grep -qx 'M b.txt' <<<"$out" &&
		[ ! -e "$C/bin.dat" ] && grep -q 'host edit' "$C/b.txt" &&
		grep -q 'dry run: nothing written' <<<"$err"
	ok $? "$mode: apply --dry-run says what it would do and writes nothing"
	[ "$rc" = 0 ] || diag "rc=$rc out=$out err=$err"
	capture sbx_as_mode_in "$C" "$mode" "$SBX" apply --force "cf-$mode" .
	[ "$rc" = 0 ] && [ -e "$C/bin.dat" ] && [ "$(cat "$C/b.txt")" = 'no newline, edited' ]
	ok $? "$mode: apply --force writes the conflicting file too, the sandbox's version (rc $rc)"
	sbx_as_mode "$mode" "$SBX" destroy "cf-$mode" >/dev/null 2>&1

	# A project made just before the run (a script: git clone && sbx run):
	# the files the run added are no conflict; a file it changed that the
	# host then deleted is one.
	F=$BASE/$mode/fresh
	mkdir -p "$F/sub" && echo a >"$F/a" && echo k >"$F/sub/keep" && chown -R "$u:$u" "$F" && chmod 0755 "$F"
	capture sbx_as_mode_in "$F" "$mode" "$SBX" run -q --keep --name "fr-$mode" -- \
		sh -c 'echo n >new && echo s >sub/new2 && echo edited >>sub/keep'
	rm "$F/sub/keep"
	capture sbx_as_mode_in "$F" "$mode" "$SBX" apply "fr-$mode" .
	[ "$rc" = 1 ] && grep -q "conflict: 'sub/keep' changed on the host after the sandbox started" <<<"$err" &&
		! grep -q "conflict: 'new'" <<<"$err" && ! grep -q "conflict: 'sub/new2'" <<<"$err"
	ok $? "$mode: in a project made just before the run, only the file the host deleted is a conflict ($rc: $err)"
	echo k >"$F/sub/keep" && chown "$u:$u" "$F/sub/keep"
	capture sbx_as_mode_in "$F" "$mode" "$SBX" apply --force "fr-$mode" .
	[ "$rc" = 0 ] && [ "$(cat "$F/new")" = n ] && [ "$(cat "$F/sub/new2")" = s ]
	ok $? "$mode: and what it added applies ($rc: $err)"
	sbx_as_mode "$mode" "$SBX" destroy "fr-$mode" >/dev/null 2>&1
	[ "$(stat -c %u "$R/bin.dat")" = "$u" ] && [ "$(stat -c %u "$R/newdir/deep")" = "$u" ] &&
		[ "$(stat -c %a "$R/run.sh")" = 755 ]
	ok $? "$mode: what apply wrote is the project owner's (uid $u)"
	capture sbx_as_mode "$mode" "$SBX" inspect --json "ag-$mode"
	jq -e '.applied.at and (.applied.paths | index("bin.dat"))' <<<"$out" >/dev/null
	ok $? "$mode: the record says when and what was applied"
	capture sbx_as_mode_in "$R" "$mode" "$SBX" apply "ag-$mode" .
	[ "$rc" = 1 ] && grep -q 'was applied already' <<<"$err"
	ok $? "$mode: a second apply is refused"
	capture sbx_as_mode_in "$R" "$mode" "$SBX" apply --force --git-dir "ag-$mode" .
	[ -x "$R/.git/hooks/pre-commit" ]
	ok $? "$mode: --git-dir applies the hook (rc $rc)"
	sbx_as_mode "$mode" "$SBX" destroy "ag-$mode" >/dev/null 2>&1

	# A hostile upper: what it plants is refused by name.
	H=$BASE/$mode/hostile
	make_repo "$H" "$u"
	ln -s / "$H/escape" && chown -h "$u:$u" "$H/escape"
	# the layer on the state filesystem, where a device node can be planted below
	printf '[sandbox]\nextends = default\n[limits]\ndisk = unlimited\n' >"$BASE/unlimited.ini"
	chmod 0644 "$BASE/unlimited.ini"
	capture sbx_as_mode_in "$H" "$mode" "$SBX" run -q --keep --name "bad-$mode" \
		-p "$BASE/unlimited.ini" -- sh -c '
		mkfifo fifo; python3 -c "import socket; socket.socket(socket.AF_UNIX).bind(\"sock\")";
		echo x > a.txt; ln a.txt hard; ln -s /etc/passwd abs; ln -s ../../../etc pass;
		ln -s a.txt ok-link; echo s > suid; chmod 4755 suid; echo e > escape/../ok.txt 2>/dev/null;
		true'
	[ "$rc" = 0 ]
	ok $? "$mode: a run plants a fifo, a socket, a hard link, symlinks out, a set-user-ID file"
	# A layer kept from memory (nobody's [limits] disk) was copied out
	# file by file: a hard link is two files there already.
	inmem=$(sbx_as_mode "$mode" "$SBX" inspect --json "bad-$mode" | jq -r .policy.filesystem.layers_in_memory)
	sd=$BASE/state-$mode/sandboxes/$(sbx_as_mode "$mode" "$SBX" ps -a --json | jq -r ".[] | select(.name == \"bad-$mode\") | .id")
	capture sbx_as_mode_in "$H" "$mode" "$SBX" apply "bad-$mode" .
	[ "$rc" = 1 ] && grep -q "refused: 'fifo': a fifo" <<<"$err" &&
		grep -q "refused: 'sock': a socket" <<<"$err" &&
		{ grep -q "refused: 'a.txt': a hard link" <<<"$err" || [ "$inmem" = true ]; } &&
		grep -q "refused: 'abs': a symlink to an absolute path" <<<"$err" &&
		grep -q "refused: 'pass': a symlink that points out of the directory" <<<"$err" &&
		[ "$(cat "$H/a.txt")" = "$(printf 'one\ntwo')" ] && [ ! -e "$H/ok-link" ]
	ok $? "$mode: apply refuses each planted entry by name and writes nothing"
	[ "$rc" = 1 ] || diag "rc=$rc $err"
	capture sbx_as_mode_in "$H" "$mode" "$SBX" apply --force "bad-$mode" .
	[ "$rc" = 1 ] && [ -L "$H/ok-link" ] && [ ! -e "$H/fifo" ] && [ ! -e "$H/abs" ] &&
		[ "$(stat -c %a "$H/suid")" = 755 ] && grep -q "suid: its set-user-ID or set-group-ID bit is dropped" <<<"$err" &&
		[ "$(readlink "$H/escape")" = / ] && [ ! -e /ok.txt ]
	ok $? "$mode: --force writes only the safe entries; the set-user-ID bit is dropped"
	# A device node, planted in the kept layer from outside (a jail cannot
	# make one): refused as well.
	upper=$(sbx_as_mode "$mode" "$SBX" inspect --json "bad-$mode" |
		jq -r --arg h "$H" '.policy.filesystem.layers[] | select(.lower == $h) | .upper')
	up=$sd/$upper
	if [ "$(id -u)" = 0 ] && [ -n "$upper" ] && [ -d "$up" ] && mknod "$up/dev0" c 1 3 2>/dev/null; then
		capture sbx_as_mode_in "$H" "$mode" "$SBX" apply --force "bad-$mode" .
		grep -q "refused: 'dev0': a device node" <<<"$err" && [ ! -e "$H/dev0" ]
		ok $? "$mode: a device node in the upper is refused"
		grep -q "refused: 'dev0'" <<<"$err" || diag "rc=$rc up=$up $err"
	else
		skip "$mode: a device node in the upper is refused" "not root: no mknod"
	fi
	sbx_as_mode "$mode" "$SBX" destroy "bad-$mode" >/dev/null 2>&1

	# A path whose directory became a symlink on the host after the run:
	# refused, nothing written through it.
	S=$BASE/$mode/swap
	make_repo "$S" "$u"
	mkdir -p "$BASE/$mode/outside" && chmod 0777 "$BASE/$mode/outside"
	capture sbx_as_mode_in "$S" "$mode" "$SBX" run -q --keep --name "swap-$mode" -- \
		sh -c 'mkdir sub && echo new > sub/new.txt'
	ln -s "$BASE/$mode/outside" "$S/sub" && chown -h "$u:$u" "$S/sub"
	capture sbx_as_mode_in "$S" "$mode" "$SBX" apply --force "swap-$mode" .
	[ "$rc" = 1 ] && grep -q "refused: 'sub/new.txt': a symlink (or a file) on the host side of its path" <<<"$err" &&
		[ -z "$(ls -A "$BASE/$mode/outside")" ]
	ok $? "$mode: a symlink on the host side of a path is refused, nothing written through it"
	[ "$rc" = 1 ] || diag "rc=$rc $err"
	sbx_as_mode "$mode" "$SBX" destroy "swap-$mode" >/dev/null 2>&1

	# A running sandbox whose layer is in memory says so, not an empty diff.
	sbx_as_mode_in "$R" "$mode" "$SBX" run -q --name "live-$mode" -- sh -c 'echo x > live.txt; sleep 30' \
		>/dev/null 2>&1 &
	for ((i = 0; i < 100; i++)); do
		sbx_as_mode "$mode" "$SBX" ps --json 2>/dev/null | grep -q "live-$mode" && break
		sleep 0.1
	done
	sleep 0.5
	capture sbx_as_mode_in "$R" "$mode" "$SBX" diff "live-$mode" .
	if [ "$(sbx_as_mode "$mode" "$SBX" inspect --json "live-$mode" | jq -r .policy.filesystem.layers_in_memory)" = true ]; then
		[ "$rc" = 1 ] && grep -q "holds its writable layer in memory while it runs" <<<"$err"
		ok $? "$mode: diff of a running sandbox with its layer in memory says so (rc $rc)"
	else
		[ "$rc" = 0 ] && grep -q '^+x' <<<"$out"
		ok $? "$mode: diff of a running sandbox with its layer on disk shows its change so far"
	fi
	sbx_as_mode "$mode" "$SBX" destroy "live-$mode" >/dev/null 2>&1
	wait

	# The project moved after the run: its changes cannot be shown or
	# applied there, and diff and apply say so (they gave an empty patch
	# and "nothing written", exit 0, and the work could be thrown away).
	M=$BASE/$mode/moved
	mkdir -p "$M" && echo a >"$M/f" && chown -R "$u:$u" "$M"
	capture sbx_as_mode_in "$M" "$mode" "$SBX" run -q --keep --name "moved-$mode" -- sh -c 'echo new >g; exit 3'
	mv "$M" "$M.elsewhere"
	capture sbx_as_mode_in "$BASE" "$mode" "$SBX" diff "moved-$mode"
	[ "$rc" = 1 ] && [[ "$out" != *"+new"* ]] &&
		grep -qF "its changes to $M are not shown: that host directory cannot be opened (No such file or directory); 'sbx export moved-$mode -o FILE.tar.gz' writes them as a tarball" <<<"$err"
	ok $? "$mode: diff of a sandbox whose host directory moved says so, exit 1 ($rc: $err)"
	capture sbx_as_mode_in "$BASE" "$mode" "$SBX" apply "moved-$mode"
	[ "$rc" = 1 ] && [ ! -e "$M" ] && grep -qF "its changes to $M are not applied: that host directory cannot be opened" <<<"$err"
	ok $? "$mode: apply of it writes nothing and says why, exit 1 ($rc: $err)"
	capture sbx_as_mode_in "$BASE" "$mode" "$SBX" diff "moved-$mode" /usr
	[ "$rc" = 0 ] && [ -z "$err" ]
	ok $? "$mode: a diff limited to another directory does not name it ($rc: $err)"
	mv "$M.elsewhere" "$M"
	capture sbx_as_mode_in "$M" "$mode" "$SBX" diff "moved-$mode" .
	[ "$rc" = 0 ] && grep -qx '+new' <<<"$out"
	ok $? "$mode: back in place, the change shows ($rc: $err)"
	sbx_as_mode "$mode" "$SBX" destroy "moved-$mode" >/dev/null 2>&1
done
done_testing
