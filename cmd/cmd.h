/* SPDX-License-Identifier: MIT */
/* cmd/cmd.h - subcommands and the helpers they share. */
#ifndef SBX_CMD_H
#define SBX_CMD_H

#include <stdbool.h>

#include "state.h"
#include "util.h"

/*
 * What sbx.c gives every subcommand: the global options, the state
 * directory (opened on first use by sbx_cmd_state, closed by sbx.c after
 * the command) and a place for the command's error, which sbx.c prints
 * once ("sbx: <msg>") after the handler returned its exit status.
 */
struct sbx_cmd_ctx {
	const char *state_dir; /* --state-dir or $SBX_STATE_DIR (may be NULL) */
	const char *cache_dir; /* $SBX_CACHE_DIR (may be NULL) */
	bool color;	       /* stderr is a terminal and NO_COLOR unset */
	struct sbx_state st;   /* sbx_cmd_state() */
	bool st_open;
	enum { SBX_CMD_STATE_NONE, SBX_CMD_STATE_OPEN, SBX_CMD_STATE_CREATE } state_use;
	struct sbx_err err; /* the command's error (msg[0] != 0: printed by sbx.c) */
};

/* One function per subcommand, in cmd/<name>.c: its exit status. */
int cmd_apply(struct sbx_cmd_ctx *ctx, int argc, char **argv);
int cmd_destroy(struct sbx_cmd_ctx *ctx, int argc, char **argv);
int cmd_diff(struct sbx_cmd_ctx *ctx, int argc, char **argv);
int cmd_doctor(struct sbx_cmd_ctx *ctx, int argc, char **argv);
int cmd_exec(struct sbx_cmd_ctx *ctx, int argc, char **argv);
int cmd_export(struct sbx_cmd_ctx *ctx, int argc, char **argv);
int cmd_image(struct sbx_cmd_ctx *ctx, int argc, char **argv);
int cmd_inspect(struct sbx_cmd_ctx *ctx, int argc, char **argv);
int cmd_logs(struct sbx_cmd_ctx *ctx, int argc, char **argv);
int cmd_profile(struct sbx_cmd_ctx *ctx, int argc, char **argv);
int cmd_proxy(struct sbx_cmd_ctx *ctx, int argc, char **argv);
int cmd_ps(struct sbx_cmd_ctx *ctx, int argc, char **argv);
int cmd_run(struct sbx_cmd_ctx *ctx, int argc, char **argv);
int cmd_stop(struct sbx_cmd_ctx *ctx, int argc, char **argv);
int cmd_wait(struct sbx_cmd_ctx *ctx, int argc, char **argv);

/* Their --help texts, for the commands whose --help sbx.c answers. */
extern const char sbx_usage_apply[], sbx_usage_destroy[], sbx_usage_diff[], sbx_usage_doctor[],
    sbx_usage_export[], sbx_usage_image[], sbx_usage_inspect[], sbx_usage_proxy[], sbx_usage_ps[],
    sbx_usage_logs[], sbx_usage_stop[], sbx_usage_wait[];

/* The handler's error for sbx.c to print; returns code. */
int sbx_cmd_fail(struct sbx_cmd_ctx *ctx, const struct sbx_err *err, int code);

/* Print "sbx: <msg>" (and errno text) on stderr. */
void sbx_print_err(const struct sbx_err *err);
void sbx_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sbx_warnf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The state directory (global options applied), opened on the first
 * call (and created for a command whose table entry says so): &ctx->st,
 * or NULL with err set. */
struct sbx_state *sbx_cmd_state(struct sbx_cmd_ctx *ctx, struct sbx_err *err);

/*
 * " (did you mean '--memory'?)" for an unknown long option arg ("--memroy"
 * or "--memroy=1g") close to one of opts, else "": to append to the
 * "unknown option" line, as profile keys do.
 */
struct option;
const char *sbx_cmd_option_hint(const char *arg, const struct option *opts, char *buf, size_t len);

/*
 * The one line for an option getopt refused (arg: argv[optind - 1]), in
 * err: "unknown option '--memroy' (did you mean '--memory'?) (see 'sbx
 * CMD --help')", or "option '-e' needs a value ..." when needs_value;
 * prefix ("run") starts it when not NULL.  Returns -EINVAL.  Every
 * command's optstring starts with ':' (after a '+'), so that getopt_long
 * returns ':' for an option whose value is missing, short or long.
 */
int sbx_cmd_option_error(struct sbx_err *err, const char *prefix, const char *cmd, const char *arg,
			 const struct option *opts, bool needs_value);
/* A usage error as the command's error (ctx->err): returns SBX_EXIT_USAGE. */
int sbx_cmd_usage_error(struct sbx_cmd_ctx *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The same as the command's error for getopt_long's '?' or ':' (c):
 * SBX_EXIT_USAGE. */
int sbx_cmd_bad_option(struct sbx_cmd_ctx *ctx, const char *cmd, int c, const char *arg,
		       const struct option *opts);

/*
 * sbx's own argv strings, the area main() recorded (sbx_proc_title_init:
 * from argv[0] to the end of the last argument, as the kernel lays them
 * out): what a process of sbx's in the jail overwrites so that
 * /proc/PID/cmdline never shows the host's command line there.  NULL when
 * they are not laid out so.  The
 * command's argv (from argv + first on) is then copied into *copy (NULL
 * otherwise; free with sbx_cmd_argv_free), since those strings go.
 */
char *sbx_cmd_title(int argc, char **argv, int first, size_t *len, char ***copy);
void sbx_cmd_argv_free(char **copy);

/* Standard --help handling: prints usage to stdout, returns true if asked. */
bool sbx_cmd_wants_help(int argc, char **argv, const char *usage);

#endif
