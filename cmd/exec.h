/* SPDX-License-Identifier: MIT */
/* cmd/exec.h - sbx exec: shared by exec.c (options, running sandboxes) and
 * exec_kept.c (a new jail over a kept, exited sandbox's writable layer). */
#ifndef SBX_CMD_EXEC_H
#define SBX_CMD_EXEC_H

#include <jansson.h>
#include <stdbool.h>

#include "config.h"
#include "enter.h"
#include "jail.h"
#include "limits.h"
#include "run.h"
#include "state.h"

struct exec_args {
	enum sbx_tty tty_mode; /* -t yes, -T no, else auto */
	bool tty;	       /* a pty: tty_mode for this caller */
	struct sbx_strv env;   /* -e NAME[=VAL], in order */
	const char *workdir;   /* -w */
	const char *sandbox;   /* id, prefix or name */
	char **argv;	       /* the command (NULL-terminated) */
	/* sbx's argv strings, which the helper in the jail overwrites
	 * (sbx_cmd_title): argv and workdir are then copies */
	char *title;
	size_t title_len;
	char **argv_owned;
	char *workdir_owned;
};

/* Parse `sbx exec` options (no side effects; unit-testable).  0, or
 * -EINVAL with err set; 1 when --help was printed. */
int exec_parse_args(int argc, char **argv, struct exec_args *a, struct sbx_err *err);
void exec_args_free(struct exec_args *a);

struct exec_ctx {
	struct exec_args args;
	struct sbx_cmd_ctx *cmd; /* sbx.c's: the state directory */
	struct sbx_state *st;
	struct sbx_sandbox sb;
	struct sbx_config cfg;
	struct sbx_seccomp_filter filter; /* the profile's, prepared on the host */
	struct sbx_enter_target target;
	struct sbx_cgroup cg;
	struct sbx_jail jail;
	struct sbx_strv env;
	const char *mode;  /* "running", "new jail" (for the log event) */
	char *layer_dir;   /* exec_kept.c: the writable layers' directory */
	bool rootfs_layer; /* exec_kept.c: an image root with its own layer (upper/) */
	pid_t stdin_pump;  /* copies a host file on stdin into a pipe, or 0 */
	/* what the host runs later, as the command started, and what of it
	 * changed once it ended ("git_changed", "watch_changed") */
	struct sbx_later later;
	json_t *changed;
};

/* The sandbox's resolved profile from its record, plus -e; the seccomp
 * policy compiled (a policy file is read on the host, now). */
int exec_load_config(const struct sbx_record *rec, const struct exec_args *a,
		     struct sbx_config *cfg, struct sbx_seccomp_filter *filter,
		     struct sbx_err *err);
/* The environment the sandbox's command got (without secret values). */
void exec_build_env(const struct sbx_config *cfg, const struct sbx_record *rec,
		    const struct sbx_jail_ids *ids, bool tty, bool proxy, struct sbx_strv *env);
void exec_workdir(const struct exec_args *a, const struct sbx_config *cfg,
		  const struct sbx_record *rec, const char **workdir, const char **host_cwd);
/* Close the write ends, proxy output and signals until the command ends;
 * its exit status (sbx(1) EXIT STATUS) or -errno.  sb: a running sandbox
 * whose supervisor takes the output still held by background processes
 * once the command ended (NULL: relay it here until its end). */
int exec_run_supervised(struct sbx_jail *j, int out[2], int errp[2], const struct sbx_sandbox *sb,
			struct sbx_err *err);
void exec_log_event(const struct sbx_sandbox *sb, const struct exec_args *a, const char *mode,
		    const char *via, int status, pid_t pid, const char *error,
		    const json_t *changed);

/* exec_kept.c: into a kept, exited sandbox. */
int exec_kept(struct exec_ctx *x, struct sbx_err *err);

#endif
