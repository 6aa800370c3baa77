/* SPDX-License-Identifier: MIT */
/* cmd/run.c - sbx run (not yet implemented). */
#include <stdio.h>

#include "cmd.h"

static const char usage[] = "usage: sbx run ...\n\nNot implemented yet.\n";

int cmd_run(int argc, char **argv)
{
	if (sbx_cmd_wants_help(argc, argv, usage))
		return 0;
	sbx_errorf("'run' is not implemented yet");
	return SBX_EXIT_FAIL;
}
