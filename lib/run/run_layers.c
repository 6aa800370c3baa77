/* SPDX-License-Identifier: MIT */
/*
 * lib/run/run_layers.c - a run's writable layers: the overlays' upper and
 * work directories, their size cap ([limits] disk: an ext4 image, a tmpfs,
 * or a tmpfs in the jail), copying in-memory layers out when the sandbox
 * is kept, and removing them in parallel when it is not.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "disk.h"
#include "fault.h"
#include "rmtree.h"
#include "run_int.h"

/* mkdir failed: EEXIST for a directory (not a symlink)? */
static bool made_dir(const char *path)
{
	struct stat st;

	return errno == EEXIST && lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* disk/, where the layers' image or tmpfs is mounted, and a kept in-memory
 * layer copied (it may be there already: a loop device that failed). */
static int make_layer_dir(struct sbx_run *c, struct sbx_err *err)
{
	if (mkdir(c->layer_dir, 0700) < 0 && !made_dir(c->layer_dir))
		return sbx_err_set(err, errno, "cannot create '%s'", c->layer_dir);
	return 0;
}

/* An overlay upper must look like its lower's root: same mode, owned by the
 * lower's owner as the jail sees it (host ids: uid, gid). */
static mode_t layer_owner(const struct sbx_run *c, const char *lower, uid_t *uid, gid_t *gid)
{
	struct stat st = {.st_mode = 0755};
	uid_t u;
	gid_t g;

	*uid = c->ids.host_root == (uid_t)-1 ? geteuid() : c->ids.host_root;
	*gid = c->ids.range ? (gid_t)c->ids.base : getegid();
	if (lower && stat(lower, &st) == 0 && c->ids.range && st.st_uid < SBX_JAIL_ID_COUNT) {
		*uid = c->ids.base + st.st_uid;
		*gid = c->ids.base + (st.st_gid < SBX_JAIL_ID_COUNT ? st.st_gid : 0);
	}
	/* A lower an ordinary user owns shows as the jail's user's (lib/jail/jail.c
	 * idmap_lower): so does its upper. */
	if (lower && c->ids.range && c->rootfs_dir != lower &&
	    sbx_idmap_bind_owner(lower, &u, &g) == 1) {
		*uid = c->ids.host_uid;
		*gid = c->ids.host_gid;
	}
	return st.st_mode & 07777;
}

static int make_layer(struct sbx_run *c, const char *dir, const char *lower, struct sbx_err *err)
{
	_cleanup_free_ char *up = sbx_xasprintf("%s/upper", dir);
	_cleanup_free_ char *wk = sbx_xasprintf("%s/work", dir);
	uid_t uid;
	gid_t gid;
	mode_t mode = layer_owner(c, lower, &uid, &gid);

	/* an image's layout has them already (lib/jail/disk.c) */
	if (sbx_mkdir_p(up, 0700) < 0 || (mkdir(wk, 0700) < 0 && !made_dir(wk)))
		return sbx_err_set(err, errno, "cannot create the writable layer in '%s'", dir);
	if (chmod(up, mode) < 0 ||
	    (c->ids.range && (chown(up, uid, gid) < 0 || chown(wk, uid, gid) < 0)))
		return sbx_err_set(err, errno, "cannot prepare the writable layer in '%s'", dir);
	return 0;
}

/*
 * [limits] disk (lib/jail/disk.h): every run with a writable layer gets a cap.
 * As root the layers live in an ext4 image of that size loop-mounted on
 * STATE/sandboxes/ID/disk (kept with the sandbox; destroy unmounts it, and
 * the loop device goes with the mount).  Without loop devices or mke2fs, in
 * a tmpfs of that size mounted there.  Unprivileged, no filesystem can be
 * mounted on the host: init mounts the tmpfs in the jail's mount namespace
 * (o.layer_tmpfs), and when the sandbox is kept its upper directories are
 * copied to disk/ (keep_layers).
 */
/* Does this run have an overlay entry? */
static bool has_overlays(const struct sbx_run *c)
{
	for (size_t i = 0; i < c->cfg->n_mounts; i++)
		if (c->cfg->mounts[i].kind == SBX_MNT_OVERLAY)
			return true;
	return false;
}

/* Its writable layers: the image root's, one per overlay entry. */
static size_t n_layers(const struct sbx_run *c)
{
	size_t n = c->rootfs_dir && c->cfg->rootfs_writable;

	for (size_t i = 0; i < c->cfg->n_mounts; i++)
		n += c->cfg->mounts[i].kind == SBX_MNT_OVERLAY;
	return n;
}

/* Does this run have a writable layer at all? */
static bool has_layers(const struct sbx_run *c)
{
	return (c->rootfs_dir && c->cfg->rootfs_writable) || has_overlays(c);
}

/*
 * An overlay's upper directory cannot be on an overlayfs, which the state
 * directory is when sbx runs in a container and keeps its state on the
 * container's own root: the layers then go in memory, as an unprivileged
 * [limits] disk puts them (a tmpfs of that size, or SBX_LAYER_MEMORY_DEFAULT),
 * and the run log says so.
 */
static bool state_on_overlayfs(const struct sbx_run *c)
{
	struct statfs f;

	return statfs(c->sb.dir, &f) == 0 && f.f_type == OVERLAYFS_SUPER_MAGIC;
}

/* The layers' cap, in memory or on disk; c->cfg->disk becomes it. */
static int disk_cap(struct sbx_run *c, uint64_t asked, bool in_memory, struct sbx_err *err)
{
	struct sbx_disk_cap cap;
	int r = sbx_disk_cap(c->st.state_dir, asked, in_memory, &cap, err);

	if (r < 0)
		return r;
	c->cfg->disk = c->layer_size = cap.size;
	c->cg.disk_where = in_memory ? SBX_DISK_IN_MEMORY : SBX_DISK_ON_DISK;
	c->cg.disk_inodes = cap.inodes;
	if (cap.clamped) {
		char a[32];

		snprintf(c->cg.disk_why, sizeof(c->cg.disk_why), "%s asked: %.160s",
			 sbx_size_text((double)cap.asked, a, sizeof(a)), cap.why);
	}
	return 0;
}

/* The image's layout directories this run has no use for (an image root's
 * upper and work, overlays/), gone: the layers are what the record says. */
static void unused_layout(struct sbx_run *c)
{
	if (!(c->rootfs_dir && c->cfg->rootfs_writable)) {
		_cleanup_free_ char *up = sbx_xasprintf("%s/upper", c->layer_dir);
		_cleanup_free_ char *wk = sbx_xasprintf("%s/work", c->layer_dir);

		(void)rmdir(up);
		(void)rmdir(wk);
	}
	if (!has_overlays(c)) {
		_cleanup_free_ char *ov = sbx_xasprintf("%s/overlays", c->layer_dir);

		(void)rmdir(ov);
	}
}

/* The trash purger's idle work after a run whose image was a template's
 * copy: the ready copies for the next runs. */
static void refill_ready(const char *state_dir, const uint64_t args[2])
{
	_cleanup_free_ char *tpl = sbx_xasprintf("%s/disk-templates", state_dir);
	struct sbx_disk_cap cap = {.size = args[0], .inodes = args[1]};

	sbx_disk_ready_fill(tpl, &cap);
}

/*
 * As root: the layers in an ext4 image of the cap's size (disk.img),
 * loop-mounted on disk/ (in the run's own mount namespace, when it has
 * one: then after the clone, sbx_run_layers_ready).  1 when mounted; 0
 * when it cannot be (said in the run log: the layers go in memory, with
 * the cap made again for that).
 */
static int loop_disk(struct sbx_run *c, uint64_t asked, struct sbx_err *err)
{
	_cleanup_free_ char *tpl = sbx_xasprintf("%s/disk-templates", c->st.state_dir);
	_cleanup_free_ char *img = sbx_xasprintf("%s/disk.img", c->sb.dir);
	struct sbx_disk_cap cap = {.size = c->layer_size, .inodes = c->cg.disk_inodes};
	struct sbx_err e = {0};
	int r;

	if (sbx_fault_fails("disk-no-image"))
		sbx_err_set(&e, EIO, "SBX_FAULT=disk-no-image");
	else if (sbx_disk_loop_mount(img, c->layer_dir, &cap, c->cg.disk_why[0] ? NULL : tpl, &e) ==
		 0) {
		_cleanup_free_ char *lf = sbx_xasprintf("%s/lost+found", c->layer_dir);

		if (chmod(c->layer_dir, 0700) < 0)
			return sbx_err_set(err, errno, "cannot prepare '%s'", c->layer_dir);
		(void)rmdir(lf);
		unused_layout(c);
		c->disk_mounted = c->disk_loop = true;
		if (!c->cg.disk_why[0]) {
			(void)sbx_state_idle_add(&c->st, refill_ready, cap.size, cap.inodes);
		}
		return 1;
	}
	(void)unlink(img);
	free(c->layer_note);
	c->layer_note = sbx_xasprintf("the writable layer cannot be an image on disk (%s): "
				      "it is a tmpfs, in memory",
				      e.msg);
	c->cg.disk_why[0] = '\0';
	r = disk_cap(c, asked, true, err);
	return r < 0 ? r : 0;
}

/* As root without a loop device: a tmpfs of the cap's size on disk/. */
static int tmpfs_disk(struct sbx_run *c, struct sbx_err *err)
{
	_cleanup_free_ char *opts =
	    sbx_xasprintf("size=%llu,nr_inodes=%llu,mode=0700", (unsigned long long)c->layer_size,
			  (unsigned long long)c->cg.disk_inodes);

	if (mount("sbx-disk", c->layer_dir, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0) {
		/* Root of a container without CAP_SYS_ADMIN: in the jail's own
		 * mount namespace instead, as an ordinary user's. */
		if (errno == EPERM) {
			c->disk_memory = true;
			return 0;
		}
		return sbx_err_set(err, errno,
				   "cannot mount the size-capped writable layer on '%s'",
				   c->layer_dir);
	}
	if (mount(NULL, c->layer_dir, NULL, MS_PRIVATE, NULL) < 0)
		return sbx_err_set(err, errno, "cannot make '%s' private", c->layer_dir);
	c->disk_mounted = true;
	return 0;
}

/* --rm, or persist = never without --keep: nothing of the run is kept. */
static bool cannot_be_kept(const struct sbx_run *c)
{
	return c->opt->rm || (c->cfg->persist == SBX_PERSIST_NEVER && !c->opt->keep);
}

static int mount_disk(struct sbx_run *c, struct sbx_err *err)
{
	uint64_t asked = c->cfg->disk;
	bool overlayfs, loop;
	int r;

	if (!has_layers(c))
		return 0;
	overlayfs = state_on_overlayfs(c);
	if (asked == SBX_DISK_NO_CAP && !overlayfs)
		return 0; /* [limits] disk = unlimited: on the state filesystem as they are */
	if (asked == SBX_DISK_NO_CAP)
		asked = SBX_UNSET; /* in memory all the same: the default cap */
	/* A run that cannot be kept (--rm, persist = never) needs no layer
	 * that outlives it: a tmpfs in the jail's mount namespace, capped,
	 * made in microseconds and gone with the jail. */
	if (cannot_be_kept(c) && !overlayfs) {
		r = disk_cap(c, asked, true, err);
		if (r < 0)
			return r;
		/* made only if kept after all (sbx_run_keep_layers) */
		c->layer_dir = sbx_xasprintf("%s/disk", c->sb.dir);
		/* the limits line says why (and the cap, if it was lowered) */
		{
			char why[2 * sizeof(c->cg.disk_why)];
			size_t n = sizeof(c->cg.disk_why) - 1;

			snprintf(why, sizeof(why), "%s: nothing of the run is kept%s%s",
				 c->opt->rm ? "--rm" : "persist = never",
				 c->cg.disk_why[0] ? "; " : "", c->cg.disk_why);
			memcpy(c->cg.disk_why, why, n);
			c->cg.disk_why[n] = '\0';
		}
		c->disk_memory = true;
		return 0;
	}
	loop = !overlayfs && sbx_disk_loop_usable();
	r = disk_cap(c, asked, !loop, err);
	if (r < 0)
		return r;
	c->layer_dir = sbx_xasprintf("%s/disk", c->sb.dir);
	if (overlayfs)
		c->layer_note = sbx_xasprintf(
		    "the state directory '%s' is on an overlayfs (a container's root?), where no "
		    "writable layer can be: the layers live in memory, a tmpfs of %llu MiB "
		    "([limits] disk sets its size; --state-dir on a volume avoids this)",
		    c->st.state_dir, (unsigned long long)(c->layer_size >> 20));
	if (loop) {
		r = make_layer_dir(c, err);
		if (r < 0)
			return r;
		/* Nothing else runs in this process yet: gone with the run, even
		 * killed.  Then the image is mounted in it once init is released
		 * (sbx_run_layers_ready), while init starts building the root. */
		if (n_layers(c) <= SBX_JAIL_LATE_LAYERS &&
		    sbx_disk_private_ns(c->sb.dirfd, c->sb.dir, &(struct sbx_err){0}) == 0) {
			c->disk_later = true;
			c->disk_asked = asked;
			return 0;
		}
		r = loop_disk(c, asked, err);
		if (r != 0)
			return r < 0 ? r : 0;
	}
	/* A tmpfs mounted in the run's own namespace would not outlive it:
	 * in the jail's instead, copied to disk/ when kept, as a user's. */
	if (geteuid() != 0 || overlayfs) {
		c->disk_memory = true; /* disk/ is made only if kept */
		return 0;
	}
	r = make_layer_dir(c, err);
	return r < 0 ? r : tmpfs_disk(c, err);
}

/* As root, the skeleton of a kept sandbox's in-memory layer on disk/ is
 * the jail's root's, so that the copy (sbx_jail_keep_layers_as) and a
 * later sbx exec (lib/jail/mounts.c memory_layer) can walk it. */
static int own_skeleton(struct sbx_run *c, struct sbx_err *err)
{
	uid_t u = c->ids.host_root;
	gid_t g = (gid_t)c->ids.base;
	_cleanup_free_ char *ov = sbx_xasprintf("%s/overlays", c->layer_dir);

	if (!c->disk_memory || !c->ids.range)
		return 0;
	if (chown(c->layer_dir, u, g) < 0 || (access(ov, F_OK) == 0 && chown(ov, u, g) < 0))
		return sbx_err_set(err, errno, "cannot prepare '%s'", c->layer_dir);
	for (size_t i = 0; i < c->cfg->n_mounts; i++) {
		_cleanup_free_ char *d = NULL;

		if (c->cfg->mounts[i].kind != SBX_MNT_OVERLAY)
			continue;
		d = sbx_xasprintf("%s/%zu", ov, i);
		if (chown(d, u, g) < 0)
			return sbx_err_set(err, errno, "cannot prepare '%s'", d);
	}
	return 0;
}

/* upper/ and work/ for the image root, overlays/N/upper and work for each
 * overlay entry, in layer_dir. */
static int make_layers(struct sbx_run *c, struct sbx_err *err)
{
	int r = 0;

	if (c->rootfs_dir && c->cfg->rootfs_writable)
		r = make_layer(c, c->layer_dir, c->rootfs_dir, err);
	for (size_t i = 0; r == 0 && i < c->cfg->n_mounts; i++) {
		_cleanup_free_ char *d = NULL;

		if (c->cfg->mounts[i].kind != SBX_MNT_OVERLAY)
			continue;
		d = sbx_xasprintf("%s/overlays/%zu", c->layer_dir, i);
		r = make_layer(c, d, c->cfg->mounts[i].src, err);
	}
	if (r == 0)
		r = own_skeleton(c, err);
	return r;
}

/* An upper's mode and owner as make_layer() gives them, for init to make
 * the in-memory layer with (sbx_jail_opts.layer_uppers: [0] the image
 * root's, [1 + N] overlay entry N's): the owner as the jail sees it, when
 * the jail maps root's range (init, the jail's root, may give it). */
static struct sbx_jail_upper upper_of(const struct sbx_run *c, const char *lower)
{
	struct sbx_jail_upper up = {.uid = (uid_t)-1, .gid = (gid_t)-1};
	uid_t uid;
	gid_t gid;

	up.mode = layer_owner(c, lower, &uid, &gid);
	if (c->ids.range) {
		up.uid = uid - c->ids.base;
		up.gid = gid - (gid_t)c->ids.base;
	}
	return up;
}

int sbx_run_prepare_layers(struct sbx_run *c, struct sbx_err *err)
{
	uint64_t t0 = sbx_now_ns();
	int r = mount_disk(c, err);

	c->t_disk = sbx_ms_since(t0);
	if (r < 0)
		return r;
	if (!c->layer_dir)
		c->layer_dir = sbx_xstrdup(c->sb.dir);
	/* In memory: init makes the layers on its tmpfs, and nothing is on
	 * disk unless the sandbox is kept (sbx_run_keep_layers).  An image
	 * mounted later may end up in memory too. */
	if (c->disk_memory || c->disk_later) {
		c->layer_uppers = sbx_xcalloc(c->cfg->n_mounts + 1, sizeof(*c->layer_uppers));
		if (c->rootfs_dir && c->cfg->rootfs_writable)
			c->layer_uppers[0] = upper_of(c, c->rootfs_dir);
		for (size_t i = 0; i < c->cfg->n_mounts; i++)
			if (c->cfg->mounts[i].kind == SBX_MNT_OVERLAY)
				c->layer_uppers[1 + i] = upper_of(c, c->cfg->mounts[i].src);
		return 0;
	}
	return make_layers(c, err);
}

/*
 * Once init has GO (sbx_jail_opts.layer_ready): the image mounted and the
 * layers made on it, for init, which waits for them only if it gets to
 * its first layer before (jail.t_layer_wait: the run's disk phase).  An
 * image that cannot be mounted leaves the layers in memory, as it would
 * have before the clone.
 */
int sbx_run_layers_ready(void *data, int *mnt, uint64_t *tmpfs, struct sbx_err *err)
{
	struct sbx_run *c = data;
	int r = loop_disk(c, c->disk_asked, err);

	if (r == 0) {
		c->disk_memory = true;
		*tmpfs = c->layer_size;
		return 0;
	}
	if (r < 0)
		return r;
	r = make_layers(c, err);
	if (r < 0)
		return r;
	sbx_fault_point("during-disk");
	*mnt = open(c->layer_dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return *mnt < 0 ? sbx_err_set(err, errno, "cannot open '%s'", c->layer_dir) : 0;
}

/*
 * A kept sandbox whose layers were in memory (an unprivileged [limits]
 * disk): their upper directories go to disk/ (made now, as it would have
 * been before the run), where inspect, export and exec find them.  What
 * cannot be copied is said in the run log; the sandbox is kept with the
 * rest.
 */
void sbx_run_keep_layers(struct sbx_run *c)
{
	struct sbx_err e = {0};
	int r = 0;

	if (!c->kept || !c->disk_memory)
		return;
	r = make_layer_dir(c, &e);
	if (r == 0)
		r = make_layers(c, &e);
	if (r < 0) {
		sbx_run_say_err(c, &e);
		sbx_run_log_warn(c, e.msg);
		return;
	}
	if (c->jail.layer_fd < 0) { /* the set-up failed first: its error is said */
		if (c->jail.init_pid > 0)
			sbx_run_log_warn(c, "the in-memory writable layer never reached sbx: "
					    "nothing of it was kept");
		return;
	}
	if (sbx_jail_keep_layers_as(&c->jail, &c->ids, c->layer_dir, c->cfg,
				    c->rootfs_dir && c->cfg->rootfs_writable, false, &e) < 0) {
		sbx_run_say_err(c, &e);
		sbx_run_log_warn(c, e.msg);
	}
}

/*
 * The layers' capped filesystem as the command left it (resources.disk):
 * the jail's tmpfs through the fd init sent, else the image or tmpfs on
 * layer_dir; nothing measured without a cap ([limits] disk = unlimited).
 * One statfs.
 */
void sbx_run_layers_usage(struct sbx_run *c)
{
	struct statfs s;

	if (c->disk_memory)
		(void)sbx_disk_usage_fd(c->jail.layer_fd, &c->disk_usage);
	else if (c->disk_mounted && c->layer_dir && statfs(c->layer_dir, &s) == 0)
		sbx_disk_usage_of(&s, &c->disk_usage);
}

/*
 * Only the top of each upper directory is read (a file, a directory or a
 * whiteout there: the command wrote, made or deleted something below that
 * overlay), before the layers go: on the jail's tmpfs through the fd init
 * sent, else in layer_dir (the ext4 image, or the state filesystem).  An
 * upper sbx cannot read (a subordinate id's, mode 0700) counts as unwritten.
 */
json_t *sbx_run_layers_written(struct sbx_run *c)
{
	bool rootfs_layer = c->rootfs_dir && c->cfg->rootfs_writable;
	_cleanup_close_ int own = -1;
	json_t *a = NULL;
	const char *name;
	char buf[48];
	size_t k = 0;
	int base = c->jail.layer_fd;

	if (!c->disk_memory) {
		if (!c->layer_dir)
			return NULL;
		own = base = open(c->layer_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (base < 0)
		return NULL;
	while ((name = sbx_jail_layer_upper(c->cfg, rootfs_layer, &k, buf))) {
		if (!sbx_dir_has_entry(base, name))
			continue;
		if (!a)
			a = json_array();
		json_array_append_new(a, sbx_json_str(k == 1 ? "/" : c->cfg->mounts[k - 2].src));
	}
	return a;
}
