/* SPDX-License-Identifier: MIT */
/*
 * lib/util/treecopy.c - sbx_tree_copy(): copy a writable layer a jail built
 * (an overlay upper directory on the in-memory layer of an unprivileged
 * [limits] disk) to the state directory, when the sandbox is kept.
 *
 * The source is hostile but still: the jail has ended, and only the
 * supervisor holds its filesystem.  So:
 * - nothing is followed: symlinks are copied as symlinks, every entry is
 *   opened O_NOFOLLOW beneath the directory being copied;
 * - O(1) file descriptors whatever the depth: only the current source and
 *   destination directories are open; going up is openat("..") checked
 *   against the recorded dev/ino of both;
 * - holes stay holes (SEEK_DATA/SEEK_HOLE), so a sparse terabyte in a
 *   small tmpfs does not become a terabyte on disk;
 * - what an overlay upper holds comes across: directories, files, symlinks,
 *   whiteouts (0/0 character devices, which need no privilege to create),
 *   FIFOs and sockets, modes, times, user.* extended attributes (opaque
 *   directories, user.overlay.*).  Other device nodes cannot be made by a
 *   jail and are skipped; hard links become separate copies.
 * An entry that cannot be copied is counted and the walk goes on; the
 * first failure is returned, naming its path.
 */
#include "util.h"
#include "treecopy.h"

#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#define TC_DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

struct tc_level {
	char *name;	    /* this directory's name in its parent */
	struct stat src_st; /* its identity and metadata */
	dev_t dst_dev;
	ino_t dst_ino;
	struct sbx_strv names; /* its entries */
	size_t next;
};

struct tc {
	struct tc_level *lv;
	size_t n, cap;
	int src, dst; /* the current directories */
	struct sbx_tree_copy_stats *stats;
	struct sbx_err *err;
	int first; /* first failure, -errno */
};

static void tc_fail(struct tc *t, int errnum, const char *name, const char *what)
{
	size_t len = 1;
	char *p;

	t->stats->failed++;
	if (t->first)
		return;
	t->first = -(errnum ? errnum : EIO);
	for (size_t i = 1; i < t->n; i++)
		len += strlen(t->lv[i].name) + 1;
	len += name ? strlen(name) : 0;
	p = sbx_xcalloc(len + 1, 1);
	for (size_t i = 1; i < t->n; i++) {
		strcat(p, t->lv[i].name);
		strcat(p, "/");
	}
	if (name)
		strcat(p, name);
	sbx_err_set(t->err, errnum ? errnum : EIO, "cannot %s '%s'", what, p[0] ? p : ".");
	free(p);
}

static int list_names(int fd, struct sbx_strv *out)
{
	int lfd = openat(fd, ".", TC_DIR_FLAGS);
	DIR *d;
	struct dirent *e;

	if (lfd < 0)
		return -errno;
	d = fdopendir(lfd);
	if (!d) {
		int r = -errno;

		close(lfd);
		return r;
	}
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			sbx_strv_push(out, e->d_name);
	closedir(d);
	return 0;
}

/* user.* extended attributes of src onto dst (both regular files or dirs). */
static int copy_xattrs(int src, int dst)
{
	char names[4096], val[4096];
	ssize_t n = flistxattr(src, names, sizeof(names));

	if (n < 0)
		return errno == ENOTSUP ? 0 : -errno;
	for (ssize_t i = 0; i < n; i += (ssize_t)strlen(names + i) + 1) {
		ssize_t v;

		if (strncmp(names + i, "user.", 5) != 0)
			continue;
		v = fgetxattr(src, names + i, val, sizeof(val));
		if (v < 0 || fsetxattr(dst, names + i, val, (size_t)v, 0) < 0)
			return -errno;
	}
	return 0;
}

/*
 * The mode bits dst (fd, or dirfd/name) takes, once owned as in st: the
 * source's owner where this process may set it (root, or the jail's root
 * over the jail's ids); else it stays the copier's, and a copier that is
 * root drops setuid and setgid, so that nothing a jail made becomes a
 * setuid-root file of the host's.
 */
static mode_t take_owner(int fd, int dirfd, const char *name, const struct stat *st)
{
	int r = fd >= 0 ? fchown(fd, st->st_uid, st->st_gid)
			: fchownat(dirfd, name, st->st_uid, st->st_gid, AT_SYMLINK_NOFOLLOW);

	return r == 0 || geteuid() != 0 ? st->st_mode & 07777 : st->st_mode & 01777;
}

