#!/bin/bash
# tests/integration/run_git_links.sh - what git on the host reaches through
# a symlink in a repository goes in read-only like the .git it is in.
# Common set-ups keep hooks in the work tree and link them from .git:
# .git/hooks -> ../githooks, .git/hooks/pre-commit ->
# ../../scripts/pre-commit.sh; some tools make .git itself a symlink to a
# directory beside it.  The .git went in read-only, but the symlink led
# back into the read-write project, so the command could write the hook
# git ran at the next commit on the host.  As root (an idmapped project)
# and as an ordinary user; what is made or changed through such a link
# during the run is named at its end.
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

	# .git/hooks a symlink to a directory of the work tree
	H=$BASE/$mode/hookdir
	repo "$H" 0:0
	mkdir -p "$H/githooks" && printf '#!/bin/sh\ntrue\n' >"$H/githooks/pre-commit" &&
		chmod +x "$H/githooks/pre-commit" && rm -rf "$H/.git/hooks" && ln -s ../githooks "$H/.git/hooks" &&
		chown -R "$owner" "$H" && chown -h "$owner" "$H/.git/hooks"
	before=$(sum "$H" githooks)
	capture sbx_as_mode_in "$H" "$mode" "$SBX" run -p agent --net none -e MARK="$MARK" -- sh -c '
		echo "touch $MARK" >>githooks/pre-commit 2>/dev/null && echo hook-written
		printf "#!/bin/sh\ntouch $MARK\n" >githooks/post-checkout 2>/dev/null && echo hook-made
		mv githooks old 2>/dev/null && echo renamed
		echo two >a.txt && echo project-written'
	[ "$rc" = 0 ] && [ "$out" = project-written ] && [ "$(sum "$H" githooks)" = "$before" ]
	ok $? "$mode: .git/hooks -> ../githooks: githooks cannot be written, renamed nor added to ($rc: $out)"
	[[ "$err" == *"shared: $H (bind rw"*"; its .git read-only, and what git reaches from it: githooks: git would run"* ]]
	ok $? "$mode: the run log names githooks with .git ($err)"
	(cd "$H" && $G commit -qam host-commit >/dev/null 2>&1 && $G checkout -q -b other >/dev/null 2>&1)
	[ ! -e "$MARK" ]
	ok $? "$mode: a commit and a checkout on the host afterwards run nothing the jail planted"

	# one hook a symlink to a tracked script
	F=$BASE/$mode/hookfile
	repo "$F" 0:0
	mkdir -p "$F/scripts" && printf '#!/bin/sh\ntrue\n' >"$F/scripts/pre-commit.sh" &&
		chmod +x "$F/scripts/pre-commit.sh" && ln -s ../../scripts/pre-commit.sh "$F/.git/hooks/pre-commit" &&
		$G -C "$F" add scripts && $G -C "$F" commit -qm hook --no-verify && chown -R "$owner" "$F"
	before=$(sum "$F" scripts)
	capture sbx_as_mode_in "$F" "$mode" "$SBX" run -p agent --net none -e MARK="$MARK" -- sh -c '
		echo "touch $MARK" >>scripts/pre-commit.sh 2>/dev/null && echo hook-written
		rm -f scripts/pre-commit.sh 2>/dev/null; [ -f scripts/pre-commit.sh ] || echo removed
		echo two >a.txt && echo project-written'
	[ "$rc" = 0 ] && [ "$out" = project-written ] && [ "$(sum "$F" scripts)" = "$before" ] &&
		[[ "$err" == *"; its .git read-only, and what git reaches from it: scripts/pre-commit.sh: git would run"* ]]
	ok $? "$mode: .git/hooks/pre-commit -> scripts/pre-commit.sh: the script is read-only ($rc: $out | $err)"
	(cd "$F" && $G commit -qam host-commit >/dev/null 2>&1)
	[ ! -e "$MARK" ]
	ok $? "$mode: a commit on the host afterwards runs nothing the jail planted"

	# .git itself a symlink to a directory beside it
	L=$BASE/$mode/gitlink
	repo "$L" 0:0
	mv "$L/.git" "$L/.repo-git" && ln -s .repo-git "$L/.git" && echo /.repo-git >>"$L/.repo-git/info/exclude" &&
		chown -R "$owner" "$L" && chown -h "$owner" "$L/.git"
	before=$(sum "$L" .repo-git)
	capture sbx_as_mode_in "$L" "$mode" "$SBX" run -p agent --net none -e MARK="$MARK" -- sh -c '
		printf "#!/bin/sh\ntouch $MARK\n" >.repo-git/hooks/pre-commit 2>/dev/null && echo hook-made
		printf "[core]\n\tfsmonitor = \"touch $MARK\"\n" >>.git/config 2>/dev/null && echo config-written
		mv .repo-git x 2>/dev/null && echo renamed
		git status --porcelain 2>&1
		echo two >a.txt && echo project-written'
	after=$(sum "$L" .repo-git)
	(cd "$L" && git -c safe.directory='*' status >/dev/null 2>&1)
	[ "$rc" = 0 ] && [ "$out" = project-written ] && [ "$after" = "$before" ] && [ ! -e "$MARK" ] &&
		[[ "$err" == *"; its .git read-only, and what git reaches from it: .repo-git: git would run"* ]]
	ok $? "$mode: .git -> .repo-git: the repository is read-only; git status reads it; git on the host runs nothing ($rc: $out | $err)"

	before=$(sum "$L" .repo-git)
	capture sbx_as_mode_in "$L" "$mode" "$SBX" run -q --keep -n "glink-$mode" -p agent --net none -- true
	named=$(sbx_as_mode "$mode" "$SBX" inspect --json "glink-$mode" |
		jq -c --arg p "$L" '.policy.filesystem.mounts[] | select(.src == $p) | [.git_read_only, .git_named_read_only]')
	capture sbx_as_mode_in "$L" "$mode" "$SBX" exec "glink-$mode" -- sh -c 'echo x >>.repo-git/config 2>/dev/null && echo written; true'
	[ "$named" = '[true,[".repo-git"]]' ] && [ "$rc" = 0 ] && [ -z "$out" ] && [ "$(sum "$L" .repo-git)" = "$before" ]
	ok $? "$mode: the record names .repo-git; exec into the kept sandbox cannot write it ($named, $rc: $out)"
	sbx_as_mode "$mode" "$SBX" destroy "glink-$mode" >/dev/null 2>&1

	# --bind PROJECT/.git: the command's to write, through the link too
	capture sbx_as_mode_in "$H" "$mode" "$SBX" run -p agent --net none --bind "$H/.git" -- sh -c \
		'echo "# hook" >>githooks/pre-commit && echo hook-written'
	[ "$rc" = 0 ] && [ "$out" = hook-written ] && [[ "$err" != *"what git reaches"* ]]
	ok $? "$mode: --bind PROJECT/.git leaves githooks writable too ($rc: $out)"

	# a link whose end was not there at the start: what the command makes
	# there is named at the end of the run
	N=$BASE/$mode/dangling
	repo "$N" 0:0
	rm -rf "$N/.git/hooks" && ln -s ../githooks "$N/.git/hooks" && chown -R "$owner" "$N" && chown -h "$owner" "$N/.git/hooks"
	sleep 0.05
	capture sbx_as_mode_in "$N" "$mode" "$SBX" run -p agent --net none -- sh -c \
		'mkdir githooks && printf "#!/bin/sh\n" >githooks/pre-commit'
	[ "$rc" = 0 ] && [[ "$err" == *"warning: git repository made or changed during the run: $N/.git ("* ]]
	ok $? "$mode: .git/hooks -> a directory made during the run: named at its end ($rc: $err)"
	rm -rf "$N/githooks"
	rm -f "$N/.git/hooks" && mkdir "$N/.git/hooks" && ln -s ../../scripts/h.sh "$N/.git/hooks/pre-commit" &&
		chown -R "$owner" "$N/.git/hooks" && chown -h "$owner" "$N/.git/hooks/pre-commit"
	sleep 0.05
	capture sbx_as_mode_in "$N" "$mode" "$SBX" run -p agent --net none -- sh -c \
		'mkdir -p scripts && printf "#!/bin/sh\n" >scripts/h.sh'
	[ "$rc" = 0 ] && [[ "$err" == *"warning: git repository made or changed during the run: $N/.git ("* ]]
	ok $? "$mode: a hook -> a file made during the run: named at its end ($rc: $err)"
	capture sbx_as_mode_in "$N" "$mode" "$SBX" run -p agent --net none -- sh -c 'echo x >a.txt'
	[ "$rc" = 0 ] && [[ "$err" != *"during the run"* ]]
	ok $? "$mode: a run that changes neither names nothing ($rc: $err)"
	capture sbx_as_mode_in "$L" "$mode" "$SBX" run -p agent --net none -- sh -c 'echo x >a.txt'
	[ "$rc" = 0 ] && [[ "$err" != *"during the run"* ]]
	ok $? "$mode: .git -> .repo-git: a run that changes nothing there names nothing ($rc: $err)"
	# the symlink itself is the project's: pointed elsewhere, it is named
	capture sbx_as_mode_in "$L" "$mode" "$SBX" run -p agent --net none -- sh -c \
		'cp -r .repo-git evil && rm .git && ln -s evil .git && echo relinked'
	[ "$rc" = 0 ] && [ "$out" = relinked ] && [[ "$err" == *"warning: git repository made or changed during the run: $L/.git ("* ]]
	ok $? "$mode: .git pointed at a copy during the run: named at its end ($rc: $err)"
	rm -rf "$L/evil" "$L/.git" && ln -s .repo-git "$L/.git" && chown -h "$owner" "$L/.git"
done
done_testing
