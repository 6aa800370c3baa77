# tests/lib/gitrepo.sh - repositories for the tests of what git on the host
# would run (run_git_readonly.sh, run_git_named.sh).  $G is git with an
# identity, one branch name and every directory safe (the repositories
# belong to other uids); repo DIR OWNER makes DIR a repository with one
# commit (a.txt), owned by OWNER (uid:gid), mode 0755.
G="git -c safe.directory=* -c user.name=dev -c user.email=dev@example.invalid -c init.defaultBranch=main"
repo() {
	mkdir -p "$1" && (cd "$1" && $G init -q && echo one >a.txt && $G add a.txt &&
		$G commit -qm first) && chown -R "$2" "$1" && chmod 0755 "$1"
}
