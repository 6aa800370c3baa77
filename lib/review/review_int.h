/* SPDX-License-Identifier: MIT */
/* lib/review/review_int.h - shared by lib/review/ only. */
#ifndef SBX_REVIEW_INT_H
#define SBX_REVIEW_INT_H

#include <stdbool.h>
#include <sys/stat.h>

#include "review.h"

/*
 * The directory rel names below root (parent: its parent, with *last its
 * final name), through sbx_changes_open_dir: no symlink followed, nothing
 * outside root.  An fd, or -errno.
 */
int sbx_review_dirfd(int root, const char *rel, bool parent, const char **last);
/* lstat of rel below root, the same way.  0 or -errno. */
int sbx_review_lstat(int root, const char *rel, struct stat *st);
/* The contents of a regular file or a symlink's target, below root
 * (malloc'd, *len bytes); NULL with errno set. */
char *sbx_review_read(int root, const char *rel, bool link, size_t *len);

/* Why the last libgit2 call failed (lib/review/git_dl.c). */
const char *sbx_git_error(void);

#endif
