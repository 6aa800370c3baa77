/* SPDX-License-Identifier: MIT */
/* cmd/common.c - helpers shared by the subcommands. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"

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
