/* SPDX-License-Identifier: MIT */
/*
 * lib/seccomp/seccomp.c - the built-in seccomp policies, and building and loading
 * a filter (libseccomp).  The policies and the file format are described
 * in lib/seccomp/seccomp_policy.md.
 *
 * One filter, native architecture only: a syscall made through another ABI
 * (int 0x80 / i386, x32 numbers with bit 30 set) hits the bad-architecture
 * action and kills the process.  libseccomp emits the x32 check itself on
 * x86_64 when the x32 arch is not in the filter ("nr >= 0x40000000 and
 * nr != -1 -> bad arch"); tests/unit/test_seccomp.c checks the BPF.
 */
#include "seccomp.h"
#include "seccomp_int.h"

#include <linux/filter.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef SOCK_PACKET
#define SOCK_PACKET 10
#endif

/* clone(2) takes its flags first everywhere but on s390. */
#if defined(__s390__) || defined(__s390x__)
#define CLONE_FLAGS_ARG 1
#else
#define CLONE_FLAGS_ARG 0
#endif

/* Only the low 32 bits of these arguments reach the kernel (int/unsigned int). */
#define LOW32 0xffffffffULL

/*
 * Denied with EPERM by every built-in policy, whatever the arguments.
 * Docker's default profile denies all of these (most of them unless the
 * container holds the capability the call needs); sbx denies them even
 * when a profile keeps capabilities.  Names unknown on this architecture
 * (stime, vm86 on x86_64) resolve to pseudo numbers and are skipped.
 */
/* clang-format off */
static const char *const deny_always[] = {
	/* kernel modules */
	"init_module", "finit_module", "delete_module", "create_module",
	"get_kernel_syms", "query_module",
	/* replacing or stopping the kernel */
	"kexec_load", "kexec_file_load", "reboot",
	/* mounts, old and new API, and changing root */
	"mount", "umount", "umount2", "fsopen", "fsconfig", "fsmount", "fspick",
	"move_mount", "open_tree", "mount_setattr", "open_tree_attr", "pivot_root",
	"chroot",
	/* namespaces (clone's namespace flags are filtered below) */
	"setns", "unshare",
	/* the jail's UTS names are set up by sbx (Docker: CAP_SYS_ADMIN) */
	"sethostname", "setdomainname",
	/* kernel keyring: not namespaced */
	"add_key", "request_key", "keyctl",
	/* large kernel attack surface */
	"bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter",
	"io_uring_register", "fanotify_init", "lookup_dcookie", "modify_ldt",
	/* other processes' memory and files */
	"ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
	"process_madvise",
	/* file handles bypass the mount namespace (shocker) */
	"open_by_handle_at", "name_to_handle_at",
	/* hardware, swap, accounting, quotas, kernel log */
	"iopl", "ioperm", "swapon", "swapoff", "acct", "quotactl", "quotactl_fd",
	"syslog", "vhangup",
	/* the clock is not namespaced */
	"settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "stime",
	/* NUMA memory policy */
	"mbind", "set_mempolicy", "get_mempolicy", "migrate_pages", "move_pages",
	"set_mempolicy_home_node",
	/* obsolete */
	"nfsservctl", "uselib", "_sysctl", "sysfs", "ustat", "vm86", "vm86old",
	"bdflush",
	/* never implemented (ENOSYS anyway; Docker denies them too) */
	"afs_syscall", "getpmsg", "putpmsg", "security", "tuxcall", "vserver",
};
/* clang-format on */

/* personality(2) values Docker allows: PER_LINUX, PER_LINUX32, UNAME26, both, query. */
static const uint64_t personality_ok[] = {0x0, 0x8, 0x20000, 0x20008, 0xffffffff};

/* Terminal ioctls that inject input or read the console (TIOCLINUX). */
static const uint64_t ioctl_denied[] = {TIOCSTI, TIOCLINUX};

static const uint64_t clone_ns_flags[] = {
    CLONE_NEWNS,   CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
    CLONE_NEWUSER, CLONE_NEWPID,    CLONE_NEWNET,
};

