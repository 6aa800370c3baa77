/* SPDX-License-Identifier: MIT */
/*
 * lib/seccomp/seccomp.h - seccomp policies (libseccomp): default, strict, or a file.
 * The policies, the file format and what audit mode can see are described
 * in lib/seccomp/seccomp_policy.md.
 */
#ifndef SBX_SECCOMP_H
#define SBX_SECCOMP_H

#include <jansson.h>
#include <linux/filter.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "util.h"

/*
 * A filter made on the host before the jail is cloned (sbx_seccomp_prepare):
 * the jail's child, which inherits it through the jail's options, only
 * hands its BPF program to the kernel.  A policy file is read once, here,
 * and never again: after pivot_root its path would name a file of the
 * jail's own.  A built-in policy points at the program compiled at build
 * time (lib/seccomp/seccomp_embed.c) when it fits this libseccomp.
 */
struct sbx_seccomp_filter {
	char *policy;			 /* as given: "default", "strict" or a path */
	bool notify;			 /* made for audit mode */
	bool listener;			 /* ... and it has notify actions (a listener fd) */
	const struct sock_filter *insns; /* the program: owned, or the embedded one */
	struct sock_filter *owned;
	size_t len;
};
void sbx_seccomp_filter_free(struct sbx_seccomp_filter *f);

struct sbx_seccomp_opts {
	const char *policy; /* "default", "strict", or a policy file path; NULL = default */
	bool notify;	    /* blocked syscalls go to a user-notification fd (audit) */
	/* sbx_seccomp_load: the filter prepared for this policy and mode
	 * (required for a policy file), or NULL. */
	const struct sbx_seccomp_filter *filter;
};

/*
 * Check a policy name or file without loading it (profile check).  Errors
 * name the file and line: "seccomp policy 'p.policy': line 3: unknown
 * syscall 'mountt' (did you mean 'mount'?)".
 */
int sbx_seccomp_validate(const char *policy, struct sbx_err *err);

/*
 * Read and compile the filter opts describes into *f, before the jail is
 * cloned (a run: a 125 with the file's line for a bad one, not a child's
 * failure); opts->filter is not used.  Same errors as sbx_seccomp_validate.
 * Free with sbx_seccomp_filter_free.  sbx_seccomp_prepare_policy: from a
 * policy already read (audit mode replays the very policy it compiled).
 */
int sbx_seccomp_prepare(const struct sbx_seccomp_opts *opts, struct sbx_seccomp_filter *f,
			struct sbx_err *err);
struct sbx_seccomp_policy;
int sbx_seccomp_prepare_policy(const struct sbx_seccomp_policy *p, bool notify,
			       struct sbx_seccomp_filter *f, struct sbx_err *err);

/*
 * Load the filter into the calling thread (the jail's child, last step
 * before execve): opts->filter when it was prepared for opts' policy and
 * mode, else a built-in policy's program.  Sets no_new_privs itself
 * (harmless if already set).  A policy file without its prepared filter is
 * -EINVAL "seccomp policy 'F' was not validated before the jail started".
 * With opts->notify the returned value is the listener fd (> 0, O_CLOEXEC)
 * for the supervisor, or 0 if the policy blocks nothing (no listener);
 * without it, 0.  -errno on failure.
 *
 * In notify mode every call the policy blocks (except clone3, which stays a
 * plain ENOSYS) waits in the kernel until the supervisor answers through
 * sbx_seccomp_audit_handle().  The child must therefore hand the fd to the
 * supervisor (SCM_RIGHTS) and close its own copy before doing anything the
 * policy blocks, and the supervisor must serve it until the jail is gone.
 * If the listener is closed, blocked calls fail with ENOSYS instead.
 */
int sbx_seccomp_load(const struct sbx_seccomp_opts *opts, struct sbx_err *err);

/* Whether policy (NULL or "" meaning "default") is a built-in one, not a
 * policy file. */
bool sbx_seccomp_is_builtin(const char *policy);

/* Write the filter opts describes to fd: libseccomp's pseudo filter code
 * (bpf = false) or the raw BPF program (bpf = true).  For tests and
 * debugging. */
int sbx_seccomp_export(const struct sbx_seccomp_opts *opts, int fd, bool bpf, struct sbx_err *err);

/*
 * A jail that maps one id (lib/seccomp/seccomp_ids.c): setuid, setgid, setre*id,
 * setres*id, chown, lchown, fchown, fchownat with an id argument other
 * than uid/gid (or -1) get EPERM, as on the host, not the kernel's EINVAL.
 * The program (up to max instructions; 0 on an architecture it does not
 * cover), and loading it into the calling thread under the policy's.
 */
struct sock_filter;
int sbx_seccomp_ids_program(uid_t uid, gid_t gid, struct sock_filter *prog, size_t max);
int sbx_seccomp_ids_load(uid_t uid, gid_t gid, struct sbx_err *err);

/* The errno blocked syscalls get under the default policy. */
#define SBX_SECCOMP_ERRNO EPERM

/*
 * Audit mode, supervisor side.  One entry per blocked syscall (and errno
 * answered: strict gives socket(AF_PACKET) EPERM, socket(AF_INET) ENOSYS),
 * in the order first seen.
 */
struct sbx_seccomp_audit_entry {
	int nr;	       /* native syscall number */
	char name[40]; /* "mount", or "syscall_NNN" if unnamed */
	uint64_t count;
	pid_t pid;	/* first caller, as the supervisor sees it (host pid) */
	pid_t jail_pid; /* the same in the jail's pid namespace; 0 if unknown */
	int errnum;	/* errno answered (EPERM, ENOSYS, ...) */
	char args[64];	/* the arguments that decided: "AF_INET, SOCK_RAW", or "" */
};

struct sbx_seccomp_policy;

struct sbx_seccomp_audit {
	struct sbx_seccomp_policy *policy; /* replays the filter's errno */
	struct sbx_seccomp_filter filter;  /* the audit-mode filter of that policy */
	struct sbx_seccomp_audit_entry *entries;
	size_t n, cap;
	uint64_t total;	  /* notifications answered */
	void *req, *resp; /* libseccomp notification buffers */
	size_t req_size;  /* the kernel's struct seccomp_notif size */
};

/* Prepare to serve a jail loaded with the same policy in audit mode; also
 * compiles that filter (a->filter, for the jail's options), so call it
 * before the jail is cloned. */
int sbx_seccomp_audit_init(struct sbx_seccomp_audit *a, const char *policy, struct sbx_err *err);
void sbx_seccomp_audit_free(struct sbx_seccomp_audit *a);

/*
 * Receive one notification from notify_fd (call when it polls readable),
 * record it and answer with the policy's errno.  Returns 1 when a call was
 * recorded and answered, 0 when there was nothing to do (the caller died
 * meanwhile: ENOENT), -errno on error (-ENOTCONN... when the jail is gone:
 * the caller stops polling on POLLHUP).
 */
int sbx_seccomp_audit_handle(int notify_fd, struct sbx_seccomp_audit *a, struct sbx_err *err);

/* {"syscall", "nr", "count", "pid", "jail_pid", "errno", "args"} for one
 * entry (the fields of a `seccomp` run-log event; "args" is null for a
 * call whose arguments the policy does not look at), and an array of all
 * of them.  Calls are counted per syscall, errno and deciding arguments. */
json_t *sbx_seccomp_audit_entry_json(const struct sbx_seccomp_audit_entry *e);
json_t *sbx_seccomp_audit_json(const struct sbx_seccomp_audit *a);

#endif
