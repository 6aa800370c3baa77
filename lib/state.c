/* SPDX-License-Identifier: MIT */
/* lib/state.c - placeholder until the state area lands. */
#include "state.h"

int sbx_state_open(struct sbx_state *st, const char *state_dir, const char *cache_dir,
		   bool create, struct sbx_err *err)
{
	(void)st; (void)state_dir; (void)cache_dir; (void)create;
	return sbx_err_set(err, ENOSYS, "state directory support is not built yet");
}
