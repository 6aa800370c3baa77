/* SPDX-License-Identifier: MIT */
/* cmd/export.c - sbx export (not yet implemented). */
#include <stdio.h>

#include "cmd.h"

static const char usage[] = "usage: sbx export ...\n\nNot implemented yet.\n";

int cmd_export(int argc, char **argv)
{
	if (sbx_cmd_wants_help(argc, argv, usage))
		return 0;
	sbx_errorf("'export' is not implemented yet");
	return SBX_EXIT_FAIL;
}
