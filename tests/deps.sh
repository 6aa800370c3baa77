#!/bin/sh
# tests/deps.sh - the Debian packages sbx needs to build, test and demo.
#
#   tests/deps.sh --install        install them all (root), or print the apt-get line
#   tests/deps.sh --ensure         same, but only when something is missing
#   tests/deps.sh --ensure-build   what `make` needs: as root, install everything
#                                  missing; otherwise fail only when a build
#                                  package is missing (test packages: a note)
#   tests/deps.sh --ensure-bench   make bench: all of them and its other peers
#                                  (firejail, systemd-nspawn); as a user, a note
#   tests/deps.sh --list           print the package names
set -eu

# Build: compiler, pkg-config and the -dev packages of the libraries
# (libmnl-dev: libnftnl.pc requires it).
BUILD="build-essential pkg-config libseccomp-dev libcap-dev libinih-dev libarchive-dev libjansson-dev libssl-dev libgit2-dev libnftnl-dev libmnl-dev"
# Tests: cmocka, a static busybox for rootfs fixtures, peers for the benches
# (bwrap, bsdtar), man page lint, unprivileged runs (setpriv is in util-linux),
# net tools, python3 for small test servers, clang for the fuzzers, git and
# patch for the tests that apply `sbx diff`; Slurm and munge for the
# batch-engine test (a one-node cluster in a scratch directory); strace for
# the checks of which processes sbx forks when.
TEST="libcmocka-dev git patch busybox-static bubblewrap uidmap debootstrap libpython3.11-testsuite podman runc libarchive-tools mandoc util-linux iproute2 python3 curl clang clang-format libclang-rt-14-dev zstd xz-utils bzip2 gzip valgrind bash-completion zsh fish jq tmux strace nftables nodejs openssl slurmctld slurmd slurm-client munge"

# Bench peers that nothing else needs (make bench measures sbx against them
# where they run).
BENCH="firejail systemd-container"

PKGS="$BUILD $TEST"

missing() { # missing PKG...: those of PKG not installed
	for p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' ||
			printf '%s ' "$p"
	done
}

# install_pkgs PKG...: install the missing ones (root) or name them.
install_pkgs() {
	# shellcheck disable=SC2086
	m=$(missing "$@")
	[ -z "$m" ] && return 0
	if [ "$(id -u)" = 0 ]; then
		echo "sbx: installing build and test dependencies: $m" >&2
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq >&2
		# shellcheck disable=SC2086
		apt-get install -y -qq --no-install-recommends $m >&2
	else
		echo "sbx: missing packages; as root run:" >&2
		echo "  apt-get install -y $m" >&2
		return 1
	fi
}

case "${1:---install}" in
--list) echo "$PKGS" ;;
# shellcheck disable=SC2086
--install | --ensure) install_pkgs $PKGS ;;
--ensure-build)
	if [ "$(id -u)" = 0 ]; then
		# shellcheck disable=SC2086
		install_pkgs $PKGS
	else
		# shellcheck disable=SC2086
		install_pkgs $BUILD || exit 1
		# shellcheck disable=SC2086
		m=$(missing $TEST)
		[ -z "$m" ] || echo "sbx: note: make check needs these too: apt-get install -y $m" >&2
	fi
	;;
--ensure-bench)
	if [ "$(id -u)" = 0 ]; then
		# shellcheck disable=SC2086
		install_pkgs $PKGS $BENCH
	else
		# shellcheck disable=SC2086
		m=$(missing $PKGS $BENCH)
		[ -z "$m" ] || echo "sbx: note: make bench leaves out the peers of these: apt-get install -y $m" >&2
	fi
	;;
*) echo "usage: $0 [--install|--ensure|--ensure-build|--ensure-bench|--list]" >&2; exit 2 ;;
esac
