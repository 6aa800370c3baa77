/* SPDX-License-Identifier: MIT */
/* lib/jail/disk.c - the writable layers' cap and its filesystem (see disk.h). */
#include "disk.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "proc.h"

static uint64_t memory_total(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);

	return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 0;
}

int sbx_disk_cap(const char *state_dir, uint64_t asked, bool in_memory, struct sbx_disk_cap *cap,
		 struct sbx_err *err)
{
	struct statvfs v;

	memset(cap, 0, sizeof(*cap));
	if (statvfs(state_dir, &v) < 0)
		return sbx_err_set(err, errno, "cannot check the free space of '%s'", state_dir);
	return sbx_disk_cap_of(state_dir, (uint64_t)v.f_blocks * v.f_frsize,
			       (uint64_t)v.f_bavail * v.f_frsize, in_memory ? memory_total() : 0,
			       asked, cap, err);
}

int sbx_disk_cap_of(const char *state_dir, uint64_t total, uint64_t avail, uint64_t memory,
		    uint64_t asked, struct sbx_disk_cap *cap, struct sbx_err *err)
{
	uint64_t reserve, room, mem;
	char a[32], b[32], c[32];

	memset(cap, 0, sizeof(*cap));
	cap->asked = asked == SBX_UNSET ? SBX_DISK_DEFAULT : asked;
	cap->size = cap->asked;
	/* 5%, at least 256M, but no more than a quarter of a small filesystem
	 * (a container's 64M /dev/shm) */
	reserve = total / 100 * SBX_DISK_RESERVE_PCT;
	if (reserve < SBX_DISK_RESERVE_MIN)
		reserve = SBX_DISK_RESERVE_MIN < total / 4 ? SBX_DISK_RESERVE_MIN : total / 4;
	room = avail > reserve ? avail - reserve : 0;
	if (cap->size > room) {
		/* Down to the reserve (another sandbox filled its layers and was
		 * kept): a share of what is left, so that sandboxes still start
		 * and none can take the last of it. */
		bool share = room < avail / SBX_DISK_RESERVE_SHARE;

		if (share)
			room = avail / SBX_DISK_RESERVE_SHARE;
		cap->size = room < cap->size ? room : cap->size;
		cap->clamped = true;
		snprintf(cap->why, sizeof(cap->why),
			 share ? "the state filesystem has only %s free, within the %s it keeps "
				 "free: a quarter of that"
			       : "the state filesystem has %s free and keeps %s of it free",
			 sbx_size_text((double)avail, a, sizeof(a)),
			 sbx_size_text((double)reserve, b, sizeof(b)));
	}
	mem = memory / SBX_DISK_MEMORY_SHARE;
	if (mem && cap->size > mem) {
		cap->size = mem;
		cap->clamped = true;
		snprintf(cap->why, sizeof(cap->why), "in memory: at most a quarter of the %s here",
			 sbx_size_text((double)memory, a, sizeof(a)));
	}
	cap->size &= memory ? ~(uint64_t)((1 << 20) - 1) : ~(uint64_t)4095;
	/* Less than asked, and too little to start anything in: refuse (a
	 * small [limits] disk is what was asked for, and is kept). */
	if (cap->clamped && cap->size < SBX_DISK_MIN)
		return sbx_err_set(
		    err, ENOSPC,
		    "the state filesystem of '%s' has %s free, and sbx keeps %s of it free: a "
		    "writable layer would get less than %s (free space there, or set "
		    "SBX_STATE_DIR to a directory on another filesystem)",
		    state_dir, sbx_size_text((double)avail, a, sizeof(a)),
		    sbx_size_text((double)reserve, b, sizeof(b)),
		    sbx_size_text((double)SBX_DISK_MIN, c, sizeof(c)));
	cap->inodes = sbx_disk_inodes(cap->size);
	return 0;
}

uint64_t sbx_disk_inodes(uint64_t size)
{
	uint64_t n = size / SBX_DISK_BYTES_PER_INODE;

	return n < SBX_DISK_MIN_INODES ? SBX_DISK_MIN_INODES : n;
}

