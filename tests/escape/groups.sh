#!/bin/bash
# tests/escape/groups.sh - the attack groups of the escape battery, sourced
# by tests/escape/run.sh (which sets up the scratch directory, the images,
# the host sentinels and listeners, and the helpers used here: jailrun,
# as_mode, jail, verdict, hostfail, expect, sig_hv, check_mounts ...).
#
# Each grp_NAME runs with $MODE (root | user) and $RES (its result file)
# set, and writes "contained MODE:CLASS/NAME (detail)" or "ESCAPED
# MODE:CLASS/NAME: what" lines.  See README.md for what each attack does.
# shellcheck disable=SC2154,SC2034  # variables shared with run.sh

# Filesystem: ro binds, remounts, umounts, the old root, handles, mknod,
# device nodes, /proc and /sys.
grp_fs() {
	jailrun --rootfs "$IMG" --ro-bind "$HV/ro:/ro" -- /bin/sh -c "
		/x/fs_attack ro-write ro-bind-write /ro/sentinel
		/x/fs_attack remount ro-bind-remount /ro /ro/sentinel
		if mount -o remount,rw /ro 2>/dev/null || mount -o remount,bind,rw /ro 2>/dev/null ||
			echo pwned 2>/dev/null >>/ro/sentinel; then
			echo 'ESCAPED fs/ro-bind-remount-shell: busybox mount -o remount,rw /ro or the write worked'
		else echo 'contained fs/ro-bind-remount-shell (mount -o remount,rw refused)'; fi
		/x/fs_attack setattr ro-bind-mount-setattr /ro /ro/sentinel
		/x/fs_attack umount umount-ro-bind /ro
		/x/fs_attack umount umount-proc-mask /proc/kcore
		/x/fs_attack umount umount-proc-sys /proc/sys
		/x/fs_attack oldroot old-root $HV/magic $MAGIC
		/x/fs_attack handle open-by-handle $MAGIC
		/x/fs_attack mknod mknod
		/x/fs_attack procsys"
	jail "$out"
	[ "$(cat "$HV/ro/sentinel")" = ro-sentinel ] && [ "$(ls -A "$HV/ro")" = sentinel ] ||
		hostfail fs/ro-bind-write "$HV/ro changed: $(ls -A "$HV/ro" | tr '\n' ' ')"
	[ "$(cat /proc/sys/kernel/hostname)" = "$HOSTNAME0" ] || hostfail fs/proc-sys-hostname "hostname is now $(cat /proc/sys/kernel/hostname)"
	[ "$(cat /proc/sys/vm/swappiness)" = "$SWAP0" ] || hostfail fs/proc-sys-vm-swappiness "vm.swappiness changed"
	[ "$(cat /proc/sys/kernel/core_pattern)" = "$CORE0" ] || hostfail fs/proc-sys-core-pattern "core_pattern is now $(cat /proc/sys/kernel/core_pattern)"
	[ "$(cat /proc/sys/kernel/modprobe 2>/dev/null)" = "$MODPROBE0" ] || hostfail fs/proc-sys-modprobe "modprobe changed"
	[ "$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)" = "$THP0" ] || hostfail fs/sys-write "THP setting changed"
	[ ! -e /proc/sys/fs/binfmt_misc/pwn ] || hostfail fs/binfmt-misc-register "binfmt 'pwn' registered"
	check_mounts fs/umount-ro-bind
	expect fs/ro-bind-write fs/ro-bind-remount fs/ro-bind-remount-shell fs/ro-bind-mount-setattr \
		fs/umount-ro-bind fs/umount-proc-mask fs/umount-proc-sys fs/old-root fs/open-by-handle \
		fs/mknod fs/proc-kcore fs/proc-kallsyms fs/proc-sysrq-trigger fs/proc-sys-hostname \
		fs/proc-sys-vm-swappiness fs/proc-sys-core-pattern fs/proc-sys-modprobe fs/fresh-proc-mount \
		fs/binfmt-misc-register fs/sys-write fs/proc-pid1-mem fs/proc-pid1-environ fs/proc-keys \
		fs/kmsg-read
}

# The host root as rootfs (the default profile): read-only, masks hold.
grp_fshost() {
	printf '[sandbox]\nextends = default\nrootfs = host\n[filesystem]\nmask = %s\n' "$HV/secret" \
		>"$BASE/mask-$MODE.ini"
	chmod 0644 "$BASE/mask-$MODE.ini"
	jailrun -p "$BASE/mask-$MODE.ini" -- /bin/sh -c "
		$XB/fs_attack umount umount-mask $HV/secret $HV/secret/key $MAGIC
		$XB/fs_attack ro-write host-root-write $HV/rootw/sentinel
		$XB/fs_attack remount host-root-remount / $HV/rootw/sentinel
		$XB/fs_attack setattr host-root-mount-setattr / $HV/rootw/sentinel
		if cat $HV/secret/key 2>/dev/null | grep -q $MAGIC; then echo 'ESCAPED fs/mask-read: the masked file is readable';
		else echo 'contained fs/mask-read (masked file not readable)'; fi
		if head -c 1 /etc/shadow 2>/dev/null | grep -q .; then echo 'ESCAPED fs/host-shadow-read: /etc/shadow is readable';
		else echo 'contained fs/host-shadow-read (/etc/shadow not readable)'; fi"
	jail "$out"
	[ "$(cat "$HV/rootw/sentinel")" = rootw-sentinel ] && [ "$(ls -A "$HV/rootw")" = sentinel ] ||
		hostfail fs/host-root-write "$HV/rootw changed"
	check_mounts fs/umount-mask
	expect fs/umount-mask fs/host-root-write fs/host-root-remount fs/host-root-mount-setattr fs/mask-read \
		fs/host-shadow-read

	# Copy-on-write views (the working directory of the default profile, an
	# --overlay) never write the host directory; a file made setuid root
	# through a read-write bind is never setuid root on the host.
	local wd=$BASE/wd-$MODE ovl=$BASE/ovl-$MODE rwb=$BASE/rwb-$MODE
	mkdir -p "$ovl" "$rwb" && echo ovl-sentinel >"$ovl/s" && echo wd-sentinel >"$wd/s"
	chmod 0777 "$ovl" "$rwb" && chmod 0666 "$ovl/s" "$wd/s"
	jailrun -- /bin/sh -c 'echo pwned >> s; rm -f s; echo pwned > new; mkdir newdir; true'
	[ "$(cat "$wd/s" 2>/dev/null)" = wd-sentinel ] && [ "$(ls -A "$wd")" = s ]
	verdict fs/cwd-overlay-write $? "the host working directory holds: $(ls -A "$wd" | tr '\n' ' ')"
	jailrun --rootfs "$IMG" --overlay "$ovl:/mnt/t" --bind "$rwb:/ro" -- /bin/sh -c '
		echo pwned >> /mnt/t/s; rm -f /mnt/t/s; echo pwned > /mnt/t/new
		cp /x/caps_attack /ro/suid; chown 0:0 /ro/suid; chmod 6755 /ro/suid
		mknod /ro/mem c 1 1 2>/dev/null; true'
	[ "$(cat "$ovl/s" 2>/dev/null)" = ovl-sentinel ] && [ "$(ls -A "$ovl")" = s ]
	verdict fs/overlay-write $? "the host directory holds: $(ls -A "$ovl" | tr '\n' ' ')"
	local bad=
	if [ -e "$rwb/suid" ]; then
		[ "$(stat -c %u "$rwb/suid")" -ne 0 ] || bad="owned by host root"
		[ "$(stat -c %u "$rwb/suid")" -ne 0 ] || [ $((0$(stat -c %a "$rwb/suid") & 06000)) -eq 0 ] ||
			bad="setuid root on the host"
	fi
	[ ! -c "$rwb/mem" ] || bad="$bad a device node made on the host"
	[ -z "$bad" ]
	verdict fs/rw-bind-setuid-root $? "${bad:-$(stat -c '%n: uid %u mode %a' "$rwb/suid" 2>/dev/null | sed "s|$BASE/||")}"
}

# Capabilities, setuid and file-capability binaries (image, rootfs dir,
# host), user namespaces.
grp_caps() {
	jailrun --rootfs "$IMG" -- /x/caps_attack caps
	jail "$out"
	expect caps/five-sets-zero caps/capset-raise caps/ambient-and-no-new-privs caps/unshare-newuser \
		caps/unshare-namespaces
	jailrun --rootfs "$IMG" -u 1000:1000 -- /x/caps_attack caps
	jail "$out" -uid1000
	expect caps/five-sets-zero-uid1000 caps/setuid-root-uid1000 caps/unshare-newuser-uid1000
	# A rootfs directory keeps setuid bits, file capabilities and device
	# nodes: nosuid/nodev and no_new_privs must still hold.
	local u
	for u in "" 1000:1000; do
		jailrun --rootfs "$RDIR" ${u:+-u "$u"} -- /bin/sh -c "
			/x/caps_attack exec setuid-dir-rootfs /x/suid
			/x/caps_attack exec filecap-dir-rootfs /x/fcap
			/x/fs_attack devopen dir-rootfs-device-node /evil/mem /evil/sda"
		jail "$out" "${u:+-uid1000}"
		expect "caps/setuid-dir-rootfs${u:+-uid1000}" "caps/filecap-dir-rootfs${u:+-uid1000}" \
			"fs/dir-rootfs-device-node${u:+-uid1000}"
		jailrun ${u:+-u "$u"} -- /bin/sh -c "
			$XB/caps_attack exec setuid-host $HV/bin/suid
			$XB/caps_attack exec filecap-host $HV/bin/fcap"
		jail "$out" "${u:+-uid1000}"
		expect "caps/setuid-host${u:+-uid1000}" "caps/filecap-host${u:+-uid1000}"
	done
}

