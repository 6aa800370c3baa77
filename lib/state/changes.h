/* SPDX-License-Identifier: MIT */
/*
 * lib/state/changes.h - the change set of a sandbox: what its writable layer
 * (an overlayfs upper directory) added, changed and deleted compared with
 * the lower layer (the image, or the host directory of a cwd overlay).
 *
 *   A path   in upper, not in lower
 *   C path   in upper and in lower (any type) - also a directory copied up
 *            because something below it changed, and an opaque directory
 *            (the lower directory's old contents are hidden: opaque=true)
 *   D path   a whiteout: char device 0:0, or an entry with the xattr
 *            trusted.overlay.whiteout / user.overlay.whiteout
 *
 * Opaque directories carry trusted.overlay.opaque=y or user.overlay.opaque=y;
 * their children are all A (the lower is not looked at below them).
 *
 * The upper directory is hostile (written by the jail): nothing is followed
 * (O_NOFOLLOW, AT_SYMLINK_NOFOLLOW), fifos and devices are never opened,
 * any depth works with a constant number of fds (going up is openat("..")
 * checked against the recorded dev/ino), any byte can be in a name.  Lower
 * lookups use openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS) relative to
 * the lower directory fd.
 */
#ifndef SBX_CHANGES_H
#define SBX_CHANGES_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/stat.h>

#include "state.h"
#include "util.h"

struct sbx_change {
	char kind;	       /* 'A', 'C' or 'D' */
	bool opaque;	       /* a directory whose lower contents are hidden */
	const char *path;      /* absolute path in the jail (raw bytes) */
	const char *rel;       /* path relative to the upper directory */
	int dirfd;	       /* the upper directory holding it */
	const char *name;      /* its name there (for openat O_NOFOLLOW) */
	const struct stat *st; /* lstat of the upper entry */
};

/* Return < 0 to stop the walk (that value is returned). */
typedef int (*sbx_change_fn)(const struct sbx_change *c, void *data);

/*
 * Walk upper_fd (an O_DIRECTORY fd, not consumed) against lower_fd (or -1
 * for "no lower": everything is A), in sorted order, parents first.
 * prefix is the jail path of the layer ("" for the root, "/work" for an
 * overlay mounted there).  Problems with single entries (unreadable
 * directories) are counted in *n_errors (may be NULL) and skipped.
 */
int sbx_changes_walk(int upper_fd, int lower_fd, const char *prefix, sbx_change_fn fn, void *data,
		     size_t *n_errors, struct sbx_err *err);

/* One layer of a sandbox: where it is mounted, its upper and lower. */
struct sbx_layer {
	char *target;	    /* jail path, "/" for the root */
	int upper_fd;	    /* O_DIRECTORY fd of the upper dir */
	int lower_fd;	    /* O_DIRECTORY fd of the lower dir, or -1 */
	char *lower;	    /* lower path as recorded (for messages), NULL if none */
	bool lower_missing; /* recorded lower could not be opened */
	int lower_errno;    /* why (errno), when lower_missing */
};

/*
 * The layers of a sandbox from its record: policy.filesystem.layers
 * (see RECORD.md), else the root layer "upper" over rootfs.dir.  Upper
 * dirs are opened beneath the sandbox dir without following symlinks.
 * Layers whose upper dir does not exist are left out.
 */
int sbx_changes_layers(const struct sbx_sandbox *sb, struct sbx_layer **layers, size_t *n,
		       struct sbx_err *err);
void sbx_changes_layers_free(struct sbx_layer *layers, size_t n);

/*
 * The directory path names below dfd (relative, not empty), with no
 * symlink followed and nothing outside dfd reached (openat2 RESOLVE_BENEATH
 * | RESOLVE_NO_SYMLINKS, or one O_NOFOLLOW component at a time without
 * openat2): an O_DIRECTORY fd, or -errno (-ELOOP or -ENOTDIR for a symlink
 * on the way, -EXDEV outside).
 */
int sbx_changes_open_dir(int dfd, const char *path);

/* Walk every layer of a sandbox. */
int sbx_changes_walk_sandbox(const struct sbx_sandbox *sb, sbx_change_fn fn, void *data,
			     size_t *n_errors, struct sbx_err *err);

/*
 * JSON form of a change: {"kind": "A", "path": "...", "type": "file",
 * "size": N, "opaque": bool} plus "path_b64" (the raw bytes, base64) when
 * the path is not valid UTF-8 (then "path" has U+FFFD in their place).
 */
json_t *sbx_change_json(const struct sbx_change *c);
/* "file", "dir", "symlink", "fifo", "socket", "chardev", "blockdev", "whiteout". */
const char *sbx_change_type(const struct sbx_change *c);

/* Base64 (RFC 4648, padded), malloc'd. */
char *sbx_base64(const unsigned char *data, size_t len);

#endif
