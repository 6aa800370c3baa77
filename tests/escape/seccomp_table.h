/* SPDX-License-Identifier: MIT */
/*
 * tests/escape/seccomp_table.h - the seccomp checks shared by the unit test
 * (tests/unit/test_seccomp.c, which loads the filter itself) and the escape
 * probe (tests/escape/seccomp_probe.c, run inside a real jail).  Plain libc
 * and raw syscalls only: the probe is linked statically without libseccomp.
 *
 * Every blocked call is made with harmless arguments that give the kernel's
 * own answer (EBADF, EFAULT, EINVAL, ESRCH, ENOENT, ENOTTY, or success in a
 * throw-away child) when no filter stops it, so the policy's errno can only
 * come from the filter.  Where even root would get EPERM from the kernel
 * first (init_module as nobody...), the audit test (notify mode) proves the
 * filter saw the call.
 */
#ifndef SBX_SECCOMP_TABLE_H
#define SBX_SECCOMP_TABLE_H

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef SOCK_PACKET
#define SOCK_PACKET 10
#endif

enum st_want {
	ST_EPERM = 1, /* blocked by the policy: EPERM */
	ST_ENOSYS,    /* blocked: ENOSYS (clone3, strict's unlisted calls) */
	ST_ALLOWED,   /* not blocked: success, or any errno but EPERM/ENOSYS */
	ST_BLOCKED,   /* EPERM or ENOSYS: a syscall newer than libseccomp's table
		       * gets ENOSYS, and EPERM once libseccomp knows its name */
};

struct st_check {
	const char *name; /* syscall name as the audit records it */
	const char *what; /* the call, for messages */
	long (*call)(void);
	enum st_want want_default;
	enum st_want want_strict;
};

#define NOPE  "/nonexistent-sbx-probe"
#define NOPID 0x3ffffff0L /* above pid_max: ESRCH */

/* A pipe end: never a terminal, so allowed tty ioctls give ENOTTY. */
static int st_pipe_fd(void)
{
	static int p[2] = {-1, -1};

	if (p[0] < 0 && pipe2(p, O_CLOEXEC) < 0)
		return -1;
	return p[0];
}

/* clone that could succeed: reap the child, which exits at once. */
static long st_clone(unsigned long flags)
{
	long r = syscall(SYS_clone, flags | SIGCHLD, 0L, 0L, 0L, 0L);
	int e = errno;

	if (r == 0)
		_exit(0);
	if (r > 0)
		waitpid((pid_t)r, NULL, 0);
	errno = e;
	return r;
}

/* clang-format off */
#define S0(nr) syscall(nr)
#define S(nr, ...) syscall(nr, __VA_ARGS__)