/*
 * The strict allowlist: what a shell, coreutils, make and a compiler
 * (gcc, cc1, as, ld) need.  ioctl, clone, socket, socketpair, personality,
 * mknod and mknodat are allowed with argument filters (strict_args()).
 */
/* clang-format off */
static const char *const strict_allow[] = {
	/* file I/O */
	"read", "write", "readv", "writev", "pread64", "pwrite64", "preadv",
	"pwritev", "preadv2", "pwritev2", "open", "openat", "openat2", "creat",
	"close", "close_range", "lseek", "dup", "dup2", "dup3", "fcntl", "pipe",
	"pipe2", "sendfile", "splice", "tee", "copy_file_range", "memfd_create",
	"flock", "fsync", "fdatasync", "sync", "syncfs", "sync_file_range",
	"fadvise64", "readahead", "fallocate", "truncate", "ftruncate",
	/* metadata and directories */
	"stat", "fstat", "lstat", "newfstatat", "statx", "statfs", "fstatfs",
	"access", "faccessat", "faccessat2", "readlink", "readlinkat",
	"getdents", "getdents64", "mkdir", "mkdirat", "rmdir", "unlink",
	"unlinkat", "rename", "renameat", "renameat2", "link", "linkat",
	"symlink", "symlinkat", "chmod", "fchmod", "fchmodat", "chown",
	"fchown", "lchown", "fchownat", "utime", "utimes", "utimensat",
	"futimesat", "getxattr", "lgetxattr", "fgetxattr", "listxattr",
	"llistxattr", "flistxattr", "setxattr", "lsetxattr", "fsetxattr",
	"removexattr", "lremovexattr", "fremovexattr", "chdir", "fchdir",
	"getcwd", "umask", "inotify_init", "inotify_init1", "inotify_add_watch",
	"inotify_rm_watch",
	/* waiting */
	"select", "pselect6", "poll", "ppoll", "epoll_create", "epoll_create1",
	"epoll_ctl", "epoll_wait", "epoll_pwait", "epoll_pwait2", "eventfd",
	"eventfd2", "signalfd", "signalfd4", "timerfd_create", "timerfd_settime",
	"timerfd_gettime", "futex", "futex_waitv", "sched_yield",
	/* memory */
	"brk", "mmap", "munmap", "mremap", "mprotect", "madvise", "msync",
	"mincore", "mlock", "munlock", "membarrier",
	/* processes */
	"fork", "vfork", "execve", "execveat", "exit", "exit_group", "wait4",
	"waitid", "kill", "tkill", "tgkill", "pidfd_open", "pidfd_send_signal",
	"getpid", "getppid", "gettid", "getpgid", "setpgid", "getpgrp",
	"getsid", "setsid", "getuid", "geteuid", "getgid", "getegid",
	"getresuid", "getresgid", "getgroups", "setuid", "setgid", "setreuid",
	"setregid", "setresuid", "setresgid", "setgroups", "setfsuid",
	"setfsgid", "capget", "prctl", "arch_prctl", "set_tid_address",
	"set_robust_list", "get_robust_list", "rseq", "seccomp",
	"sched_getaffinity", "sched_setaffinity", "sched_getparam",
	"sched_getscheduler", "sched_get_priority_max", "sched_get_priority_min",
	"getpriority", "setpriority", "getrlimit", "setrlimit", "prlimit64",
	"getrusage", "times", "sysinfo", "uname", "getrandom", "getcpu",
	/* signals and timers */
	"rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigsuspend",
	"rt_sigpending", "rt_sigtimedwait", "rt_sigqueueinfo",
	"rt_tgsigqueueinfo", "sigaltstack", "pause", "alarm", "getitimer",
	"setitimer", "timer_create", "timer_settime", "timer_gettime",
	"timer_getoverrun", "timer_delete", "time", "gettimeofday",
	"clock_gettime", "clock_getres", "nanosleep", "clock_nanosleep",
	/* sockets: only AF_UNIX ones can be created (strict_args) */
	"connect", "bind", "listen", "accept", "accept4", "sendto", "recvfrom",
	"sendmsg", "recvmsg", "sendmmsg", "recvmmsg", "shutdown", "getsockname",
	"getpeername", "getsockopt", "setsockopt",
};
/* clang-format on */

