/* SPDX-License-Identifier: MIT */
/* cmd/common.c - helpers shared by the subcommands. */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "profile.h"

struct sbx_globals sbx_globals;

void sbx_print_err(const struct sbx_err *err)
{
	char buf[SBX_ERR_MSG_MAX + 128];

	fprintf(stderr, "sbx: %s\n", sbx_err_str(err, buf, sizeof(buf)));
}

void sbx_errorf(const char *fmt, ...)
{
	va_list ap;

	fputs("sbx: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void sbx_warnf(const char *fmt, ...)
{
	va_list ap;

	fputs("sbx: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int sbx_cmd_state(struct sbx_state *st, bool create, struct sbx_err *err)
{
	return sbx_state_open(st, sbx_globals.state_dir, sbx_globals.cache_dir, create, err);
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

void sbx_cmd_unknown_option(const char *cmd, const char *arg, const struct option *opts)
{
	char hint[96];

	sbx_errorf("unknown option '%s'%s (see 'sbx %s --help')", arg,
		   sbx_cmd_option_hint(arg, opts, hint, sizeof(hint)), cmd);
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

/* Is path already masked by cfg? */
static bool masked(const struct sbx_config *cfg, const char *path)
{
	for (size_t i = 0; i < cfg->n_mounts; i++)
		if (cfg->mounts[i].kind == SBX_MNT_MASK && strcmp(cfg->mounts[i].dst, path) == 0)
			return true;
	return false;
}

int sbx_cmd_hide_state(struct sbx_config *cfg, const struct sbx_state *st, struct sbx_err *err)
{
	const char *dirs[] = {st->state_dir, st->cache_dir};

	for (size_t i = 0; i < SBX_ARRAY_SIZE(dirs); i++) {
		_cleanup_free_ char *real = NULL;
		const char *d = dirs[i];
		int r;

		if (!d || d[0] != '/')
			continue;
		/* Masks are resolved inside the jail: hide the path as given and,
		 * if it differs, the path its symlinks lead to on the host. */
		real = realpath(d, NULL);
		for (int k = 0; k < 2; k++) {
			const char *p = k == 0 ? d : real;

			if (!p || strcmp(p, "/") == 0 || masked(cfg, p))
				continue;
			r = sbx_profile_set(cfg, "filesystem", "mask", p, err);
			if (r < 0)
				return sbx_err_wrap(
				    err, "cannot hide sbx's state directory from the jail");
		}
	}
	return 0;
}