static long c_init_module(void) { return S(SYS_init_module, 0L, 0L, ""); }
static long c_finit_module(void) { return S(SYS_finit_module, -1, "", 0); }
static long c_delete_module(void) { return S(SYS_delete_module, "sbx_no_such_module", 0); }
static long c_kexec_load(void) { return S(SYS_kexec_load, 0L, 0L, 0L, 0xdead0000UL); }
static long c_kexec_file_load(void) { return S(SYS_kexec_file_load, -1, -1, 0L, 0L, 0xdead0000UL); }
static long c_reboot(void) { return S(SYS_reboot, 0, 0, 0, 0L); /* bad magic: EINVAL */ }
static long c_sethostname(void) { return S(SYS_sethostname, 0L, -1); /* EINVAL if reached */ }
static long c_setdomainname(void) { return S(SYS_setdomainname, 0L, -1); }
#ifdef SYS_tuxcall
static long c_tuxcall(void) { return S0(SYS_tuxcall); /* never implemented: ENOSYS */ }
static long c_afs_syscall(void) { return S0(SYS_afs_syscall); }
#endif
static long c_mount(void) { return S(SYS_mount, 0L, 0L, 0L, 0L, 0L); }
static long c_umount2(void) { return S(SYS_umount2, NOPE, 0); }
static long c_fsopen(void) { return S(SYS_fsopen, "sbx-no-such-fs", 0); }
static long c_fsconfig(void) { return S(SYS_fsconfig, -1, 0, 0L, 0L, 0); }
static long c_fsmount(void) { return S(SYS_fsmount, -1, 0, 0); }
static long c_fspick(void) { return S(SYS_fspick, -1, NOPE, 0); }
static long c_move_mount(void) { return S(SYS_move_mount, -1, NOPE, -1, NOPE, 0); }
static long c_open_tree(void) { return S(SYS_open_tree, -1, NOPE, 0); }
/* open_tree_attr (Linux 6.15, unified number 467): the new mount API again. */
static long c_open_tree_attr(void) { return S(467, -1, NOPE, 0, 0L, 0UL); }
static long c_mount_setattr(void) { return S(SYS_mount_setattr, -1, NOPE, 0, 0L, 0L); }
static long c_pivot_root(void) { return S(SYS_pivot_root, NOPE, NOPE); }
static long c_chroot(void) { return S(SYS_chroot, NOPE); }
static long c_setns(void) { return S(SYS_setns, -1, 0); }
static long c_unshare(void) { return S(SYS_unshare, CLONE_NEWUSER); }
static long c_clone_newuser(void) { return st_clone(CLONE_NEWUSER); }
static long c_clone_newns(void) { return st_clone(CLONE_NEWNS); }
static long c_clone_newnet(void) { return st_clone(CLONE_NEWNET); }
static long c_clone_newpid(void) { return st_clone(CLONE_NEWPID); }
static long c_clone_newuts(void) { return st_clone(CLONE_NEWUTS); }
static long c_clone_newipc(void) { return st_clone(CLONE_NEWIPC); }
static long c_clone_newcgroup(void) { return st_clone(CLONE_NEWCGROUP); }
static long c_clone3(void) { return S(SYS_clone3, 0L, 0L); /* EINVAL if reached */ }
static long c_add_key(void) { return S(SYS_add_key, "sbx-no-such-type", "d", 0L, 0L, 0); }
static long c_request_key(void) { return S(SYS_request_key, "sbx-no-such-type", "d", 0L, 0); }
static long c_keyctl(void) { return S(SYS_keyctl, 0x7fff, 0L, 0L, 0L, 0L); }
static long c_bpf(void) { return S(SYS_bpf, -1, 0L, 0); }
static long c_perf_event_open(void) { return S(SYS_perf_event_open, 0L, 0, -1, -1, 0L); }
static long c_userfaultfd(void) { return S(SYS_userfaultfd, ~0); }
static long c_io_uring_setup(void) { return S(SYS_io_uring_setup, 0, 0L); }
static long c_io_uring_enter(void) { return S(SYS_io_uring_enter, -1, 0, 0, 0, 0L, 0L); }
static long c_io_uring_register(void) { return S(SYS_io_uring_register, -1, 0, 0L, 0); }
static long c_fanotify_init(void) { return S(SYS_fanotify_init, ~0U, 0); }
static long c_ptrace(void) { return S(SYS_ptrace, 2 /* PEEKDATA */, NOPID, 0L, 0L); }
static long c_process_vm_readv(void) { return S(SYS_process_vm_readv, getpid(), 0L, 1, 0L, 1, 0); }
static long c_process_vm_writev(void) { return S(SYS_process_vm_writev, getpid(), 0L, 1, 0L, 1, 0); }
static long c_kcmp(void) { return S(SYS_kcmp, NOPID, NOPID, 0, 0L, 0L); }
static long c_pidfd_getfd(void) { return S(SYS_pidfd_getfd, -1, 0, 0); }
static long c_process_madvise(void) { return S(SYS_process_madvise, -1, 0L, 0, 0, 0); }
static long c_open_by_handle_at(void) { return S(SYS_open_by_handle_at, -1, 0L, 0); }
static long c_name_to_handle_at(void) { return S(SYS_name_to_handle_at, -1, NOPE, 0L, 0L, 0); }
static long c_iopl(void) { return S(SYS_iopl, 99); }
static long c_ioperm(void) { return S(SYS_ioperm, 65536UL, 1UL, 1); }
static long c_swapon(void) { return S(SYS_swapon, NOPE, 0); }
static long c_swapoff(void) { return S(SYS_swapoff, NOPE); }
static long c_acct(void) { return S(SYS_acct, NOPE "/x"); }
static long c_quotactl(void) { return S(SYS_quotactl, 0, 0L, 0, 0L); }
static long c_syslog(void) { return S(SYS_syslog, -1, 0L, 0); }
static long c_vhangup(void) { return S0(SYS_vhangup); /* no ctty after setsid */ }
static long c_settimeofday(void) { return S(SYS_settimeofday, 0L, 0L); /* a no-op if reached */ }
static long c_clock_settime(void) { return S(SYS_clock_settime, -1, 0L); }
static long c_clock_adjtime(void) { return S(SYS_clock_adjtime, -1, 0L); }
static long c_adjtimex(void) { return S(SYS_adjtimex, 0L); }
static long c_mbind(void) { return S(SYS_mbind, 0L, 0UL, 999, 0L, 0UL, 0U); }
static long c_set_mempolicy(void) { return S(SYS_set_mempolicy, 999, 0L, 0UL); }
static long c_get_mempolicy(void) { return S(SYS_get_mempolicy, 0L, 0L, 0UL, 0L, 0UL); }
static long c_migrate_pages(void) { return S(SYS_migrate_pages, NOPID, 0UL, 0L, 0L); }
static long c_move_pages(void) { return S(SYS_move_pages, NOPID, 0UL, 0L, 0L, 0L, 0); }
static long c_modify_ldt(void) { return S(SYS_modify_ldt, 99, 0L, 0UL); }
static long c_lookup_dcookie(void) { return S(SYS_lookup_dcookie, 0UL, 0L, 0UL); }
static long c_uselib(void) { return S(SYS_uselib, NOPE); }
static long c_sysfs(void) { return S(SYS_sysfs, 99, 0UL, 0UL); }
static long c_ustat(void) { return S(SYS_ustat, 0U, 0L); }
static long c_nfsservctl(void) { return S(SYS_nfsservctl, 0, 0L, 0L); }
static long c_sysctl(void) { return S(SYS__sysctl, 0L); }
static long c_create_module(void) { return S(SYS_create_module, "x", 0UL); }
static long c_personality_rie(void) { return S(SYS_personality, 0x0400000UL); }
static long c_personality_hi(void) { return S(SYS_personality, 0x100400000UL); }
static long c_socket_packet(void) { return S(SYS_socket, AF_PACKET, SOCK_RAW, 0); }
static long c_socket_vsock(void) { return S(SYS_socket, AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0); }
/* socket takes ints: high bits must not hide the domain from the filter. */
static long c_socket_vsock_hi(void) { return S(SYS_socket, (1L << 32) | AF_VSOCK, SOCK_STREAM, 0); }
static long c_socket_packet_hi(void) { return S(SYS_socket, (1L << 32) | AF_PACKET, SOCK_DGRAM, 0); }
static long c_socket_raw(void) { return S(SYS_socket, AF_INET, SOCK_RAW | SOCK_CLOEXEC, 1); }
static long c_socket_raw6(void) { return S(SYS_socket, AF_INET6, SOCK_RAW | SOCK_NONBLOCK, 58); }
static long c_socket_sockpacket(void) { return S(SYS_socket, AF_INET, SOCK_PACKET, 0); }
/* Netlink: route only (0); audit (9) and uevents (15) stay refused. */
static long c_netlink_audit(void) { return S(SYS_socket, AF_NETLINK, SOCK_RAW, 9); }
static long c_netlink_uevent(void) { return S(SYS_socket, AF_NETLINK, SOCK_DGRAM, 15); }
static long c_netlink_route_hi(void) { return S(SYS_socket, (1L << 32) | AF_NETLINK, SOCK_RAW, 0); }
static long c_netlink_route_hiproto(void) { return S(SYS_socket, AF_NETLINK, SOCK_RAW, (1L << 32) | 9); }
static long c_tiocsti(void) { return S(SYS_ioctl, st_pipe_fd(), (unsigned long)TIOCSTI, "x"); }
static long c_tiocsti_hi(void) { return S(SYS_ioctl, st_pipe_fd(), (1UL << 32) | TIOCSTI, "x"); }
static long c_tioclinux(void) { return S(SYS_ioctl, st_pipe_fd(), (unsigned long)TIOCLINUX, "\2"); }
static long c_tioclinux_hi(void) { return S(SYS_ioctl, st_pipe_fd(), (0xffUL << 40) | TIOCLINUX, "\2"); }