void sbx_disk_usage_of(const struct statfs *s, struct sbx_disk_usage *u)
{
	uint64_t bs = (uint64_t)s->f_bsize, avail = (uint64_t)s->f_bavail * bs, slack;

	memset(u, 0, sizeof(*u));
	u->set = true;
	u->size = (uint64_t)s->f_blocks * bs;
	u->used = (uint64_t)(s->f_blocks - s->f_bfree) * bs;
	/* ext4 keeps back 2% or 16 MiB for its own metadata (and delayed
	 * allocations hold more) once a write fails; a tmpfs nothing */
	slack = u->size / 16 < SBX_DISK_FULL_SLACK ? u->size / 16 : SBX_DISK_FULL_SLACK;
	u->full = u->size > 0 && avail <= slack;
	if (s->f_files > 0) {
		u->inodes = (uint64_t)s->f_files;
		u->inodes_used = (uint64_t)(s->f_files - s->f_ffree);
		u->full_inodes = s->f_ffree == 0;
	}
}

int sbx_disk_usage_fd(int fd, struct sbx_disk_usage *u)
{
	struct statfs s;

	memset(u, 0, sizeof(*u));
	if (fd < 0 || fstatfs(fd, &s) < 0)
		return fd < 0 ? -EBADF : -errno;
	sbx_disk_usage_of(&s, u);
	return 0;
}

/* The first of n paths that is executable, or NULL. */
static const char *first_executable(const char *const paths[], size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (access(paths[i], X_OK) == 0)
			return paths[i];
	return NULL;
}

const char *sbx_disk_mke2fs(void)
{
	static const char *const paths[] = {"/usr/sbin/mke2fs", "/sbin/mke2fs",
					    "/usr/local/sbin/mke2fs"};

	return first_executable(paths, SBX_ARRAY_SIZE(paths));
}

bool sbx_disk_loop_usable(void)
{
	return geteuid() == 0 && access("/dev/loop-control", R_OK | W_OK) == 0 &&
	       sbx_disk_mke2fs() != NULL;
}

/* An e2fsprogs tool, argv[0] its path; its messages (the last line) in
 * err when it fails. */
static int run_tool(const char *const argv[], struct sbx_err *err)
{
	const char *name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	char out[512] = "";
	int p[2], st;
	ssize_t got = 0, k;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return sbx_err_set(err, errno, "cannot run %s", name);
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return sbx_err_set(err, errno, "cannot run %s", name);
	}
	if (pid == 0) {
		static const char *const env[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C",
						  NULL};
		int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);

		if (nul >= 0)
			dup2(nul, STDIN_FILENO);
		dup2(p[1], STDOUT_FILENO);
		dup2(p[1], STDERR_FILENO);
		execve(argv[0], (char *const *)argv, (char *const *)env);
		_exit(127);
	}
	close(p[1]);
	while ((k = read(p[0], out + got, sizeof(out) - 1 - (size_t)got)) > 0 ||
	       (k < 0 && errno == EINTR))
		if (k > 0)
			got += k;
	close(p[0]);
	out[got] = '\0';
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return sbx_err_set(err, errno, "cannot wait for %s", name);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		char *nl;

		while (got > 0 && out[got - 1] == '\n')
			out[--got] = '\0';
		nl = strrchr(out, '\n');
		return sbx_err_set(err, EIO, "%s failed (exit %d)%s%s", name,
				   WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st),
				   out[0] ? ": " : "", nl ? nl + 1 : out);
	}
	return 0;
}

/* debugfs's path (e2fsprogs, with mke2fs), or NULL. */
static const char *debugfs_path(void)
{
	static const char *const paths[] = {"/usr/sbin/debugfs", "/sbin/debugfs",
					    "/usr/local/sbin/debugfs"};

	return first_executable(paths, SBX_ARRAY_SIZE(paths));
}

