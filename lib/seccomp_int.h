/* SPDX-License-Identifier: MIT */
/*
 * lib/seccomp_int.h - the seccomp policy as data, shared by lib/seccomp.c
 * (built-in policies, filter build and load), lib/seccomp_file.c (policy
 * files) and lib/seccomp_audit.c (the supervisor side of audit mode).
 *
 * A policy is a default action and a list of rules.  The rules of one
 * syscall never overlap (a value of the argument matches at most one rule):
 * libseccomp silently drops or reorders overlapping rules with different
 * actions, and the audit supervisor replays the same table in user space
 * to find the errno a notified call gets.  Every rule compares at most one
 * argument.
 */
#ifndef SBX_SECCOMP_INT_H
#define SBX_SECCOMP_INT_H

#include <seccomp.h> /* libseccomp (the build uses -iquote lib, so this is not lib/seccomp.h) */
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

/* Fill p with a built-in ("default", "strict", "none"); -ENOENT if unknown. */
int sbx_seccomp_policy_builtin(struct sbx_seccomp_policy *p, const char *name);

/* Parse a policy file (lib/seccomp_file.c). */
int sbx_seccomp_policy_parse_file(const char *path, struct sbx_seccomp_policy *p,
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

/* Native syscall name for nr, or NULL. */
const char *sbx_seccomp_syscall_name(int nr, char *buf, size_t len);

#endif