/* Allowed under default (and most under strict). */
static long c_getpid(void) { return S0(SYS_getpid); }
static long c_fork(void) { return st_clone(0); }
static long c_socket_inet(void) { return S(SYS_socket, AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0); }
static long c_socket_unix(void) { return S(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0); }
static long c_netlink_route(void) { return S(SYS_socket, AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 0); }
static long c_netlink_route_dgram(void) { return S(SYS_socket, AF_NETLINK, SOCK_DGRAM, 0); }
static long c_personality_query(void) { return S(SYS_personality, 0xffffffffUL); }
static long c_personality_linux(void) { return S(SYS_personality, 0UL); }
static long c_tcgets(void)
{
	struct termios t;

	return S(SYS_ioctl, st_pipe_fd(), (unsigned long)TCGETS, &t); /* ENOTTY */
}
static long c_fionread(void)
{
	int n;

	return S(SYS_ioctl, st_pipe_fd(), (unsigned long)FIONREAD, &n);
}

#define P ST_EPERM
#define N ST_ENOSYS
#define A ST_ALLOWED

static const struct st_check st_checks[] = {
	{ "init_module", "init_module(NULL, 0, \"\")", c_init_module, P, P },
	{ "finit_module", "finit_module(-1, \"\", 0)", c_finit_module, P, P },
	{ "delete_module", "delete_module(\"sbx_no_such_module\")", c_delete_module, P, P },
	{ "create_module", "create_module(\"x\", 0)", c_create_module, P, P },
	{ "kexec_load", "kexec_load(bad flags)", c_kexec_load, P, P },
	{ "kexec_file_load", "kexec_file_load(-1, -1, bad flags)", c_kexec_file_load, P, P },
	{ "reboot", "reboot(bad magic)", c_reboot, P, P },
	{ "mount", "mount(NULL, NULL, NULL, 0, NULL)", c_mount, P, P },
	{ "umount2", "umount2(NOPE, 0)", c_umount2, P, P },
	{ "fsopen", "fsopen(\"sbx-no-such-fs\")", c_fsopen, P, P },
	{ "fsconfig", "fsconfig(-1, ...)", c_fsconfig, P, P },
	{ "fsmount", "fsmount(-1, 0, 0)", c_fsmount, P, P },
	{ "fspick", "fspick(-1, NOPE, 0)", c_fspick, P, P },
	{ "move_mount", "move_mount(-1, NOPE, -1, NOPE)", c_move_mount, P, P },
	{ "open_tree", "open_tree(-1, NOPE, 0)", c_open_tree, P, P },
	{ "mount_setattr", "mount_setattr(-1, NOPE, ...)", c_mount_setattr, P, P },
	{ "open_tree_attr", "open_tree_attr(-1, NOPE, ...) (nr 467)", c_open_tree_attr, ST_BLOCKED,
	  ST_BLOCKED },
	{ "pivot_root", "pivot_root(NOPE, NOPE)", c_pivot_root, P, P },
	{ "chroot", "chroot(NOPE)", c_chroot, P, P },
	{ "setns", "setns(-1, 0)", c_setns, P, P },
	{ "sethostname", "sethostname(NULL, -1)", c_sethostname, P, P },
	{ "setdomainname", "setdomainname(NULL, -1)", c_setdomainname, P, P },
#ifdef SYS_tuxcall
	{ "tuxcall", "tuxcall()", c_tuxcall, P, P },
	{ "afs_syscall", "afs_syscall()", c_afs_syscall, P, P },
#endif
	{ "unshare", "unshare(CLONE_NEWUSER)", c_unshare, P, P },
	{ "clone", "clone(CLONE_NEWUSER)", c_clone_newuser, P, P },
	{ "clone", "clone(CLONE_NEWNS)", c_clone_newns, P, P },
	{ "clone", "clone(CLONE_NEWNET)", c_clone_newnet, P, P },
	{ "clone", "clone(CLONE_NEWPID)", c_clone_newpid, P, P },
	{ "clone", "clone(CLONE_NEWUTS)", c_clone_newuts, P, P },
	{ "clone", "clone(CLONE_NEWIPC)", c_clone_newipc, P, P },
	{ "clone", "clone(CLONE_NEWCGROUP)", c_clone_newcgroup, P, P },
	{ "clone3", "clone3(NULL, 0)", c_clone3, N, N },
	{ "add_key", "add_key(bad type)", c_add_key, P, P },
	{ "request_key", "request_key(bad type)", c_request_key, P, P },
	{ "keyctl", "keyctl(bad op)", c_keyctl, P, P },
	{ "bpf", "bpf(-1, NULL, 0)", c_bpf, P, P },
	{ "perf_event_open", "perf_event_open(NULL, ...)", c_perf_event_open, P, P },
	{ "userfaultfd", "userfaultfd(~0)", c_userfaultfd, P, P },
	{ "io_uring_setup", "io_uring_setup(0, NULL)", c_io_uring_setup, P, P },
	{ "io_uring_enter", "io_uring_enter(-1, ...)", c_io_uring_enter, P, P },
	{ "io_uring_register", "io_uring_register(-1, ...)", c_io_uring_register, P, P },
	{ "fanotify_init", "fanotify_init(~0, 0)", c_fanotify_init, P, P },
	{ "ptrace", "ptrace(PTRACE_PEEKDATA, no such pid)", c_ptrace, P, P },
	{ "process_vm_readv", "process_vm_readv(self, NULL)", c_process_vm_readv, P, P },
	{ "process_vm_writev", "process_vm_writev(self, NULL)", c_process_vm_writev, P, P },
	{ "kcmp", "kcmp(no such pid)", c_kcmp, P, P },
	{ "pidfd_getfd", "pidfd_getfd(-1, 0, 0)", c_pidfd_getfd, P, P },
	{ "process_madvise", "process_madvise(-1, ...)", c_process_madvise, P, P },
	{ "open_by_handle_at", "open_by_handle_at(-1, NULL, 0)", c_open_by_handle_at, P, P },
	{ "name_to_handle_at", "name_to_handle_at(-1, NOPE, NULL)", c_name_to_handle_at, P, P },
	{ "iopl", "iopl(99)", c_iopl, P, P },
	{ "ioperm", "ioperm(65536, 1, 1)", c_ioperm, P, P },
	{ "swapon", "swapon(NOPE)", c_swapon, P, P },
	{ "swapoff", "swapoff(NOPE)", c_swapoff, P, P },
	{ "acct", "acct(NOPE/x)", c_acct, P, P },
	{ "quotactl", "quotactl(0, NULL, 0, NULL)", c_quotactl, P, P },
	{ "syslog", "syslog(-1, NULL, 0)", c_syslog, P, P },
	{ "vhangup", "vhangup()", c_vhangup, P, P },
	{ "settimeofday", "settimeofday(NULL, NULL)", c_settimeofday, P, P },
	{ "clock_settime", "clock_settime(-1, NULL)", c_clock_settime, P, P },
	{ "clock_adjtime", "clock_adjtime(-1, NULL)", c_clock_adjtime, P, P },
	{ "adjtimex", "adjtimex(NULL)", c_adjtimex, P, P },
	{ "mbind", "mbind(mode 999)", c_mbind, P, P },
	{ "set_mempolicy", "set_mempolicy(999)", c_set_mempolicy, P, P },
	{ "get_mempolicy", "get_mempolicy(NULL...)", c_get_mempolicy, P, P },
	{ "migrate_pages", "migrate_pages(no such pid)", c_migrate_pages, P, P },
	{ "move_pages", "move_pages(no such pid)", c_move_pages, P, P },
	{ "modify_ldt", "modify_ldt(99)", c_modify_ldt, P, P },
	{ "lookup_dcookie", "lookup_dcookie(0)", c_lookup_dcookie, P, P },
	{ "uselib", "uselib(NOPE)", c_uselib, P, P },
	{ "sysfs", "sysfs(99)", c_sysfs, P, P },
	{ "ustat", "ustat(0, NULL)", c_ustat, P, P },
	{ "nfsservctl", "nfsservctl(0)", c_nfsservctl, P, P },
	{ "_sysctl", "_sysctl(NULL)", c_sysctl, P, P },
	{ "personality", "personality(READ_IMPLIES_EXEC)", c_personality_rie, P, P },
	{ "personality", "personality(1<<32 | READ_IMPLIES_EXEC)", c_personality_hi, P, P },
	{ "socket", "socket(AF_PACKET, SOCK_RAW)", c_socket_packet, P, P },
	{ "socket", "socket(AF_VSOCK, SOCK_STREAM|SOCK_CLOEXEC)", c_socket_vsock, P, P },
	{ "socket", "socket(1<<32 | AF_VSOCK, SOCK_STREAM)", c_socket_vsock_hi, P, P },
	{ "socket", "socket(1<<32 | AF_PACKET, SOCK_DGRAM)", c_socket_packet_hi, P, P },
	{ "socket", "socket(AF_INET, SOCK_RAW|SOCK_CLOEXEC)", c_socket_raw, P, N },
	{ "socket", "socket(AF_INET6, SOCK_RAW|SOCK_NONBLOCK)", c_socket_raw6, P, N },
	{ "socket", "socket(AF_INET, SOCK_PACKET)", c_socket_sockpacket, P, N },
	{ "socket", "socket(AF_NETLINK, SOCK_RAW, NETLINK_AUDIT)", c_netlink_audit, P, N },
	{ "socket", "socket(AF_NETLINK, SOCK_DGRAM, NETLINK_KOBJECT_UEVENT)", c_netlink_uevent, P, N },
	{ "socket", "socket(1<<32 | AF_NETLINK, SOCK_RAW, NETLINK_ROUTE)", c_netlink_route_hi, P, N },
	{ "socket", "socket(AF_NETLINK, SOCK_RAW, 1<<32 | NETLINK_AUDIT)", c_netlink_route_hiproto, P, N },
	{ "ioctl", "ioctl(pipe, TIOCSTI)", c_tiocsti, P, P },
	{ "ioctl", "ioctl(pipe, 1<<32 | TIOCSTI)", c_tiocsti_hi, P, P },
	{ "ioctl", "ioctl(pipe, TIOCLINUX)", c_tioclinux, P, P },
	{ "ioctl", "ioctl(pipe, 0xff<<40 | TIOCLINUX)", c_tioclinux_hi, P, P },
	/* allowed */
	{ "getpid", "getpid()", c_getpid, A, A },
	{ "clone", "clone(SIGCHLD) (fork)", c_fork, A, A },
	{ "socket", "socket(AF_INET, SOCK_STREAM|SOCK_CLOEXEC)", c_socket_inet, A, N },
	{ "socket", "socket(AF_UNIX, SOCK_STREAM|SOCK_CLOEXEC)", c_socket_unix, A, A },
	{ "socket", "socket(AF_NETLINK, SOCK_RAW|SOCK_CLOEXEC, NETLINK_ROUTE)", c_netlink_route, A, N },
	{ "socket", "socket(AF_NETLINK, SOCK_DGRAM, NETLINK_ROUTE)", c_netlink_route_dgram, A, N },
	{ "personality", "personality(0xffffffff)", c_personality_query, A, A },
	{ "personality", "personality(PER_LINUX)", c_personality_linux, A, A },
	{ "ioctl", "ioctl(pipe, TCGETS)", c_tcgets, A, A },
	{ "ioctl", "ioctl(pipe, FIONREAD)", c_fionread, A, A },
};

