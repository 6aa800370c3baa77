/* SPDX-License-Identifier: MIT */
/* cmd/ps.c - sbx ps (not yet implemented). */
#include <stdio.h>

#include "cmd.h"

static const char usage[] = "usage: sbx ps ...\n\nNot implemented yet.\n";

int cmd_ps(int argc, char **argv)
{
	if (sbx_cmd_wants_help(argc, argv, usage))
		return 0;
	sbx_errorf("'ps' is not implemented yet");
	return SBX_EXIT_FAIL;
}