/*
 * mke2fs on IMAGE from LAYOUT.  No journal (the layer dies with the sandbox
 * or is synced when kept), metadata packed at the start, inode tables left
 * to the kernel, no backup superblocks (sparse_super2 with none:
 * sparse_super's ten of a 16G image were 124 of its 200 KiB of data and
 * 10 of its 14 pieces, each copied into every ready image and freed, one
 * discard each, when the image is deleted).  inline_data: a directory
 * small enough lives in its inode, so the layers' directories that a run
 * makes (overlays/N/upper, work) and removes (the layout's unused ones)
 * allocate and free no block: the image's first block allocation loads
 * the allocator's state for a group, 0.3-0.5 ms through the loop device
 * on a 2-CPU VM, which a run of a short command then never pays.
 */
static int make_fs_in(const char *image, uint64_t inodes, const char *layout, struct sbx_err *err)
{
	const char *mke2fs = sbx_disk_mke2fs();
	char n[32];

	if (!mke2fs)
		return sbx_err_set(err, ENOENT, "mke2fs not found (Debian: e2fsprogs)");
	snprintf(n, sizeof(n), "%llu", (unsigned long long)inodes);
	const char *const argv[] = {
	    mke2fs, "-q", "-F", "-t", "ext4",
	    /* the loop device's logical block size */
	    "-b", "4096", "-O", "^has_journal,^resize_inode,sparse_super2,inline_data", "-E",
	    "lazy_itable_init=1,nodiscard,packed_meta_blocks=1,num_backup_sb=0", "-m", "0", "-N", n,
	    "-d", layout, image, NULL};

	return run_tool(argv, err);
}

/*
 * mke2fs always makes lost+found, four blocks: removing it in the template
 * once (debugfs, ~15 ms) spares each run the removal (its first block
 * freed: the allocator's state loaded, ~0.5 ms) and each ready copy 16 KiB.
 * Only for a template: a run that makes an image of its own (no template
 * directory) removes it itself, as it does without debugfs or when that
 * fails (loop_disk).
 */
static void drop_lost_found(const char *image)
{
	const char *debugfs = debugfs_path();
	struct sbx_err e = {0};

	if (debugfs) {
		const char *const argv[] = {debugfs, "-w", "-R", "rmdir lost+found", image, NULL};

		(void)run_tool(argv, &e);
	}
}

/* The directories every layout starts with (lib/run/run_layers.c). */
static const char *const layout_dirs[] = {"upper", "work", "overlays"};

/* DIR and the layout's directories in it (mke2fs -d copies them), or gone. */
static int layout_make(const char *dir, bool make)
{
	for (size_t i = 0; i < SBX_ARRAY_SIZE(layout_dirs); i++) {
		_cleanup_free_ char *d = sbx_xasprintf("%s/%s", dir, layout_dirs[i]);

		if (make && i == 0 && mkdir(dir, 0700) < 0)
			return -errno;
		if (make ? mkdir(d, 0700) < 0 : rmdir(d) < 0 && errno != ENOENT)
			return -errno;
	}
	return make || rmdir(dir) == 0 || errno == ENOENT ? 0 : -errno;
}

/*
 * mke2fs on IMAGE, with the layout's top directories made by mke2fs itself:
 * it puts them next to the root, in its group, where the kernel would
 * spread each to a group of its own (reading that group's bitmaps through
 * the loop device at the run's first mkdir there).
 */
static int make_fs(const char *image, uint64_t inodes, struct sbx_err *err)
{
	_cleanup_free_ char *layout = sbx_xasprintf("%s.layout", image);
	int r;

	(void)layout_make(layout, false);
	r = layout_make(layout, true);
	if (r < 0) {
		(void)layout_make(layout, false);
		return sbx_err_set(err, -r, "cannot make '%s'", layout);
	}
	r = make_fs_in(image, inodes, layout, err);
	(void)layout_make(layout, false);
	return r;
}

/* A free loop device bound to fd, detaching at its last close or unmount
 * (read-only as a loop flag, which goes with the binding: BLKROSET would
 * stay on the device for its next user). */