#undef P
#undef N
#undef A
/* clang-format on */

/* Did the call do what the policy wants?  (ret, err) are its result. */
static inline int st_ok(enum st_want want, long ret, int err)
{
	switch (want) {
	case ST_EPERM:
		return ret == -1 && err == EPERM;
	case ST_ENOSYS:
		return ret == -1 && err == ENOSYS;
	case ST_BLOCKED:
		return ret == -1 && (err == EPERM || err == ENOSYS);
	case ST_ALLOWED:
	default:
		return ret >= 0 || (err != EPERM && err != ENOSYS);
	}
}

/*
 * Other ABIs: the filter holds the native arch only, so these must kill the
 * process with SIGSYS (bad-arch action), never run.  x32 numbers have bit
 * 30 set; int 0x80 enters the i386 ABI (AUDIT_ARCH_I386).
 */
#if defined(__x86_64__)
#define ST_HAVE_COMPAT_ABIS 1
static inline long st_x32_getpid(void)
{
	return syscall(39 /* getpid */ | 0x40000000L);
}

static inline long st_int80_getpid(void)
{
	long ret;

	__asm__ volatile("int $0x80" : "=a"(ret) : "a"(20L /* i386 getpid */) : "memory");
	return ret;
}

/*
 * Blocked syscalls again, through the x32 bit and through int 0x80 (their
 * x32 and i386 numbers, harmless arguments): the bad-arch check comes
 * before every rule, so each must kill, never reach the kernel.
 */
