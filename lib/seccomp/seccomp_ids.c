/* SPDX-License-Identifier: MIT */
/*
 * lib/seccomp/seccomp_ids.c - in a jail that maps one id (an ordinary user's,
 * without a subordinate range), setuid()/chown() to any other id fail with
 * EINVAL: the kernel cannot map it.  On the host the same call fails with
 * EPERM, and programs test for that (CPython's test_subprocess, tools that
 * try to drop privileges and carry on when they may not).  This small
 * filter, stacked under the policy's, answers EPERM for exactly those
 * calls: an id argument that is neither the mapped one nor -1 ("leave
 * it").  It allows nothing the kernel would refuse anyway; it only picks
 * the errno.  The program is written by hand (a dozen syscalls, a handful
 * of comparisons each): libseccomp would need hundreds of masked rules to
 * say "not U and not -1" one argument at a time.
 */
#include "seccomp.h"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#if defined(__x86_64__)
#define IDS_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define IDS_ARCH AUDIT_ARCH_AARCH64
#endif

#define ARG_LO(n) (offsetof(struct seccomp_data, args) + 8 * (n))
#define MAX_INSNS 256

/* Which arguments of a syscall are ids: 'u' a uid, 'g' a gid; upper case
 * when -1 ("unchanged") is allowed too. */
static const struct {
	int nr;
	const char *args; /* per argument index: 0 not an id */
} calls[] = {
    {SYS_setuid, "u"},	    {SYS_setgid, "g"},
    {SYS_setreuid, "UU"},   {SYS_setregid, "GG"},
    {SYS_setresuid, "UUU"}, {SYS_setresgid, "GGG"},
#ifdef SYS_chown
    {SYS_chown, "\001UG"},  {SYS_lchown, "\001UG"},
#endif
    {SYS_fchown, "\001UG"}, {SYS_fchownat, "\001\001UG"},
};

static void emit(struct sock_filter *p, size_t *n, struct sock_filter i)
{
	if (*n < MAX_INSNS)
		p[(*n)++] = i;
}

/* One syscall's block: each id argument must be the id (or -1). */
static size_t block(struct sock_filter *p, size_t *n, const char *args, uint32_t uid, uint32_t gid)
{
	size_t start = *n;

	for (size_t a = 0; args[a]; a++) {
		char k = args[a];
		bool minus1 = k == 'U' || k == 'G';
		uint32_t id = (k == 'u' || k == 'U') ? uid : gid;

		if (k == '\001')
			continue;
		emit(p, n, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(a)));
		/* equal: skip the rest of this check (the -1 test and the return) */
		emit(
		    p, n,
		    (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, id, minus1 ? 2 : 1, 0));
		if (minus1)
			emit(p, n,
			     (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0xffffffffu, 1,
							  0));
		emit(p, n,
		     (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM));
	}
	emit(p, n, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
	return *n - start;
}

int sbx_seccomp_ids_program(uid_t uid, gid_t gid, struct sock_filter *prog, size_t max)
{
#ifdef IDS_ARCH
	struct sock_filter p[MAX_INSNS];
	size_t n = 0;

	emit(p, &n,
	     (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					  offsetof(struct seccomp_data, arch)));
	/* Another ABI: the policy's own filter kills it; nothing to say here. */
	emit(p, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IDS_ARCH, 1, 0));
	emit(p, &n, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
	emit(p, &n,
	     (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					  offsetof(struct seccomp_data, nr)));
	for (size_t i = 0; i < SBX_ARRAY_SIZE(calls); i++) {
		struct sock_filter b[64];
		size_t bn = 0, len = block(b, &bn, calls[i].args, uid, gid);

		/* not this syscall: over its block */
		emit(p, &n,
		     (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)calls[i].nr,
						  0, (uint8_t)len));
		for (size_t k = 0; k < bn; k++)
			emit(p, &n, b[k]);
	}
	emit(p, &n, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
	if (n >= MAX_INSNS || n > max)
		return -E2BIG;
	memcpy(prog, p, n * sizeof(*p));
	return (int)n;
#else
	(void)uid, (void)gid, (void)prog, (void)max;
	return 0;
#endif
}

int sbx_seccomp_ids_load(uid_t uid, gid_t gid, struct sbx_err *err)
{
	struct sock_filter p[MAX_INSNS];
	struct sock_fprog prog = {.filter = p};
	int n = sbx_seccomp_ids_program(uid, gid, p, MAX_INSNS);

	if (n < 0)
		return sbx_err_set(err, -n, "cannot build the one-id seccomp filter");
	if (n == 0)
		return 0; /* an architecture this is not written for */
	prog.len = (unsigned short)n;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
		return sbx_err_set(err, errno, "cannot load the one-id seccomp filter");
	return 0;
}
