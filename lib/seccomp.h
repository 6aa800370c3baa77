/* SPDX-License-Identifier: MIT */
/* lib/seccomp.h - seccomp policies (libseccomp): default, strict, or a file. */
#ifndef SBX_SECCOMP_H
#define SBX_SECCOMP_H

#include <stdbool.h>

#include "util.h"

struct sbx_seccomp_opts {
	const char *policy;	/* "default", "strict", or a policy file path */
	bool notify;		/* blocked syscalls go to a user-notification fd (audit) */
};

/*
 * Check a policy name or file without loading it (profile check, run before
 * clone so a bad file is a 125 with a clear message, not a child failure).
 */
int sbx_seccomp_validate(const char *policy, struct sbx_err *err);

/*
 * Build and load the filter into the calling thread (the jail's child, last
 * step before execve; no_new_privs must already be set).  With opts->notify
 * the returned value is the listener fd (>= 0) for the supervisor; otherwise
 * 0.  -errno on failure.
 */
int sbx_seccomp_load(const struct sbx_seccomp_opts *opts, struct sbx_err *err);

/* The errno blocked syscalls get under the default policy. */
#define SBX_SECCOMP_ERRNO EPERM

#endif
