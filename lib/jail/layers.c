/* SPDX-License-Identifier: MIT */
/*
 * lib/jail/layers.c - the writable layers after a run: dropping overlayfs's volatile
 * marker so a kept layer mounts again, and copying a layer the jail held
 * in memory to disk (as the jail's user when it must be).
 */
#include "jail_int.h"
#include "rmtree.h"
#include "treecopy.h"
#include <fcntl.h>
#include <fnmatch.h>
#include <linux/openat2.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

/* Open parent/name, a directory the kernel's overlay made mode 0: its owner
 * (us, or root) makes it searchable first.  Never follows a symlink. */
static int open_marker_dir(int parent, const char *name)
{
	if (parent < 0)
		return -1;
	if (fchmodat(parent, name, 0700, AT_SYMLINK_NOFOLLOW) < 0)
		return -1;
	return sbx_openat2(parent, name, O_RDONLY | O_DIRECTORY,
			   RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
}

/* The overlay's volatile marker DIR/work/work/incompat/volatile/dirty. */
static int drop_volatile_marker(int dirfd, const char *dir, struct sbx_err *err)
{
	_cleanup_close_ int work = -1;
	_cleanup_close_ int ww = -1;
	_cleanup_close_ int inc = -1;
	_cleanup_close_ int vol = -1;

	work = sbx_openat2(dirfd, dir, O_RDONLY | O_DIRECTORY,
			   RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	ww = open_marker_dir(work, "work");
	inc = open_marker_dir(ww, "incompat");
	vol = open_marker_dir(inc, "volatile");
	if (vol < 0)
		return errno == ENOENT ? 0 : sbx_err_set(err, errno, "cannot open '%s/work'", dir);
	if ((unlinkat(vol, "dirty", 0) < 0 && errno != ENOENT) ||
	    (unlinkat(inc, "volatile", AT_REMOVEDIR) < 0 && errno != ENOENT) ||
	    (unlinkat(ww, "incompat", AT_REMOVEDIR) < 0 && errno != ENOENT))
		return sbx_err_set(err, errno, "cannot remove the volatile marker in '%s/work'",
				   dir);
	return 0;
}

int sbx_jail_layers_settle(const char *layer_dir, const struct sbx_config *cfg, bool rootfs_layer,
			   struct sbx_err *err)
{
	_cleanup_close_ int fd = -1;
	int r = 0;

	fd = open(layer_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return sbx_err_set(err, errno, "cannot open '%s'", layer_dir);
	if (syncfs(fd) < 0)
		return sbx_err_set(err, errno, "cannot sync the writable layer in '%s'", layer_dir);
	if (rootfs_layer)
		r = drop_volatile_marker(fd, "work", err);
	for (size_t i = 0; r == 0 && i < cfg->n_mounts; i++) {
		char dir[48];

		if (cfg->mounts[i].kind != SBX_MNT_OVERLAY)
			continue;
		snprintf(dir, sizeof(dir), "overlays/%zu/work", i);
		r = drop_volatile_marker(fd, dir, err);
	}
	return r;
}

const char *sbx_jail_layer_upper(const struct sbx_config *cfg, bool rootfs_layer, size_t *k,
				 char buf[48])
{
	if (*k == 0) {
		(*k)++;
		if (rootfs_layer)
			return "upper";
	}
	while (*k - 1 < cfg->n_mounts) {
		size_t i = (*k)++ - 1;

		if (cfg->mounts[i].kind == SBX_MNT_OVERLAY) {
			snprintf(buf, 48, "overlays/%zu/upper", i);
			return buf;
		}
	}
	return NULL;
}

/* SKELETON: NAME and its sibling work/ (and the directories above them)
 * made in `to`, with the modes they have in `from`, or (from < 0) NAME
 * with upper_mode and work/ 0700, as lib/run/run_layers.c makes them. */
static int make_skeleton(int from, int to, const char *name, const struct sbx_jail_upper *up,
			 struct sbx_err *err)
{
	char path[48], work[48];
	const char *dirs[] = {name, work};
	size_t n = strlen(name) - strlen("upper");

	snprintf(work, sizeof(work), "%.*swork", (int)n, name);
	for (const char *sl = strchr(name, '/'); sl; sl = strchr(sl + 1, '/')) {
		snprintf(path, sizeof(path), "%.*s", (int)(sl - name), name);
		if (mkdirat(to, path, 0700) < 0 && errno != EEXIST)
			return sbx_err_set(err, errno, "cannot create '%s'", path);
	}
	for (size_t i = 0; i < SBX_ARRAY_SIZE(dirs); i++) {
		struct stat st = {.st_mode = S_IFDIR | (i == 0 ? up->mode : 0700)};
		bool own = i == 0 && from < 0 && up->uid != (uid_t)-1;

		if ((from >= 0 && (fstatat(from, dirs[i], &st, AT_SYMLINK_NOFOLLOW) < 0 ||
				   !S_ISDIR(st.st_mode))) ||
		    mkdirat(to, dirs[i], 0700) < 0 ||
		    (own && fchownat(to, dirs[i], up->uid, up->gid, AT_SYMLINK_NOFOLLOW) < 0) ||
		    fchmodat(to, dirs[i], st.st_mode & 07777, 0) < 0)
			return sbx_err_set(err, errno, "cannot create '%s'", dirs[i]);
	}
	return 0;
}

/* INTO / REPLACE: the contents of from/NAME into to/NAME, or into a copy
 * beside it (a copy an earlier crash left there goes first) that then
 * takes its place in one rename. */
static int copy_upper(int from, int to, const char *name, bool replace, struct sbx_err *err)
{
	const int dflags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
	_cleanup_free_ char *tmp = sbx_xasprintf("%s.new", name);
	struct sbx_tree_copy_stats st;
	struct stat old;
	_cleanup_close_ int s = -1;
	_cleanup_close_ int d = -1;
	int r = 0;

	s = openat(from, name, dflags);
	if (s < 0)
		return sbx_err_set(err, errno, "cannot open the writable layer '%s'", name);
	if (replace) {
		(void)sbx_rm_rf_at(to, tmp);
		if (fstatat(to, name, &old, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(old.st_mode) ||
		    mkdirat(to, tmp, 0700) < 0 || fchmodat(to, tmp, old.st_mode & 07777, 0) < 0)
			r = sbx_err_set(err, errno, "cannot make '%s'", tmp);
	}
	if (r == 0 && (d = openat(to, replace ? tmp : name, dflags)) < 0)
		r = sbx_err_set(err, errno, "cannot open '%s'", replace ? tmp : name);
	if (r == 0)
		r = sbx_tree_copy(s, d, &st, err);
	if (r == 0 && replace && renameat2(to, tmp, to, name, RENAME_EXCHANGE) < 0)
		r = sbx_err_set(err, errno, "cannot put '%s' in place", name);
	if (replace)
		(void)sbx_rm_rf_at(to, tmp); /* the old one, or the failed copy */
	return r;
}

static int layers_walk(int from, int to, const struct sbx_config *cfg, bool rootfs_layer,
		       enum sbx_layers_copy how, const struct sbx_jail_upper *uppers,
		       struct sbx_err *err)
{
	static const struct sbx_jail_upper plain = {0755, (uid_t)-1, (gid_t)-1};
	char buf[48];
	const char *name;
	size_t k = 0;
	int r = 0;

	/* after each upper, k - 1 is its index in uppers: 0 the image root's,
	 * 1 + I overlay entry I's (sbx_jail_opts.layer_uppers) */
	while ((name = sbx_jail_layer_upper(cfg, rootfs_layer, &k, buf))) {
		struct sbx_err e = {0};
		int r1 = how == SBX_LAYERS_SKELETON
			     ? make_skeleton(from, to, name, uppers ? &uppers[k - 1] : &plain, &e)
			     : copy_upper(from, to, name, how == SBX_LAYERS_REPLACE, &e);

		if (r1 < 0 && r == 0) {
			r = r1;
			*err = e;
			sbx_err_wrap(err, "copying the in-memory writable layer");
		}
	}
	return r;
}

int sbx_jail_layers_copy(int from, int to, const struct sbx_config *cfg, bool rootfs_layer,
			 enum sbx_layers_copy how, struct sbx_err *err)
{
	return layers_walk(from, to, cfg, rootfs_layer, how, NULL, err);
}

int sbx_jail_layers_make(int to, const struct sbx_config *cfg, bool rootfs_layer,
			 const struct sbx_jail_upper *uppers, struct sbx_err *err)
{
	return layers_walk(-1, to, cfg, rootfs_layer, SBX_LAYERS_SKELETON, uppers, err);
}

int sbx_jail_keep_layers(const struct sbx_jail *j, const char *layer_dir,
			 const struct sbx_config *cfg, bool rootfs_layer, bool replace,
			 struct sbx_err *err)
{
	_cleanup_close_ int dst = -1;

	if (j->layer_fd < 0)
		return sbx_err_set(err, EBADF, "the jail has no in-memory writable layer");
	dst = open(layer_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dst < 0)
		return sbx_err_set(err, errno, "cannot open '%s'", layer_dir);
	return sbx_jail_layers_copy(j->layer_fd, dst, cfg, rootfs_layer,
				    replace ? SBX_LAYERS_REPLACE : SBX_LAYERS_INTO, err);
}

struct keep_arg {
	const struct sbx_jail *j;
	const char *layer_dir;
	const struct sbx_config *cfg;
	bool rootfs_layer, replace;
};

static int keep_fn(void *p)
{
	struct keep_arg *a = p;
	struct sbx_err e = {0};

	return sbx_jail_keep_layers(a->j, a->layer_dir, a->cfg, a->rootfs_layer, a->replace, &e);
}

int sbx_jail_keep_layers_as(const struct sbx_jail *j, const struct sbx_jail_ids *ids,
			    const char *layer_dir, const struct sbx_config *cfg, bool rootfs_layer,
			    bool replace, struct sbx_err *err)
{
	struct keep_arg a = {j, layer_dir, cfg, rootfs_layer, replace};
	int r;

	if (!ids->subid)
		return sbx_jail_keep_layers(j, layer_dir, cfg, rootfs_layer, replace, err);
	if (j->layer_fd < 0)
		return sbx_err_set(err, EBADF, "the jail has no in-memory writable layer");
	r = sbx_subid_call(&ids->sub, keep_fn, &a);
	if (r < 0)
		return sbx_err_set(err, -r,
				   "copying the in-memory writable layer (as the subordinate ids "
				   "of /etc/subuid) to '%s' failed",
				   layer_dir);
	return 0;
}
