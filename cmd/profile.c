/* SPDX-License-Identifier: MIT */
/* cmd/profile.c - sbx profile (not yet implemented). */
#include <stdio.h>

#include "cmd.h"

static const char usage[] = "usage: sbx profile ...\n\nNot implemented yet.\n";

int cmd_profile(int argc, char **argv)
{
	if (sbx_cmd_wants_help(argc, argv, usage))
		return 0;
	sbx_errorf("'profile' is not implemented yet");
	return SBX_EXIT_FAIL;
}
