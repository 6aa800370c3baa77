#!/bin/bash
# tests/integration/run_git_readonly.sh - a read-write bind never makes a
# repository's git directory writable.  The agent profiles bind the
# project read-write, and git runs what its directory says: a hook
# (.git/hooks/pre-commit), a config entry (core.fsmonitor runs on every
# `git status`, which editors run on their own), or a .git/commondir that
# points git at a config of the jail's making.  Written from the jail,
# each ran as the developer on the host the next time git was used there,
# outside any sandbox.  The project's own .git (a directory, or the file
# of a linked worktree) is now read-only in the jail, and a mount point
# there, so it cannot be renamed or replaced either; the files around it
# stay writable.  An explicit read-write bind of that .git keeps it
# writable, and the run log says which it is.  As root (the sudo case:
# an idmapped project) and as an ordinary user.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"
. "$(dirname "$0")/../lib/gitrepo.sh"

need_tools git jq
sbx_modes
sbx_base

# What a prompt-injected agent would do to run code on the host later
attack='
echo "#!/bin/sh" >.git/hooks/pre-commit 2>/dev/null && echo hook-written
chmod +x .git/hooks/pre-commit 2>/dev/null
git config core.fsmonitor "touch $MARK" 2>/dev/null && echo config-written
echo "[core]" >>.git/config 2>/dev/null && echo config-appended
echo evil >.git/commondir 2>/dev/null && echo commondir-written
mv .git .git-old 2>/dev/null && echo renamed
rm -rf .git 2>/dev/null; [ -d .git ] || echo removed
echo edited >a.txt && echo project-written
git status --porcelain 2>&1 | head -3
git log --format=%s 2>&1 | head -1
git commit -qam agent 2>&1 | head -1
'