struct st_compat {
	const char *what;
	long x32_nr;	/* without the 0x40000000 bit */
	long i386_nr;
	long a0, a1, a2;
};

/* clang-format off */
static const struct st_compat st_compat_checks[] = {
	{ "mount(NULL, NULL, NULL)", 165, 21, 0, 0, 0 },
	{ "unshare(CLONE_NEWUSER)", 272, 310, CLONE_NEWUSER, 0, 0 },
	{ "setns(-1, 0)", 308, 346, -1, 0, 0 },
	{ "ptrace(PTRACE_PEEKDATA, no such pid)", 521, 26, 2, NOPID, 0 },
	{ "keyctl(bad op)", 250, 288, 0x7fff, 0, 0 },
	{ "bpf(-1, NULL, 0)", 321, 357, -1, 0, 0 },
	{ "init_module(NULL, 0, NULL)", 175, 128, 0, 0, 0 },
	{ "ioctl(0, TIOCSTI, NULL)", 514, 54, 0, TIOCSTI, 0 },
	{ "personality(READ_IMPLIES_EXEC)", 135, 136, 0x0400000, 0, 0 },
	{ "socket(AF_VSOCK, SOCK_STREAM)", 41, 359, AF_VSOCK, SOCK_STREAM, 0 },
};
/* clang-format on */

static inline long st_x32_call(const struct st_compat *c)
{
	return syscall(c->x32_nr | 0x40000000L, c->a0, c->a1, c->a2);
}

static inline long st_int80_call(const struct st_compat *c)
{
	long ret;

	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(c->i386_nr), "b"(c->a0), "c"(c->a1), "d"(c->a2)
			 : "memory");
	return ret;
}
#endif

static inline const char *st_want_name(enum st_want want)
{
	return want == ST_EPERM	    ? "EPERM"
	       : want == ST_ENOSYS  ? "ENOSYS"
	       : want == ST_BLOCKED ? "EPERM or ENOSYS"
				    : "allowed";
}

#endif
