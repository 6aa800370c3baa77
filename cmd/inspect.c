/* SPDX-License-Identifier: MIT */
/* cmd/inspect.c - sbx inspect (not yet implemented). */
#include <stdio.h>

#include "cmd.h"

static const char usage[] = "usage: sbx inspect ...\n\nNot implemented yet.\n";

int cmd_inspect(int argc, char **argv)
{
	if (sbx_cmd_wants_help(argc, argv, usage))
		return 0;
	sbx_errorf("'inspect' is not implemented yet");
	return SBX_EXIT_FAIL;
}
