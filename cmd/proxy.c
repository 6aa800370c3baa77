/* SPDX-License-Identifier: MIT */
/* cmd/proxy.c - sbx proxy (not yet implemented). */
#include <stdio.h>

#include "cmd.h"

static const char usage[] = "usage: sbx proxy ...\n\nNot implemented yet.\n";

int cmd_proxy(int argc, char **argv)
{
	if (sbx_cmd_wants_help(argc, argv, usage))
		return 0;
	sbx_errorf("'proxy' is not implemented yet");
	return SBX_EXIT_FAIL;
}