const char *sbx_seccomp_syscall_name(int nr, char *buf, size_t len)
{
	char *s = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);

	if (!s)
		return NULL;
	snprintf(buf, len, "%s", s);
	free(s);
	return buf;
}

void sbx_seccomp_policy_add(struct sbx_seccomp_policy *p, const struct sbx_sc_rule *r)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 64;
		p->rules = sbx_xrealloc(p->rules, p->cap * sizeof(*p->rules));
	}
	p->rules[p->n++] = *r;
}

void sbx_seccomp_policy_drop(struct sbx_seccomp_policy *p, int nr)
{
	size_t j = 0;

	for (size_t i = 0; i < p->n; i++)
		if (p->rules[i].nr != nr)
			p->rules[j++] = p->rules[i];
	p->n = j;
}

void sbx_seccomp_policy_free(struct sbx_seccomp_policy *p)
{
	if (!p)
		return;
	free(p->name);
	free(p->rules);
	free(p);
}

static bool cmp_match(const struct scmp_arg_cmp *c, const uint64_t args[6])
{
	uint64_t v = args[c->arg];

	switch (c->op) {
	case SCMP_CMP_NE:
		return v != c->datum_a;
	case SCMP_CMP_LT:
		return v < c->datum_a;
	case SCMP_CMP_LE:
		return v <= c->datum_a;
	case SCMP_CMP_EQ:
		return v == c->datum_a;
	case SCMP_CMP_GE:
		return v >= c->datum_a;
	case SCMP_CMP_GT:
		return v > c->datum_a;
	case SCMP_CMP_MASKED_EQ:
		return (v & c->datum_a) == c->datum_b;
	default:
		return false;
	}
}

enum sbx_sc_act sbx_seccomp_policy_eval(const struct sbx_seccomp_policy *p, int nr,
					const uint64_t args[6], int *errnum)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct sbx_sc_rule *r = &p->rules[i];

		if (r->nr != nr || (r->has_cmp && !cmp_match(&r->cmp, args)) ||
		    (r->has_cmp2 && !cmp_match(&r->cmp2, args)))
			continue;
		*errnum = r->err;
		return r->act;
	}
	*errnum = p->def_err;
	return p->def;
}

static void add_name(struct sbx_seccomp_policy *p, const char *name, enum sbx_sc_act act, int err)
{
	int nr = seccomp_syscall_resolve_name(name);
	struct sbx_sc_rule r = {.nr = nr, .act = act, .err = err};

	/* Unknown to this libseccomp, or not a syscall of this arch. */
	if (nr < 0)
		return;
	sbx_seccomp_policy_add(p, &r);
}

static void add_cmp(struct sbx_seccomp_policy *p, int nr, enum sbx_sc_act act, int err,
		    struct scmp_arg_cmp cmp)
{
	struct sbx_sc_rule r = {.nr = nr, .act = act, .err = err, .has_cmp = true, .cmp = cmp};

	sbx_seccomp_policy_add(p, &r);
}

/*
 * Rules with action act for every value of argument arg whose low 32 bits
 * are not in vals[]: the complement is cut into aligned power-of-two blocks,
 * each one masked comparison (libseccomp allows one comparison per argument
 * in a rule, and rules of different actions must not overlap).
 */
static void add_complement_block(struct sbx_seccomp_policy *p, int nr, unsigned arg,
				 const uint64_t *vals, size_t n, uint64_t base, unsigned bits,
				 enum sbx_sc_act act, int err)
{
	uint64_t size = 1ULL << bits;
	size_t inside = 0;

	for (size_t i = 0; i < n; i++)
		if (vals[i] >= base && vals[i] - base < size)
			inside++;
	if (inside == 0) {
		uint64_t mask = LOW32 & ~(size - 1);

		add_cmp(p, nr, act, err, SCMP_CMP64(arg, SCMP_CMP_MASKED_EQ, mask, base));
		return;
	}
	if (bits == 0)
		return;
	add_complement_block(p, nr, arg, vals, n, base, bits - 1, act, err);
	add_complement_block(p, nr, arg, vals, n, base + size / 2, bits - 1, act, err);
}