static int loop_attach(int fd, bool ro, char *dev, size_t len, struct sbx_err *err)
{
	_cleanup_close_ int ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	struct loop_config lc = {.fd = (uint32_t)fd, .block_size = 4096};

	if (ctl < 0)
		return sbx_err_set(err, errno, "cannot open /dev/loop-control");
	lc.info.lo_flags = LO_FLAGS_AUTOCLEAR | (ro ? LO_FLAGS_READ_ONLY : 0);
	for (int tries = 0; tries < 16; tries++) {
		int n = ioctl(ctl, LOOP_CTL_GET_FREE), l;

		if (n < 0)
			return sbx_err_set(err, errno, "no free loop device");
		snprintf(dev, len, "/dev/loop%d", n);
		l = open(dev, O_RDWR | O_CLOEXEC);
		if (l < 0)
			return sbx_err_set(err, errno, "cannot open '%s'", dev);
		if (ioctl(l, LOOP_CONFIGURE, &lc) == 0)
			return l;
		close(l);
		if (errno != EBUSY) /* else another process took it first */
			return sbx_err_set(err, errno, "cannot attach a loop device");
	}
	return sbx_err_set(err, EBUSY, "cannot attach a loop device: all were taken");
}

/* Copy the data of sparse src (size bytes) into dst, holes left holes. */
static int copy_sparse(int src, int dst, off_t size)
{
	off_t pos = 0;

	while (pos < size) {
		off_t d = lseek(src, pos, SEEK_DATA), h, in, out;

		if (d < 0)
			return errno == ENXIO ? 0 : -errno;
		h = lseek(src, d, SEEK_HOLE);
		if (h < 0)
			return -errno;
		in = out = d;
		while (in < h) {
			ssize_t n = copy_file_range(src, &in, dst, &out, (size_t)(h - in), 0);

			if (n <= 0)
				return n < 0 ? -errno : -EIO;
		}
		pos = h;
	}
	return 0;
}

/* The name of this layout's images: another (an older sbx's) is stale. */
#define TEMPLATE_PREFIX "ext4-4k-il-"

static char *template_path(const char *templates, const struct sbx_disk_cap *cap)
{
	return sbx_xasprintf("%s/" TEMPLATE_PREFIX "%llu-%llu.img", templates,
			     (unsigned long long)cap->size, (unsigned long long)cap->inodes);
}

static char *ready_path(const char *templates, const struct sbx_disk_cap *cap, int slot)
{
	return sbx_xasprintf("%s/" TEMPLATE_PREFIX "%llu-%llu.ready-%d.img", templates,
			     (unsigned long long)cap->size, (unsigned long long)cap->inodes, slot);
}

/* A file of the templates directory sbx itself wrote: regular, this user's,
 * no one else's to read, of the cap's size. */
static bool own_image(int fd, const struct sbx_disk_cap *cap)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
	       st.st_nlink == 1 && !(st.st_mode & 077) && (uint64_t)st.st_size == cap->size;
}

/* A temporary file in the templates directory, flock()ed while it is
 * written (so that sweep_tmp knows a killed writer's from a live one's). */
static int tmp_create(const char *tmp)
{
	int t = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (t >= 0 && flock(t, LOCK_EX | LOCK_NB) < 0) {
		(void)unlink(tmp);
		sbx_closep(&t);
	}
	return t;
}

/* The temporary files that killed writers left (nobody holds their lock),
 * and the images of another layout (an older sbx's: no run takes them). */
static void sweep_tmp(const char *templates)
{
	DIR *d = sbx_opendir_at(AT_FDCWD, templates);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		int f;

		if (!strncmp(de->d_name, "ext4-", 5) &&
		    strncmp(de->d_name, TEMPLATE_PREFIX, strlen(TEMPLATE_PREFIX))) {
			(void)unlinkat(dirfd(d), de->d_name, 0);
			continue;
		}
		if (strncmp(de->d_name, ".tmp-", 5))
			continue;
		f = openat(dirfd(d), de->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (f >= 0 && flock(f, LOCK_EX | LOCK_NB) == 0)
			(void)unlinkat(dirfd(d), de->d_name, 0);
		if (f >= 0)
			close(f);
	}
	closedir(d);
}

