/* SPDX-License-Identifier: MIT */
/*
 * lib/seccomp/seccomp.h - seccomp policies (libseccomp): default, strict, or a file.
 * The policies, the file format and what audit mode can see are described
 * in lib/seccomp/seccomp_policy.md.
 */
#ifndef SBX_SECCOMP_H
#define SBX_SECCOMP_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "util.h"

struct sbx_seccomp_opts {
	const char *policy; /* "default", "strict", or a policy file path; NULL = default */
	bool notify;	    /* blocked syscalls go to a user-notification fd (audit) */
};

/*
 * Check a policy name or file without loading it (profile check, run before
 * clone so a bad file is a 125 with a clear message, not a child failure).
 * Errors name the file and line: "seccomp policy 'p.policy': line 3:
 * unknown syscall 'mountt' (did you mean 'mount'?)".
 *
 * A policy file that validates is also recorded in this process: the
 * jail's child (cloned after this, so it inherits the record) loads that
 * record and never opens the path, which after pivot_root would name a file
 * inside the jail.  So call this before starting the jail (run does).
 */
int sbx_seccomp_validate(const char *policy, struct sbx_err *err);

/*
 * Compile the filter opts describes now, before the jail is cloned, so that
 * the child only hands the BPF program to the kernel.  sbx_seccomp_validate
 * does this for non-audit mode; call this with opts->notify set as well
 * when the run uses audit mode.  Same errors as sbx_seccomp_validate.
 */
int sbx_seccomp_prepare(const struct sbx_seccomp_opts *opts, struct sbx_err *err);

/*
 * Build and load the filter into the calling thread (the jail's child, last
 * step before execve).  Sets no_new_privs itself (harmless if already set).
 * A file policy must have been validated by sbx_seccomp_validate() in this
 * process (or the process it was forked/cloned from) beforehand; otherwise
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
	struct sbx_seccomp_audit_entry *entries;
	size_t n, cap;
	uint64_t total;	  /* notifications answered */
	void *req, *resp; /* libseccomp notification buffers */
	size_t req_size;  /* the kernel's struct seccomp_notif size */
};

/* Prepare to serve a jail loaded with the same policy in audit mode; also
 * compiles that filter (sbx_seccomp_prepare), so call it before the jail
 * is cloned. */
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