static void add_complement(struct sbx_seccomp_policy *p, int nr, unsigned arg, const uint64_t *vals,
			   size_t n, enum sbx_sc_act act, int err)
{
	add_complement_block(p, nr, arg, vals, n, 0, 32, act, err);
}

static void add_points(struct sbx_seccomp_policy *p, int nr, unsigned arg, const uint64_t *vals,
		       size_t n, enum sbx_sc_act act, int err)
{
	for (size_t i = 0; i < n; i++)
		add_cmp(p, nr, act, err, SCMP_CMP64(arg, SCMP_CMP_MASKED_EQ, LOW32, vals[i]));
}

/*
 * Syscalls newer than libseccomp's table (this build knows x86_64 up to
 * 456; kernel 6.18 has open_tree_attr, file_setattr... up to 469) were
 * never reviewed for this policy: they get ENOSYS, as if the kernel were
 * older, so libc falls back to the older calls (runc does the same).  The
 * x32-only numbers from 512 on are reachable only with the x32 bit, which
 * the filter kills.
 */
#if defined(__x86_64__)
#define NR_LIMIT 512
#else
#define NR_LIMIT (highest + 129)
#endif

/* The highest native syscall number libseccomp knows (looked up once). */
static int highest_known(void)
{
	static int highest = -2; /* not looked up yet */
	char name[64];

	if (highest == -2) {
		highest = -1;
		for (int nr = 0; nr < 1024; nr++)
			if (sbx_seccomp_syscall_name(nr, name, sizeof(name)))
				highest = nr;
	}
	return highest;
}

static void deny_newer(struct sbx_seccomp_policy *p)
{
	int highest = highest_known();

	for (int nr = highest + 1; highest >= 0 && nr < NR_LIMIT; nr++) {
		struct sbx_sc_rule r = {.nr = nr, .act = SBX_SC_ERRNO, .err = ENOSYS};

		sbx_seccomp_policy_add(p, &r);
	}
}

/* The denials shared by default and strict. */
static void common_denies(struct sbx_seccomp_policy *p, bool strict)
{
	int e = SBX_SECCOMP_ERRNO;
	struct sbx_sc_rule clone3 = {
	    .nr = SCMP_SYS(clone3), .act = SBX_SC_ERRNO, .err = ENOSYS, .quiet = true};

	for (size_t i = 0; i < SBX_ARRAY_SIZE(deny_always); i++)
		add_name(p, deny_always[i], SBX_SC_ERRNO, e);
	/* clone3 passes flags in memory, out of the filter's reach: ENOSYS
	 * makes libc fall back to clone, whose flags are checked. */
	sbx_seccomp_policy_add(p, &clone3);
	for (size_t i = 0; i < SBX_ARRAY_SIZE(clone_ns_flags); i++)
		add_cmp(p, SCMP_SYS(clone), SBX_SC_ERRNO, e,
			SCMP_CMP64(CLONE_FLAGS_ARG, SCMP_CMP_MASKED_EQ, clone_ns_flags[i],
				   clone_ns_flags[i]));
	/* socket(2) takes int arguments: compare the domain's low 32 bits,
	 * or (1 << 32 | AF_VSOCK) would pass the rule and still be AF_VSOCK. */
	add_cmp(p, SCMP_SYS(socket), SBX_SC_ERRNO, e,
		SCMP_A0_64(SCMP_CMP_MASKED_EQ, LOW32, AF_PACKET));
	add_cmp(p, SCMP_SYS(socket), SBX_SC_ERRNO, e,
		SCMP_A0_64(SCMP_CMP_MASKED_EQ, LOW32, AF_VSOCK));
	if (!strict) {
		/* The type without SOCK_CLOEXEC|SOCK_NONBLOCK.  Under strict,
		 * only AF_UNIX sockets exist (its SOCK_RAW is a datagram).
		 * Raw sockets of every family but netlink (getifaddrs,
		 * if_nameindex, `ip link` read the jail's own namespace with a
		 * SOCK_RAW netlink socket); a domain with high bits set is
		 * not AF_NETLINK here, so it stays refused. */
		struct sbx_sc_rule raw = {
		    .nr = SCMP_SYS(socket),
		    .act = SBX_SC_ERRNO,
		    .err = e,
		    .has_cmp = true,
		    .cmp = SCMP_A1_64(SCMP_CMP_MASKED_EQ, 0xf, SOCK_RAW),
		    .has_cmp2 = true,
		    .cmp2 = SCMP_A0_64(SCMP_CMP_NE, AF_NETLINK),
		};
		/* Netlink: route only (the jail's own interfaces, addresses,
		 * routes); audit, uevents, xfrm, netfilter... stay refused. */
		struct sbx_sc_rule nl = {
		    .nr = SCMP_SYS(socket),
		    .act = SBX_SC_ERRNO,
		    .err = e,
		    .has_cmp = true,
		    .cmp = SCMP_A0_64(SCMP_CMP_EQ, AF_NETLINK),
		    .has_cmp2 = true,
		    .cmp2 = SCMP_A2_64(SCMP_CMP_NE, NETLINK_ROUTE),
		};

		sbx_seccomp_policy_add(p, &raw);
		sbx_seccomp_policy_add(p, &nl);
		add_cmp(p, SCMP_SYS(socket), SBX_SC_ERRNO, e,
			SCMP_A1_64(SCMP_CMP_MASKED_EQ, 0xf, SOCK_PACKET));
	}
	add_points(p, SCMP_SYS(ioctl), 1, ioctl_denied, SBX_ARRAY_SIZE(ioctl_denied), SBX_SC_ERRNO,
		   e);
	add_complement(p, SCMP_SYS(personality), 0, personality_ok, SBX_ARRAY_SIZE(personality_ok),
		       SBX_SC_ERRNO, e);
}

