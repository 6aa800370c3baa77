/* SPDX-License-Identifier: MIT */
/* cmd/destroy.c - sbx destroy (not yet implemented). */
#include <stdio.h>

#include "cmd.h"

static const char usage[] = "usage: sbx destroy ...\n\nNot implemented yet.\n";

int cmd_destroy(int argc, char **argv)
{
	if (sbx_cmd_wants_help(argc, argv, usage))
		return 0;
	sbx_errorf("'destroy' is not implemented yet");
	return SBX_EXIT_FAIL;
}
