/* SPDX-License-Identifier: MIT */
/*
 * lib/seccomp/seccomp_int.h - the seccomp policy as data, shared by lib/seccomp/seccomp.c
 * (built-in policies, filter build and load), lib/seccomp/seccomp_file.c (policy
 * files) and lib/seccomp/seccomp_audit.c (the supervisor side of audit mode).
 *
 * A policy is a default action and a list of rules.  The rules of one
 * syscall never overlap (a value of the argument matches at most one rule):
 * libseccomp silently drops or reorders overlapping rules with different
 * actions, and the audit supervisor replays the same table in user space
 * to find the errno a notified call gets.  A rule compares at most two
 * arguments (both must match), each at most once.
 */
#ifndef SBX_SECCOMP_INT_H
#define SBX_SECCOMP_INT_H

#include <seccomp.h> /* libseccomp (the build uses -iquote lib, so this is not lib/seccomp/seccomp.h) */
#include <stdbool.h>
#include <stdint.h>

#include "util.h"

enum sbx_sc_act {
	SBX_SC_ALLOW = 0,
	SBX_SC_ERRNO, /* fail with rule.err; SCMP_ACT_NOTIFY in audit mode */
	SBX_SC_KILL,  /* kill the whole process */
	SBX_SC_LOG,   /* allow, logged by the kernel audit subsystem */
};

struct sbx_sc_rule {
	int nr; /* native syscall number */
	enum sbx_sc_act act;
	int err;    /* positive errno for SBX_SC_ERRNO */
	bool quiet; /* stays ERRNO in audit mode (clone3 -> ENOSYS) */
	bool has_cmp;
	struct scmp_arg_cmp cmp; /* one comparison, when has_cmp */
	bool has_cmp2;
	struct scmp_arg_cmp cmp2; /* and a second one (another argument) */
};

struct sbx_seccomp_policy {
	char *name;	     /* "default", "strict" or the file path */
	enum sbx_sc_act def; /* action for syscalls no rule matches */
	int def_err;
	struct sbx_sc_rule *rules;
	size_t n, cap;
};

/* Resolve "default", "strict" or a file into a policy. 0 or -errno. */
int sbx_seccomp_policy_get(const char *policy, struct sbx_seccomp_policy **out,
			   struct sbx_err *err);
void sbx_seccomp_policy_free(struct sbx_seccomp_policy *p);

/*
 * Fill p with a built-in ("default", "strict", "none"); -ENOENT if unknown.
 * A copy of the rules resolved at build time (sbx_seccomp_embedded) when
 * they fit this libseccomp, else sbx_seccomp_policy_builtin_resolve().
 */
int sbx_seccomp_policy_builtin(struct sbx_seccomp_policy *p, const char *name);

/* The same, always resolving syscall names with this libseccomp now. */
int sbx_seccomp_policy_builtin_resolve(struct sbx_seccomp_policy *p, const char *name);

/* Parse a policy file (lib/seccomp/seccomp_file.c). */
int sbx_seccomp_policy_parse_file(const char *path, struct sbx_seccomp_policy *p,
				  struct sbx_err *err);
/* The same for a file's text, NUL-terminated and modified in place; name
 * is what the errors call it. */
int sbx_seccomp_policy_parse_text(const char *name, char *text, struct sbx_seccomp_policy *p,
				  struct sbx_err *err);

void sbx_seccomp_policy_add(struct sbx_seccomp_policy *p, const struct sbx_sc_rule *r);
/* Remove every rule for nr (a file's allow/deny replaces them all). */
void sbx_seccomp_policy_drop(struct sbx_seccomp_policy *p, int nr);

/*
 * The action and errno the policy gives syscall nr with args, evaluated in
 * user space exactly as the filter does (first matching rule, else the
 * default).
 */
enum sbx_sc_act sbx_seccomp_policy_eval(const struct sbx_seccomp_policy *p, int nr,
					const uint64_t args[6], int *errnum);

/*
 * Compile p with libseccomp into a BPF program for seccomp(2): *insns
 * (malloc'ed) of *len instructions; *listener when it needs
 * SECCOMP_FILTER_FLAG_NEW_LISTENER (notify and the policy blocks
 * something).  0 or -errno.
 */
struct sock_filter;
int sbx_seccomp_compile(const struct sbx_seccomp_policy *p, bool notify, struct sock_filter **insns,
			size_t *len, bool *listener, struct sbx_err *err);

/*
 * The built-in policies resolved and compiled at build time by
 * lib/seccomp/gen/seccomp_gen.c (with the code above) into lib/seccomp/seccomp_builtin.c,
 * so that a run does not pay libseccomp's name lookups and compiler
 * (~0.8 ms) for them.  Used only when the libseccomp and the native
 * architecture at run time are those of the build.
 */
struct sbx_seccomp_prog {
	const struct sock_filter *insns; /* NULL: not compiled at build time */
	size_t len;
	bool listener;
};

struct sbx_seccomp_builtin {
	const char *name; /* "default", "strict" */
	enum sbx_sc_act def;
	int def_err;
	const struct sbx_sc_rule *rules;
	size_t n;
	struct sbx_seccomp_prog prog[2]; /* [notify] */
};

struct sbx_seccomp_embedded {
	unsigned int major, minor, micro; /* seccomp_version() of the build */
	uint32_t arch;			  /* seccomp_arch_native() of the build */
	const struct sbx_seccomp_builtin *policies;
	size_t n;
};

/* Defined by the generated lib/seccomp/seccomp_builtin.c (the generator defines
 * an empty one for itself). */
extern const struct sbx_seccomp_embedded sbx_seccomp_embedded;

/* The embedded built-in policy name, or NULL if there is none or it does
 * not fit this libseccomp and architecture. */
const struct sbx_seccomp_builtin *sbx_seccomp_embedded_get(const char *name);

/* Its program for that mode, or NULL if there is none or this kernel
 * lacks an action it uses (libseccomp then reports that, as before). */
const struct sbx_seccomp_prog *sbx_seccomp_embedded_prog(const char *name, bool notify);

/* Native syscall name for nr, or NULL. */
const char *sbx_seccomp_syscall_name(int nr, char *buf, size_t len);

#endif
