#!/bin/bash
# sbx-test-timeout: 600
# tests/integration/container_podman.sh - sbx inside a (rootful) podman
# container, where CI often runs it: Debian's podman with --runtime runc
# (crun refuses this host's hybrid cgroup v1), its default seccomp profile
# and capabilities, and --ulimit nofile/nproc within the host's hard limits.
# The container's root is the host's root through an overlay (--rootfs /:O),
# so sbx's libraries are there; sbx and a busybox image come in a volume.
#   - with podman's masked /proc: a fresh /proc cannot be had; `sbx run`
#     refuses in one line naming the fix, doctor says which layer;
#   - with --security-opt unmask=ALL: runs work, with the documented
#     fallbacks said in the run log (the hostname stays the container's,
#     the state directory is on an overlayfs so the writable layers live in
#     memory), and a kept sandbox can be entered again.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"

if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP needs root (a rootful podman container)"
	exit 77
fi
if ! command -v podman >/dev/null || ! command -v runc >/dev/null; then
	echo "1..0 # SKIP podman or runc is not installed (Debian: podman runc, which make deps installs)"
	exit 77
fi
sbx_base
IMG=$BASE/busybox.tar.gz
sbx_rootfs "$IMG"
mkdir -p "$BASE/work" && chmod 0777 "$BASE/work"
# rlimits within the host's hard ones (root here may lack CAP_SYS_RESOURCE).
nofile=$(ulimit -Hn); [ "$nofile" -gt 1024 ] && nofile=1024
nproc=$(ulimit -Hu); [ "$nproc" = unlimited ] || [ "$nproc" -gt 4096 ] && nproc=4096
POD=(podman --runtime runc run --rm --network none --ulimit "nofile=$nofile:$nofile"
	--ulimit "nproc=$nproc:$nproc" -v "$BASE:/t" -w /t/work)
in_pod() { # [PODMAN-OPTIONS...] -- CMD...
	local opts=()
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	"${POD[@]}" "${opts[@]}" --rootfs /:O "$@"
}
capture in_pod -- true
if [ "$rc" -ne 0 ]; then
	echo "1..0 # SKIP podman cannot start a container here: $(tail -n 1 <<<"$err")"
	exit 77
fi

# Podman's defaults: /proc masked.
capture in_pod -- /t/sbx run -q --rootfs /t/busybox.tar.gz -- echo ran
[ "$rc" -eq 125 ] && [ "$(lines "$err")" -eq 1 ] && [[ "$out" != *ran* ]] &&
	[[ "$err" == "sbx: cannot mount a fresh /proc for the jail's pid namespace: this container masks /proc"*"--security-opt unmask=ALL"* ]]
ok $? "masked /proc: run refuses in one line naming the fix, the command never ran ($rc: $err)"
capture in_pod -- /t/sbx doctor
[ "$rc" -eq 1 ] && grep -qE '^  missing +pid namespace, /proc ' <<<"$out" &&
	grep -q 'inside a podman container' <<<"$out" && grep -q 'unmask=ALL' <<<"$out"
ok $? "masked /proc: doctor says which layer is missing and how to get it ($rc)"

# /proc unmasked: sbx works, with its fallbacks said.
U=(--security-opt unmask=ALL)
capture in_pod "${U[@]}" -- /t/sbx run --rootfs /t/busybox.tar.gz -- sh -c 'echo ran; cat /proc/1/cmdline | tr "\0" " "'
[ "$rc" -eq 0 ] && [ "$(head -n 1 <<<"$out")" = ran ] &&
	grep -q "warning: the hostname stays the container's" <<<"$err" &&
	grep -q "warning: the state directory '/var/lib/sbx' is on an overlayfs" <<<"$err"
ok $? "unmasked: an image run works, the run log names the fallbacks ($rc: $(grep warning <<<"$err" | cut -c1-80 | tr '\n' '|'))"
capture in_pod "${U[@]}" -- sh -c '/t/sbx run -q -- sh -c "echo x >cow.txt; cat cow.txt"; ls cow.txt 2>&1'
[ "$(head -n 1 <<<"$out")" = x ] && grep -q "No such file" <<<"$out"
ok $? "unmasked: the host root with the default profile; its writes stay copy-on-write ($out)"
capture in_pod "${U[@]}" -- sh -c '/t/sbx run -q --keep -n k --rootfs /t/busybox.tar.gz -- sh -c "echo kept >/made" &&
	/t/sbx exec k cat /made && /t/sbx destroy k >/dev/null'
[ "$rc" -eq 0 ] && [ "$out" = kept ]
ok $? "unmasked: a kept sandbox's in-memory layers come back for exec ($rc: $out $err)"
capture in_pod "${U[@]}" -- /t/sbx doctor --json
[ "$rc" -eq 0 ] && [ "$(jq -r .container <<<"$out")" = "a podman container" ] &&
	[ "$(jq -r '.checks[] | select(.name == "statedir") | .status' <<<"$out")" = fallback ] &&
	[ "$(jq -r '.checks[] | select(.name == "hostname") | .status' <<<"$out")" = fallback ]
ok $? "unmasked: doctor exits 0 and lists the fallbacks ($rc)"
capture in_pod "${U[@]}" -e SBX_STATE_DIR=/dev/shm/s -- /t/sbx run --rootfs /t/busybox.tar.gz -- true
[ "$rc" -eq 0 ] && ! grep -q "is on an overlayfs" <<<"$err"
ok $? "unmasked, state on a tmpfs: the layers are on it, no fallback ($rc)"
done_testing