for mode in $MODES; do
	if [ "$mode" = root ]; then owner=4242:4343; else owner=$UID_U:$UID_U; fi
	P=$BASE/$mode/proj
	mkdir -p "$BASE/$mode" && chmod 0755 "$BASE/$mode"
	repo "$P" "$owner"
	MARK=$BASE/$mode/PWNED
	before=$(cd "$BASE" && tar -C "$P" -cf - .git | sha256sum)

	capture sbx_as_mode_in "$P" "$mode" "$SBX" run -p agent --net none -e MARK="$MARK" -- sh -c "$attack"
	[ "$rc" = 0 ] && [[ "$out" == *project-written* ]] && [[ "$out" != *-written*-written* ]] &&
		[[ "$out" != *hook-written* ]] && [[ "$out" != *config-* ]] &&
		[[ "$out" != *commondir-written* ]] && [[ "$out" != *renamed* ]] && [[ "$out" != *removed* ]]
	ok $? "$mode, -p agent: .git's hooks, config and commondir cannot be written, .git not renamed nor removed; the project can ($rc: $out)"
	[ "$(cd "$BASE" && tar -C "$P" -cf - .git | sha256sum)" = "$before" ] && [ "$(cat "$P/a.txt")" = edited ]
	ok $? "$mode, -p agent: the host's .git is as it was, a.txt edited"
	[[ "$out" == *" M a.txt"* ]] && [[ "$out" == *first* ]] && [[ "$out" != *dubious* ]] &&
		[[ "$out" == *"Read-only file system"* ]]
	ok $? "$mode, -p agent: git status and log work in the jail, a commit says read-only ($out)"
	(cd "$P" && git -c safe.directory='*' status >/dev/null 2>&1)
	[ ! -e "$MARK" ]
	ok $? "$mode: git status on the host afterwards runs nothing the jail planted"
	[[ "$err" == *"shared: $P (bind rw"*"; its .git read-only: git would run its hooks and config on the host (--bind $P/.git to let the command write it)"* ]] &&
		[[ "$err" != *"made or changed during the run"* ]]
	ok $? "$mode: the run log says .git is read-only, and how to let it be written; no repository changed ($err)"

	# The record says so too, and sbx exec into the kept sandbox keeps it
	# (git status above refreshed the host's index)
	before=$(cd "$BASE" && tar -C "$P" -cf - .git | sha256sum)
	capture sbx_as_mode_in "$P" "$mode" "$SBX" run -q --keep -n "git-$mode" -p agent --net none -- true
	ro=$(sbx_as_mode "$mode" "$SBX" inspect --json "git-$mode" |
		jq -r --arg p "$P" '.policy.filesystem.mounts[] | select(.src == $p) | .git_read_only')
	text=$(sbx_as_mode "$mode" "$SBX" inspect "git-$mode")
	capture sbx_as_mode_in "$P" "$mode" "$SBX" exec "git-$mode" -- sh -c "$attack"
	[ "$ro" = true ] && [[ "$text" == *"its .git read-only"* ]] && [ "$rc" = 0 ] && [[ "$out" != *-written*-written* ]] &&
		[[ "$out" != *hook-written* ]] && [[ "$out" != *renamed* ]] &&
		[ "$(cd "$BASE" && tar -C "$P" -cf - .git | sha256sum)" = "$before" ]
	ok $? "$mode: the record and inspect say .git was read-only, and exec into the kept sandbox cannot write .git either ($ro, $rc: $out)"
	sbx_as_mode "$mode" "$SBX" destroy "git-$mode" >/dev/null 2>&1

	# A linked worktree: its .git is a file naming the repository's gitdir
	W=$BASE/$mode/wt
	(cd "$P" && $G worktree add -q "$W" -b side 2>/dev/null) && chown -R "$owner" "$W" "$P/.git"
	capture sbx_as_mode_in "$W" "$mode" "$SBX" run -q -p agent --net none -- sh -c \
		'echo "gitdir: /tmp/evil" >.git 2>/dev/null && echo gitfile-written; mv .git x 2>/dev/null && echo renamed; echo e >a.txt && echo project-written'
	[ "$rc" = 0 ] && [ "$out" = project-written ] && grep -q "^gitdir: $P/.git/worktrees/" "$W/.git"
	ok $? "$mode: a worktree's .git file cannot be rewritten nor moved ($rc: $out)"

	# A submodule: its .git is a file naming the superproject's
	# .git/modules/sub; rewritten to name a config of the jail's making,
	# the superproject's `git status` on the host ran that config
	S=$BASE/$mode/super
	$G init -q "$BASE/$mode/subsrc" && (cd "$BASE/$mode/subsrc" && echo s >s && $G add s && $G commit -qm s)
	repo "$S" 0:0
	(cd "$S" && $G -c protocol.file.allow=always submodule add -q "$BASE/$mode/subsrc" sub >/dev/null 2>&1 &&
		$G commit -qm sub) && chown -R "$owner" "$S"
	capture sbx_as_mode_in "$S" "$mode" "$SBX" run -q -p agent --net none -- sh -c '
		mkdir evil && cp -r .git/modules/sub/. evil/ && sed -i /worktree/d evil/config &&
		printf "[core]\n\tfsmonitor = \"touch $MARK\"\n" >>evil/config && echo planted
		echo "gitdir: ../evil" >sub/.git 2>/dev/null && echo gitfile-written
		mv sub/.git sub/x 2>/dev/null && echo renamed; echo e >sub/s && echo sub-written'
	(cd "$S" && git -c safe.directory='*' status >/dev/null 2>&1)
	[ "$rc" = 0 ] && [ "$out" = planted$'\n'sub-written ] && [ ! -e "$MARK" ] &&
		grep -qx "gitdir: ../.git/modules/sub" "$S/sub/.git"
	ok $? "$mode: a submodule's .git file cannot be rewritten nor moved; git status on the host runs nothing ($rc: $out | $err)"

	# An explicit read-write bind of .git: writable, as asked, and said so
	capture sbx_as_mode_in "$P" "$mode" "$SBX" run -p agent --net none --bind "$P/.git" -- sh -c \
		'echo "#!/bin/sh" >.git/hooks/pre-commit && echo hook-written'
	[ "$rc" = 0 ] && [ "$out" = hook-written ] && [ -f "$P/.git/hooks/pre-commit" ] &&
		[[ "$err" != *"its .git read-only"* ]] && [[ "$err" == *"shared: $P/.git (bind rw"* ]]
	ok $? "$mode: --bind PROJECT/.git lets the command write it; no read-only line ($rc: $out | $err)"
	rm -f "$P/.git/hooks/pre-commit"

	# No repository: nothing to protect, nothing said; git init works
	N=$BASE/$mode/norepo
	mkdir -p "$N" && chown "$owner" "$N"
	capture sbx_as_mode_in "$N" "$mode" "$SBX" run -p agent --net none -- sh -c \
		"$G init -q && echo x >f && $G add f && $G commit -qm x && echo committed"
	[ "$rc" = 0 ] && [ "$out" = committed ] && [[ "$err" != *"its .git"* ]] &&
		[[ "$err" == *"warning: git repository made or changed during the run: $N/.git (git runs its hooks and what its config names when used in $N, and editors run git status on their own): look at them first: ls -la $N/.git/hooks (or the directory its core.hooksPath names); git -C $N config --local --list"* ]]
	ok $? "$mode: a directory with no .git: git init and commit in the jail; the run log names the repository made ($rc: $out | $err)"

	# A repository planted in a directory of the project (where an editor
	# looks for repositories too), and a hook added to one that was there:
	# named in the run log, the exit event and the record
	mkdir -p "$P/tool" && (cd "$P/tool" && $G init -q) && chown -R "$owner" "$P/tool"
	capture sbx_as_mode_in "$P" "$mode" "$SBX" run --keep -n "plant-$mode" --log-json "$BASE/plant-$mode.jsonl" \
		-p agent --net none -- sh -c \
		'git init -q vendored && git -C vendored config core.fsmonitor "touch /tmp/x" && echo "#!/bin/sh" >tool/.git/hooks/post-checkout'
	ev=$(jq -c 'select(.event == "exit") | .exit.git_changed' "$BASE/plant-$mode.jsonl" 2>&1)
	rec=$(sbx_as_mode "$mode" "$SBX" inspect --json "plant-$mode" | jq -c '.exit.git_changed')
	text=$(sbx_as_mode "$mode" "$SBX" inspect "plant-$mode")
	[ "$rc" = 0 ] && [[ "$err" == *"during the run: $P/vendored/.git ("* ]] &&
		[[ "$err" == *"during the run: $P/tool/.git ("* ]] && [[ "$err" != *"during the run: $P/.git"* ]] &&
		[ "$(jq -r 'sort | join(" ")' <<<"$ev")" = "$P/tool/.git $P/vendored/.git" ] && [ "$rec" = "$ev" ] &&
		[[ "$text" == *"git made or changed"*"$P/"* ]]
	ok $? "$mode: a repository planted below the project and a hook added are named: run log, exit event, record, inspect ($rc: $ev | $rec | $err)"
	sbx_as_mode "$mode" "$SBX" destroy "plant-$mode" >/dev/null 2>&1
	rm -rf "$P/vendored" "$P/tool"

	# Detached: sbx wait says it (the run, removed at its end, cannot)
	id=$(sbx_as_mode_in "$P" "$mode" "$SBX" run -q -d -p agent --net none -- sh -c \
		'sleep 0.5; git init -q later')
	capture sbx_as_mode "$mode" "$SBX" wait "$id"
	[ "$rc" = 0 ] && [[ "$err" == *"ended (exited, exit 0; removed)"* ]] &&
		[[ "$err" == *"$id: warning: git repository made or changed during the run: $P/later/.git: look at it before using git there"* ]]
	ok $? "$mode: detached, sbx wait names the repository made ($rc: $err)"
	rm -rf "$P/later"

	# The default profile (copy-on-write project): nothing changes there
	capture sbx_as_mode_in "$P" "$mode" "$SBX" run --net none -- sh -c \
		'echo "#!/bin/sh" >.git/hooks/pre-commit && echo hook-in-layer'
	[ "$rc" = 0 ] && [ "$out" = hook-in-layer ] && [ ! -e "$P/.git/hooks/pre-commit" ] &&
		[[ "$err" != *"its .git"* ]]
	ok $? "$mode: default profile: .git is copy-on-write as before, the host's untouched ($rc: $out)"
done
done_testing