/*
 * What the mount and the layer's first directories read (the superblock,
 * the group descriptors, the bitmaps, the root's inode table block and
 * directory blocks: all the data a fresh image has, ~76 KiB in 4
 * pieces), read ahead on the loop device in as many requests as it has
 * pieces, while the mount waits for its first.  Else each is a read of its
 * own through the loop device's worker, one after the other.
 */
static void read_ahead(int loop, int image)
{
	off_t pos = 0;

	for (int i = 0; i < SBX_DISK_READ_AHEAD; i++) {
		off_t d = lseek(image, pos, SEEK_DATA), h;

		if (d < 0 || (h = lseek(image, d, SEEK_HOLE)) < 0)
			return;
		(void)readahead(loop, d, (size_t)(h - d));
		pos = h;
	}
}

/*
 * A ready image: a copy of the template made after an earlier run, off that
 * run's path, its data and its name synced.  It is attached to a loop
 * device where it is (the loop device syncs its backing file, which then
 * has nothing to write: a file renamed into a new directory would have
 * that directory synced, and its parent) and then renamed to IMAGE.  The
 * loop device's fd, or -1 when there is none.
 */
static int attach_ready(const char *image, const char *templates, const struct sbx_disk_cap *cap,
			char *dev, size_t len)
{
	for (int i = 0; i < SBX_DISK_READY; i++) {
		_cleanup_free_ char *r = ready_path(templates, cap, i);
		_cleanup_close_ int fd = open(r, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
		struct sbx_err e = {0};
		int loop;

		/* Another run's while it holds the lock; still under that name
		 * once locked, or another run took it meanwhile. */
		if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0 || !own_image(fd, cap) ||
		    !sbx_fd_is_named(fd, AT_FDCWD, r))
			continue;
		loop = loop_attach(fd, false, dev, len, &e);
		if (loop < 0)
			return -1;
		if (renameat2(AT_FDCWD, r, AT_FDCWD, image, RENAME_NOREPLACE) == 0) {
			read_ahead(loop, fd);
			return loop;
		}
		close(loop);
	}
	return -1;
}

