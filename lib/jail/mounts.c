/* SPDX-License-Identifier: MIT */
/*
 * lib/jail/mounts.c - the jail's new root, built by init inside its own user and
 * mount namespaces with the new mount API:
 *
 *   1. / becomes rslave (nothing propagates back to the host);
 *   2. every source is opened first (host root and binds as detached
 *      clones, lowers and upper/work as O_PATH fds), so later mounts cannot
 *      hide or redirect them;
 *   3. the rootfs (overlay, read-only image, or the host root read-only) is
 *      attached on /tmp of the old root, and everything else is mounted onto
 *      targets opened beneath it with openat2(RESOLVE_IN_ROOT) - never
 *      following a symlink out of the new root;
 *   4. /proc (masked), /dev (minimal), /sys (read-only), the profile's
 *      [filesystem] entries (a read-write bind's .git, and its submodules',
 *      then read-only onto themselves: git_read_only), files (secrets);
 *   5. pivot_root(".", ".") and the old root detached.
 */
#include "jail_int.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/openat2.h>
#include <net/if.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "disk.h"
#include "gitconfig.h"

#define STAGE	   "/tmp"
#define STAGE_ALT1 "/mnt"
#define STAGE_ALT2 "/run"
#define R_IN_ROOT  (RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS)
#define R_STRICT   (RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS)
/* git_read_only(): submodules named, and nested, at most */
#define GIT_MODULES_MAX 256
#define GIT_DEPTH	4

/* Sources opened before any mount, per [filesystem] entry. */
struct src {
	int fd;			/* bind: detached clone; overlay: lower (idmapped or O_PATH) */
	int upper, work;	/* overlay */
	bool detached;		/* fd is a detached (idmapped) tree: attach before use */
	bool rbind;		/* bound with what is mounted inside it (hostfs.c) */
	struct sbx_strv hostfs; /* the host's procfs and sysfs mounts inside it, as jail paths */
};

struct build {
	struct sbx_jail_child *c;
	const struct sbx_config *cfg;
	int rootfd;		     /* the new root (after the rootfs is attached) */
	int host_fd;		     /* host root clone (rootfs = host) */
	struct sbx_strv host_hostfs; /* the host's procfs and sysfs mounts in it */
	int lower, upper, work;	     /* rootfs image */
	bool lower_detached;
	int stage; /* the staging tmpfs on STAGE */
	int layer; /* the layers' tmpfs (o->layer_tmpfs) or mount (layer_later), until attached */
	bool have_layers; /* layer_later: need_layers() was called */
	int sbfd;	  /* the layers' directory (o->sandbox_dir, or the tmpfs) */
	struct src *srcs;
};

static int set_attr(int fd, uint64_t set, bool recursive, const char *what, struct sbx_err *err)
{
	struct mount_attr a = {.attr_set = set};

	if (mount_setattr(fd, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &a, sizeof(a)) <
	    0)
		return sbx_err_set(err, errno, "cannot set mount flags of '%s'", what);
	return 0;
}

/* A detached, recursive clone of a host path with attributes. */
static int clone_tree(int dirfd, const char *path, uint64_t attrs, struct sbx_err *err)
{
	_cleanup_close_ int fd = -1;
	int r;

	fd = open_tree(dirfd, path,
		       OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE |
			   (path[0] ? 0 : AT_EMPTY_PATH));
	if (fd < 0)
		return sbx_err_set(err, errno, "cannot open '%s' for binding", path);
	if (attrs) {
		r = set_attr(fd, attrs, true, path, err);
		if (r < 0)
			return r;
	}
	return steal_fd(&fd);
}

