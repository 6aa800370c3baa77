/* SPDX-License-Identifier: MIT */
/*
 * lib/jail/enter.h - `sbx exec` into a running jail: find the jail's init from
 * the record (verified against pid reuse), join all its namespaces and its
 * cgroup, and run a command there with the same ids, capabilities,
 * no_new_privs and seccomp policy as the sandbox's command.
 *
 *   sbx exec (host)                    helper (fork of sbx exec)
 *   sbx_enter_find_init(): pidfd of init,
 *     an nsfs fd of each of its namespaces
 *   sbx_enter_start(): fork ----------> non-dumpable, every fd but stdio,
 *                                       the sync socket, the output pipes
 *                                       and the namespace fds closed,
 *                                       attach to the cgroup,
 *                                       setns() user, then the others,
 *                                       non-dumpable again, fork ->
 *                                         command (pid 2+ of the jail):
 *                                         sbx_jail_exec_command()
 *                                       forward signals, reap, STATUS
 *     <---- EXEC / EXEC_FAIL / ERROR
 *   sbx_jail_supervise() on the helper as if it were init, then
 *   sbx_jail_exit_code().
 *
 * The namespace fds come from init's pidfd (PIDFD_GET_*_NAMESPACE).  That
 * needs ptrace access to init, which root has but the ordinary user who
 * started the jail does not (init is not dumpable).  Then they come from
 * one of init's children (the sandbox's command, a process of that user)
 * and are verified instead of trusted: pid 1 of its pid namespace must be
 * the verified init (NS_GET_TGID_FROM_PIDNS), its user namespace the one
 * that owns that pid namespace, and every other namespace owned by that
 * user namespace (one the jail's processes, without CAP_SYS_ADMIN in it,
 * could not have made).  A jail whose processes are all non-dumpable can
 * so refuse `sbx exec` by its ordinary user; it cannot misdirect it.
 *
 * The helper is not in the jail's pid namespace (setns only moves its
 * children), so the jail cannot even name it; the command is, and is not
 * dumpable until its execve, so a hostile jail can neither ptrace it nor
 * open its /proc/PID/{exe,cwd,root,fd}.  Nothing is ever exec'd through a
 * path the jail controls before every privilege is gone, and sbx's own
 * binary is never re-exec'd.
 */
#ifndef SBX_ENTER_H
#define SBX_ENTER_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/types.h>

#include "config.h"
#include "jail.h"
#include "limits.h"
#include "util.h"

#define SBX_ENTER_NNS 7

/* The running jail, as the record describes it and the kernel confirms it. */
struct sbx_enter_target {
	pid_t init_pid;		 /* host pid of the jail's init */
	int pidfd;		 /* of that init, verified (O_CLOEXEC) */
	int nsfd[SBX_ENTER_NNS]; /* user, mnt, pid, ipc, uts, net, cgroup; -1: keep ours */
	bool via_child;		 /* the fds came from a (verified) child of init */
	struct sbx_jail_ids ids; /* the sandbox command's ids */
};

void sbx_enter_target_init(struct sbx_enter_target *t);
void sbx_enter_target_free(struct sbx_enter_target *t);

/*
 * From a running sandbox's record (and its directory, whose lock file the
 * supervisor holds): open a pidfd of the jail's init and make sure it is
 * that init and not a process that reused its pid.  With init_start in the
 * record its start time must match; without it, init must be a pid
 * namespace's pid 1 whose parent is the recorded supervisor, itself
 * verified by supervisor_start or by holding the sandbox's lock file open.
 * Also opens the namespaces to join (all but the network namespace of a
 * `mode = host` sandbox; see above for where they come from) and fills
 * the command's ids (sbx_enter_ids).  -ESRCH when init is gone, -EACCES
 * when no namespace of the jail could be had.
 */
/* What the sandbox's record says of its processes and its command's user
 * (sbx_record_enter, lib/state/record.h, fills it from a record). */
struct sbx_enter_record {
	pid_t init_pid, supervisor_pid;
	uint64_t init_start, supervisor_start; /* 0: not recorded */
	bool has_user;			       /* policy.user was recorded: */
	int64_t uid, host_uid;		       /* the command's uid, inside and on the host */
};

int sbx_enter_find_init(const struct sbx_enter_record *record, int sandbox_dirfd,
			const struct sbx_config *cfg, struct sbx_enter_target *t,
			struct sbx_err *err);

/*
 * The sandbox command's ids, as `sbx run` resolved them from the profile
 * (cfg) for this caller; with init > 0 checked against the jail's id maps
 * (a user's jail maps one id: that is the command's), and against the
 * record's policy.user when it has one.  -EPERM when the caller is not who
 * started the sandbox.
 */
int sbx_enter_ids(const struct sbx_config *cfg, const struct sbx_enter_record *record, pid_t init,
		  struct sbx_jail_ids *ids, struct sbx_err *err);

struct sbx_enter_opts {
	const struct sbx_config *cfg; /* the sandbox's resolved profile */
	const struct sbx_enter_target *target;
	struct sbx_cgroup *cg; /* the sandbox's cgroup (version 0: none) */
	char *const *argv;
	char *const *envp;
	const char *workdir;  /* inside; NULL: try host_cwd, then / */
	const char *host_cwd; /* the sandbox's recorded workdir */
	int out_fd, err_fd;   /* write ends for stdout/stderr, -1: inherit */
	bool tty;
	struct sbx_jail_term term;
	const struct sbx_seccomp_filter *seccomp; /* the profile's, prepared (required) */
	/* sbx exec's argv strings: the helper rewrites them to "sbx-exec"
	 * before it forks the command into the jail, so the jail never sees
	 * the host's command line in /proc (argv, workdir and the rest must
	 * not point into them).  NULL to leave them. */
	char *title;
	size_t title_len;
};

/*
 * Start the command in the jail.  Returns once it has been exec'd (0), or
 * its execve failed (0, j->exec_errno set; its status follows), or entering
 * failed (-errno, err says what; the helper is gone).  Afterwards j looks
 * like a started jail whose "init" is the helper: hand it to
 * sbx_jail_supervise() and sbx_jail_exit_code().  The caller should block
 * the forwarded signals before (sbx_jail_supervise takes them).
 */
int sbx_enter_start(struct sbx_jail *j, const struct sbx_enter_opts *o, struct sbx_err *err);

/* Block the signals sbx_jail_supervise() forwards (before starting). */
void sbx_enter_block_signals(void);

#endif
