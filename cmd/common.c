/* SPDX-License-Identifier: MIT */
/* cmd/common.c - helpers shared by the subcommands. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "cmd.h"
#include "proc.h"
#include "profile.h"

void sbx_print_err(const struct sbx_err *err)
{
	char buf[SBX_ERR_MSG_MAX + 128];

	sbx_errorf("%s", sbx_err_str(err, buf, sizeof(buf)));
}

/*
 * While the command has a pty (-t), the caller's terminal is raw: no
 * output processing, so a bare newline would not return the carriage and
 * sbx's live lines (a connection denied, say) would step across the screen.
 */
static bool stderr_raw(void)
{
	static bool not_tty; /* found once: no call per line where it is a file or pipe */
	struct termios t;

	if (not_tty)
		return false;
	if (tcgetattr(STDERR_FILENO, &t) < 0) {
		not_tty = errno == ENOTTY;
		return false;
	}
	return !(t.c_oflag & OPOST);
}

/*
 * One line of sbx's own on stderr, whatever a path in it holds: a newline
 * or an escape sequence in a directory's name (the project's, which the
 * run log names) would otherwise print lines of its own, or move the
 * cursor, where a reader takes them for sbx's.
 */
static void say_line(const char *prefix, const char *fmt, va_list ap)
{
	_cleanup_free_ char *text = NULL, *shown = NULL;

	if (vasprintf(&text, fmt, ap) < 0) {
		fprintf(stderr, "%sout of memory\n", prefix);
		return;
	}
	shown = sbx_escape_controls(text);
	fprintf(stderr, "%s%s%s\n", prefix, shown, stderr_raw() ? "\r" : "");
}

void sbx_errorf(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say_line("sbx: ", fmt, ap);
	va_end(ap);
}

void sbx_warnf(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say_line("sbx: warning: ", fmt, ap);
	va_end(ap);
}

struct sbx_state *sbx_cmd_state(struct sbx_cmd_ctx *ctx, struct sbx_err *err)
{
	bool create = ctx->state_use == SBX_CMD_STATE_CREATE;

	if (ctx->state_use == SBX_CMD_STATE_NONE) {
		sbx_err_set(err, EINVAL, "this command does not use the state directory");
		return NULL;
	}
	if (!ctx->st_open &&
	    sbx_state_open(&ctx->st, ctx->state_dir, ctx->cache_dir, create, err) < 0)
		return NULL;
	ctx->st_open = true;
	return &ctx->st;
}

int sbx_cmd_fail(struct sbx_cmd_ctx *ctx, const struct sbx_err *err, int code)
{
	ctx->err = *err;
	if (!ctx->err.msg[0])
		snprintf(ctx->err.msg, sizeof(ctx->err.msg), "failed");
	return code;
}

const char *sbx_cmd_option_hint(const char *arg, const struct option *opts, char *buf, size_t len)
{
	const char *names[128];
	_cleanup_free_ char *name = NULL;
	const char *near;
	size_t n = 0;

	buf[0] = '\0';
	if (!arg || strncmp(arg, "--", 2) != 0 || !arg[2])
		return buf;
	name = sbx_xstrndup(arg + 2, strcspn(arg + 2, "="));
	for (; opts[n].name && n < SBX_ARRAY_SIZE(names); n++)
		names[n] = opts[n].name;
	near = sbx_closest(name, names, n);
	if (near && strcmp(near, name) != 0)
		snprintf(buf, len, " (did you mean '--%s'?)", near);
	return buf;
}

char *sbx_cmd_title(int argc, char **argv, int first, size_t *len, char ***copy)
{
	char *title = sbx_proc_title_area(len);
	size_t n;

	*copy = NULL;
	if (!title || first > argc) {
		*len = 0;
		return NULL;
	}
	n = (size_t)(argc - first);
	*copy = sbx_xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		(*copy)[i] = sbx_xstrdup(argv[first + (int)i]);
	return title;
}

void sbx_cmd_argv_free(char **copy)
{
	for (size_t i = 0; copy && copy[i]; i++)
		free(copy[i]);
	free(copy);
}

int sbx_cmd_option_error(struct sbx_err *err, const char *prefix, const char *cmd, const char *arg,
			 const struct option *opts, bool needs_value)
{
	char hint[96];

	if (needs_value)
		return sbx_err_set(err, 0, "%s%soption '%s' needs a value (see 'sbx %s --help')",
				   prefix ? prefix : "", prefix ? ": " : "", arg ? arg : "?", cmd);
	return sbx_err_set(err, 0, "%s%sunknown option '%s'%s (see 'sbx %s --help')",
			   prefix ? prefix : "", prefix ? ": " : "", arg ? arg : "?",
			   sbx_cmd_option_hint(arg, opts, hint, sizeof(hint)), cmd);
}

int sbx_cmd_usage_error(struct sbx_cmd_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ctx->err.msg, sizeof(ctx->err.msg), fmt, ap);
	va_end(ap);
	ctx->err.errnum = 0;
	return SBX_EXIT_USAGE;
}

int sbx_cmd_bad_option(struct sbx_cmd_ctx *ctx, const char *cmd, int c, const char *arg,
		       const struct option *opts)
{
	sbx_cmd_option_error(&ctx->err, NULL, cmd, arg, opts, c == ':');
	return SBX_EXIT_USAGE;
}

bool sbx_cmd_wants_help(int argc, char **argv, const char *usage)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(usage, stdout);
			return true;
		}
		/* Stop at the payload command of run/exec. */
		if (argv[i][0] != '-')
			break;
	}
	return false;
}
