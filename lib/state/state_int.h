/* SPDX-License-Identifier: MIT */
/* lib/state/state_int.h - helpers shared by lib/state*.c only. */
#ifndef SBX_STATE_INT_H
#define SBX_STATE_INT_H

#include "state.h"

#define SBX_DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

/* The id a name points to (STATE/names/NAME); -ENOENT if none. */
int sbx_state_read_name(struct sbx_state *st, const char *name, char id[SBX_ID_LEN + 1]);
/* Drop STATE/names/NAME if it still points to id. */
void sbx_state_release_name(struct sbx_state *st, const char *name, const char *id);
/* Remove dirfd/name, a sandbox's tree (what a jail's subordinate ids made
 * too): 0 or -errno. */
int sbx_state_rm_tree(int dirfd, const char *name);
/* Is STATE/sandboxes/ID a directory? */
bool sbx_state_sandbox_exists(struct sbx_state *st, const char *id);

#endif