/* The argument-filtered allows of strict, disjoint from common_denies(). */
static void strict_args(struct sbx_seccomp_policy *p)
{
	uint64_t ns = 0;
	static const uint64_t node_ok[] = {0, S_IFREG, S_IFIFO, S_IFSOCK};

	for (size_t i = 0; i < SBX_ARRAY_SIZE(clone_ns_flags); i++)
		ns |= clone_ns_flags[i];
	add_cmp(p, SCMP_SYS(clone), SBX_SC_ALLOW, 0,
		SCMP_CMP64(CLONE_FLAGS_ARG, SCMP_CMP_MASKED_EQ, ns, 0));
	add_cmp(p, SCMP_SYS(socket), SBX_SC_ALLOW, 0,
		SCMP_A0_64(SCMP_CMP_MASKED_EQ, LOW32, AF_UNIX));
	add_cmp(p, SCMP_SYS(socketpair), SBX_SC_ALLOW, 0,
		SCMP_A0_64(SCMP_CMP_MASKED_EQ, LOW32, AF_UNIX));
	add_complement(p, SCMP_SYS(ioctl), 1, ioctl_denied, SBX_ARRAY_SIZE(ioctl_denied),
		       SBX_SC_ALLOW, 0);
	add_points(p, SCMP_SYS(personality), 0, personality_ok, SBX_ARRAY_SIZE(personality_ok),
		   SBX_SC_ALLOW, 0);
	for (size_t i = 0; i < SBX_ARRAY_SIZE(node_ok); i++) {
		add_cmp(p, SCMP_SYS(mknod), SBX_SC_ALLOW, 0,
			SCMP_A1_64(SCMP_CMP_MASKED_EQ, S_IFMT, node_ok[i]));
		add_cmp(p, SCMP_SYS(mknodat), SBX_SC_ALLOW, 0,
			SCMP_A2_64(SCMP_CMP_MASKED_EQ, S_IFMT, node_ok[i]));
	}
}