# Hostile tarballs end to end: refused (125, a clear error) or run with the
# class contained, and the host unchanged.
tar_case() { # tar_case NAME TARBALL [RUN ARGS...] -- JAIL SCRIPT
	local name=$1 tb=$2 before
	shift 2
	before=$(sig_hv)
	jailrun --rootfs "$tb" "$@"
	jail "$out"
	case $rc in
	0 | 125) ;;
	*) hostfail "tar/$name" "sbx run exited $rc: ${err:0:200}" ;;
	esac
	[ "$rc" -ne 125 ] || printf '%s' "$err" | grep -q '^sbx: ' || hostfail "tar/$name" "exit 125 without an sbx: error"
	[ "$(sig_hv)" = "$before" ] || hostfail "tar/$name" "$HV changed: $(diff <(echo "$before") <(sig_hv) | head -3 | tr '\n' ' ')"
	[ -z "$(find "$BASE" -path "$BASE/hv" -prune -o \( -name 'escaped-*' -o -name 'tar-dotdot*' -o -name 'tar-abs*' \) -print 2>/dev/null | grep -v "$BASE/img/")" ] ||
		hostfail "tar/$name" "an entry landed outside the image"
	check_mounts "tar/$name"
	verdict "tar/$name" 0 "rc=$rc${err:+: $(why)}"
}
grp_tar() {
	local I=$BASE/img u=
	[ "$MODE" = root ] && u="-u 1000:1000"
	tar_case dotdot "$I/tar-dotdot.tar" -- /bin/sh -c 'ls / >/dev/null'
	tar_case absolute "$I/tar-abs.tar" -- /bin/true
	tar_case symlink-then-file "$I/tar-symlink-file.tar" -- /bin/sh -c 'echo pwned > /lnk/pwned5; echo pwned > /lnk2/pwned6; true'
	tar_case symlink-then-dir "$I/tar-symlink-dir.tar" -- /bin/sh -c 'echo pwned > /dd/pwned7; true'
	tar_case symlink-then-regular "$I/tar-symlink-over.tar" -- /bin/sh -c 'echo pwned >> /f; echo pwned >> /g; true'
	tar_case hardlink-outside "$I/tar-hardlink.tar" -- /bin/sh -c \
		'for f in /h /h2 /h3 /hs /s; do echo pwned >> $f; done 2>/dev/null; true'
	tar_case device-node "$I/tar-device.tar" -- /x/fs_attack devopen tar-device-node /dev/mem /dev/kmsg /evil/sda /evil/mem
	expect fs/tar-device-node
	# shellcheck disable=SC2086
	tar_case setuid-file "$I/tar-setuid.tar" $u -- /x/caps_attack exec tar-setuid /x/suid
	expect caps/tar-setuid
	tar_case file-capability "$I/tar-fcap.tar" $u -- /x/caps_attack exec tar-fcap /x/fcap
	expect caps/tar-fcap
	# Bombs must be refused with a clear error and leave no half image (in
	# a cache of their own: the other groups fill the shared one meanwhile).
	local c=$BASE/bombcache-$MODE JR_ENV
	mkdir -p "$c" && [ "$MODE" = user ] && chown 65534 "$c"
	JR_ENV="SBX_CACHE_DIR=$c"
	jailrun --rootfs "$I/tar-bomb-header.tar" -- /bin/true
	[ "$rc" -eq 125 ] && [ -z "$(find "$c" -type f -size +64k)" ]
	verdict tar/bomb-declared-1TiB $? "rc=$rc: $(why)"
	printf '[sandbox]\nextends = default\n[limits]\nimage-size = 64m\nimage-entries = 1000\n' >"$BASE/bomb-$MODE.ini"
	chmod 0644 "$BASE/bomb-$MODE.ini"
	jailrun -p "$BASE/bomb-$MODE.ini" --rootfs "$I/tar-bomb-gzip.tar.gz" -- /bin/true
	[ "$rc" -eq 125 ] && [ -z "$(find "$c" -type f -size +64k)" ] && [ "$(du -sm "$c" | cut -f1)" -le 2 ]
	verdict tar/bomb-gzip-256MiB $? "image-size 64m: rc=$rc: $(why)"
	jailrun -p "$BASE/bomb-$MODE.ini" --rootfs "$I/tar-bomb-entries.tar" -- /bin/true
	[ "$rc" -eq 125 ] && [ "$(find "$c" | wc -l)" -lt 20 ]
	verdict tar/bomb-5000-entries $? "image-entries 1000: rc=$rc: $(why)"
	JR_ENV=
}

# Mount targets that are symlinks out of the new root.
mnt_case() { # mnt_case NAME TARBALL [RUN ARGS...]
	local name=$1 tb=$2 before
	shift 2
	before=$(sig_hv)
	jailrun --rootfs "$tb" "$@" -- /bin/sh -c \
		'for p in /proc /dev /tmp /sys /mnt/t /mnt .; do echo pwned > $p/pwned-marker; done 2>/dev/null
		for f in /dev/null /etc/resolv.conf /etc/hosts; do echo pwned >> $f; done 2>/dev/null; true'
	local bad=
	[ "$(sig_hv)" = "$before" ] || bad="$HV changed: $(diff <(echo "$before") <(sig_hv) | grep '^>' | head -3 | tr '\n' ' ')"
	[ "$(host_mounts)" -eq 0 ] || bad="$bad a mount under $BASE on the host"
	case $rc in 0 | 125) ;; *) bad="$bad sbx exited $rc" ;; esac
	[ -z "$bad" ]
	verdict "fs/$name" $? "${bad:-rc=$rc${err:+: $(why)}}"
}
grp_mnt() {
	local I=$BASE/img
	mnt_case symlink-proc-absolute "$I/mnt-proc-abs.tar"
	mnt_case symlink-proc-relative "$I/mnt-proc-rel.tar"
	mnt_case symlink-dev-absolute "$I/mnt-dev-abs.tar"
	mnt_case symlink-dev-null-and-pts "$I/mnt-devnull.tar"
	mnt_case symlink-tmp-absolute "$I/mnt-tmp-abs.tar"
	mnt_case symlink-sys-absolute "$I/mnt-sys-abs.tar"
	mnt_case symlink-bind-target-absolute "$I/mnt-bind-abs.tar" --bind "$BASE/bsrc:/mnt/t"
	mnt_case symlink-bind-target-relative "$I/mnt-bind-rel.tar" --bind "$BASE/bsrc:/mnt/t"
	mnt_case symlink-bind-target-parent "$I/mnt-bind-parent.tar" --bind "$BASE/bsrc:/mnt/t"
	mnt_case symlink-ro-bind-target "$I/mnt-bind-abs.tar" --ro-bind "$BASE/bsrc:/mnt/t"
	mnt_case symlink-tmpfs-target "$I/mnt-bind-abs.tar" --tmpfs /mnt/t:1m
	mnt_case symlink-overlay-target "$I/mnt-bind-rel.tar" --overlay "$BASE/bsrc:/mnt/t"
	# What the network modes provide (/etc/resolv.conf, /etc/hosts), and a
	# working directory, through symlinks out of the root.
	mnt_case symlink-etc-resolv-proxy "$I/mnt-etc-net.tar" --net proxy --allow example.invalid
	mnt_case symlink-etc-resolv-loopback "$I/mnt-etc-net.tar" --net loopback
	mnt_case symlink-workdir "$I/mnt-bind-abs.tar" -w /mnt/t
	# File secrets are written under /run/secrets: a symlinked /run or
	# /run/secrets must not take them (or a tmpfs) to the host.
	printf '[sandbox]\nextends = default\n[secrets]\nESC_TOKEN = env:ESC_TOKEN as file\n' >"$BASE/secret-$MODE.ini"
	chmod 0644 "$BASE/secret-$MODE.ini"
	local JR_ENV="ESC_TOKEN=token-$MAGIC"
	mnt_case symlink-run-secrets-parent "$I/mnt-run-abs.tar" -p "$BASE/secret-$MODE.ini"
	mnt_case symlink-run-secrets "$I/mnt-secrets-abs.tar" -p "$BASE/secret-$MODE.ini"
	JR_ENV=
	! grep -rqs "token-$MAGIC" "$HV" "$BASE/bsrc"
	verdict fs/secret-file-stays-inside $? "the secret's value is nowhere under $HV"
}