static int open_dir(int dirfd, const char *path, struct sbx_err *err)
{
	int fd = openat(dirfd, path, O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return sbx_err_set(err, errno, "cannot open '%s'", path);
	return fd;
}

/* Overlay upper/work of the rootfs ("upper", "work") or of entry i. */
static int open_upper_work(int sbfd, const char *prefix, int *upper, int *work, struct sbx_err *err)
{
	char p[96];

	snprintf(p, sizeof(p), "%supper", prefix);
	*upper = open_dir(sbfd, p, err);
	if (*upper < 0)
		return *upper;
	snprintf(p, sizeof(p), "%swork", prefix);
	*work = open_dir(sbfd, p, err);
	return *work < 0 ? *work : 0;
}

/* A source on the host's procfs would show the jail the host's processes. */
static int not_procfs(const struct sbx_mount *m, int fd, struct sbx_err *err)
{
	if (fd < 0 || !sbx_jail_on_procfs(fd))
		return 0;
	return sbx_err_set(err, 0,
			   "cannot %s '%s': it is on the host's procfs, which would show the "
			   "jail the host's processes (the jail has its own /proc)",
			   m->kind == SBX_MNT_OVERLAY ? "overlay" : "bind", m->src);
}

/* Refused on a procfs; the host's procfs and sysfs mounts inside it, else. */
static int hostfs_inside(struct build *b, const struct sbx_mount *m, struct src *s,
			 struct sbx_err *err)
{
	int r = not_procfs(m, s->fd, err);

	if (r == 0 && (r = sbx_jail_hostfs_inside(b->c, m->src, s->fd, m->dst, &s->hostfs)) < 0)
		r = sbx_err_set(
		    err, -r, "cannot look for the host's procfs and sysfs mounts in '%s'", m->src);
	return r;
}

static int capture_mount(struct build *b, size_t i, size_t *next_idmap, struct sbx_err *err)
{
	const struct sbx_mount *m = &b->cfg->mounts[i];
	struct src *s = &b->srcs[i];
	size_t k;

	switch (m->kind) {
	case SBX_MNT_BIND:
		/* As root, an idmapped clone (written as the directory's owner). */
		k = (*next_idmap)++;
		if (k < b->c->n_idmap && b->c->idmap_fds[k] >= 0) {
			s->fd = steal_fd(&b->c->idmap_fds[k]);
			return hostfs_inside(b, m, s, err);
		}
		/* fall through */
	case SBX_MNT_RO_BIND:
		s->fd = clone_tree(AT_FDCWD, m->src,
				   MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
				       (m->kind == SBX_MNT_RO_BIND ? MOUNT_ATTR_RDONLY : 0),
				   err);
		if (s->fd < 0 && m->optional && -s->fd == ENOENT) {
			sbx_err_clear(err);
			return 0;
		}
		return s->fd < 0 ? s->fd : hostfs_inside(b, m, s, err);
	case SBX_MNT_OVERLAY:
		k = (*next_idmap)++;
		if (k < b->c->n_idmap && b->c->idmap_fds[k] >= 0) {
			s->fd = steal_fd(&b->c->idmap_fds[k]);
			s->detached = true;
		} else
			s->fd = open_dir(AT_FDCWD, m->src, err);
		if (s->fd < 0) {
			if (m->optional && -s->fd == ENOENT) {
				sbx_err_clear(err);
				return 0;
			}
			return s->fd;
		}
		/* for the read-only bind it becomes if it holds mount points */
		return hostfs_inside(b, m, s, err);
	default:
		return 0;
	}
}

/* An overlay entry's upper and work directories (once its lower is open). */
static int capture_upper(struct build *b, int sbfd, size_t i, struct sbx_err *err)
{
	struct src *s = &b->srcs[i];
	char prefix[48];

	if (b->cfg->mounts[i].kind != SBX_MNT_OVERLAY || s->fd < 0)
		return 0;
	snprintf(prefix, sizeof(prefix), "overlays/%zu/", i);
	return open_upper_work(sbfd, prefix, &s->upper, &s->work, err);
}

static int new_fs(const char *type, const char *const *opts, uint64_t attrs, struct sbx_err *err);

/* The writable layers are a tmpfs init makes (o->layer_tmpfs, or what
 * SBX_MSG_DISK said for o->layer_later)? */
static bool layers_in_memory(const struct build *b)
{
	return b->c->o->layer_later ? b->c->layer_tmpfs > 0 : b->c->o->layer_tmpfs > 0;
}

/* An image root with a writable layer? */
static bool o_rootfs_layer(const struct build *b)
{
	return b->c->o->rootfs_dir && b->cfg->rootfs_writable;
}

/*
 * o->layer_later: SBX_MSG_DISK, which the supervisor sends once it has
 * mounted the layers' filesystem while init built what needs none (timed:
 * the run's disk phase is what its start-up waited for it).  Its mount,
 * with each layer's upper and work directory opened in the order of
 * lib/jail/jail.c send_layer(); or a tmpfs's size.
 */
static int wait_layer(struct build *b, struct sbx_err *err)
{
	struct sbx_jail_child *c = b->c;
	const struct sbx_config *cfg = b->cfg;
	struct sbx_jail_msg m;
	int fds[SBX_MSG_MAXFDS], slot[SBX_MSG_MAXFDS];
	size_t nfds = 0, ns, k = 1;
	ssize_t n;

	c->ts[SBX_TS_LAYER0] = sbx_now_ns();
	n = sbx_jail_recv(c->sock, &m, fds, SBX_ARRAY_SIZE(fds), &nfds);
	c->ts[SBX_TS_LAYER1] = sbx_now_ns();
	if (n <= 0 || m.type != SBX_MSG_DISK) {
		for (size_t i = 0; i < nfds; i++)
			close(fds[i]);
		return sbx_err_set(err, n < 0 ? (int)-n : EPIPE, "no writable layer came from sbx");
	}
	if (nfds == 0) {
		c->layer_tmpfs = m.ts[0];
		return c->layer_tmpfs > 0 ? 0 : sbx_err_set(err, EINVAL, "an empty writable layer");
	}
	ns = sbx_jail_msg_slots(&m, fds, nfds, slot);
#define SLOT(i) ((i) < ns ? slot[i] : -1)
	b->layer = SLOT(0);
	if (o_rootfs_layer(b)) {
		b->upper = SLOT(k);
		b->work = SLOT(k + 1);
		k += 2;
	}
	for (size_t i = 0; i < cfg->n_mounts; i++) {
		if (cfg->mounts[i].kind != SBX_MNT_OVERLAY)
			continue;
		b->srcs[i].upper = SLOT(k);
		b->srcs[i].work = SLOT(k + 1);
		k += 2;
	}
#undef SLOT
	for (; k < ns; k++) /* slots of no layer here */
		if (slot[k] >= 0)
			close(slot[k]);
	return 0;
}

/*
 * An unprivileged [limits] disk (or --rm): nobody can mount a tmpfs of that
 * size on the host's state directory, but init can in its own mount
 * namespace.  The writable layers' directories are made on such a tmpfs
 * (for sbx exec of a kept sandbox, copied from its disk/ with their
 * contents); the supervisor gets its root (SBX_MSG_LAYER) and copies the
 * upper directories to disk if the sandbox is kept.  *sbfd becomes the
 * tmpfs.
 */
static int memory_layer(struct build *b, int *sbfd, struct sbx_err *err)
{
	const struct sbx_jail_opts *o = b->c->o;
	const bool rootfs_layer = o->rootfs_dir && b->cfg->rootfs_writable;
	const uint64_t bytes = o->layer_later ? b->c->layer_tmpfs : o->layer_tmpfs;
	char size[32], inodes[32];
	const char *const opts[] = {"size", size, "nr_inodes", inodes, "mode", "0700", NULL, NULL};
	_cleanup_close_ int root = -1;
	int r;

	snprintf(size, sizeof(size), "%llu", (unsigned long long)bytes);
	snprintf(inodes, sizeof(inodes), "%llu", (unsigned long long)sbx_disk_inodes(bytes));
	b->layer = new_fs("tmpfs", opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, err);
	if (b->layer < 0)
		return sbx_err_wrap(err, "the writable layer ([limits] disk)");
	if (o->layer_tmpfs_fill) {
		r = sbx_jail_layers_copy(*sbfd, b->layer, b->cfg, rootfs_layer, SBX_LAYERS_SKELETON,
					 err);
		if (r == 0)
			r = sbx_jail_layers_copy(*sbfd, b->layer, b->cfg, rootfs_layer,
						 SBX_LAYERS_INTO, err);
	} else {
		r = sbx_jail_layers_make(b->layer, b->cfg, rootfs_layer, o->layer_uppers, err);
	}
	if (r < 0)
		return r;
	root = openat(b->layer, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return sbx_err_set(err, errno, "cannot open the in-memory layer");
	r = sbx_jail_send(b->c->sock, &(struct sbx_jail_msg){.type = SBX_MSG_LAYER}, &root, 1);
	if (r < 0)
		return sbx_err_set(err, -r, "cannot pass the in-memory layer to sbx");
	sbx_closep(sbfd);
	*sbfd = fcntl(b->layer, F_DUPFD_CLOEXEC, 3);
	return *sbfd < 0 ? sbx_err_set(err, errno, "cannot open the in-memory layer") : 0;
}

/* Step 2: open every source while the old root is intact: first what the
 * host gives (as the host user: root may read what the jail's root may
 * not), ... */
static int capture_sources(struct build *b, struct sbx_err *err)
{
	const struct sbx_jail_opts *o = b->c->o;
	size_t next_idmap = 1;
	int r;

	if (!o->rootfs_dir) {
		b->host_fd = clone_tree(
		    AT_FDCWD, "/", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, err);
		if (b->host_fd < 0)
			return b->host_fd;
		r = sbx_jail_hostfs_inside(b->c, "/", -1, "/", &b->host_hostfs);
		if (r < 0)
			return sbx_err_set(err, -r,
					   "cannot look for the host's procfs and sysfs mounts");
	} else if (b->c->n_idmap > 0 && b->c->idmap_fds[0] >= 0) {
		b->lower = steal_fd(&b->c->idmap_fds[0]);
		b->lower_detached = true;
	} else {
		b->lower = open_dir(AT_FDCWD, o->rootfs_dir, err);
		if (b->lower < 0)
			return b->lower;
	}
	/* A new in-memory layer is made from nothing: no disk/ to read; a
	 * layer_later one comes as a mount. */
	if (!o->layer_later && (!o->layer_tmpfs || o->layer_tmpfs_fill)) {
		b->sbfd = open_dir(AT_FDCWD, o->sandbox_dir, err);
		if (b->sbfd < 0)
			return b->sbfd;
	}
	for (size_t i = 0; i < b->cfg->n_mounts; i++) {
		r = capture_mount(b, i, &next_idmap, err);
		if (r < 0)
			return r;
	}
	return 0;
}

/* ... then the writable layers: on disk, or copied to an in-memory tmpfs,
 * which must be made by an id the jail maps (its root, as root). */
static int capture_layers(struct build *b, struct sbx_err *err)
{
	const struct sbx_jail_opts *o = b->c->o;
	int r;

	if (layers_in_memory(b)) {
		r = memory_layer(b, &b->sbfd, err);
		if (r < 0)
			return r;
	}
	if (o->rootfs_dir && b->cfg->rootfs_writable) {
		r = open_upper_work(b->sbfd, "", &b->upper, &b->work, err);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < b->cfg->n_mounts; i++) {
		r = capture_upper(b, b->sbfd, i, err);
		if (r < 0)
			return r;
	}
	return 0;
}

static int become_jail_root(struct build *b, struct sbx_err *err)
{
	if (!b->c->o->ids.range)
		return 0;
	if (setgroups(0, NULL) < 0 || setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)
		return sbx_err_set(err, errno, "cannot become the jail's root");
	/* A credential change clears the parent-death signal: set it again. */
	return sbx_jail_rearm_pdeathsig(b->c->sock, err);
}

/* fsopen/fsconfig/fsmount: a detached mount of a new filesystem. */
static int new_fs(const char *type, const char *const *opts, uint64_t attrs, struct sbx_err *err)
{
	_cleanup_close_ int fsfd = -1;
	int mfd;

	fsfd = fsopen(type, FSOPEN_CLOEXEC);
	if (fsfd < 0)
		return sbx_err_set(err, errno, "cannot create a %s filesystem", type);
	for (size_t i = 0; opts && opts[i]; i += 2) {
		int r = opts[i + 1] ? fsconfig(fsfd, FSCONFIG_SET_STRING, opts[i], opts[i + 1], 0)
				    : fsconfig(fsfd, FSCONFIG_SET_FLAG, opts[i], NULL, 0);

		if (r < 0)
			return sbx_err_set(err, errno, "cannot set %s option '%s%s%s'", type,
					   opts[i], opts[i + 1] ? "=" : "",
					   opts[i + 1] ? opts[i + 1] : "");
	}
	if (fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return sbx_err_set(err, errno, "cannot create the %s mount", type);
	mfd = fsmount(fsfd, FSMOUNT_CLOEXEC, (unsigned)attrs);
	if (mfd < 0)
		return sbx_err_set(err, errno, "cannot mount %s", type);
	return mfd;
}

static int attach(int mfd, int target_fd, const char *what, const char *where, struct sbx_err *err)
{
	if (move_mount(mfd, "", target_fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) <
	    0)
		return sbx_err_set(err, errno, "mount of '%s' on '%s'", what, where);
	return 0;
}

/* A mount point that cannot be made (errno set): -errno, and what to do
 * when it is the read-only root that lacks it (the errno's text in the
 * middle, so err holds none; the caller still gets -EROFS: files_tmpfs
 * mounts a tmpfs on the parent then). */
static int no_mountpoint(int rootfd, const char *path, struct sbx_err *err)
{
	/* the first two of these that this root has */
	static const char *const dirs[] = {"/tmp", "/mnt", "/home", "/opt", "/srv"};
	char such[64] = "";
	size_t n = 0;

	if (errno != EROFS)
		return sbx_err_set(err, errno, "cannot create mount point '%s'", path);
	for (size_t i = 0, k = 0; i < SBX_ARRAY_SIZE(dirs) && k < 2; i++) {
		int d = sbx_openat2(rootfd, dirs[i], O_PATH | O_DIRECTORY,
				    RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);

		if (d < 0)
			continue;
		close(d);
		n += (size_t)snprintf(such + n, sizeof(such) - n, "%s%s",
				      k++ ? " or " : ", such as ", dirs[i]);
	}
	(void)sbx_err_set(err, 0,
			  "cannot create mount point '%s': %s (the jail's root is read-only and "
			  "has no '%s': mount it under a directory the root has%s, or make that "
			  "directory in the root first)",
			  path, strerror(EROFS), path, such);
	return -EROFS;
}

/*
 * Open path (absolute, inside the new root) as O_PATH, creating missing
 * directories (and a final file when want_file) beneath the root.  Never
 * leaves the root: openat2 RESOLVE_IN_ROOT, and new entries are created
 * with mkdirat/openat(O_EXCL) in a parent opened the same way.
 */
static int resolve(int rootfd, const char *path, bool create, bool want_file, uint64_t rflags,
		   struct sbx_err *err)
{
	_cleanup_free_ char *dir = NULL;
	_cleanup_close_ int pfd = -1;
	const char *base;
	int fd;

	fd = sbx_openat2(rootfd, path, O_PATH, rflags);
	if (fd >= 0 || errno != ENOENT || !create)
		return fd >= 0 ? fd : sbx_err_set(err, errno, "cannot open mount point '%s'", path);
	base = strrchr(path, '/');
	if (!base || !base[1] || strcmp(base + 1, "..") == 0 || strcmp(base + 1, ".") == 0)
		return sbx_err_set(err, ENOENT, "cannot open mount point '%s'", path);
	dir = sbx_xstrndup(path, (size_t)(base - path));
	pfd = resolve(rootfd, dir[0] ? dir : "/", true, false, rflags, err);
	if (pfd < 0)
		return pfd;
	base++;
	if (want_file) {
		int f =
		    openat(pfd, base, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);

		if (f < 0 && errno != EEXIST)
			return no_mountpoint(rootfd, path, err);
		if (f >= 0)
			close(f);
	} else if (mkdirat(pfd, base, 0755) < 0 && errno != EEXIST) {
		return no_mountpoint(rootfd, path, err);
	}
	fd = sbx_openat2(pfd, base, O_PATH,
			 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	if (fd < 0)
		return sbx_err_set(err, errno, "cannot open mount point '%s'", path);
	return fd;
}

/* Mount mfd (taken) on path inside the new root. */
static int mount_at(struct build *b, int mfd, const char *what, const char *path, bool file,
		    uint64_t rflags, struct sbx_err *err)
{
	_cleanup_close_ int m = mfd;
	_cleanup_close_ int t = -1;

	if (m < 0)
		return m;
	t = resolve(b->rootfd, path, true, file, rflags, err);
	if (t < 0)
		return t;
	return attach(m, t, what, path, err);
}

/*
 * With o->volatile_layers the overlay skips its unmount-time sync of the
 * whole upper filesystem (sync_filesystem of the state directory's disk,
 * everyone's dirty data: tens of ms when the jail ends).  The supervisor
 * syncs the layer itself when the sandbox is kept (sbx_jail_layers_settle).
 * Kernels without "volatile" (< 5.10) mount without it.
 */
static int overlay_fs(struct build *b, int lower, int upper, int work, uint64_t attrs,
		      struct sbx_err *err)
{
	char lo[32], up[32], wk[32];
	const char *opts[] = {"lowerdir",  lo,	 "upperdir", up,   "workdir", wk,
			      "userxattr", NULL, "volatile", NULL, NULL,      NULL};
	int mfd;

	snprintf(lo, sizeof(lo), "/proc/self/fd/%d", lower);
	snprintf(up, sizeof(up), "/proc/self/fd/%d", upper);
	snprintf(wk, sizeof(wk), "/proc/self/fd/%d", work);
	if (!b->c->o->volatile_layers)
		opts[8] = NULL;
	mfd = new_fs("overlay", opts, attrs, err);
	if (mfd == -EINVAL && opts[8]) {
		sbx_err_clear(err);
		opts[8] = NULL;
		mfd = new_fs("overlay", opts, attrs, err);
	}
	return mfd;
}

/* overlayfs takes an upper only from a mount attached in its namespace:
 * the layers' tmpfs or mount on STAGE/layer. */
static int attach_layer(struct build *b, struct sbx_err *err)
{
	if (mkdirat(b->stage, "layer", 0700) < 0 ||
	    move_mount(b->layer, "", b->stage, "layer", MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return sbx_err_set(err, errno, "cannot attach the writable layer on '%s/layer'",
				   STAGE);
	return 0;
}

/*
 * A private tmpfs on STAGE holds the new root (STAGE/root) and the
 * idmapped lowers (STAGE/lN): overlayfs takes lower layers only from
 * mounts attached in its mount namespace.
 */
static int mount_stage(struct build *b, struct sbx_err *err)
{
	static const char *const opts[] = {"mode", "0755", "size", "65536", NULL, NULL};
	_cleanup_close_ int t = -1;
	int r;

	b->stage = new_fs("tmpfs", opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, err);
	if (b->stage < 0)
		return b->stage;
	/* Any directory of the old root will do (it is covered only in the
	 * jail's mount namespace): /tmp, or /mnt or /run on odd hosts. */
	t = open_dir(AT_FDCWD, STAGE, err);
	if (t < 0 && (t = open(STAGE_ALT1, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		t = open(STAGE_ALT2, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (t < 0)
		return sbx_err_set(err, errno, "cannot find a staging directory ('%s')", STAGE);
	sbx_err_clear(err);
	r = attach(b->stage, t, "tmpfs", STAGE, err);
	if (r == 0 && mkdirat(b->stage, "root", 0755) < 0)
		r = sbx_err_set(err, errno, "cannot create '%s/root'", STAGE);
	if (r == 0 && b->layer >= 0)
		r = attach_layer(b, err);
	return r;
}

/*
 * o->layer_later: the layers, where the first is needed (init is the
 * jail's root by then: an in-memory one is made as it).  Before the
 * staging tmpfs exists, mount_stage attaches them.
 */
static int need_layers(struct build *b, struct sbx_err *err)
{
	int r;

	if (!b->c->o->layer_later || b->have_layers)
		return 0;
	b->have_layers = true;
	r = wait_layer(b, err);
	if (r == 0 && layers_in_memory(b))
		r = capture_layers(b, err);
	else if (r == 0 && o_rootfs_layer(b) && (b->upper < 0 || b->work < 0))
		r = sbx_err_set(err, ENOENT, "the image root's writable layer is missing");
	if (r == 0 && b->stage >= 0 && b->layer >= 0)
		r = attach_layer(b, err);
	return r;
}

/* Attach a detached lower as STAGE/lN and replace *fd by an O_PATH of it. */
static int attach_lower(struct build *b, int *fd, size_t n, struct sbx_err *err)
{
	char name[32];
	int r;

	snprintf(name, sizeof(name), "l%zu", n);
	if (mkdirat(b->stage, name, 0755) < 0)
		return sbx_err_set(err, errno, "cannot create '%s/%s'", STAGE, name);
	if (move_mount(*fd, "", b->stage, name, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return sbx_err_set(err, errno, "cannot attach a lower layer on '%s/%s'", STAGE,
				   name);
	close(*fd);
	*fd = open_dir(b->stage, name, err);
	r = *fd < 0 ? *fd : 0;
	return r;
}

static int attach_lowers(struct build *b, struct sbx_err *err)
{
	int r = 0;

	if (b->lower_detached && b->upper >= 0)
		r = attach_lower(b, &b->lower, 0, err);
	for (size_t i = 0; r == 0 && i < b->cfg->n_mounts; i++)
		if (b->srcs[i].detached && b->srcs[i].fd >= 0)
			r = attach_lower(b, &b->srcs[i].fd, i + 1, err);
	return r;
}

/* Step 3: the rootfs on STAGE/root; b->rootfd refers to it. */
static int mount_rootfs(struct build *b, struct sbx_err *err)
{
	const uint64_t ro = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
	_cleanup_close_ int t = -1;
	_cleanup_close_ int mfd = -1;
	int r = 0;

	if (o_rootfs_layer(b))
		r = need_layers(b, err);
	if (r == 0)
		r = mount_stage(b, err);
	if (r == 0)
		r = attach_lowers(b, err);
	if (r < 0)
		return r;
	if (b->host_fd >= 0)
		mfd = steal_fd(&b->host_fd);
	else if (b->upper >= 0)
		mfd = overlay_fs(b, b->lower, b->upper, b->work, MOUNT_ATTR_NODEV, err);
	else if (b->lower_detached && set_attr(b->lower, ro, true, "rootfs", err) == 0)
		mfd = steal_fd(&b->lower);
	else
		mfd = clone_tree(b->lower, "", ro, err);
	if (mfd < 0)
		return sbx_err_wrap(err, "rootfs '%s'",
				    b->c->o->rootfs_dir ? b->c->o->rootfs_dir : "/");
	t = open_dir(b->stage, "root", err);
	if (t < 0)
		return t;
	r = attach(mfd, t, "rootfs", STAGE "/root", err);
	if (r == 0) {
		b->rootfd = openat(b->stage, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (b->rootfd < 0)
			r = sbx_err_set(err, errno, "cannot open the new root");
	}
	return r;
}

/* Kernel internals, and what names the host's hardware: its disks and
 * swap, its boot command line, its modules, its I/O map. */
static const char *const proc_masked[] = {
    "kcore",	"keys",	      "timer_list", "timer_stats", "sched_debug", "latency_stats",
    "kallsyms", "kpagecount", "kpageflags", "kpagecgroup", "acpi",	  "scsi",
    "asound",	"interrupts", "sysvipc",    "partitions",  "diskstats",	  "swaps",
    "cmdline",	"modules",    "iomem",	    "ioports"};
static const char *const proc_readonly[] = {"sys", "sysrq-trigger", "irq", "bus", "fs"};

/* Hide what t refers to: /dev/null on a file, an empty ro tmpfs on a dir. */
static int mask_fd(int t, const char *label, struct sbx_err *err)
{
	struct stat st;
	int mfd;
	int r;

	if (fstat(t, &st) < 0)
		return sbx_err_set(err, errno, "cannot stat '%s'", label);
	if (S_ISDIR(st.st_mode)) {
		static const char *const opts[] = {"size", "4096", "mode", "0555", NULL, NULL};

		mfd = new_fs("tmpfs", opts,
			     MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
				 MOUNT_ATTR_NOEXEC,
			     err);
	} else {
		mfd = clone_tree(AT_FDCWD, "/dev/null", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, err);
	}
	if (mfd < 0)
		return mfd;
	r = attach(mfd, t, "mask", label, err);
	close(mfd);
	return r;
}

static int mask_at(int dirfd, const char *name, struct sbx_err *err)
{
	_cleanup_close_ int t = -1;

	t = sbx_openat2(dirfd, name, O_PATH, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
	if (t < 0)
		return errno == ENOENT ? 0 : sbx_err_set(err, errno, "cannot open '%s'", name);
	return mask_fd(t, name, err);
}

static int mount_proc(struct build *b, struct sbx_err *err)
{
	const uint64_t attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
	_cleanup_close_ int pfd = -1;
	int r;

	pfd = new_fs("proc", NULL, attrs, err);
	/* A fresh proc is refused where the proc it would reveal has mounts
	 * over it: a container that masks /proc. */
	if (pfd == -EPERM)
		return sbx_err_set(
		    err, 0,
		    "cannot mount a fresh /proc for the jail's pid namespace: this "
		    "container masks /proc (podman and docker do by default); run it "
		    "with --security-opt unmask=ALL (podman) or --security-opt "
		    "systempaths=unconfined (docker)");
	if (pfd < 0)
		return pfd;
	r = mount_at(b, fcntl(pfd, F_DUPFD_CLOEXEC, 3), "proc", "/proc", false, R_STRICT, err);
	if (r < 0)
		return r;
	for (size_t i = 0; i < SBX_ARRAY_SIZE(proc_masked); i++) {
		r = mask_at(pfd, proc_masked[i], err);
		if (r < 0)
			return sbx_err_wrap(err, "cannot mask /proc/%s", proc_masked[i]);
	}
	for (size_t i = 0; i < SBX_ARRAY_SIZE(proc_readonly); i++) {
		_cleanup_close_ int t = -1;
		int m;

		t = sbx_openat2(pfd, proc_readonly[i], O_PATH,
				RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
		if (t < 0)
			continue;
		m = clone_tree(t, "", attrs | MOUNT_ATTR_RDONLY, err);
		if (m < 0)
			return m;
		r = attach(m, t, "proc", proc_readonly[i], err);
		close(m);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * The host's identity where a jail would read it: the boot id, and with the
 * host root the machine id (/etc/machine-id, dbus's copy).  Each is a
 * read-only file of its own for this jail, random, in the same format,
 * written on the staging tmpfs (STAGE/NAME) and bound from there.  (Not a
 * tmpfs of its own: a detached mount dropped costs the kernel an RCU grace
 * period, ~0.2 ms; the stage goes with the old root in one.)
 */
static int bind_text(struct build *b, const char *name, const char *text, int target,
		     const char *label, struct sbx_err *err)
{
	_cleanup_close_ int f = -1;
	int m, r;

	f = openat(b->stage, name, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0444);
	if (f < 0 || sbx_write_all(f, text, strlen(text)) < 0)
		return sbx_err_set(err, errno, "cannot write the jail's %s", label);
	m = open_tree(b->stage, name, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (m < 0)
		return sbx_err_set(err, errno, "cannot open the jail's %s", label);
	r = set_attr(m, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOEXEC, false, label, err);
	if (r == 0)
		r = attach(m, target, label, label, err);
	close(m);
	return r;
}

static void random_hex(char *out, size_t bytes)
{
	unsigned char b[32];

	if (bytes > sizeof(b) || getrandom(b, bytes, 0) != (ssize_t)bytes)
		for (size_t i = 0; i < bytes && i < sizeof(b); i++)
			b[i] = (unsigned char)(sbx_now_ns() >> (i % 8));
	sbx_hex_encode(b, bytes, out);
}

static int mount_ids(struct build *b, struct sbx_err *err)
{
	static const char *const machine_ids[] = {"/etc/machine-id", "/var/lib/dbus/machine-id"};
	char hex[33], text[40];
	_cleanup_close_ int t = -1;
	int r;

	random_hex(hex, 16);
	snprintf(text, sizeof(text), "%.8s-%.4s-4%.3s-a%.3s-%.12s\n", hex, hex + 8, hex + 12,
		 hex + 16, hex + 20);
	t = sbx_openat2(b->rootfd, "/proc/sys/kernel/random/boot_id", O_PATH, R_STRICT);
	if (t >= 0) {
		r = bind_text(b, "boot_id", text, t, "/proc/sys/kernel/random/boot_id", err);
		if (r < 0)
			return r;
	}
	if (b->c->o->rootfs_dir)
		return 0; /* an image has a machine id of its own, or none */
	random_hex(hex, 16);
	snprintf(text, sizeof(text), "%s\n", hex);
	for (size_t i = 0; i < SBX_ARRAY_SIZE(machine_ids); i++) {
		_cleanup_close_ int m = sbx_openat2(b->rootfd, machine_ids[i], O_PATH, R_STRICT);
		struct stat st;

		/* A symlink (dbus's to /etc's) is covered by its target. */
		if (m < 0 || fstat(m, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		r = bind_text(b, i ? "dbus-machine-id" : "machine-id", text, m, machine_ids[i],
			      err);
		if (r < 0)
			return r;
	}
	return 0;
}

static int dev_node(int devfd, const char *name, struct sbx_err *err)
{
	char host[32];
	_cleanup_close_ int t = -1;
	_cleanup_close_ int m = -1;
	int f;

	f = openat(devfd, name, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0666);
	if (f < 0)
		return sbx_err_set(err, errno, "cannot create '/dev/%s'", name);
	close(f);
	snprintf(host, sizeof(host), "/dev/%s", name);
	m = clone_tree(AT_FDCWD, host, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, err);
	if (m < 0)
		return m;
	t = sbx_openat2(devfd, name, O_PATH, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
	if (t < 0)
		return sbx_err_set(err, errno, "cannot open '/dev/%s'", name);
	return attach(m, t, host, host, err);
}

/*
 * A tmpfs without a size of its own gets the memory limit as its size: its
 * pages are memory, and where the limit is only an rlimit (no cgroup) they
 * would not count against it at all.  0 = the kernel's default.
 */
static uint64_t tmpfs_size(const struct build *b, uint64_t size)
{
	if (size == 0 && b->cfg->memory != SBX_UNSET)
		return b->cfg->memory;
	return size;
}

static int dev_subfs(int devfd, const char *name, const char *type, const char *const *opts,
		     uint64_t attrs, struct sbx_err *err)
{
	_cleanup_close_ int t = -1;
	_cleanup_close_ int m = -1;

	if (mkdirat(devfd, name, 0755) < 0)
		return sbx_err_set(err, errno, "cannot create '/dev/%s'", name);
	m = new_fs(type, opts, attrs, err);
	if (m < 0)
		return m;
	t = sbx_openat2(devfd, name, O_PATH, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
	if (t < 0)
		return sbx_err_set(err, errno, "cannot open '/dev/%s'", name);
	return attach(m, t, type, name, err);
}

static int mount_dev(struct build *b, struct sbx_err *err)
{
	static const char *const nodes[] = {"null", "zero", "full", "random", "urandom", "tty"};
	static const char *const links[][2] = {{"ptmx", "pts/ptmx"},
					       {"fd", "/proc/self/fd"},
					       {"stdin", "/proc/self/fd/0"},
					       {"stdout", "/proc/self/fd/1"},
					       {"stderr", "/proc/self/fd/2"}};
	static const char *const dev_opts[] = {"mode", "0755", "size", "65536", NULL, NULL};
	static const char *const pts_opts[] = {"newinstance", NULL,   "ptmxmode", "0666",
					       "mode",	      "0620", NULL,	  NULL};
	char shm_size[32];
	const uint64_t shm_sz = tmpfs_size(b, 0);
	const char *const shm_opts[] = {"mode", "1777", shm_sz ? "size" : NULL, shm_size, NULL};
	const uint64_t nsn = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC;
	_cleanup_close_ int dfd = -1;
	int r;

	snprintf(shm_size, sizeof(shm_size), "%llu", (unsigned long long)shm_sz);
	dfd = new_fs("tmpfs", dev_opts, nsn | MOUNT_ATTR_NODEV, err);
	if (dfd < 0)
		return dfd;
	r = mount_at(b, fcntl(dfd, F_DUPFD_CLOEXEC, 3), "tmpfs", "/dev", false, R_STRICT, err);
	for (size_t i = 0; r == 0 && i < SBX_ARRAY_SIZE(nodes); i++)
		r = dev_node(dfd, nodes[i], err);
	for (size_t i = 0; r == 0 && i < SBX_ARRAY_SIZE(links); i++)
		if (symlinkat(links[i][1], dfd, links[i][0]) < 0)
			r = sbx_err_set(err, errno, "cannot create '/dev/%s'", links[i][0]);
	if (r == 0)
		r = dev_subfs(dfd, "pts", "devpts", pts_opts, nsn, err);
	if (r == 0)
		r = dev_subfs(dfd, "shm", "tmpfs", shm_opts, nsn | MOUNT_ATTR_NODEV, err);
	return r;
}

/*
 * /sys: not the host's.  A tmpfs holding only what programs read about
 * themselves, bound read-only from a sysfs of the jail's own network
 * namespace: devices/system (cpus and memory nodes: nproc, lscpu, libuv),
 * kernel/mm/transparent_hugepage (allocators, JVMs), the jail's own
 * network devices (class/net, devices/virtual/net), and at fs/cgroup the
 * jail's own cgroup (what /proc/self/cgroup names in its cgroup namespace)
 * or nothing.  No host block devices, firmware, DMI ids, PCI devices or
 * other cgroups.  Where a fresh sysfs is refused (a container whose /sys
 * has masks on it) the host's /sys is the source, without its network
 * devices unless the jail shares the host's network anyway.
 */
static const char *const sys_keep[] = {"devices/system", "kernel/mm/transparent_hugepage"};
static const char *const sys_net[] = {"devices/virtual/net", "class/net"};

/* Attach mfd (taken) on PATH beneath the tmpfs tfd, creating it. */
static int sys_attach(int tfd, int mfd, const char *what, const char *path, struct sbx_err *err)
{
	_cleanup_close_ int m = mfd;
	_cleanup_close_ int t = -1;

	if (m < 0)
		return m;
	t = resolve(tfd, path, true, false, R_STRICT, err);
	if (t < 0)
		return t;
	return attach(m, t, what, path, err);
}

static int sys_bind(int src, const char *sub, int tfd, uint64_t attrs, struct sbx_err *err)
{
	char path[128];
	struct stat st;
	int m;

	if (fstatat(src, sub, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
		return 0; /* not on this kernel */
	m = open_tree(src, sub, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (m < 0)
		return sbx_err_set(err, errno, "cannot open '/sys/%s' for binding", sub);
	if (set_attr(m, attrs, false, sub, err) < 0) {
		close(m);
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "/%s", sub);
	return sys_attach(tfd, m, "sysfs", path, err);
}

/* One v1 hierarchy's directory DIR (/sys/fs/cgroup/HIER/...) at
 * fs/cgroup/HIER, and cpu,cpuacct also as cpu and cpuacct. */
static int sys_cgroup1(int tfd, const char *dir, uint64_t attrs, struct sbx_err *err)
{
	static const char prefix[] = "/sys/fs/cgroup/";
	const char *h = dir + sizeof(prefix) - 1, *slash;
	char hier[64], path[96];
	_cleanup_close_ int cgd = -1;
	int r;

	if (strncmp(dir, prefix, sizeof(prefix) - 1) != 0 || !(slash = strchr(h, '/')) ||
	    (size_t)(slash - h) >= sizeof(hier))
		return 0; /* a hierarchy mounted elsewhere: left out */
	snprintf(hier, sizeof(hier), "%.*s", (int)(slash - h), h);
	snprintf(path, sizeof(path), "/fs/cgroup/%s", hier);
	r = sys_attach(tfd, clone_tree(AT_FDCWD, dir, attrs, err), "cgroup", path, err);
	if (r < 0 || !strchr(hier, ','))
		return r;
	cgd = sbx_openat2(tfd, "fs/cgroup", O_PATH | O_DIRECTORY,
			  RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
	if (cgd < 0)
		return sbx_err_set(err, errno, "cannot open /sys/fs/cgroup");
	for (char *save = NULL, *one = strtok_r(hier, ",", &save); one;
	     one = strtok_r(NULL, ",", &save))
		if (symlinkat(path + sizeof("/fs/cgroup/") - 1, cgd, one) < 0 && errno != EEXIST)
			return sbx_err_set(err, errno, "cannot link /sys/fs/cgroup/%s", one);
	return 0;
}

/* The jail's own cgroup at fs/cgroup: the v2 leaf (its cgroup namespace's
 * root; the limits are on its parent, out of view), or each v1 hierarchy
 * it was placed in. */
static int sys_cgroup(struct build *b, int tfd, uint64_t attrs, struct sbx_err *err)
{
	const struct sbx_cgroup *cg = b->c->o->cg;
	const char *v1[5];
	int r = 0;

	if (!cg || cg->version == 0 || cg->fake)
		return 0;
	if (cg->version == 2)
		return sys_attach(tfd, clone_tree(AT_FDCWD, cg->leaf2, attrs, err), "cgroup",
				  "/fs/cgroup", err);
	v1[0] = cg->mem1;
	v1[1] = cg->pids1;
	v1[2] = cg->cpu1;
	v1[3] = cg->cpuacct1;
	v1[4] = cg->freezer1;
	for (size_t i = 0; r == 0 && i < SBX_ARRAY_SIZE(v1); i++) {
		bool seen = false;

		for (size_t j = 0; j < i; j++)
			seen = seen || (v1[i] && v1[j] && strcmp(v1[j], v1[i]) == 0);
		if (v1[i] && !seen)
			r = sys_cgroup1(tfd, v1[i], attrs, err);
	}
	return r;
}

static int mount_sys(struct build *b, struct sbx_err *err)
{
	const uint64_t attrs =
	    MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
	static const char *const opts[] = {"size", "65536", "mode", "0755", NULL, NULL};
	const bool own_net = b->cfg->net != SBX_NET_HOST;
	_cleanup_close_ int src = -1;
	_cleanup_close_ int tfd = -1;
	bool fresh = false;
	int r;

	tfd = new_fs("tmpfs", opts, attrs & ~MOUNT_ATTR_RDONLY, err);
	if (tfd < 0)
		return tfd;
	r = mount_at(b, fcntl(tfd, F_DUPFD_CLOEXEC, 3), "tmpfs", "/sys", false, R_STRICT, err);
	if (r < 0 || b->cfg->sysfs == SBX_SYSFS_NONE)
		return r < 0 ? r : set_attr(tfd, MOUNT_ATTR_RDONLY, false, "/sys", err);
	if (own_net) {
		struct sbx_err e = {0};

		src = new_fs("sysfs", NULL, attrs, &e);
		fresh = src >= 0;
		if (!fresh)
			sbx_jail_report(b->c->sock, SBX_MSG_WARN, e.errnum,
					"/sys: a sysfs of the jail's own network namespace is "
					"refused here (%s): /sys shows no network devices",
					e.msg);
	}
	if (src < 0) {
		/* Recursive: the host's mounts on /sys are locked to it. */
		src = clone_tree(AT_FDCWD, "/sys", attrs, err);
		if (src < 0)
			return sbx_err_wrap(err, "/sys");
	}
	/* The source on STAGE/sys while its parts are bound: detached, it
	 * would cost a grace period when closed (see bind_text). */
	if (mkdirat(b->stage, "sys", 0755) < 0 ||
	    move_mount(src, "", b->stage, "sys", MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return sbx_err_set(err, errno, "cannot attach the jail's sysfs on '%s/sys'", STAGE);
	for (size_t i = 0; r == 0 && i < SBX_ARRAY_SIZE(sys_keep); i++)
		r = sys_bind(src, sys_keep[i], tfd, attrs, err);
	/* The host's network devices only where the jail has the host's network. */
	for (size_t i = 0; r == 0 && (fresh || !own_net) && i < SBX_ARRAY_SIZE(sys_net); i++)
		r = sys_bind(src, sys_net[i], tfd, attrs, err);
	if (r == 0) {
		int t = resolve(tfd, "/fs/cgroup", true, false, R_STRICT, err);

		r = t < 0 ? t : 0;
		if (t >= 0)
			close(t);
	}
	if (r == 0)
		r = sys_cgroup(b, tfd, attrs, err);
	if (r == 0)
		r = set_attr(tfd, MOUNT_ATTR_RDONLY, false, "/sys", err);
	return r < 0 ? sbx_err_wrap(err, "/sys") : 0;
}

/*
 * A bind on m->dst: where nothing is yet, a mount point of the source's kind
 * (a file for a file).  A destination of the other kind, which the kernel
 * refuses with only "Invalid argument", is said in so many words (looked
 * at only when the mount failed: nothing more on a run's way in).
 */
static int bind_at(struct build *b, const struct sbx_mount *m, struct src *s, struct sbx_err *err)
{
	struct stat ss, ds;
	bool file = fstat(s->fd, &ss) == 0 && !S_ISDIR(ss.st_mode);
	int r = mount_at(b, steal_fd(&s->fd), m->src, m->dst, file, R_IN_ROOT, err);
	_cleanup_close_ int d = -1;

	if (r < 0 && (d = sbx_openat2(b->rootfd, m->dst, O_PATH, R_IN_ROOT)) >= 0 &&
	    fstat(d, &ds) == 0 && !S_ISDIR(ds.st_mode) != file) {
		sbx_err_clear(err);
		return sbx_err_set(err, 0,
				   "cannot bind '%s' on '%s': '%s' is a %s and '%s' a %s in the "
				   "jail (bind a file onto a file, a directory onto a directory)",
				   m->src, m->dst, m->src, file ? "file" : "directory", m->dst,
				   file ? "directory" : "file");
	}
	return r;
}

/* A .gitmodules "path" value: relative, no "..", below the bind. */
static bool plain_relative(const char *p)
{
	const char *c = p;

	if (!*p || *p == '/')
		return false;
	while (*c) {
		size_t n = strcspn(c, "/");

		if (n == 2 && c[0] == '.' && c[1] == '.')
			return false;
		c += n;
		c += *c == '/';
	}
	return true;
}

static int gitmodules_path(void *user, const char *section, const char *sub, const char *name,
			   const char *value)
{
	struct sbx_strv *paths = user;

	if (!strcmp(section, "submodule") && sub && !strcmp(name, "path") && value)
		sbx_strv_push(paths, value);
	return paths->n < GIT_MODULES_MAX;
}

#define R_BELOW (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)

/* "rel/name", or name when rel is "" (the bind's own directory) */
static char *below(const char *rel, const char *name)
{
	return *rel ? sbx_xasprintf("%s/%s", rel, name) : sbx_xstrdup(name);
}

/* The submodule paths rel/.gitmodules names (a regular file, read as
 * far as SBX_GITCONFIG_MAX; what cannot be read names none). */
static void gitmodules(int top, const char *rel, struct sbx_strv *paths)
{
	_cleanup_free_ char *path = below(rel, ".gitmodules");

	(void)sbx_gitconfig_parse_fd(
	    sbx_openat2(top, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, R_BELOW), gitmodules_path,
	    paths);
}

/*
 * A read-write bind's git directory (m->git_ro, sbx_config_protect_git):
 * a clone of its .git as the jail sees it (through the bind, so an
 * idmapped bind's owner shows as before), read-only and mounted onto
 * itself.  git in the jail reads it (status, log, diff); nothing there is
 * written, and as a mount point it cannot be renamed, replaced or
 * removed.  Then the same for each submodule's .git that .gitmodules
 * names (a file naming the gitdir: rewritten, the superproject's `git
 * status` on the host ran the config it named), to a depth of GIT_DEPTH,
 * never out of the bind nor through a symlink.  The bind's own must be
 * there: a .git that became a symlink since the check fails the run
 * rather than go in writable.  top: the bind's directory in the jail
 * (dst, for messages); rel: below it ("" for itself).
 */
/* t (dst/path in the jail), cloned read-only and mounted onto itself:
 * why says what git does with it, for the error. */
static int read_only_onto_itself(int t, const char *dst, const char *path, const char *why,
				 struct sbx_err *err)
{
	_cleanup_close_ int mfd =
	    clone_tree(t, "", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, err);

	if (mfd < 0)
		return sbx_err_wrap(err, "'%s/%s' (made read-only: %s)", dst, path, why);
	return attach(mfd, t, path, dst, err);
}

static int git_read_only(int top, const char *dst, const char *rel, int depth, bool link,
			 struct sbx_err *err)
{
	_cleanup_free_ char *path = below(rel, ".git");
	_cleanup_close_ int t = link ? -1 : sbx_openat2(top, path, O_PATH | O_NOFOLLOW, R_BELOW);
	struct sbx_strv subs = {0};
	struct stat st;
	int r = 0;

	if (t < 0 && depth > 0)
		return 0; /* a submodule not checked out */
	if (t < 0 && !link)
		return sbx_err_set(err, errno, "cannot open '%s/%s' to make it read-only", dst,
				   path);
	if (depth > 0 && (fstat(t, &st) < 0 || !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))))
		return 0;
	/* a symlink (link): where it leads is the first of git_named */
	if (!link)
		r = read_only_onto_itself(t, dst, path, "git runs its hooks and config", err);
	if (r < 0 || depth >= GIT_DEPTH)
		return r;
	gitmodules(top, rel, &subs);
	for (size_t i = 0; r == 0 && i < subs.n; i++) {
		if (plain_relative(subs.v[i])) {
			_cleanup_free_ char *sub = below(rel, subs.v[i]);

			r = git_read_only(top, dst, sub, depth + 1, false, err);
		}
	}
	sbx_strv_free(&subs);
	return r;
}

/*
 * What the repository's git config names below the bind (m->git_named:
 * a core.hooksPath directory, an included file), and where a symlink git
 * follows leads there (.git itself, its hooks directory, a hook),
 * read-only onto itself the same way.  One that is gone, or became a
 * symlink or another kind of file since the check, is left (git reads
 * nothing from it, or reads what the run's end names:
 * lib/run/run_later.c); but not where .git leads: the run fails rather
 * than let the repository go in writable.
 */
static int git_named_read_only(int top, const struct sbx_mount *m, struct sbx_err *err)
{
	for (size_t i = 0; i < m->git_named.n; i++) {
		const char *rel = m->git_named.v[i];
		_cleanup_close_ int t = sbx_openat2(top, rel, O_PATH | O_NOFOLLOW, R_BELOW);
		struct stat st;
		int r;

		if (i == 0 && m->git_link && (t < 0 || fstat(t, &st) < 0 || !S_ISDIR(st.st_mode)))
			return sbx_err_set(err, t < 0 ? errno : ENOTDIR,
					   "cannot open '%s/%s' (where its .git leads) to make it "
					   "read-only",
					   m->dst, rel);
		if (t < 0 || fstat(t, &st) < 0 || !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)))
			continue;
		r = read_only_onto_itself(t, m->dst, rel,
					  i == 0 && m->git_link ? "its .git leads there"
								: "git reaches it from .git",
					  err);
		if (r < 0)
			return r;
	}
	return 0;
}

/* The bind at m->dst, just mounted: its .git and its submodules', and
 * what its config names. */
static int git_read_only_bind(struct build *b, const struct sbx_mount *m, struct sbx_err *err)
{
	_cleanup_close_ int top = sbx_openat2(b->rootfd, m->dst, O_PATH | O_DIRECTORY, R_IN_ROOT);
	int r;

	if (top < 0)
		return sbx_err_set(err, errno, "cannot open '%s' to make its .git read-only",
				   m->dst);
	r = git_read_only(top, m->dst, "", 0, m->git_link, err);
	return r == 0 ? git_named_read_only(top, m, err) : r;
}

static int mount_entry(struct build *b, size_t i, struct sbx_err *err)
{
	const struct sbx_mount *m = &b->cfg->mounts[i];
	struct src *s = &b->srcs[i];
	char size[32];
	const uint64_t sz = tmpfs_size(b, m->size);
	const char *tmpfs_opts[] = {"mode", "1777", sz ? "size" : NULL, size, NULL};
	_cleanup_close_ int t = -1;
	int mfd, r;

	snprintf(size, sizeof(size), "%llu", (unsigned long long)sz);
	switch (m->kind) {
	case SBX_MNT_BIND:
	case SBX_MNT_RO_BIND:
		if (s->fd < 0)
			return 0;
		s->rbind = true;
		r = bind_at(b, m, s, err);
		return r == 0 && m->git_ro ? git_read_only_bind(b, m, err) : r;
	case SBX_MNT_OVERLAY:
		if (s->fd < 0)
			return 0;
		mfd = need_layers(b, err);
		if (mfd == 0 && (s->upper < 0 || s->work < 0))
			mfd = sbx_err_set(err, ENOENT, "the writable layer of '%s' is missing",
					  m->dst);
		if (mfd < 0)
			return mfd;
		mfd = overlay_fs(b, s->fd, s->upper, s->work, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
				 err);
		/*
		 * In a user namespace the kernel refuses a lower layer whose
		 * tree holds mount points inherited from the host (they are
		 * locked: an overlay would show what they cover).  The
		 * directory is then bound read-only as it is, mounts included,
		 * and the run log says it is not copy-on-write.
		 */
		if (mfd == -EINVAL) {
			struct sbx_err e2 = {0};
			int rb = clone_tree(
			    s->fd, "", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
			    &e2);

			if (rb >= 0 &&
			    mount_at(b, rb, m->src, m->dst, false, R_IN_ROOT, &e2) == 0) {
				s->rbind = true;
				sbx_err_clear(err);
				sbx_jail_report(
				    b->c->sock, SBX_MSG_WARN, 0,
				    "'%s' is read-only, not copy-on-write: it holds mount "
				    "points that an unprivileged overlay cannot cover",
				    m->dst);
				return 0;
			}
		}
		if (mfd < 0)
			return sbx_err_wrap(err, "overlay of '%s' on '%s'", m->src, m->dst);
		return mount_at(b, mfd, m->src, m->dst, false, R_IN_ROOT, err);
	case SBX_MNT_TMPFS:
		mfd = new_fs("tmpfs", tmpfs_opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, err);
		return mount_at(b, mfd, "tmpfs", m->dst, false, R_IN_ROOT, err);
	case SBX_MNT_MASK:
		t = sbx_openat2(b->rootfd, m->dst, O_PATH, R_IN_ROOT);
		if (t < 0)
			return 0; /* nothing to hide */
		return mask_fd(t, m->dst, err);
	}
	return 0;
}

/*
 * The host's procfs and sysfs mounts that came along with the host's root
 * or with a bind (lib/jail/hostfs.c), each hidden under an empty read-only
 * directory: only what is still one where the jail sees it (a later mount
 * may cover it).
 */
static int hide_hostfs(struct build *b, struct sbx_err *err)
{
	int r = 0;

	for (size_t i = 0; r == 0 && i <= b->cfg->n_mounts; i++) {
		const struct sbx_strv *l =
		    i < b->cfg->n_mounts ? &b->srcs[i].hostfs : &b->host_hostfs;

		if (i < b->cfg->n_mounts && !b->srcs[i].rbind)
			continue;
		for (size_t k = 0; r == 0 && k < l->n; k++) {
			_cleanup_close_ int t = sbx_openat2(b->rootfd, l->v[k], O_PATH, R_IN_ROOT);

			if (t >= 0 && sbx_jail_on_hostfs(t))
				r = mask_fd(t, l->v[k], err);
		}
	}
	return r;
}

/* The size option of a files tmpfs (SBX_JAIL_FILES_MAX as a string). */
#define FILES_STR_(n) #n
#define FILES_STR(n)  FILES_STR_(n)
#define FILES_SIZE    FILES_STR(SBX_JAIL_FILES_MAX)

/*
 * A fresh tmpfs on dir (e.g. /run/secrets).  On a read-only root where dir
 * does not exist (the host's root), its parent gets a private tmpfs first,
 * so the mount point can be made.
 */
static int files_tmpfs(struct build *b, const char *dir, struct sbx_err *err)
{
	static const char *const opts[] = {"mode", "0755", "size", FILES_SIZE, NULL, NULL};
	const uint64_t attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
	_cleanup_free_ char *parent = NULL;
	const char *slash = strrchr(dir, '/');
	int r;

	r = mount_at(b, new_fs("tmpfs", opts, attrs, err), "tmpfs", dir, false, R_STRICT, err);
	if (r != -EROFS || !slash || slash == dir)
		return r;
	sbx_err_clear(err);
	parent = sbx_xstrndup(dir, (size_t)(slash - dir));
	r = mount_at(b, new_fs("tmpfs", opts, attrs, err), "tmpfs", parent, false, R_STRICT, err);
	if (r < 0)
		return r;
	return mount_at(b, new_fs("tmpfs", opts, attrs, err), "tmpfs", dir, false, R_STRICT, err);
}

/* A regular file (up to its size) or everything a pipe gives, to out; 0 or
 * -1 (errno). */
static int copy_part(int in, int out)
{
	char buf[16384];
	struct stat st;

	if (fstat(in, &st) == 0 && S_ISREG(st.st_mode)) {
		off_t left = st.st_size;

		while (left > 0) {
			ssize_t n = sendfile(out, in, NULL, (size_t)left);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				return n < 0 ? -1 : 0; /* shrunk meanwhile: what there was */
			left -= n;
		}
		return 0;
	}
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));

		if (n == 0)
			return 0;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || sbx_write_all(out, buf, (size_t)n) < 0)
			return -1;
	}
}

/* The parts of f, in order, a newline between two; each fd closed. */
static int copy_parts(const struct sbx_jail_file *f, int out)
{
	int r = 0;

	for (size_t k = 0; k < f->n_fds; k++) {
		if (r == 0 && k > 0 && sbx_write_all(out, "\n", 1) < 0)
			r = -1;
		if (r == 0 && copy_part(f->fds[k], out) < 0)
			r = -1;
		close(f->fds[k]);
	}
	return r;
}

static int write_files(struct build *b, struct sbx_err *err)
{
	const struct sbx_jail_opts *o = b->c->o;

	for (size_t i = 0; i < o->n_files; i++) {
		const struct sbx_jail_file *f = &o->files[i];
		_cleanup_close_ int dfd = -1;
		_cleanup_close_ int fd = -1;

		dfd = sbx_openat2(b->rootfd, f->dir, O_DIRECTORY | O_RDONLY, R_STRICT);
		if (dfd >= 0 && i > 0 && strcmp(f->dir, o->files[i - 1].dir) == 0) {
			/* same tmpfs as the previous file */
		} else {
			int r;

			sbx_closep(&dfd);
			r = files_tmpfs(b, f->dir, err);
			if (r < 0)
				return r;
			dfd = sbx_openat2(b->rootfd, f->dir, O_DIRECTORY | O_RDONLY, R_STRICT);
			if (dfd < 0)
				return sbx_err_set(err, errno, "cannot open '%s'", f->dir);
		}
		fd = openat(dfd, f->name, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC,
			    f->mode);
		if (fd >= 0 && f->n_fds > 0 && copy_parts(f, fd) < 0)
			return sbx_err_set(err, errno, "cannot write '%s/%s' from sbx", f->dir,
					   f->name);
		if (fd < 0 || (f->n_fds == 0 && sbx_write_all(fd, f->data, f->len) < 0) ||
		    fchown(fd, o->ids.uid, o->ids.gid) < 0 || fchmod(fd, f->mode) < 0)
			return sbx_err_set(err, errno, "cannot write '%s/%s'", f->dir, f->name);
	}
	return 0;
}

static int pivot(struct build *b, struct sbx_err *err)
{
	if (fchdir(b->rootfd) < 0)
		return sbx_err_set(err, errno, "cannot enter the new root");
	if (syscall(SYS_pivot_root, ".", ".") < 0)
		return sbx_err_set(err, errno, "pivot_root");
	if (umount2(".", MNT_DETACH) < 0)
		return sbx_err_set(err, errno, "cannot detach the old root");
	if (chdir("/") < 0)
		return sbx_err_set(err, errno, "chdir /");
	return 0;
}

static void build_free(struct build *b)
{
	sbx_closep(&b->rootfd);
	sbx_closep(&b->stage);
	sbx_closep(&b->layer);
	sbx_closep(&b->sbfd);
	sbx_closep(&b->host_fd);
	sbx_closep(&b->lower);
	sbx_closep(&b->upper);
	sbx_closep(&b->work);
	for (size_t i = 0; b->srcs && i < b->cfg->n_mounts; i++) {
		sbx_closep(&b->srcs[i].fd);
		sbx_closep(&b->srcs[i].upper);
		sbx_closep(&b->srcs[i].work);
		sbx_strv_free(&b->srcs[i].hostfs);
	}
	sbx_strv_free(&b->host_hostfs);
	free(b->srcs);
}

static int build_steps(struct build *b, struct sbx_err *err)
{
	int r;

	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
		return sbx_err_set(err, errno, "cannot make '/' a slave mount");
	r = capture_sources(b, err);
	/* Layers on disk are the host root's to open (the sandbox directory is
	 * 0700); an in-memory one is made as the jail's root (a kept sandbox's
	 * from its disk/, which the jail's root owns); layer_later ones come
	 * opened, where the first is needed (need_layers). */
	if (r == 0 && b->c->o->layer_later) {
		r = become_jail_root(b, err);
	} else if (r == 0 && layers_in_memory(b)) {
		r = become_jail_root(b, err);
		if (r == 0)
			r = capture_layers(b, err);
	} else if (r == 0) {
		r = capture_layers(b, err);
		if (r == 0)
			r = become_jail_root(b, err);
	}
	if (r == 0)
		r = mount_rootfs(b, err);
	if (r == 0)
		r = mount_proc(b, err);
	if (r == 0)
		r = mount_ids(b, err);
	if (r == 0)
		r = mount_dev(b, err);
	if (r == 0)
		r = mount_sys(b, err);
	/* Masks last, so no later bind or overlay of a parent uncovers them. */
	for (size_t i = 0; r == 0 && i < b->cfg->n_mounts; i++)
		if (b->cfg->mounts[i].kind != SBX_MNT_MASK)
			r = mount_entry(b, i, err);
	if (r == 0)
		r = hide_hostfs(b, err);
	for (size_t i = 0; r == 0 && i < b->cfg->n_mounts; i++)
		if (b->cfg->mounts[i].kind == SBX_MNT_MASK)
			r = mount_entry(b, i, err);
	/* layers that no mount took (an optional overlay's source missing):
	 * their message is read all the same */
	if (r == 0)
		r = need_layers(b, err);
	if (r == 0)
		r = write_files(b, err);
	if (r == 0)
		r = pivot(b, err);
	return r;
}

int sbx_jail_build_root(struct sbx_jail_child *c, struct sbx_err *err)
{
	struct build b = {.c = c,
			  .cfg = c->o->cfg,
			  .rootfd = -1,
			  .host_fd = -1,
			  .lower = -1,
			  .stage = -1,
			  .layer = -1,
			  .sbfd = -1,
			  .upper = -1,
			  .work = -1};
	int r;

	b.srcs = sbx_xcalloc(b.cfg->n_mounts + 1, sizeof(*b.srcs));
	for (size_t i = 0; i < b.cfg->n_mounts; i++)
		b.srcs[i].fd = b.srcs[i].upper = b.srcs[i].work = -1;
	r = build_steps(&b, err);
	build_free(&b);
	return r;
}

int sbx_jail_lo_up(struct sbx_err *err)
{
	struct ifreq ifr = {0};
	_cleanup_close_ int s = -1;

	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return sbx_err_set(err, errno, "cannot create a socket for 'lo'");
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		return sbx_err_set(err, errno, "cannot read the flags of 'lo'");
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		return sbx_err_set(err, errno, "cannot bring 'lo' up");
	return 0;
}