int sbx_seccomp_policy_builtin_resolve(struct sbx_seccomp_policy *p, const char *name)
{
	p->n = 0;
	if (strcmp(name, "none") == 0) {
		p->def = SBX_SC_ALLOW;
		p->def_err = 0;
	} else if (strcmp(name, "default") == 0) {
		p->def = SBX_SC_ALLOW;
		p->def_err = 0;
		common_denies(p, false);
		deny_newer(p);
	} else if (strcmp(name, "strict") == 0) {
		/* ENOSYS, not EPERM, for what is not listed: libc and
		 * runtimes fall back from a newer syscall (statx, clone3,
		 * faccessat2, close_range...) only on ENOSYS. */
		p->def = SBX_SC_ERRNO;
		p->def_err = ENOSYS;
		common_denies(p, true);
		for (size_t i = 0; i < SBX_ARRAY_SIZE(strict_allow); i++)
			add_name(p, strict_allow[i], SBX_SC_ALLOW, 0);
		strict_args(p);
	} else {
		return -ENOENT;
	}
	return 0;
}

static bool is_builtin(const char *policy)
{
	return strcmp(policy, "default") == 0 || strcmp(policy, "strict") == 0;
}

bool sbx_seccomp_is_builtin(const char *policy)
{
	return !policy || !*policy || is_builtin(policy);
}

/* A built-in policy, or a file read now. */
static int policy_resolve(const char *policy, struct sbx_seccomp_policy **out, struct sbx_err *err)
{
	struct sbx_seccomp_policy *p;
	int rc;

	if (!policy || !*policy)
		policy = "default";
	p = sbx_xcalloc(1, sizeof(*p));
	p->name = sbx_xstrdup(policy);
	if (is_builtin(policy))
		rc = sbx_seccomp_policy_builtin(p, policy);
	else
		rc = sbx_seccomp_policy_parse_file(policy, p, err);
	if (rc < 0) {
		sbx_seccomp_policy_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

int sbx_seccomp_policy_get(const char *policy, struct sbx_seccomp_policy **out, struct sbx_err *err)
{
	return policy_resolve(policy, out, err);
}

static uint32_t scmp_action(enum sbx_sc_act act, int e, bool quiet, bool notify)
{
	switch (act) {
	case SBX_SC_ALLOW:
		return SCMP_ACT_ALLOW;
	case SBX_SC_LOG:
		return SCMP_ACT_LOG;
	case SBX_SC_KILL:
		return SCMP_ACT_KILL_PROCESS;
	case SBX_SC_ERRNO:
	default:
		return notify && !quiet ? SCMP_ACT_NOTIFY : SCMP_ACT_ERRNO((uint32_t)e);
	}
}

static void ctx_release(scmp_filter_ctx *ctx)
{
	if (*ctx)
		seccomp_release(*ctx);
}

static int build_ctx(const struct sbx_seccomp_policy *p, bool notify, scmp_filter_ctx *out,
		     struct sbx_err *err)
{
	_cleanup_(ctx_release) scmp_filter_ctx ctx = NULL;
	uint32_t def = scmp_action(p->def, p->def_err, false, notify);
	char name[64];
	int rc;

	ctx = seccomp_init(def);
	if (!ctx)
		return sbx_err_set(err, ENOMEM, "cannot create the seccomp filter");
	/* Other ABIs (i386 via int 0x80, x32) are not in the filter: kill. */
	rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (rc == 0)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 1);
	if (rc == 0)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_API_SYSRAWRC, 1);
	if (rc < 0)
		return sbx_err_set(err, -rc, "cannot set the seccomp filter attributes");
	/* A binary tree of syscalls: fewer instructions per call. */
	(void)seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	for (size_t i = 0; i < p->n; i++) {
		const struct sbx_sc_rule *r = &p->rules[i];
		uint32_t act = scmp_action(r->act, r->err, r->quiet, notify);

		if (r->nr < 0 || act == def)
			continue;
		struct scmp_arg_cmp cmps[2] = {r->cmp, r->cmp2};

		rc = seccomp_rule_add_exact_array(ctx, act, r->nr,
						  r->has_cmp ? (r->has_cmp2 ? 2 : 1) : 0, cmps);
		if (rc < 0)
			return sbx_err_set(err, -rc, "cannot add the seccomp rule for '%s'",
					   sbx_seccomp_syscall_name(r->nr, name, sizeof(name))
					       ?: "?");
	}
	*out = steal_pointer(&ctx);
	return 0;
}

