/* SPDX-License-Identifier: MIT */
/*
 * lib/util/rmtree.c - sbx_rm_rf_at(): remove a directory tree a hostile jail
 * may have built.
 *
 * - never follows a symlink (fstatat AT_SYMLINK_NOFOLLOW, O_NOFOLLOW, and
 *   each directory opened is checked to be the one that was stat'ed);
 * - never crosses a mount point (st_dev change or STATX_ATTR_MOUNT_ROOT):
 *   such a directory is left alone and -EBUSY returned;
 * - copes with mode-000 / read-only directories (chmod u+rwx when we own
 *   them) and any byte in names;
 * - uses O(1) file descriptors whatever the depth: only the current
 *   directory is open; going up is openat("..") verified against the
 *   parent's recorded dev/ino, so a rename race cannot walk us out of
 *   the tree.  Memory holds the pending subdirectory names per level.
 */
#include "util.h"
#include "rmtree.h"

#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#define RM_DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

struct rm_level {
	char *name; /* this directory's name in its parent */
	dev_t dev;  /* this directory's identity */
	ino_t ino;
	struct sbx_strv subdirs; /* subdirectories still to remove */
	size_t next;
};

static bool is_mount_root(int dfd, const char *name, dev_t top_dev, const struct stat *st)
{
	struct statx sx;

	if (st->st_dev != top_dev)
		return true;
	if (statx(dfd, name, AT_SYMLINK_NOFOLLOW, 0, &sx) == 0 &&
	    (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
	    (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
		return true;
	return false;
}

/* Open dfd/name as a directory that is exactly *expect (never a symlink). */
static int open_dir_checked(int dfd, const char *name, const struct stat *expect)
{
	struct stat st;
	int fd = openat(dfd, name, RM_DIR_FLAGS);

	if (fd < 0 && (errno == EACCES || errno == EPERM)) {
		/* mode 000: make it usable (it is a directory: fchmodat follows
		 * nothing here since name was just lstat'ed as a directory). */
		(void)!fchmodat(dfd, name, 0700, AT_SYMLINK_NOFOLLOW);
		fd = openat(dfd, name, RM_DIR_FLAGS);
	}
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || st.st_dev != expect->st_dev || st.st_ino != expect->st_ino) {
		close(fd);
		return -ESTALE;
	}
	if ((st.st_mode & 0700) != 0700)
		(void)!fchmod(fd, (st.st_mode & 07777) | 0700);
	return fd;
}

/* Unlink every non-directory in fd; collect subdirectories into lv. */
static int scan_level(int fd, struct rm_level *lv, dev_t top_dev)
{
	int dfd = dup(fd), ret = 0;
	struct dirent *de;
	DIR *d;

	if (dfd < 0)
		return -errno;
	d = fdopendir(dfd);
	if (!d) {
		ret = -errno;
		close(dfd);
		return ret;
	}
	while ((de = readdir(d))) {
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno != ENOENT && !ret)
				ret = -errno;
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			if (is_mount_root(fd, de->d_name, top_dev, &st)) {
				if (!ret)
					ret = -EBUSY; /* never cross a mount */
				continue;
			}
			sbx_strv_push(&lv->subdirs, de->d_name);
		} else if (unlinkat(fd, de->d_name, 0) < 0 && errno != ENOENT && !ret) {
			ret = -errno;
		}
	}
	closedir(d);
	return ret;
}

static void level_free(struct rm_level *lv)
{
	free(lv->name);
	sbx_strv_free(&lv->subdirs);
	memset(lv, 0, sizeof(*lv));
}

/* Walk the tree below fd (the top, depth 0).  Takes ownership of fd. */
static int rm_tree(int fd, const struct stat *top)
{
	struct rm_level *lv = sbx_xcalloc(1, sizeof(*lv));
	size_t depth = 0, cap = 1;
	int ret = 0, r;

	lv[0].dev = top->st_dev;
	lv[0].ino = top->st_ino;
	r = scan_level(fd, &lv[0], top->st_dev);
	if (r < 0)
		ret = r;
	for (;;) {
		struct rm_level *cur = &lv[depth];

		if (cur->next < cur->subdirs.n) {
			const char *name = cur->subdirs.v[cur->next++];
			struct stat st;
			int cfd;

			if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
				continue; /* gone or replaced: rescan below catches files */
			cfd = open_dir_checked(fd, name, &st);
			if (cfd < 0) {
				if (!ret)
					ret = cfd;
				continue;
			}
			if (depth + 1 == cap) {
				cap *= 2;
				lv = sbx_xrealloc(lv, cap * sizeof(*lv));
				memset(lv + depth + 1, 0, (cap - depth - 1) * sizeof(*lv));
			}
			close(fd);
			fd = cfd;
			depth++;
			lv[depth].name = sbx_xstrdup(name);
			lv[depth].dev = st.st_dev;
			lv[depth].ino = st.st_ino;
			r = scan_level(fd, &lv[depth], top->st_dev);
			if (r < 0 && !ret)
				ret = r;
			continue;
		}
		if (depth == 0)
			break;
		/* Go up: ".." must be the directory we came from. */
		struct stat pst;
		int pfd = openat(fd, "..", RM_DIR_FLAGS);

		if (pfd < 0 || fstat(pfd, &pst) < 0 || pst.st_dev != lv[depth - 1].dev ||
		    pst.st_ino != lv[depth - 1].ino) {
			if (pfd >= 0)
				close(pfd);
			ret = -ESTALE;
			break;
		}
		close(fd);
		fd = pfd;
		if (unlinkat(fd, lv[depth].name, AT_REMOVEDIR) < 0 && errno != ENOENT && !ret)
			ret = -errno;
		level_free(&lv[depth]);
		depth--;
	}
	for (size_t i = 0; i <= depth; i++)
		level_free(&lv[i]);
	free(lv);
	close(fd);
	return ret;
}

int sbx_rm_rf_at(int dirfd, const char *name)
{
	struct stat st;
	int fd, r;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dirfd, name, 0) < 0 && errno != ENOENT ? -errno : 0;
	{
		struct stat parent;

		if (fstat(dirfd, &parent) == 0 && is_mount_root(dirfd, name, parent.st_dev, &st))
			return -EBUSY;
	}
	fd = open_dir_checked(dirfd, name, &st);
	if (fd < 0)
		return fd;
	r = rm_tree(fd, &st);
	if (unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT && !r)
		r = -errno;
	return r;
}