/* The data regions of src into dst, holes left as holes, then the size. */
static int copy_data(int src, int dst, off_t size, uint64_t *bytes)
{
	off_t pos = 0;

	while (pos < size) {
		off_t data = lseek(src, pos, SEEK_DATA), hole;

		if (data < 0 && errno == ENXIO)
			break; /* only a hole is left */
		if (data < 0)
			return -errno;
		hole = lseek(src, data, SEEK_HOLE);
		if (hole < 0)
			return -errno;
		if (lseek(src, data, SEEK_SET) < 0 || lseek(dst, data, SEEK_SET) < 0)
			return -errno;
		for (off_t left = hole - data; left > 0;) {
			char buf[65536];
			ssize_t r =
			    read(src, buf,
				 (size_t)(left < (off_t)sizeof(buf) ? left : (off_t)sizeof(buf)));

			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				return -errno;
			if (r == 0)
				break;
			if (sbx_write_all(dst, buf, (size_t)r) < 0)
				return -errno;
			left -= r;
			*bytes += (uint64_t)r;
		}
		pos = hole;
	}
	return ftruncate(dst, size) < 0 ? -errno : 0;
}

static int copy_file(struct tc *t, const char *name, const struct stat *st)
{
	_cleanup_close_ int in = -1;
	_cleanup_close_ int out = -1;
	int r;

	in = openat(t->src, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	if (in < 0 && errno == EACCES &&
	    fchmodat(t->src, name, (st->st_mode & 07777) | 0400, 0) == 0)
		in = openat(t->src, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	if (in < 0)
		return -errno;
	out = openat(t->dst, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0)
		return -errno;
	r = copy_data(in, out, st->st_size, &t->stats->bytes);
	if (r == 0)
		r = copy_xattrs(in, out);
	if (r == 0 && fchmod(out, take_owner(out, -1, NULL, st)) < 0)
		r = -errno;
	return r;
}

static void set_times(int dirfd, const char *name, const struct stat *st)
{
	const struct timespec ts[2] = {st->st_atim, st->st_mtim};

	(void)utimensat(dirfd, name, ts, AT_SYMLINK_NOFOLLOW);
}

/* Everything but a directory. */
static int copy_leaf(struct tc *t, const char *name, const struct stat *st)
{
	char target[PATH_MAX];
	ssize_t n;

	switch (st->st_mode & S_IFMT) {
	case S_IFREG:
		t->stats->files++;
		return copy_file(t, name, st);
	case S_IFLNK:
		n = readlinkat(t->src, name, target, sizeof(target) - 1);
		if (n < 0)
			return -errno;
		target[n] = '\0';
		if (symlinkat(target, t->dst, name) < 0)
			return -errno;
		(void)take_owner(-1, t->dst, name, st);
		return 0;
	case S_IFCHR:
		if (major(st->st_rdev) != 0 || minor(st->st_rdev) != 0)
			break; /* a jail cannot make one; not a whiteout */
			       /* fallthrough */
	case S_IFIFO:
	case S_IFSOCK:
		if (mknodat(t->dst, name, (st->st_mode & S_IFMT) | (st->st_mode & 0777),
			    st->st_rdev) < 0)
			return -errno;
		return fchmodat(t->dst, name, take_owner(-1, t->dst, name, st), 0) < 0 ? -errno : 0;
	default:
		break;
	}
	t->stats->skipped++;
	return 1;
}

static int push_level(struct tc *t, const char *name, const struct stat *src_st)
{
	struct stat d = {0};
	int r;

	(void)fstat(t->dst, &d); /* on failure, going back up is refused */
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 16;
		t->lv = sbx_xrealloc(t->lv, t->cap * sizeof(*t->lv));
	}
	t->lv[t->n] = (struct tc_level){
	    .name = sbx_xstrdup(name), .src_st = *src_st, .dst_dev = d.st_dev, .dst_ino = d.st_ino};
	r = list_names(t->src, &t->lv[t->n].names);
	t->n++;
	return r;
}

/* Open dir/name as a directory that is exactly the one stat'ed. */
static int open_same(int dir, const char *name, dev_t dev, ino_t ino)
{
	struct stat st;
	int fd = openat(dir, name, TC_DIR_FLAGS);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || st.st_dev != dev || st.st_ino != ino) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/* Leave the current level: its metadata, then both sides one up. */
static int pop_level(struct tc *t)
{
	struct tc_level *l = &t->lv[--t->n];
	int r = 0;

	if (t->n > 0) {
		struct tc_level *up = &t->lv[t->n - 1];
		int s, d;

		/* up first: the child's own mode may forbid its ".." */
		s = open_same(t->src, "..", up->src_st.st_dev, up->src_st.st_ino);
		d = s < 0 ? s : open_same(t->dst, "..", up->dst_dev, up->dst_ino);
		if (s < 0 || d < 0) {
			if (s >= 0)
				close(s);
			r = s < 0 ? s : d;
		} else {
			(void)copy_xattrs(t->src, t->dst);
			(void)fchmod(t->dst, take_owner(t->dst, -1, NULL, &l->src_st));
			close(t->src);
			close(t->dst);
			t->src = s;
			t->dst = d;
			set_times(t->dst, l->name, &l->src_st);
		}
	}
	free(l->name);
	sbx_strv_free(&l->names);
	return r;
}

/* Enter name (a directory in the source): make it, open both sides. */
static int enter(struct tc *t, const char *name, const struct stat *st)
{
	struct stat d;
	int s, dd, r;

	if (mkdirat(t->dst, name, 0700) < 0 &&
	    !(errno == EEXIST && fstatat(t->dst, name, &d, AT_SYMLINK_NOFOLLOW) == 0 &&
	      S_ISDIR(d.st_mode)))
		return -errno;
	s = open_same(t->src, name, st->st_dev, st->st_ino);
	if (s == -EACCES && fchmodat(t->src, name, (st->st_mode & 07777) | 0500, 0) == 0)
		s = open_same(t->src, name, st->st_dev, st->st_ino);
	if (s < 0)
		return s;
	dd = openat(t->dst, name, TC_DIR_FLAGS);
	if (dd < 0) {
		r = -errno;
		close(s);
		return r;
	}
	close(t->src);
	close(t->dst);
	t->src = s;
	t->dst = dd;
	return push_level(t, name, st);
}

int sbx_tree_copy(int src_dirfd, int dst_dirfd, struct sbx_tree_copy_stats *stats,
		  struct sbx_err *err)
{
	struct tc t = {.src = -1, .dst = -1, .stats = stats, .err = err};
	struct stat top;
	int r;

	memset(stats, 0, sizeof(*stats));
	t.src = fcntl(src_dirfd, F_DUPFD_CLOEXEC, 3);
	t.dst = fcntl(dst_dirfd, F_DUPFD_CLOEXEC, 3);
	if (t.src < 0 || t.dst < 0 || fstat(t.src, &top) < 0) {
		r = sbx_err_set(err, errno, "cannot open the layer to copy");
		goto out;
	}
	r = push_level(&t, ".", &top);
	if (r < 0) {
		tc_fail(&t, -r, NULL, "list");
		r = t.first;
		goto out;
	}
	while (t.n > 0) {
		struct tc_level *l = &t.lv[t.n - 1];
		const char *name;
		struct stat st;

		if (l->next >= l->names.n) {
			if (t.n == 1)
				break;
			r = pop_level(&t);
			if (r < 0) {
				/* the tree moved under us: nothing more is safe */
				tc_fail(&t, -r, NULL, "return to the parent of");
				break;
			}
			continue;
		}
		name = l->names.v[l->next++];
		if (fstatat(t.src, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			tc_fail(&t, errno, name, "read");
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			stats->dirs++;
			r = enter(&t, name, &st);
			if (r < 0)
				tc_fail(&t, -r, name, "copy the directory");
			continue;
		}
		r = copy_leaf(&t, name, &st);
		if (r < 0)
			tc_fail(&t, -r, name, "copy");
		else if (r == 0)
			set_times(t.dst, name, &st);
	}
	(void)copy_xattrs(t.src, t.dst);
	r = t.first;
out:
	while (t.n > 0) {
		t.n--;
		free(t.lv[t.n].name);
		sbx_strv_free(&t.lv[t.n].names);
	}
	free(t.lv);
	if (t.src >= 0)
		close(t.src);
	if (t.dst >= 0)
		close(t.dst);
	return r;
}
