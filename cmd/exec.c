/* SPDX-License-Identifier: MIT */
/* cmd/exec.c - sbx exec (not yet implemented). */
#include <stdio.h>

#include "cmd.h"

static const char usage[] = "usage: sbx exec ...\n\nNot implemented yet.\n";

int cmd_exec(int argc, char **argv)
{
	if (sbx_cmd_wants_help(argc, argv, usage))
		return 0;
	sbx_errorf("'exec' is not implemented yet");
	return SBX_EXIT_FAIL;
}
