/* SPDX-License-Identifier: MIT */
/* cmd/image.c - sbx image (not yet implemented). */
#include <stdio.h>

#include "cmd.h"

static const char usage[] = "usage: sbx image ...\n\nNot implemented yet.\n";

int cmd_image(int argc, char **argv)
{
	if (sbx_cmd_wants_help(argc, argv, usage))
		return 0;
	sbx_errorf("'image' is not implemented yet");
	return SBX_EXIT_FAIL;
}