void sbx_seccomp_filter_free(struct sbx_seccomp_filter *f)
{
	free(f->policy);
	free(f->owned);
	memset(f, 0, sizeof(*f));
}

static bool policy_notifies(const struct sbx_seccomp_policy *p)
{
	if (p->def == SBX_SC_ERRNO)
		return true;
	for (size_t i = 0; i < p->n; i++)
		if (p->rules[i].act == SBX_SC_ERRNO && !p->rules[i].quiet && p->rules[i].nr >= 0)
			return true;
	return false;
}

/* The BPF program of ctx, through a memfd (libseccomp exports to an fd). */
static int export_insns(scmp_filter_ctx ctx, struct sock_filter **insns, size_t *len,
			struct sbx_err *err)
{
	_cleanup_close_ int fd = memfd_create("sbx-seccomp", MFD_CLOEXEC);
	struct stat st;
	int rc;

	if (fd < 0)
		return sbx_err_set(err, errno, "cannot create a memfd for the seccomp filter");
	rc = seccomp_export_bpf(ctx, fd);
	if (rc < 0)
		return sbx_err_set(err, -rc, "cannot export the seccomp filter");
	if (fstat(fd, &st) < 0)
		return sbx_err_set(err, errno, "cannot stat the seccomp filter");
	if (st.st_size <= 0 || st.st_size % (off_t)sizeof(struct sock_filter) != 0 ||
	    st.st_size / (off_t)sizeof(struct sock_filter) > BPF_MAXINSNS)
		return sbx_err_set(err, E2BIG, "the seccomp filter has a bad size (%lld bytes)",
				   (long long)st.st_size);
	*len = (size_t)st.st_size / sizeof(struct sock_filter);
	*insns = sbx_xmalloc((size_t)st.st_size);
	if (pread(fd, *insns, (size_t)st.st_size, 0) != st.st_size) {
		free(*insns);
		*insns = NULL;
		return sbx_err_set(err, EIO, "cannot read the seccomp filter back");
	}
	return 0;
}

int sbx_seccomp_compile(const struct sbx_seccomp_policy *p, bool notify, struct sock_filter **insns,
			size_t *len, bool *listener, struct sbx_err *err)
{
	_cleanup_(ctx_release) scmp_filter_ctx ctx = NULL;
	int rc;

	*insns = NULL;
	*len = 0;
	rc = build_ctx(p, notify, &ctx, err);
	if (rc == 0)
		rc = export_insns(ctx, insns, len, err);
	*listener = rc == 0 && notify && policy_notifies(p);
	return rc;
}

/* A built-in policy: the program compiled at build time, if it fits. */
static bool prepare_embedded(const char *policy, bool notify, struct sbx_seccomp_filter *f)
{
	const struct sbx_seccomp_prog *e = sbx_seccomp_embedded_prog(policy, notify);

	if (!e)
		return false;
	f->policy = sbx_xstrdup(policy);
	f->notify = notify;
	f->insns = e->insns;
	f->len = e->len;
	f->listener = e->listener;
	return true;
}

int sbx_seccomp_prepare_policy(const struct sbx_seccomp_policy *p, bool notify,
			       struct sbx_seccomp_filter *f, struct sbx_err *err)
{
	int rc;

	memset(f, 0, sizeof(*f));
	if (is_builtin(p->name) && prepare_embedded(p->name, notify, f))
		return 0;
	rc = sbx_seccomp_compile(p, notify, &f->owned, &f->len, &f->listener, err);
	if (rc < 0) {
		sbx_seccomp_filter_free(f);
		return rc;
	}
	f->insns = f->owned;
	f->notify = notify;
	f->policy = sbx_xstrdup(p->name);
	return 0;
}

int sbx_seccomp_prepare(const struct sbx_seccomp_opts *opts, struct sbx_seccomp_filter *f,
			struct sbx_err *err)
{
	const char *policy = opts->policy && *opts->policy ? opts->policy : "default";
	struct sbx_seccomp_policy *p = NULL;
	int rc;

