/* SPDX-License-Identifier: MIT */
/* lib/util/rmtree.h - removing a tree a jail may have built. */
#ifndef SBX_RMTREE_H
#define SBX_RMTREE_H

/*
 * Remove a directory tree below dirfd/name without ever following a
 * symlink (openat O_NOFOLLOW|O_DIRECTORY, unlinkat), not crossing mount
 * points.  Safe against a hostile tree.  0 or -errno.
 */
int sbx_rm_rf_at(int dirfd, const char *name);

#endif