# A bind target in a writable bind, flipped between a directory and
# symlinks out of the root by a host racer while sbx starts.
grp_race() {
	local R=$BASE/race-$MODE i racer n0=0 n125=0 nother=0 before
	mkdir -p "$R/shared" "$R/src" && chmod 0777 "$R" "$R/shared" && echo payload >"$R/src/payload"
	chmod 0755 "$R/src"
	before=$(sig_hv)
	(
		cd "$R/shared" || exit
		while :; do
			ln -sfn "$HV/race-victim" flip.l1 && mv -T flip.l1 flip 2>/dev/null
			rm -rf flip.d && mkdir flip.d && chmod 0777 flip.d
			rm -rf flip 2>/dev/null; mv -T flip.d flip 2>/dev/null
			ln -sfn "../../../../../../../../..$HV/race-victim" flip.l2 && { rm -rf flip; mv -T flip.l2 flip; } 2>/dev/null
			rm -rf flip.d && mkdir flip.d && chmod 0777 flip.d && { rm -rf flip; mv -T flip.d flip; } 2>/dev/null
		done
	) &
	racer=$!
	for i in $(seq "$RACE_ITER"); do
		jailrun --rootfs "$IMG" --bind "$R/shared:/mnt" --bind "$R/src:/mnt/flip" -- /bin/sh -c \
			"echo m$i > /mnt/flip/marker-$i 2>/dev/null; ls /mnt/flip >/dev/null 2>&1; true"
		case $rc in 0) n0=$((n0 + 1)) ;; 125) n125=$((n125 + 1)) ;; *) nother=$((nother + 1)) ;; esac
	done
	kill "$racer" 2>/dev/null
	wait "$racer" 2>/dev/null
	local bad=
	[ "$(sig_hv)" = "$before" ] || bad="$HV/race-victim changed: $(ls -A "$HV/race-victim" | head -3 | tr '\n' ' ')"
	[ "$(host_mounts)" -eq 0 ] || bad="$bad a mount under $BASE on the host"
	[ "$nother" -eq 0 ] || bad="$bad $nother runs exited neither 0 nor 125"
	[ -z "$bad" ]
	verdict fs/symlink-race-bind-target $? "${bad:-$RACE_ITER runs: $n0 ran, $n125 refused (125)}"
}

# Processes: ptrace & co. of pid 1 and every other visible process, host
# pids, kill(-1).
grp_proc() {
	jailrun --rootfs "$IMG" -- /bin/sh -c "/x/proc_attack trace; /x/proc_attack hostpid $SENTINELS $$ 1 2; /x/proc_attack killall"
	jail "$out"
	sleep 0.2
	sentinels_alive
	verdict proc/kill-minus-1 $? "host sentinels (uid 0, $JAIL_ROOT_UID, 65534) alive after kill(-1, SIGKILL); sbx rc=$rc"
	expect proc/ptrace-pid1-and-helpers proc/process-vm-rw-pid1-and-helpers proc/proc-pid-mem \
		proc/pidfd-getfd proc/setns-pid1-and-helpers proc/signal-host-pids proc/pid-exe proc/inherited-fds
	# In proxy mode sbx runs a helper for the jail: the same attacks.
	jailrun --rootfs "$IMG" --net proxy --allow example.invalid -- /x/proc_attack trace
	jail "$out" -proxy-mode
	expect proc/ptrace-pid1-and-helpers-proxy-mode proc/proc-pid-mem-proxy-mode \
		proc/pidfd-getfd-proxy-mode proc/setns-pid1-and-helpers-proxy-mode
}

# seccomp: every check of the seccomp engineer's probe is an attack.  A
# kernel that takes no i386 system call at all (int 0x80 faults on the
# host too, with no filter) has no int 0x80 attack to stop: the probe
# skips those checks (seccomp_probe.c says when kernels do that).
grp_seccomp() {
	local no80=
	"$XB/seccomp_probe" --int80-works >/dev/null || no80=--no-int80
	jailrun --rootfs "$IMG" -- /x/seccomp_probe $no80
	printf '%s\n' "$out" | awk -v m="$MODE" '
		function slug(s) { gsub(/[^A-Za-z0-9_.-]+/, "_", s); sub(/_+$/, "", s); return s }
		/^contained / { sub(/^contained /, ""); print "contained " m ":seccomp/" slug($0); next }
		/^ESCAPED / { sub(/^ESCAPED /, ""); i = index($0, ": ");
			print "ESCAPED " m ":seccomp/" slug(substr($0, 1, i - 1)) ": " substr($0, i + 2) }' >>"$RES"
	local sum
	sum=$(printf '%s\n' "$out" | grep -E '^seccomp_probe: ' | tail -n 1)
	printf '%s\n' "$sum" | grep -qE ' 0 escaped, 0 failed$' && [ "$rc" -eq 0 ]
	verdict seccomp/probe-complete $? "rc=$rc: ${sum:-no summary}"
	[ "$(grep -c " $MODE:seccomp/" "$RES")" -ge 60 ] ||
		hostfail seccomp/probe-complete "fewer than 60 seccomp checks reported"
}

# proxy_script: from inside a --net proxy jail, the host's loopback
# listener by every spelling, plain and CONNECT, through sbx's proxy.
proxy_script() {
	echo "
		n=0
		for h in 127.0.0.1 localhost 127.1 2130706433 0x7f000001 0177.0.0.1 [::1] [::ffff:127.0.0.1] ${HOSTIP:-127.0.0.1}; do
			wget -q -T 3 -O /dev/null http://\$h:$PORT/ 2>/dev/null && n=\$((n + 1))
			printf 'CONNECT %s:$PORT HTTP/1.1\r\nHost: %s:$PORT\r\n\r\n' \$h \$h |
				nc -w 3 127.0.0.1 3128 2>/dev/null | head -n 1 | grep -q ' 200' && n=\$((n + 1))
		done
		if [ \$n -eq 0 ]; then echo 'contained net/host-listener-via-proxy (every spelling refused)'
		else echo \"ESCAPED net/host-listener-via-proxy: \$n requests went through\"; fi"
}