	memset(f, 0, sizeof(*f));
	if (is_builtin(policy) && prepare_embedded(policy, opts->notify, f))
		return 0;
	rc = policy_resolve(policy, &p, err);
	if (rc == 0)
		rc = sbx_seccomp_prepare_policy(p, opts->notify, f, err);
	sbx_seccomp_policy_free(p);
	return rc;
}

int sbx_seccomp_validate(const char *policy, struct sbx_err *err)
{
	struct sbx_seccomp_opts o = {.policy = policy};
	struct sbx_seccomp_filter f;
	int rc = sbx_seccomp_prepare(&o, &f, err);

	if (rc == 0)
		sbx_seccomp_filter_free(&f);
	return rc;
}

static int load_prog(const struct sock_filter *insns, size_t len, bool listener, const char *policy,
		     struct sbx_err *err)
{
	struct sock_fprog prog = {.len = (unsigned short)len,
				  .filter = (struct sock_filter *)insns};
	unsigned int flags = listener ? SECCOMP_FILTER_FLAG_NEW_LISTENER : 0;
	long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);

	if (r < 0)
		return sbx_err_set(err, errno, "cannot load the seccomp filter '%s'", policy);
	/* The listener fd is O_CLOEXEC (the kernel's choice). */
	return listener ? (int)r : 0;
}

int sbx_seccomp_load(const struct sbx_seccomp_opts *opts, struct sbx_err *err)
{
	_cleanup_(ctx_release) scmp_filter_ctx ctx = NULL;
	const char *policy = opts->policy && *opts->policy ? opts->policy : "default";
	const struct sbx_seccomp_filter *c = opts->filter;
	const struct sbx_seccomp_prog *e;
	struct sbx_seccomp_policy *p = NULL;
	int rc, fd;

	/* Needed to load a filter without CAP_SYS_ADMIN; harmless if set. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return sbx_err_set(err, errno, "cannot set no_new_privs");
	if (c && c->insns && c->notify == opts->notify && strcmp(c->policy, policy) == 0)
		return load_prog(c->insns, c->len, c->listener, c->policy, err);
	/* A built-in not prepared in this mode: its embedded program. */
	if (is_builtin(policy) && (e = sbx_seccomp_embedded_prog(policy, opts->notify)))
		return load_prog(e->insns, e->len, e->listener, policy, err);
	/* A file is never read here: after pivot_root its host path names a
	 * file of the jail's own (a hostile image could plant a permissive
	 * policy there).  Only the filter prepared on the host will do. */
	if (!is_builtin(policy))
		return sbx_err_set(err, EINVAL,
				   "seccomp policy '%s' was not validated before the jail started",
				   policy);
	rc = policy_resolve(policy, &p, err);
	if (rc < 0)
		return rc;
	rc = build_ctx(p, opts->notify, &ctx, err);
	sbx_seccomp_policy_free(p);
	if (rc < 0)
		return rc;
	rc = seccomp_load(ctx);
	if (rc < 0)
		return sbx_err_set(err, -rc, "cannot load the seccomp filter '%s'", policy);
	if (!opts->notify)
		return 0;
	/* The listener is O_CLOEXEC and stays open after seccomp_release().
	 * A policy that blocks nothing (base none, default allow) has none. */
	fd = seccomp_notify_fd(ctx);
	return fd > 0 ? fd : 0;
}

int sbx_seccomp_export(const struct sbx_seccomp_opts *opts, int fd, bool bpf, struct sbx_err *err)
{
	_cleanup_(ctx_release) scmp_filter_ctx ctx = NULL;
	struct sbx_seccomp_policy *p = NULL;
	int rc;

	rc = sbx_seccomp_policy_get(opts->policy, &p, err);
	if (rc < 0)
		return rc;
	rc = build_ctx(p, opts->notify, &ctx, err);
	sbx_seccomp_policy_free(p);
	if (rc < 0)
		return rc;
	rc = bpf ? seccomp_export_bpf(ctx, fd) : seccomp_export_pfc(ctx, fd);
	if (rc < 0)
		return sbx_err_set(err, -rc, "cannot export the seccomp filter");
	return 0;
}