/* Is R a ready copy (for cap), or being taken by a run (locked)? */
static bool ready_ok(const char *r, const struct sbx_disk_cap *cap)
{
	_cleanup_close_ int fd = open(r, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return errno != ENOENT && errno != ELOOP;
	return own_image(fd, cap) || flock(fd, LOCK_EX | LOCK_NB) < 0;
}

void sbx_disk_ready_fill(const char *templates, const struct sbx_disk_cap *cap)
{
	_cleanup_free_ char *tpl = template_path(templates, cap);
	_cleanup_close_ int src = open(tpl, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (src < 0 || !own_image(src, cap))
		return;
	sweep_tmp(templates);
	for (int i = 0; i < SBX_DISK_READY; i++) {
		_cleanup_free_ char *r = ready_path(templates, cap, i);
		_cleanup_free_ char *tmp = NULL;
		_cleanup_close_ int t = -1;

		if (ready_ok(r, cap))
			continue;
		(void)unlink(r); /* anything else by that name: not an image of ours */
		tmp = sbx_xasprintf("%s/.tmp-%d-ready-%d.img", templates, (int)getpid(), i);
		t = tmp_create(tmp);
		if (t < 0)
			return;
		/* synced again once renamed: the name too (attach_ready) */
		if (ftruncate(t, (off_t)cap->size) < 0 ||
		    copy_sparse(src, t, (off_t)cap->size) < 0 || fsync(t) < 0 ||
		    renameat2(AT_FDCWD, tmp, AT_FDCWD, r, RENAME_NOREPLACE) < 0)
			(void)unlink(tmp); /* a full disk, or another run filled it first */
		else
			(void)fsync(t);
	}
}

/*
 * The filesystem of a given size and inode count is made once, as a
 * template (TEMPLATES/ext4-4k-il-SIZE-INODES.img, ~64 KiB of data in a
 * sparse file), and each image is a copy of its data: a run pays a copy of
 * that, not mke2fs.  Without a template directory, or when it cannot be
 * written, mke2fs makes the image itself.
 */
static int fill_image(int fd, const char *image, const struct sbx_disk_cap *cap,
		      const char *templates, struct sbx_err *err)
{
	_cleanup_free_ char *tpl = NULL;
	_cleanup_free_ char *tmp = NULL;
	_cleanup_close_ int t = -1;
	int r;

	if (templates) {
		tpl = template_path(templates, cap);
		t = open(tpl, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (t >= 0 && own_image(t, cap) && copy_sparse(t, fd, (off_t)cap->size) == 0)
			return 0;
		sbx_closep(&t);
	}
	r = make_fs(image, cap->inodes, err);
	if (r < 0 || !templates)
		return r; /* an image of its own each run: no debugfs on its path */
	drop_lost_found(image);
	/* Publish a template for the next runs (best effort: a race with
	 * another run, or a full disk, only means the next one makes its own). */
	tmp = sbx_xasprintf("%s/.tmp-%d.img", templates, (int)getpid());
	if (mkdir(templates, 0700) < 0 && errno != EEXIST)
		return 0;
	t = tmp_create(tmp);
	if (t < 0)
		return 0;
	if (ftruncate(t, (off_t)cap->size) < 0 || copy_sparse(fd, t, (off_t)cap->size) < 0 ||
	    fsync(t) < 0 || rename(tmp, tpl) < 0)
		(void)unlink(tmp);
	return 0;
}

int sbx_disk_loop_mount(const char *image, const char *target, const struct sbx_disk_cap *cap,
			const char *templates, struct sbx_err *err)
{
	_cleanup_close_ int fd = -1;
	_cleanup_close_ int loop = -1;
	char dev[32];
	int r;

	loop = templates ? attach_ready(image, templates, cap, dev, sizeof(dev)) : -1;
	if (loop < 0) {
		fd = open(image, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0)
			return sbx_err_set(err, errno, "cannot create '%s'", image);
		if (ftruncate(fd, (off_t)cap->size) < 0)
			return sbx_err_set(err, errno, "cannot size '%s'", image);
		r = fill_image(fd, image, cap, templates, err);
		if (r < 0)
			return r;
		loop = loop_attach(fd, false, dev, sizeof(dev), err);
		if (loop < 0)
			return loop;
		read_ahead(loop, fd);
	}
	/* noinit_itable: no background zeroing of inode tables, which would
	 * write a quarter GiB of zeros per sandbox into the state filesystem.
	 * nobarrier: no cache flush of the state filesystem's disk at mount and
	 * unmount (each a sync of the backing file): a layer that is thrown
	 * away needs none, and a kept one is synced, file and all, before its
	 * record says kept (sbx_disk_settle). */
	if (mount(dev, target, "ext4", MS_NOSUID | MS_NODEV | MS_NOATIME,
		  "errors=remount-ro,noinit_itable,nobarrier") < 0)
		return sbx_err_set(err, errno, "cannot mount '%s' (%s) on '%s'", image, dev,
				   target);
	return 0;
}

int sbx_disk_settle(const char *layer_dir, int sbfd, struct sbx_err *err)
{
	_cleanup_close_ int l = open(layer_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int f = openat(sbfd, "disk.img", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (l < 0 || syncfs(l) < 0)
		return sbx_err_set(err, errno, "cannot sync the writable layer in '%s'", layer_dir);
	if (f < 0 || fsync(f) < 0)
		return sbx_err_set(err, errno, "cannot sync the writable layer's image of '%s'",
				   layer_dir);
	return 0;
}

/* Is path a mount point (another device than its parent)? */
static bool mounted_at(int dirfd, const char *name)
{
	struct stat a, b;

	return fstatat(dirfd, name, &a, AT_SYMLINK_NOFOLLOW) == 0 && fstat(dirfd, &b) == 0 &&
	       a.st_dev != b.st_dev;
}

/* sbfd was opened in the namespace before: a path walk from it would not
 * see mounts made in this one.  The same fd number, reopened here. */
static int reopen_dir(int sbfd, const char *sbdir, struct sbx_err *err)
{
	int fresh = open(sbdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fresh < 0 || dup3(fresh, sbfd, O_CLOEXEC) < 0) {
		int e = errno;

		if (fresh >= 0)
			close(fresh);
		return sbx_err_set(err, e, "cannot reopen '%s'", sbdir);
	}
	close(fresh);
	return 0;
}

int sbx_disk_private_ns(int sbfd, const char *sbdir, struct sbx_err *err)
{
	if (unshare(CLONE_NEWNS) < 0)
		return sbx_err_set(err, errno, "cannot make a mount namespace for the layers");
	/* Nothing mounted here reaches the host; the host's mounts still come. */
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
		return sbx_err_set(err, errno, "cannot make the layers' mount namespace a slave");
	return reopen_dir(sbfd, sbdir, err);
}

/* A running sandbox: its layers are mounted in its supervisor's mount
 * namespace (the recorded pid, checked by its start time before and after
 * the namespace is opened). */
static int enter_supervisor(int sbfd, const char *sbdir, pid_t pid, uint64_t start,
			    struct sbx_err *err)
{
	_cleanup_close_ int cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int ns = -1;
	char path[64];
	uint64_t now;

	if (sbx_proc_starttime(pid, &now) < 0 || now != start)
		return sbx_err_set(err, ESRCH, "the sandbox's supervisor (pid %d) has ended",
				   (int)pid);
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	ns = open(path, O_RDONLY | O_CLOEXEC);
	/* still the same process once the namespace is open */
	if (ns < 0 || sbx_proc_starttime(pid, &now) < 0 || now != start)
		return sbx_err_set(err, ns < 0 ? errno : ESRCH,
				   "cannot open the mount namespace of the sandbox's supervisor");
	if (setns(ns, CLONE_NEWNS) < 0)
		return sbx_err_set(err, errno,
				   "cannot enter the mount namespace of the sandbox's supervisor");
	/* setns moved the working directory to the namespace's root */
	if (cwd >= 0 && fchdir(cwd) < 0)
		return sbx_err_set(err, errno, "cannot return to the working directory");
	return reopen_dir(sbfd, sbdir, err);
}

int sbx_disk_attach_kept(int sbfd, const char *sbdir, pid_t running, uint64_t running_start,
			 bool writable, struct sbx_err *err)
{
	_cleanup_free_ char *image = sbx_xasprintf("%s/disk.img", sbdir);
	_cleanup_free_ char *target = sbx_xasprintf("%s/disk", sbdir);
	_cleanup_close_ int fd = -1;
	_cleanup_close_ int loop = -1;
	char dev[32];
	struct stat st;

	if (fstatat(sbfd, "disk.img", &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
	    mounted_at(sbfd, "disk"))
		return 0;
	if (geteuid() != 0)
		return sbx_err_set(
		    err, EPERM,
		    "the writable layer of this sandbox is a disk image only root can "
		    "mount: run this as root");
	/* Never a second mount of an image its run has mounted read-write. */
	if (running > 0)
		return enter_supervisor(sbfd, sbdir, running, running_start, err);
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
		return sbx_err_set(err, errno,
				   "cannot make a mount namespace for the sandbox's layer");
	fd = openat(sbfd, "disk.img", (writable ? O_RDWR : O_RDONLY) | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return sbx_err_set(err, errno, "cannot open '%s'", image);
	loop = loop_attach(fd, !writable, dev, sizeof(dev), err);
	if (loop < 0)
		return loop;
	if (mount(dev, target, "ext4",
		  MS_NOSUID | MS_NODEV | MS_NOATIME | (writable ? 0 : MS_RDONLY),
		  "errors=remount-ro,noinit_itable") < 0)
		return sbx_err_set(err, errno, "cannot mount '%s' (%s) on '%s'", image, dev,
				   target);
	return reopen_dir(sbfd, sbdir, err);
}
