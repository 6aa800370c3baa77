/* SPDX-License-Identifier: MIT */
/* lib/util/treecopy.h - copying a tree a jail built (kept in-memory layers). */
#ifndef SBX_TREECOPY_H
#define SBX_TREECOPY_H

#include <stdint.h>

#include "util.h"

/*
 * Copy the contents of directory src_dirfd into directory dst_dirfd (lib/util/
 * treecopy.c): a writable layer a jail built, never following a symlink,
 * holes kept, O(1) fds.  Entries that fail are counted and skipped; the
 * first failure is returned (-errno, err names its path), else 0.
 */
struct sbx_tree_copy_stats {
	uint64_t files, dirs, bytes, skipped, failed;
};
int sbx_tree_copy(int src_dirfd, int dst_dirfd, struct sbx_tree_copy_stats *stats,
		  struct sbx_err *err);

#endif