# Network: raw/packet/vsock, rtnetlink, host listeners, host Unix sockets.
grp_net() {
	local acc0
	acc0=$(grep -c "ACCEPT.* on '[^/]" "$BASE/listener.log")
	jailrun --rootfs "$IMG" -- /bin/sh -c "
		/x/net_attack sockets
		/x/net_attack netlink
		/x/net_attack tcp host-loopback-listener 127.0.0.1 $PORT
		/x/net_attack tcp host-address-listener ${HOSTIP:-127.0.0.1} $PORT
		/x/net_attack abstract host-abstract-socket $ABSTRACT"
	jail "$out"
	jailrun --rootfs "$IMG" --net loopback -- /bin/sh -c "
		/x/net_attack tcp host-loopback-listener 127.0.0.1 $PORT
		/x/net_attack tcp host-address-listener ${HOSTIP:-127.0.0.1} $PORT
		/x/net_attack abstract host-abstract-socket $ABSTRACT
		/x/net_attack netlink"
	jail "$out" -loopback-mode
	# Through sbx's proxy (allowlist: a name that does not resolve): the
	# host's loopback by every spelling, plain and CONNECT.
	local hp_before
	hp_before=$(grep -c "ACCEPT.* on ('127" "$BASE/listener.log")
	jailrun --rootfs "$IMG" --net proxy --allow example.invalid -- /bin/sh -c "$(proxy_script)"
	jail "$out"
	[ "$(grep -c "ACCEPT.* on ('127" "$BASE/listener.log")" -eq "$hp_before" ] ||
		hostfail net/host-listener-via-proxy "the host's loopback listener accepted a connection"
	# The host root (default profile) shows the host's Unix sockets.
	local sock=$HV/run/sock rsock=$RUNDIR/sock-root
	[ "$MODE" = user ] && sock=$HV/run/usock rsock=$RUNDIR/sock-user
	jailrun -- /bin/sh -c "$XB/net_attack unixpath host-unix-socket-run $rsock
		$XB/net_attack unixpath host-unix-socket-path $sock"
	jail "$out"
	# A pathname socket in a host directory the host-root view shows: no
	# namespace scopes those (README, Security: what sbx does not stop).
	limitation net/host-unix-socket-path "host-root mode: pathname sockets in visible host directories are not scoped by any namespace"
	local net1
	net1=$(ip -o link | sed 's/ qlen.*//'; ip -o addr; ip route; ip -6 route)
	[ "$net1" = "$NET0" ] || hostfail net/netlink-route-link "the host's links, addresses or routes changed"
	# TCP and abstract listeners (the pathname sockets have their own line).
	[ "$(grep -c "ACCEPT.* on '[^/]" "$BASE/listener.log")" -eq "$acc0" ] ||
		hostfail net/host-loopback-listener "a host listener accepted: $(grep "ACCEPT.* on '[^/]" "$BASE/listener.log" | tail -n 1)"
	expect net/raw-socket net/packet-socket net/vsock-socket net/netlink-route-link \
		net/host-loopback-listener net/host-address-listener net/host-abstract-socket \
		net/host-loopback-listener-loopback-mode net/host-abstract-socket-loopback-mode \
		net/host-unix-socket-run net/host-unix-socket-path net/host-listener-via-proxy
}

# State: the jail's own record and other sandboxes, planted symlinks for
# inspect/export/destroy, pid reuse.
grp_state() {
	local st
	st=$(state_of "$MODE")
	# A kept sandbox whose output holds a secret.
	jailrun --keep -n "esc-a-$MODE" -- /bin/sh -c "echo other-sandbox-$MAGIC; exit 3"
	local rec
	rec=$(grep -l "\"esc-a-$MODE\"" "$st"/sandboxes/*/record.json 2>/dev/null | head -n 1)
	local rsum
	rsum=$(md5sum "$rec" 2>/dev/null)
	jailrun -- /bin/sh -c "
		ls $st/sandboxes 2>/dev/null | grep -q . && echo 'ESCAPED state/state-dir-hidden: the jail lists $st/sandboxes'
		ls $(cache_of "$MODE")/images 2>/dev/null | grep -q . && echo 'ESCAPED state/state-dir-hidden: the jail lists the image cache'
		echo 'contained state/state-dir-hidden (not listable)'
		if cat $st/sandboxes/*/output.log $st/sandboxes/*/record.json 2>/dev/null | grep -q other-sandbox-$MAGIC; then
			echo 'ESCAPED state/read-other-sandbox: another sandbox output.log is readable from the jail'
		else echo 'contained state/read-other-sandbox (not readable)'; fi
		for r in $st/sandboxes/*/record.json $st/sandboxes/*/log.jsonl; do echo '{}' 2>/dev/null >\"\$r\"; done
		echo 'contained state/edit-own-record (host record compared)'"
	jail "$out"
	[ -n "$rec" ] && [ "$(md5sum "$rec")" = "$rsum" ] || hostfail state/edit-own-record "the kept record changed or is missing (${rec:-none})"
	expect state/state-dir-hidden state/read-other-sandbox state/edit-own-record
	# The same from a working directory that holds the state directory (a
	# developer's $HOME; root in /var/lib): the default profile's
	# copy-on-write view of it must not show the records either.
	local JR_CWD=$BASE/home
	[ "$MODE" = root ] && JR_CWD=$BASE
	jailrun -- /bin/sh -c "
		if ls \$PWD/${st#"$JR_CWD"/}/sandboxes 2>/dev/null | grep -q .; then
			echo 'ESCAPED state/state-dir-hidden-in-cwd: the jail lists \$PWD/${st#"$JR_CWD"/}/sandboxes'
		else echo 'contained state/state-dir-hidden-in-cwd (not listable)'; fi
		if cat \$PWD/${st#"$JR_CWD"/}/sandboxes/*/output.log 2>/dev/null | grep -q other-sandbox-$MAGIC; then
			echo 'ESCAPED state/read-other-sandbox-in-cwd: another sandbox output.log is readable'
		else echo 'contained state/read-other-sandbox-in-cwd (not readable)'; fi"
	jail "$out"
	expect state/state-dir-hidden-in-cwd state/read-other-sandbox-in-cwd
	JR_CWD=

	# Planted symlinks, a fifo, a deep tree, odd names; then inspect, export
	# and destroy on the host.
	local before pw0 derr bad
	before=$(sig_hv)
	pw0=$(md5sum /etc/passwd)
	jailrun --keep -n "esc-c-$MODE" --rootfs "$IMG" -- /bin/sh -c "
		ln -s $HV/tfile /x1; ln -s /etc/passwd /x2; ln -s $HV/tsym /d1; ln -s $HV /hvlink
		ln -s ../../../../../../..$HV/tfile /x3; mkdir -p /victims; ln -s $HV/tsym /victims/tsym
		mkfifo /fifo; mkfifo /victims/fifo2
		mkdir -p /deep; cd /deep; i=0; while [ \$i -lt 300 ]; do mkdir d; cd d; i=\$((i+1)); done; cd /
		printf x > \"/odd
name\"; printf x > \"\$(printf '/bad\\377utf8')\"
		printf x > \"\$(printf '/esc\\033]0;pwned\\007\\033[2J\\033[31mred')\"
		printf x > '/q\"uote\\back'""
		printf x > '/<script>alert(1)<'; printf x > '/\"><img src=x onerror=alert(2)>'
		rm -rf /etc; ln -s / /etc; exit 1"
	local c=esc-c-$MODE t0 r
	as_mode "$MODE" timeout -k 2 30 "$SBX" inspect --changes "$c" >"$BASE/changes-$MODE.txt" 2>&1
	r=$?
	[ "$r" -ne 124 ] && [ "$r" -ne 137 ] && grep -q x1 "$BASE/changes-$MODE.txt"
	verdict state/planted-symlink-inspect $? "inspect --changes rc=$r, $(wc -l <"$BASE/changes-$MODE.txt") lines"
	as_mode "$MODE" timeout -k 2 30 "$SBX" inspect --json "$c" >/dev/null 2>&1
	r=$?
	[ "$r" -ne 124 ] && [ "$r" -ne 137 ]
	verdict state/planted-fifo-deep-tree-no-hang $? "inspect --json rc=$r"
	# Names the jail chose never reach the caller's terminal raw (escape
	# sequences) and never break the JSON.
	local esc_bytes
	esc_bytes=$(tr -cd '\033\007' <"$BASE/changes-$MODE.txt" | wc -c)
	grep -q 'esc' "$BASE/changes-$MODE.txt" && [ "$esc_bytes" -eq 0 ]
	verdict state/inspect-terminal-escapes $? "inspect --changes: $esc_bytes raw ESC/BEL bytes from a planted name"
	as_mode "$MODE" timeout -k 2 30 "$SBX" inspect --json --changes "$c" >"$BASE/changes-$MODE.json" 2>&1
	r=$?
	$PY -c 'import json, sys; d = json.load(open(sys.argv[1])); s = json.dumps(d); assert "esc" in s and "uote" in s' \
		"$BASE/changes-$MODE.json" 2>/dev/null
	verdict state/inspect-json-odd-names $? "inspect --json --changes rc=$r parses, odd names included"
	# The HTML report of those names: escaped, and a policy under which
	# markup that got through could run no script (only the report's own,
	# by its hash; no inline handler).
	as_mode "$MODE" timeout -k 2 30 "$SBX" inspect --html report.html "$c" >/dev/null 2>&1
	r=$?
	bad=$($PY - "$BASE/wd-$MODE/report.html" <<'PY' 2>&1
import base64, hashlib, re, sys
h = open(sys.argv[1], encoding="utf-8", errors="replace").read()
bad = []
m = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', h)
pol = dict(d.strip().split(" ", 1) for d in (m.group(1) if m else "").split(";") if d.strip())
js = re.findall(r"<script>(.*?)</script>", h, re.S)
want = ["'sha256-%s'" % base64.b64encode(hashlib.sha256(j.encode()).digest()).decode() for j in js]
if pol.get("default-src") != "'none'": bad.append("default-src %r" % pol.get("default-src"))
if len(js) != 1 or pol.get("script-src") != want[0]: bad.append("script-src %r for %d scripts" % (pol.get("script-src"), len(js)))
if re.search(r"<[^>]*\son[a-z]+\s*=", h, re.I): bad.append("an inline event handler")
if "<script>alert" in h or "<img src=x" in h: bad.append("a planted name unescaped")
if "&lt;script&gt;alert(1)&lt;" not in h: bad.append("the planted name is missing")
print("; ".join(bad))
PY
)
	[ "$r" -eq 0 ] && [ -z "$bad" ]
	verdict state/report-csp-hostile-names $? "inspect --html rc=$r${bad:+: $bad}"
	rm -f "$BASE/wd-$MODE/report.html"
	rm -f "$BASE/wd-$MODE/exp.tar"
	as_mode "$MODE" timeout -k 2 30 "$SBX" export "$c" -o exp.tar >/dev/null 2>"$BASE/export-$MODE.err"
	r=$?
	bad=
	[ "$r" -eq 124 ] || [ "$r" -eq 137 ] && bad="export hung"
	if [ -f "$BASE/wd-$MODE/exp.tar" ]; then
		grep -qa "tfile $MAGIC" "$BASE/wd-$MODE/exp.tar" && bad="$bad the host file's content is in the export"
		grep -qa '^daemon:' "$BASE/wd-$MODE/exp.tar" && bad="$bad the host /etc/passwd is in the export"
		bsdtar -tvf "$BASE/wd-$MODE/exp.tar" 2>/dev/null | grep -qE '^l.* x1 -> ' || bad="$bad x1 not exported as a symlink"
	fi
	[ -z "$bad" ]
	verdict state/planted-symlink-export $? "${bad:-export rc=$r, symlinks exported as symlinks}"
	as_mode "$MODE" timeout -k 2 30 "$SBX" destroy "$c" >/dev/null 2>&1
	r=$?
	bad=
	[ "$(sig_hv)" = "$before" ] || bad="$HV changed"
	[ "$(md5sum /etc/passwd)" = "$pw0" ] || bad="$bad /etc/passwd changed"
	[ -e "$ROOT/sbx" ] && [ -d "$HV/tsym" ] || bad="$bad host paths gone"
	[ "$r" -eq 0 ] || bad="$bad destroy rc=$r"
	[ -z "$bad" ]
	verdict state/planted-symlink-destroy $? "${bad:-destroy rc=$r, host targets intact}"
	[ "$(sig_hv)" = "$before" ] && [ "$(md5sum /etc/passwd)" = "$pw0" ] ||
		hostfail state/planted-symlink-inspect "a host target changed"

	# A kept sandbox's layer is hostile input for the next jail over it:
	# the jail renames the top of its working directory's mount point (a
	# plain directory of its upper layer) and leaves a symlink to a host
	# directory there; `sbx exec` into the kept sandbox builds a new jail
	# over that layer (exit 0 or 125; nothing mounted or written outside).
	before=$(sig_hv)
	jailrun --keep -n "esc-f-$MODE" --rootfs "$IMG" -- /bin/sh -c '
		top=/$(echo "$PWD" | cut -d/ -f2); cd /
		mv "$top" "$top.old" && ln -s '"$HV/tsym"' "$top"; exit 1'
	derr=$(as_mode "$MODE" timeout -k 2 30 "$SBX" exec "esc-f-$MODE" -- /bin/sh -c 'echo pwned > marker; echo pwned > /tmp/marker' 2>&1 >/dev/null)
	r=$?
	bad=
	[ "$(sig_hv)" = "$before" ] || bad="$HV changed: $(ls -A "$HV/tsym" | head -n 3 | tr '\n' ' ')"
	[ "$(host_mounts)" -eq 0 ] || bad="$bad a mount under $BASE on the host"
	case $r in 0 | 125) ;; *) bad="$bad exec exited $r" ;; esac
	[ -z "$bad" ]
	verdict state/planted-mountpoint-symlink-exec $? "${bad:-exec into the kept layer: rc=$r${derr:+: ${derr:0:100}}}"
	as_mode "$MODE" "$SBX" destroy "esc-f-$MODE" >/dev/null 2>&1

	# A running jail flips paths of its layer between files/dirs and
	# symlinks to host files while the host exports and inspects it
	# (docker cp's CVE-2018-15664): no host content in any export.
	before=$(sig_hv)
	jailrun --keep -n "esc-g-$MODE" --time 5s --rootfs "$IMG" -- /bin/sh -c "
		mkdir -p /race; while :; do
			echo x > /race/f; mkdir -p /race/d; echo y > /race/d/g
			rm -f /race/f; ln -s $HV/tfile /race/f
			rm -rf /race/d; ln -s $HV/secret /race/d; rm -f /race/f /race/d
		done" &
	local jr=$! i nexp=0 leaked=0
	sleep 0.5
	for i in $(seq 40); do
		kill -0 "$jr" 2>/dev/null || break
		rm -f "$BASE/wd-$MODE/race.tar"
		as_mode "$MODE" timeout -k 2 20 "$SBX" export "esc-g-$MODE" -o race.tar >/dev/null 2>&1 && nexp=$((nexp + 1))
		grep -qa -e "tfile $MAGIC" -e "secret $MAGIC" "$BASE/wd-$MODE/race.tar" 2>/dev/null && leaked=$((leaked + 1))
		as_mode "$MODE" timeout -k 2 20 "$SBX" inspect --changes "esc-g-$MODE" >/dev/null 2>&1
	done
	wait "$jr"
	[ "$leaked" -eq 0 ] && [ "$(sig_hv)" = "$before" ]
	verdict state/export-race-running $? "$nexp exports of a running jail flipping files and symlinks: $leaked held host content"
	as_mode "$MODE" "$SBX" destroy "esc-g-$MODE" >/dev/null 2>&1

	# A few kilobytes on disk, 64 GiB apparent: export writes the data (the
	# stream is cut at 64 MiB, so a dense export cannot fill the host),
	# inspect --changes reads no content; the tarball extracts to the same.
	local sz t0 ms
	jailrun --keep -n "esc-sp-$MODE" --rootfs "$IMG" -- /bin/sh -c \
		'truncate -s 64G /sparse && printf sbx-sparse-data | dd of=/sparse bs=1 seek=1073741824 conv=notrunc 2>/dev/null'
	t0=$(date +%s%N)
	sz=$(as_mode "$MODE" timeout -k 2 60 "$SBX" export "esc-sp-$MODE" -o - 2>/dev/null | head -c 67108864 | tee "$BASE/sparse-$MODE.tar" | wc -c)
	ms=$((($(date +%s%N) - t0) / 1000000))
	bad=
	[ "$sz" -lt 1048576 ] || bad="the export of a 64 GiB sparse file streamed $sz bytes or more"
	rm -rf "$BASE/sparse-x-$MODE" && mkdir -p "$BASE/sparse-x-$MODE" &&
		tar -C "$BASE/sparse-x-$MODE" -xf "$BASE/sparse-$MODE.tar" sparse 2>/dev/null &&
		[ "$(stat -c %s "$BASE/sparse-x-$MODE/sparse")" = 68719476736 ] &&
		[ "$(dd if="$BASE/sparse-x-$MODE/sparse" bs=1 skip=1073741824 count=15 2>/dev/null)" = sbx-sparse-data ] ||
		bad="$bad; it does not extract to the same sparse file"
	as_mode "$MODE" timeout -k 2 30 "$SBX" inspect --changes "esc-sp-$MODE" 2>&1 | grep -q 'sparse' ||
		bad="$bad; inspect --changes did not list it within 30 s"
	rm -rf "$BASE/sparse-x-$MODE" "$BASE/sparse-$MODE.tar"
	[ -z "$bad" ]
	verdict state/export-sparse-64g $? "${bad:-a 64 GiB sparse file exported as $sz bytes in $ms ms, extracts the same}"
	as_mode "$MODE" "$SBX" destroy "esc-sp-$MODE" >/dev/null 2>&1

	# Pid reuse: a kept sandbox's record now names a live host process.
	local victim_uid=0 sp sp2 n drec
	[ "$MODE" = user ] && victim_uid=65534
	sp=$(sentinel "$victim_uid")
	sp2=$(sentinel "$victim_uid")
	PIDS_TO_KILL+=("$sp" "$sp2")
	# d, e: start times stale (as after pid reuse); r: a second sentinel's
	# own start time, as when a pid comes back within the same clock tick (the
	# start time counts 10 ms ticks) or the record was forged.
	for n in d e r; do
		jailrun --keep -n "esc-$n-$MODE" --rootfs "$IMG" -- /bin/sh -c 'exit 3'
		drec=$(grep -l "\"esc-$n-$MODE\"" "$st"/sandboxes/*/record.json 2>/dev/null | head -n 1)
		[ -n "$drec" ] && $PY - "$drec" "$([ $n = r ] && echo "$sp2" || echo "$sp")" "$n" <<'PY'
import json, os, sys
p, pid, n = sys.argv[1], int(sys.argv[2]), sys.argv[3]
st = os.stat(p)
r = json.load(open(p))
for k in ("init_pid", "supervisor_pid"):
    r[k] = pid
if n == "r":
    start = int(open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[19])
    r["init_start"] = r["supervisor_start"] = start
r["state"] = "running"
open(p, "w").write(json.dumps(r, indent=2))
os.chown(p, st.st_uid, st.st_gid)
PY
	done
	sleep 0.1
	derr=$(as_mode "$MODE" timeout -k 2 30 "$SBX" destroy "esc-d-$MODE" 2>&1 >/dev/null)
	r=$?
	sleep 0.2
	grep -q sbxsentinel "/proc/$sp/cmdline" 2>/dev/null && [ "$r" -ne 124 ]
	verdict state/pid-reuse-destroy $? "host pid $sp (uid $victim_uid) alive after destroy (rc=$r${derr:+: ${derr:0:120}})"
	derr=$(as_mode "$MODE" timeout -k 2 30 "$SBX" destroy "esc-r-$MODE" 2>&1 >/dev/null)
	r=$?
	sleep 0.2
	grep -q sbxsentinel "/proc/$sp2/cmdline" 2>/dev/null && [ "$r" -ne 124 ]
	verdict state/pid-reuse-same-start $? "host pid $sp2, recorded with its own start time, alive after destroy (rc=$r${derr:+: ${derr:0:120}})"
	derr=$(as_mode "$MODE" timeout -k 2 30 "$SBX" destroy --stale 2>&1 >/dev/null)
	r=$?
	sleep 0.2
	grep -q sbxsentinel "/proc/$sp/cmdline" 2>/dev/null && grep -q sbxsentinel "/proc/$sp2/cmdline" 2>/dev/null && [ "$r" -ne 124 ]
	verdict state/pid-reuse-destroy-stale $? "host pids $sp and $sp2 alive after destroy --stale (rc=$r${derr:+: ${derr:0:120}})"
	kill "$sp" "$sp2" 2>/dev/null
	as_mode "$MODE" "$SBX" destroy "esc-r-$MODE" >/dev/null 2>&1
}

# Terminal: TIOCSTI, TIOCLINUX, the controlling tty, with sbx run in a pty
# (the caller's terminal), with and without -t.  Whatever is pushed into the
# caller's terminal is then read and run by the caller's shell.
grp_tty() {
	local pwn=$HV/tiocsti-pwned-$MODE t
	for t in "" -t; do
		local sfx=${t:+-with-t}
		out=$(tty_harness "$pwn" "$t")
		jail "$out" "$sfx"
		local read_line
		read_line=$(printf '%s\n' "$out" | grep -o 'READ:\[.*\]' | head -n 1)
		[ ! -e "$pwn" ] && [ "$read_line" = "READ:[]" ]
		verdict "tty/tiocsti-caller-shell$sfx" $? "the caller's shell read '${read_line:-nothing}' after the run"
		[ ! -e "$pwn" ] || hostfail "tty/tiocsti$sfx" "the injected command ran on the host"
		rm -f "$pwn"
		expect "tty/tiocsti$sfx" "tty/tioclinux$sfx" "tty/steal-ctty$sfx" "tty/host-pts$sfx"
	done
}
# tty_harness PWNFILE -t|""|control: run the three tty attacks with a pty
# as the caller's terminal, then let the caller's shell read and run what
# the terminal holds; prints everything the terminal showed.
tty_harness() {
	local pwn=$1 t=$2
	TTY_ATTACK=$XB/tty_attack "$PY" - "$BASE" "$MODE" "$SBX" "$IMG" "$pwn" "$t" <<'PY'
import os, pty, select, sys, time
base, mode, sbx, img, pwn, t = sys.argv[1:]
env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "TERM": "xterm"}
pre = []
if mode == "root":
    env.update(SBX_STATE_DIR=base + "/state-root", SBX_CACHE_DIR=base + "/cache-root")
    wd = base + "/wd-root"
else:
    env.update(HOME=base + "/home")
    wd = base + "/wd-user"
    pre = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all", "--"]
pid, fd = pty.fork()
if pid == 0:
    os.chdir(wd)
    st = os.fstat(0)
    dev = "%d:%d:%d" % (os.major(st.st_rdev), os.minor(st.st_rdev), st.st_dev)
    run = " ".join([sbx, "run", "-q"] + ([t] if t else []) + ["--rootfs", img, "--"])
    if t == "control":  # no sbx at all: the attack on an unconfined host
        run = ""
    prog = os.environ["TTY_ATTACK"] if t == "control" else "/x/tty_attack"
    script = (run + " " + prog + " tiocsti 'touch " + pwn + "\n'; " +
              run + " " + prog + " tioclinux; " +
              (run + " " + prog + " ctty " + dev + "; " if t != "control" else "") +
              "read -t 2 x; echo \"READ:[$x]\"; [ -n \"$x\" ] && eval \"$x\"; echo TTY-DONE")
    os.execvpe(pre[0] if pre else "bash", pre + ["bash", "-c", script], env)
buf, end = b"", time.time() + 60
while time.time() < end and b"TTY-DONE" not in buf:
    r, _, _ = select.select([fd], [], [], 0.5)
    if r:
        try:
            d = os.read(fd, 4096)
        except OSError:
            break
        if not d:
            break
        buf += d
os.waitpid(pid, 0)
sys.stdout.write(buf.decode("utf-8", "replace").replace("\r", ""))
PY
}

# Resources: fork bomb, memory, disk (writable layer, tmpfs), fds, cpu
# under a time limit, orphans and zombies, SysV ipc; the host keeps working.
grp_res() {
	local t0 host_ok
	jailrun --rootfs "$IMG" --pids 64 -- /x/res_attack forkbomb 20000 3 &
	local bomb=$!
	sleep 1.5
	t0=$(date +%s%N)
	timeout 5 sh -c 'echo ok' >/dev/null && sentinels_alive
	host_ok=$?
	verdict res/host-responsive-during-fork-bomb "$host_ok" "a host command ran in $((($(date +%s%N) - t0) / 1000000)) ms"
	wait "$bomb"
	jailrun --rootfs "$IMG" --pids 64 -- /x/res_attack forkbomb 20000 0
	jail "$out"
	expect res/fork-bomb
	# No --pids: the built-in profiles' own limit (4096) stops it; the bomb
	# gives up by itself at 4200 children (8400 processes) when nothing does.
	jailrun --rootfs "$IMG" -- /x/res_attack forkbomb 4200 0
	jail "$out" -default-profile
	jailrun -p agent -- "$XB/res_attack" forkbomb 4200 0
	jail "$out" -agent-profile-host-root
	expect res/fork-bomb-default-profile res/fork-bomb-agent-profile-host-root
	jailrun --rootfs "$IMG" --memory 64m -- /x/res_attack memhog 64
	jail "$out"
	[ "$rc" -eq 137 ] || printf '%s\n' "$out" | grep -q '^contained res/memory-hog'
	verdict res/memory-hog $? "--memory 64m: rc=$rc"
	# Memory through a tmpfs (/dev/shm pages are charged to the jail too).
	jailrun --rootfs "$IMG" --memory 64m -- /x/res_attack fill memory-hog-dev-shm /dev/shm/fill 64
	[ "$rc" -eq 137 ] || printf '%s\n' "$out" | grep -q '^contained res/memory-hog-dev-shm'
	verdict res/memory-hog-dev-shm $? "--memory 64m, 264 MiB into /dev/shm: rc=$rc$(printf '%s\n' "$out" | grep -o ': wrote.*' | head -n 1)"
	printf '[sandbox]\nextends = default\n[limits]\ndisk = 32m\n' >"$BASE/disk-$MODE.ini"
	chmod 0644 "$BASE/disk-$MODE.ini"
	: >"$BASE/disk-$MODE.jsonl" && chmod 0666 "$BASE/disk-$MODE.jsonl"
	jailrun -p "$BASE/disk-$MODE.ini" --log-json "$BASE/disk-$MODE.jsonl" --rootfs "$IMG" -- \
		/x/res_attack fill disk-fill-writable-layer /fill 32
	jail "$out"
	# As root the layer is a tmpfs on the state directory, unprivileged a
	# tmpfs in the jail's mount namespace: both stop the fill.
	expect res/disk-fill-writable-layer
	# No [limits] disk: the default cap leaves the state filesystem's reserve
	# (256 MiB here) free, so every other sandbox on it still starts.  The
	# state directory is on a filesystem of 1.5 GiB of the battery's own.
	local small=$BASE/small-$MODE avail cap_mb left st2
	mkdir -p "$small" && mount -t tmpfs -o size=1536m sbx-escape-small "$small" &&
		mkdir -p "$small/state" && chmod 0700 "$small/state" &&
		{ [ "$MODE" = root ] || chown 65534:65534 "$small/state"; }
	avail=$(($(stat -f -c '%a * %S' "$small/state")))
	cap_mb=$(((avail - (256 << 20)) >> 20))
	# The fill, then a file filling the layer up that stays: the sandbox is
	# kept full while the next one starts.
	JR_ENV="SBX_STATE_DIR=$small/state" jailrun --keep --rootfs "$IMG" -- /bin/sh -c \
		"/x/res_attack fill disk-fill-default-cap /fill $cap_mb; dd if=/dev/zero of=/kept bs=1M 2>/dev/null; true"
	jail "$out"
	left=$(($(stat -f -c '%a * %S' "$small/state") >> 20))
	JR_ENV="SBX_STATE_DIR=$small/state" jailrun --rootfs "$IMG" -- /bin/sh -c 'echo x >/made && cat /made'
	st2=$rc
	[ "$left" -ge 240 ] && [ "$st2" -eq 0 ] && [ "$out" = x ]
	verdict res/disk-fill-default-cap-others-start $? "after the fill, $left MiB of the state filesystem free; the next sandbox rc=$st2"
	JR_ENV="SBX_STATE_DIR=$small/state" as_mode "$MODE" "$SBX" destroy --all >/dev/null 2>&1
	umount "$small" 2>/dev/null || umount -l "$small"
	expect res/disk-fill-default-cap
	# The allowlist proxy under 10,000 idle connections from the jail: new
	# requests are still served (the flood pushes out its own oldest), and
	# the record counts what was closed or refused.
	local pst p_idle p_evicted p_refused p_allowed
	jailrun --keep -n "esc-flood-$MODE" --rootfs "$IMG" --net proxy --allow "127.0.0.1:$PORT" -- \
		/x/net_attack proxyflood proxy-idle-flood 3128 "127.0.0.1:$PORT" 10000
	jail "$out"
	pst=$(as_mode "$MODE" "$SBX" inspect --json "esc-flood-$MODE" 2>/dev/null |
		jq -r '.proxy_stats | "\(.idle) \(.evicted) \(.refused) \(.allowed)"')
	as_mode "$MODE" "$SBX" destroy "esc-flood-$MODE" >/dev/null 2>&1
	read -r p_idle p_evicted p_refused p_allowed <<<"$pst"
	# The jail waits until it has seen 1,000 of its idle connections closed
	# by the proxy (room made; a head timeout after 10 s): the record counts
	# at least as many idle, most of them closed to make room.
	local seen
	seen=$(printf '%s\n' "$out" | sed -nE 's/.* opened, ([0-9]+) closed by the proxy.*/\1/p' | head -n 1)
	[ "${seen:-0}" -ge 1000 ] && [ "${p_idle:-0}" -ge "$seen" ] 2>/dev/null &&
		[ "${p_evicted:-0}" -ge 500 ] && [ "${p_allowed:-0}" -ge 60 ]
	verdict res/proxy-idle-flood-counted $? "the jail saw ${seen:-?} closed; the record counts ${p_idle:-?} idle, ${p_evicted:-?} closed to make room, ${p_refused:-?} refused, ${p_allowed:-?} allowed"
	expect net/proxy-idle-flood
	jailrun --rootfs "$IMG" --tmpfs /big:16m -- /x/res_attack fill disk-fill-tmpfs /big/fill 16
	jail "$out"
	expect res/disk-fill-tmpfs
	jailrun --rootfs "$IMG" -- /x/res_attack fds
	jail "$out"
	expect res/fd-exhaustion
	t0=$(date +%s)
	jailrun --rootfs "$IMG" --time 2s -- /x/res_attack spin
	local secs=$(($(date +%s) - t0))
	[ "$rc" -eq 124 ] && [ "$secs" -le 20 ]
	verdict res/cpu-spin-time-limit $? "--time 2s: rc=$rc after ${secs}s"
	# As uid 4242 inside: as root that is host uid 104242, used by nothing
	# else, so any process of that uid left over is the jail's.
	local tag=sbxorph$$${MODE:0:1} left zombies uid_left=
	jailrun --rootfs "$IMG" -u 4242:4242 -- /x/res_attack orphans "$tag"
	jail "$out"
	sleep 0.5
	left=$(pgrep -x "$tag" | wc -l)
	zombies=$(ps -eo stat=,comm= | awk '$1 ~ /^Z/ && $2 == "res_attack"' | wc -l)
	[ "$MODE" = root ] && uid_left=$(ps -o pid=,comm= -u "$((JAIL_ROOT_UID + 4242))" | head -n 3 | tr "\n" " ")
	[ "$left" -eq 0 ] && [ "$zombies" -eq 0 ] && [ -z "$uid_left" ] && [ "$rc" -eq 0 ]
	verdict res/orphans-and-zombies $? "rc=$rc; after the run: $left daemons, $zombies zombies${uid_left:+, host uid 104242: $uid_left}"
	for p in $(pgrep -x "$tag"); do kill -KILL "$p"; done
	# The same daemons must not outlive a time limit either.
	tag=sbxtime$$${MODE:0:1}
	jailrun --rootfs "$IMG" --time 2s -- /bin/sh -c "/x/res_attack orphans $tag; sleep 1000"
	sleep 0.5
	left=$(pgrep -x "$tag" | wc -l)
	[ "$rc" -eq 124 ] && [ "$left" -eq 0 ]
	verdict res/time-limit-orphans $? "--time 2s: rc=$rc, $left daemons ignoring TERM/HUP left"
	for p in $(pgrep -x "$tag"); do kill -KILL "$p"; done
	jailrun --rootfs "$IMG" -- /x/res_attack ipc "${HOST_SHMKEY:-1}" "${HOST_SHMID:-0}"
	jail "$out"
	local ipc1
	ipc1=$(jail_ipc)
	[ "$ipc1" = "$IPC0" ] || hostfail res/ipc-exhaustion "the host has new SysV ipc objects of a jail's uid: $(diff <(echo "$IPC0") <(echo "$ipc1") | grep '^>' | head -n 2 | tr '\n' ' ')"
	expect res/ipc-host-shm res/ipc-exhaustion
	# The captured output and the run log stay bounded whatever the jail
	# prints or provokes.
	local sd
	sd=$(state_of "$MODE")
	as_mode "$MODE" timeout -k 5 60 "$SBX" run -q --keep -n "esc-h-$MODE" --rootfs "$IMG" -- \
		/bin/sh -c 'head -c 67108864 /dev/zero | tr "\0" x; head -c 8388608 /dev/zero | tr "\0" y >&2' \
		>/dev/null 2>&1
	local olog sz
	olog=$(grep -l "\"esc-h-$MODE\"" "$sd"/sandboxes/*/record.json 2>/dev/null | head -n 1)
	olog=${olog%/record.json}/output.log
	sz=$(stat -c %s "$olog" 2>/dev/null || echo missing)
	[ "$sz" != missing ] && [ "$sz" -le $((9 * 1024 * 1024)) ]
	verdict res/output-log-flood $? "72 MiB printed: output.log is $sz bytes"
	as_mode "$MODE" "$SBX" destroy "esc-h-$MODE" >/dev/null 2>&1
	as_mode "$MODE" timeout -k 5 60 "$SBX" run -q --keep -n "esc-i-$MODE" --rootfs "$IMG" -- \
		/x/res_attack sysflood 3 >/dev/null 2>&1
	olog=$(grep -l "\"esc-i-$MODE\"" "$sd"/sandboxes/*/record.json 2>/dev/null | head -n 1)
	olog=${olog%/record.json}/log.jsonl
	sz=$(stat -c %s "$olog" 2>/dev/null || echo missing)
	[ "$sz" != missing ] && [ "$sz" -le $((1024 * 1024)) ] && grep -q '"event":"seccomp"' "$olog"
	verdict res/seccomp-audit-flood $? "3 s of blocked syscalls in 4 processes: log.jsonl is $sz bytes"
	as_mode "$MODE" "$SBX" destroy "esc-i-$MODE" >/dev/null 2>&1
	sentinels_alive
	verdict res/host-sentinels-survive $? "host sentinels alive after the resource attacks"
}

# What the jail sees of the host through read-only views: the host's
# network devices and MAC addresses, block devices, firmware and DMI ids,
# other cgroups (a sentinel cgroup the battery made) and the host's cgroup
# path, /proc's hardware files, the boot id and (host root) the machine id.
# see_script ROOT: the probe, for a jail whose root is ROOT (image|host);
# it prints contained/ESCAPED lines for class see/.
see_script() {
	cat <<SH
		v() { if [ -n "\$2" ]; then echo "ESCAPED see/\$1: \$2"; else echo "contained see/\$1 (\$3)"; fi; }
		s=
		for i in $SEE_IFS; do [ -e /sys/class/net/\$i ] || [ -e /sys/devices/virtual/net/\$i ] && s="\$s \$i"; done
		for p in /sys/class/net/*/address /sys/devices/*/*/net/*/address; do
			[ -r "\$p" ] && case " $SEE_MACS " in *" \$(cat "\$p") "*) s="\$s mac:\$p" ;; esac
		done
		v sys-host-net-devices "\$s" "no host interface or MAC address under /sys"
		s=\$(ls /sys/block /sys/class/block /sys/dev/block 2>/dev/null | head -n 3 | tr '\n' ' ')
		[ -n "$SEE_DISK" ] && [ -z "\$s" ] && s=\$(find /sys -name '$SEE_DISK*' 2>/dev/null | head -n 2 | tr '\n' ' ')
		v sys-block-devices "\$s" "no block device under /sys"
		s=\$(ls -d /sys/firmware/* /sys/class/dmi/id/* /sys/devices/virtual/dmi/* /sys/devices/pci* /sys/devices/platform /sys/bus/* /sys/module/* 2>/dev/null | head -n 3 | tr '\n' ' ')
		v sys-firmware-dmi-devices "\$s" "no firmware, DMI, PCI, platform, bus or module entry"
		s=\$(find /sys/fs/cgroup -name '$SEE_CG' 2>/dev/null | head -n 1)
		grep -q 'sbx-' /proc/self/cgroup 2>/dev/null && s="\$s /proc/self/cgroup: \$(grep -m1 sbx- /proc/self/cgroup)"
		v sys-other-cgroups "\$s" "no other cgroup under /sys/fs/cgroup, cgroup paths from its own root"
		s=
		for f in partitions diskstats swaps cmdline modules iomem ioports; do
			[ -n "\$(head -c 64 /proc/\$f 2>/dev/null)" ] && s="\$s /proc/\$f"
		done
		v proc-host-hardware "\$s" "partitions, diskstats, swaps, cmdline, modules, iomem, ioports empty"
		b=\$(cat /proc/sys/kernel/random/boot_id 2>/dev/null)
		[ "\$b" = "$SEE_BOOT" ] && s="the host's boot id \$b" || s=
		v boot-id "\$s" "the jail's boot id is its own"
		if [ "\$1" = host ]; then
			m=\$(cat /etc/machine-id 2>/dev/null)
			[ -n "$SEE_MACHINE" ] && [ "\$m" = "$SEE_MACHINE" ] && s="the host's machine id" || s=
			v machine-id "\$s" "/etc/machine-id is the jail's own"
		fi
SH
}
grp_see() {
	local root
	for root in image host; do
		if [ $root = image ]; then
			jailrun --rootfs "$IMG" --net none -- /bin/sh -c "$(see_script)" sh image
		else
			jailrun --net none -- /bin/sh -c "$(see_script)" sh host
		fi
		jail "$out" "-$root"
		expect see/sys-host-net-devices-$root see/sys-block-devices-$root \
			see/sys-firmware-dmi-devices-$root see/sys-other-cgroups-$root \
			see/proc-host-hardware-$root see/boot-id-$root
	done
	expect see/machine-id-host
	# With limits (a cgroup of its own as root): still only its own.
	jailrun --rootfs "$IMG" --net none --memory 256m --pids 256 -- /bin/sh -c "$(see_script)" sh image
	jail "$(grep 'see/sys-other-cgroups' <<<"$out")" -limited
	expect see/sys-other-cgroups-limited
}

# The runtime CVE classes of 2019-2025, as attacks on sbx's own mechanisms
# (tests/escape/README.md, group cve): planted /dev and /proc symlinks in an
# image and in a running jail, `sbx exec` with descriptor working
# directories, /proc/PID/exe of sbx's processes with the binary owned by
# the jail's own uid, and cgroup redirection.
grp_cve() {
	local I=$BASE/img name=cve-run-$MODE own=$BASE/sbx-own-$MODE owner sum0 sum1 i n bad
	local mark=cve-marker-$$-$MODE mdir=$BASE/cve-wd-$MODE bgout=$BASE/cve-run-$MODE.out
	# 1. The image's /dev/null, /dev/console, /dev/ptmx, /dev/pts/ptmx and
	# /proc entries are symlinks to masked or read-only /proc files.
	jailrun --rootfs "$I/cve-dev-symlinks.tar" -- /x/cve_attack masks mask-source-symlink-image
	if [ "$rc" -eq 125 ]; then
		verdict cve/mask-source-symlink-image 0 "refused (125): $(why)"
	else
		jail "$out"
	fi
	# 2. A running jail, run by a copy of sbx owned by the jail's own uid
	# (rootless: what the jail's root is on the host).  It plants /dev
	# symlinks and watches every process for an exe it could write.
	owner=$JAIL_ROOT_UID
	[ "$MODE" = user ] && owner=65534
	cp "$SBX" "$own" && chown "$owner:$owner" "$own" && chmod 0755 "$own"
	sum0=$(sha256sum <"$own")
	mkdir -p "$mdir" && chmod 0777 "$mdir" && touch "$mdir/$mark"
	as_mode "$MODE" timeout -k 5 120 "$own" run -q -n "$name" --rootfs "$IMG" -- /bin/sh -c \
		'/x/cve_attack plant /tmp; exec /x/cve_attack exewrite 90 /tmp/stop' >"$bgout" 2>&1 &
	local bg=$!
	for i in $(seq 100); do
		as_mode "$MODE" "$own" exec "$name" -- test -L /dev/null 2>/dev/null && break
		sleep 0.1
	done
	# sbx exec, 20 times, stdin a pipe; then with a pty (-t) whose /dev/ptmx
	# the jail replaced: each must still work, on a pty of the jail's devpts.
	n=0
	for i in $(seq 20); do
		echo | as_mode "$MODE" "$own" exec "$name" -- true 2>/dev/null || n=$((n + 1))
	done
	# (script(1) sends its terminal's EOF character at the end of its
	# input, a NUL once sbx made that terminal raw: the jail's pty echoes it
	# as "^@".)
	out=$(as_mode "$MODE" script -qec "$own exec -t $name -- tty" /dev/null 2>&1 | tr -d '\r\0' | sed 's/\^@//g')
	bad=
	[ "$n" -eq 0 ] || bad="$n of 20 sbx exec failed;"
	grep -qE '^/dev/pts/[0-9]+$' <<<"$out" || bad="$bad sbx exec -t got no pty of the jail ($(head -c 160 <<<"$out"));"
	# Nothing sbx exec did went through a planted link: the files stay empty.
	out=$(as_mode "$MODE" "$own" exec "$name" -- /bin/sh -c 'cat /tmp/planted-* | wc -c' 2>&1)
	[ "$out" = 0 ] || bad="$bad the planted targets hold ${out:0:40} bytes;"
	[ -z "$bad" ]
	verdict cve/planted-dev-links-exec $? "${bad:-20 sbx exec and one sbx exec -t through /dev/null, /dev/ptmx, /dev/console and /dev/tty replaced by symlinks: all ran, on the devpts of the jail, nothing written through them}"
	# The masks hold for what sbx exec starts in that jail.
	out=$(as_mode "$MODE" "$own" exec "$name" -- /x/cve_attack masks masks-hold-for-exec planted 2>&1)
	jail "$out"
	# CVE-2024-21626: a working directory of /proc/self/fd/N (whatever the
	# entering process holds), from a host directory with a marker in it.
	bad=
	for i in $(seq 3 15); do
		out=$(JR_CWD=$mdir as_mode "$MODE" "$own" exec -w "/proc/self/fd/$i" "$name" -- \
			/bin/sh -c 'pwd; ls -a . .. 2>&1; ls /proc/self/fd' 2>&1)
		if grep -qE "$mark|record\.json|sandboxes|disk-templates" <<<"$out"; then
			bad="$bad fd $i: $(tr '\n' ' ' <<<"$out" | head -c 120);"
		fi
	done
	out=$(JR_CWD=$mdir as_mode "$MODE" "$own" exec "$name" -- /bin/sh -c 'ls /proc/self/fd; ls -a .' 2>&1)
	grep -q "$mark" <<<"$out" && bad="$bad the default working directory is the host's;"
	[ "$(as_mode "$MODE" "$own" exec "$name" -- ls /proc/self/fd 2>&1 | tr '\n' ' ')" = "0 1 2 3 " ] ||
		bad="$bad the process sbx exec started holds more than stdio;"
	[ -z "$bad" ]
	verdict cve/exec-fd-cwd $? "${bad:-sbx exec -w /proc/self/fd/3..15: none reached the host directory or the state of sbx; stdio only}"
	as_mode "$MODE" "$own" exec "$name" -- touch /tmp/stop >/dev/null 2>&1
	wait "$bg"
	jail "$(cat "$bgout")"
	sum1=$(sha256sum <"$own")
	[ "$sum1" = "$sum0" ]
	verdict cve/exe-overwrite-binary $? "the sbx binary owned by the uid of the jail root ($owner) is unchanged after 23 sbx exec"
	rm -f "$own"
	# 3. CVE-2025-52881 class: the jail redirects what sbx writes and reads
	# in its cgroup (a child cgroup, symlinks, daemons), under limits that
	# need one: sbx still ends every process and leaves no cgroup.
	local cg0 cg1
	cg0=$(find /sys/fs/cgroup -maxdepth 3 -name 'sbx-*' -type d 2>/dev/null | sort)
	jailrun --rootfs "$IMG" --memory 256m --pids 64 -- /bin/sh -c '/x/cve_attack cgroup cgroup-redirect; sleep 0.5'
	sleep 0.3
	cg1=$(find /sys/fs/cgroup -maxdepth 3 -name 'sbx-*' -type d 2>/dev/null | sort)
	bad=
	[ "$rc" -eq 0 ] || bad="sbx rc=$rc: $(why);"
	[ "$cg1" = "$cg0" ] || bad="$bad cgroups left: $(comm -13 <(echo "$cg0") <(echo "$cg1") | head -n 3 | tr '\n' ' ');"
	pgrep -f 'sleep 300' -u "$([ "$MODE" = user ] && echo 65534 || echo "$JAIL_ROOT_UID")" >/dev/null &&
		bad="$bad a daemon of the jail outlived it;"
	sentinels_alive || bad="$bad a host sentinel died;"
	[ -z "$bad" ]
	verdict cve/cgroup-redirect $? "${bad:-$(grep ^cgroup <<<"$out" | head -n 1); every process ended, no cgroup left}"
	expect cve/mask-source-symlink-image cve/planted-dev-links-exec cve/masks-hold-for-exec \
		cve/exec-fd-cwd cve/exe-overwrite cve/exe-overwrite-binary cve/cgroup-redirect
}
