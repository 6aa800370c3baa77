/* SPDX-License-Identifier: MIT */
/*
 * lib/image/image_unpack.c - the unpacker behind lib/image/image.c, built for hostile
 * tarballs (README.md "Security": the threat model).
 *
 * libarchive only parses and decompresses; every file is written here,
 * relative to the destination directory fd, never through a host path:
 *
 * - absolute paths and any ".." component are refused: the entry is skipped
 *   with a warning (opts->warn) and counted in stats->skipped, the rest of
 *   the archive is unpacked;
 * - parents are resolved with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS
 *   | RESOLVE_NO_XDEV), missing ones created one component at a time the
 *   same way, so nothing is ever created or modified through a symlink,
 *   whether it was there before or came earlier in the archive (such
 *   entries are skipped with a warning);
 * - files are created with O_CREAT|O_EXCL|O_NOFOLLOW; a duplicate entry
 *   replaces the earlier one by unlinkat() and create, never by opening it;
 * - symlinks are created as symlinks, whatever they point at: they are
 *   never followed here, and the jail resolves them inside its own root;
 * - hardlinks only to regular files inside the image (target path cleaned
 *   and resolved like any other; linkat() without AT_SYMLINK_FOLLOW);
 * - device nodes, fifos and sockets are skipped with a warning;
 * - setuid and setgid bits are cleared (with a warning), sticky kept on
 *   directories; xattrs, ACLs and file capabilities are not restored;
 * - a cap on total unpacked bytes (declared sizes, checked before any data
 *   is inflated, and the bytes actually produced) and on the entry count
 *   stops decompression bombs with an error;
 * - on any error the destination directory is emptied again.
 *
 * Only the tar family is read (v7, ustar, pax, gnu, docker export), with
 * the filters libarchive implements itself: the smallest parser surface a
 * rootfs needs.  Never mtree, whose "contents=" keyword reads host files;
 * not cpio, whose reader allocates a header's claimed name size (4 GiB,
 * found by tests/fuzz/fuzz_image.c), nor zip.
 *
 * Directories are created 0700 and get their mode, owner and times at the
 * end, deepest first, so a read-only directory does not block its children.
 * The SHA-256 of the archive bytes is computed in the same read pass.
 */
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/limits.h> /* PATH_MAX (lib/limits/limits.h shadows <limits.h>) */
#include <linux/openat2.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "fault.h"
#include "image_int.h"
#include "rmtree.h"

#define DEFAULT_MAX_BYTES   (16ULL << 30)
#define DEFAULT_MAX_ENTRIES 1000000ULL
#define FATAL		    (-(1 << 30)) /* err already filled */

struct fixup {
	char *path; /* cleaned, relative; "" is the root */
	mode_t mode;
	uid_t uid;
	gid_t gid;
	bool has_times;
	struct timespec times[2];
	size_t depth, seq;
};

struct unpack {
	struct archive *a;
	int root;
	const struct sbx_image_opts *o;
	struct sbx_image_stats *st;
	struct sbx_err *err;
	struct sbx_err local_err;
	uint64_t max_bytes, max_entries;
	struct sbx_image_src src;
	/* Last parent directory resolved (pdir NULL: none). */
	char *pdir;
	int pdir_fd;
	/* Directories to fix up at the end. */
	struct fixup *fix;
	size_t nfix, capfix;
	/* Current entry. */
	const char *raw;
	uint64_t charged;
};

static void uwarn(struct unpack *u, const char *what)
{
	if (u->o && u->o->warn)
		u->o->warn(u->raw, what, u->o->cb_data);
}

static int skip(struct unpack *u, const char *what)
{
	u->st->skipped++;
	uwarn(u, what);
	return 0;
}

/*
 * "./a//b/" -> "a/b".  0 on success, 1 for the root itself, -EPERM for an
 * absolute path, -EINVAL for a ".." component, -ENAMETOOLONG.
 */
static int clean_path(const char *in, char *out, size_t size)
{
	size_t o = 0;

	if (in[0] == '/')
		return -EPERM;
	for (const char *p = in; *p;) {
		const char *s = p;
		size_t n;

		while (*p && *p != '/')
			p++;
		n = (size_t)(p - s);
		while (*p == '/')
			p++;
		if (n == 0 || (n == 1 && s[0] == '.'))
			continue;
		if (n == 2 && s[0] == '.' && s[1] == '.')
			return -EINVAL;
		if (o + n + 2 > size)
			return -ENAMETOOLONG;
		if (o)
			out[o++] = '/';
		memcpy(out + o, s, n);
		o += n;
	}
	out[o] = '\0';
	return o ? 0 : 1;
}

/* Split a cleaned path in place into its parent ("" for the root) and name. */
static const char *split(char *path, const char **dir)
{
	char *slash = strrchr(path, '/');

	if (!slash) {
		*dir = "";
		return path;
	}
	*slash = '\0';
	*dir = path;
	return slash + 1;
}

static void unsplit(char *path, const char *name)
{
	if (name != path)
		path[strlen(path)] = '/';
}

/*
 * Without openat2 (kernel < 5.6, valgrind): one component at a time with
 * O_NOFOLLOW, each checked to be a directory on the same filesystem.
 */
static int open_walk(int dirfd, const char *path, int flags)
{
	_cleanup_free_ char *copy = sbx_xstrdup(path);
	struct stat top, sb;
	int cur = dirfd;
	char *save = NULL;

	if (fstat(dirfd, &top) < 0)
		return -errno;
	for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		bool last = !save || !*save;
		int fd =
		    openat(cur, c, (last ? flags : O_PATH) | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;

		if (cur != dirfd)
			close(cur);
		if (fd < 0)
			return -e;
		if (fstat(fd, &sb) < 0 || !S_ISDIR(sb.st_mode) || sb.st_dev != top.st_dev) {
			e = S_ISLNK(sb.st_mode) ? ELOOP : S_ISDIR(sb.st_mode) ? EXDEV : ENOTDIR;
			close(fd);
			return -e;
		}
		if (last)
			return fd;
		cur = fd;
	}
	return -EINVAL;
}

/* Open path below dirfd without following any symlink or leaving it. */
static int open_beneath(int dirfd, const char *path, int flags)
{
	static _Atomic bool no_openat2;
	struct open_how how = {
	    .flags = (uint64_t)(flags | O_CLOEXEC | O_DIRECTORY),
	    .resolve =
		RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
	};
	long fd;

	if (!no_openat2) {
		fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
		if (fd >= 0 || errno != ENOSYS)
			return fd < 0 ? -errno : (int)fd;
		no_openat2 = true;
	}
	return open_walk(dirfd, path, flags);
}

/* Create the missing directories of dir (0755, like tar), one at a time. */
static int make_parents(struct unpack *u, char *dir)
{
	int cur = u->root;
	char *p = dir;

	for (;;) {
		char *slash = strchr(p, '/');
		int fd;

		if (slash)
			*slash = '\0';
		fd = open_beneath(cur, p, O_PATH);
		if (fd == -ENOENT) {
			if (mkdirat(cur, p, 0755) < 0 && errno != EEXIST)
				fd = -errno;
			else
				fd = open_beneath(cur, p, O_PATH);
		}
		if (cur != u->root)
			close(cur);
		if (slash)
			*slash = '/';
		if (fd < 0 || !slash)
			return fd;
		cur = fd;
		p = slash + 1;
	}
}

/* Forget the cached parent (its directory may be gone); keep the fd open. */
static void forget_parent(struct unpack *u)
{
	free(u->pdir);
	u->pdir = NULL;
}

/* The parent directory of an entry, created if missing; cached. */
static int get_parent(struct unpack *u, char *dir, int *out)
{
	int fd;

	if (!*dir) {
		*out = u->root;
		return 0;
	}
	if (u->pdir && strcmp(u->pdir, dir) == 0) {
		*out = u->pdir_fd;
		return 0;
	}
	fd = open_beneath(u->root, dir, O_PATH);
	if (fd == -ENOENT)
		fd = make_parents(u, dir);
	if (fd < 0)
		return fd;
	forget_parent(u);
	if (u->pdir_fd >= 0)
		close(u->pdir_fd);
	u->pdir = sbx_xstrdup(dir);
	u->pdir_fd = fd;
	*out = fd;
	return 0;
}

/* Remove what is at pfd/name (a duplicate entry), never following it. */
static int remove_existing(struct unpack *u, int pfd, const char *name)
{
	if (unlinkat(pfd, name, 0) == 0)
		return 0;
	if (errno != EISDIR)
		return -errno;
	if (unlinkat(pfd, name, AT_REMOVEDIR) < 0)
		return -errno;
	forget_parent(u);
	return 0;
}

static int charge(struct unpack *u, uint64_t n)
{
	if (n > u->max_bytes - u->st->bytes)
		return sbx_err_set(u->err, EFBIG,
				   "image is larger than the limit of %llu MiB at entry '%s' "
				   "(raise [limits] image-size)",
				   (unsigned long long)(u->max_bytes >> 20), u->raw),
		       FATAL;
	u->st->bytes += n;
	return 0;
}

static int archive_fail(struct unpack *u, const char *what)
{
	const char *s = archive_error_string(u->a);
	int e = archive_errno(u->a);
	char msg[512];

	snprintf(msg, sizeof(msg), "%s", s ? s : "unknown error");
	if (msg[0] >= 'A' && msg[0] <= 'Z' && !(msg[1] >= 'A' && msg[1] <= 'Z'))
		msg[0] = (char)(msg[0] - 'A' + 'a');
	/* libarchive's format errors (EILSEQ, -1) read badly as errno text. */
	sbx_err_set(u->err, e > 0 && e != EILSEQ ? e : 0, "%s: %s", what, msg);
	return FATAL;
}

static mode_t entry_mode(struct unpack *u, struct archive_entry *e, bool dir)
{
	mode_t m = archive_entry_perm(e) & 07777;

	if (m & (S_ISUID | S_ISGID)) {
		u->st->cleared++;
		uwarn(u, "setuid/setgid bits cleared");
	}
	return m & (dir ? 01777 : 0777);
}

static bool entry_times(struct archive_entry *e, struct timespec ts[2])
{
	long ns;

	if (!archive_entry_mtime_is_set(e))
		return false;
	ns = archive_entry_mtime_nsec(e);
	ts[1].tv_sec = archive_entry_mtime(e);
	ts[1].tv_nsec = ns >= 0 && ns < 1000000000L ? ns : 0;
	ts[0] = ts[1];
	return true;
}

static int set_owner(struct unpack *u, int fd, const char *name, struct archive_entry *e)
{
	int r;

	if (!u->o->preserve_owner)
		return 0;
	if (name)
		r = fchownat(fd, name, (uid_t)archive_entry_uid(e), (gid_t)archive_entry_gid(e),
			     AT_SYMLINK_NOFOLLOW);
	else
		r = fchown(fd, (uid_t)archive_entry_uid(e), (gid_t)archive_entry_gid(e));
	if (r < 0)
		return sbx_err_set(u->err, errno, "cannot set the owner of '%s'", u->raw), FATAL;
	return 0;
}

static int write_data(struct unpack *u, int fd, struct archive_entry *e)
{
	int64_t declared = archive_entry_size_is_set(e) ? archive_entry_size(e) : 0;
	uint64_t end = 0;

	for (;;) {
		const void *buf;
		size_t len;
		la_int64_t off;
		int r = archive_read_data_block(u->a, &buf, &len, &off);

		if (r == ARCHIVE_EOF)
			break;
		if (r < ARCHIVE_WARN)
			return archive_fail(u, "cannot read archive data");
		if (off < 0 || (uint64_t)off > UINT64_MAX - len)
			return sbx_err_set(u->err, EINVAL, "bad data offset in '%s'", u->raw),
			       FATAL;
		if ((uint64_t)off + len > u->charged) {
			r = charge(u, (uint64_t)off + len - u->charged);
			if (r < 0)
				return r;
			u->charged = (uint64_t)off + len;
		}
		for (const char *p = buf; len;) {
			ssize_t n = pwrite(fd, p, len, off);

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return sbx_err_set(u->err, errno, "cannot write '%s'", u->raw),
				       FATAL;
			p += n;
			len -= (size_t)n;
			off += n;
		}
		if ((uint64_t)off > end)
			end = (uint64_t)off;
	}
	/* A sparse file ending in a hole. */
	if (declared > 0 && (uint64_t)declared > end && ftruncate(fd, declared) < 0)
		return sbx_err_set(u->err, errno, "cannot write '%s'", u->raw), FATAL;
	return 0;
}

static int do_file(struct unpack *u, struct archive_entry *e, char *path)
{
	const char *dir, *name = split(path, &dir);
	mode_t mode = entry_mode(u, e, false);
	_cleanup_close_ int fd = -1;
	struct timespec ts[2];
	int pfd, r;
	const int fl = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY;

	r = get_parent(u, (char *)dir, &pfd);
	if (r < 0)
		return r;
	fd = openat(pfd, name, fl, mode);
	if (fd < 0 && errno == EEXIST) {
		r = remove_existing(u, pfd, name);
		if (r < 0)
			return r;
		fd = openat(pfd, name, fl, mode);
	}
	if (fd < 0)
		return -errno;
	r = write_data(u, fd, e);
	if (r == 0)
		r = set_owner(u, fd, NULL, e);
	if (r < 0)
		return r;
	/* Always: the umask or a default ACL may have narrowed the mode. */
	if (fchmod(fd, mode) < 0)
		return sbx_err_set(u->err, errno, "cannot set the mode of '%s'", u->raw), FATAL;
	if (entry_times(e, ts))
		(void)futimens(fd, ts); /* best effort: times are cosmetic */
	if (close(steal_fd(&fd)) < 0)
		return sbx_err_set(u->err, errno, "cannot write '%s'", u->raw), FATAL;
	return 0;
}

static void add_fixup(struct unpack *u, const char *path, struct archive_entry *e, mode_t mode)
{
	struct fixup *f;

	if (u->nfix == u->capfix) {
		u->capfix = u->capfix ? u->capfix * 2 : 64;
		u->fix = sbx_xrealloc(u->fix, u->capfix * sizeof(*u->fix));
	}
	f = &u->fix[u->nfix];
	*f = (struct fixup){.path = sbx_xstrdup(path), .mode = mode, .seq = u->nfix};
	for (const char *p = path; *p; p++)
		f->depth += *p == '/';
	f->depth += *path != '\0';
	if (e) {
		f->uid = (uid_t)archive_entry_uid(e);
		f->gid = (gid_t)archive_entry_gid(e);
		f->has_times = entry_times(e, f->times);
	}
	u->nfix++;
}

static int do_dir(struct unpack *u, struct archive_entry *e, char *path)
{
	const char *dir, *name = split(path, &dir);
	mode_t mode = entry_mode(u, e, true);
	struct stat sb;
	int pfd, r;

	r = get_parent(u, (char *)dir, &pfd);
	if (r < 0)
		return r;
	if (mkdirat(pfd, name, 0700) < 0) {
		if (errno != EEXIST)
			return -errno;
		if (fstatat(pfd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
			return -errno;
		if (!S_ISDIR(sb.st_mode)) {
			r = remove_existing(u, pfd, name);
			if (r < 0)
				return r;
			if (mkdirat(pfd, name, 0700) < 0)
				return -errno;
		}
	}
	unsplit(path, name);
	add_fixup(u, path, e, mode);
	return 0;
}

static int do_symlink(struct unpack *u, struct archive_entry *e, char *path)
{
	const char *target = archive_entry_symlink(e);
	const char *dir, *name;
	struct timespec ts[2];
	int pfd, r;

	if (!target || !*target)
		return skip(u, "symlink without a target skipped");
	name = split(path, &dir);
	r = get_parent(u, (char *)dir, &pfd);
	if (r < 0)
		return r;
	if (symlinkat(target, pfd, name) < 0) {
		if (errno != EEXIST)
			return -errno;
		r = remove_existing(u, pfd, name);
		if (r < 0)
			return r;
		if (symlinkat(target, pfd, name) < 0)
			return -errno;
	}
	r = set_owner(u, pfd, name, e);
	if (r < 0)
		return r;
	if (entry_times(e, ts))
		(void)utimensat(pfd, name, ts, AT_SYMLINK_NOFOLLOW);
	return 0;
}

static int do_hardlink(struct unpack *u, char *path, const char *link)
{
	char tpath[PATH_MAX];
	const char *tdir, *tname, *dir, *name;
	_cleanup_close_ int tpfd = -1;
	struct stat sb;
	int pfd, r;

	r = clean_path(link, tpath, sizeof(tpath));
	if (r == -ENAMETOOLONG)
		return skip(u, "hardlink target path too long: skipped");
	if (r != 0)
		return skip(u, "hardlink to a target outside the image refused");
	if (strcmp(tpath, path) == 0)
		return skip(u, "hardlink to itself skipped");
	tname = split(tpath, &tdir);
	tpfd = *tdir ? open_beneath(u->root, tdir, O_PATH) : open_beneath(u->root, ".", O_PATH);
	if (tpfd < 0)
		return tpfd == -ENOENT ? skip(u, "hardlink target missing: skipped") : tpfd;
	if (fstatat(tpfd, tname, &sb, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? skip(u, "hardlink target missing: skipped") : -errno;
	if (!S_ISREG(sb.st_mode))
		return skip(u, "hardlink to something other than a regular file refused");
	name = split(path, &dir);
	r = get_parent(u, (char *)dir, &pfd);
	if (r < 0)
		return r;
	if (linkat(tpfd, tname, pfd, name, 0) < 0) {
		if (errno != EEXIST)
			return -errno;
		r = remove_existing(u, pfd, name);
		if (r < 0)
			return r;
		if (linkat(tpfd, tname, pfd, name, 0) < 0)
			return -errno;
	}
	return 0;
}

/* Per-entry failures that a hostile or odd archive causes: skip and warn. */
static int entry_result(struct unpack *u, int r)
{
	if (r >= 0)
		return 0;
	if (r == FATAL)
		return -(u->err->errnum ? u->err->errnum : EIO);
	switch (-r) {
	case ELOOP:
	case EXDEV:
	case ENOTDIR:
		return skip(u, "path goes through a symlink or a non-directory: skipped");
	case ENOTEMPTY:
		return skip(u, "would replace a non-empty directory: skipped");
	case ENAMETOOLONG:
		return skip(u, "name too long: skipped");
	case ENOENT:
	case EEXIST:
	case EISDIR:
	case EMLINK:
	case EINVAL:
		return skip(u, strerror(-r));
	default:
		return sbx_err_set(u->err, -r, "cannot unpack '%s'", u->raw);
	}
}

static int do_entry(struct unpack *u, struct archive_entry *e)
{
	char path[PATH_MAX];
	const char *raw = archive_entry_pathname(e);
	const char *link = archive_entry_hardlink(e);
	int r;

	u->raw = raw ? raw : "?";
	u->charged = 0;
	if (archive_entry_size_is_set(e) && archive_entry_size(e) > 0) {
		r = charge(u, (uint64_t)archive_entry_size(e));
		if (r < 0)
			return entry_result(u, r);
		u->charged = (uint64_t)archive_entry_size(e);
	}
	if (!raw)
		return skip(u, "unreadable name: skipped");
	r = clean_path(raw, path, sizeof(path));
	if (r == -EPERM)
		return skip(u, "absolute path refused");
	if (r == -EINVAL)
		return skip(u, "path with a '..' component refused");
	if (r < 0)
		return skip(u, "path too long: skipped");
	if (r == 1) { /* the root itself: keep its times only */
		if (archive_entry_filetype(e) == AE_IFDIR)
			add_fixup(u, "", e, 0755);
		return 0;
	}
	if (link)
		return entry_result(u, do_hardlink(u, path, link));
	switch (archive_entry_filetype(e)) {
	case AE_IFREG:
		return entry_result(u, do_file(u, e, path));
	case AE_IFDIR:
		return entry_result(u, do_dir(u, e, path));
	case AE_IFLNK:
		return entry_result(u, do_symlink(u, e, path));
	case AE_IFCHR:
		return skip(u, "character device skipped");
	case AE_IFBLK:
		return skip(u, "block device skipped");
	case AE_IFIFO:
		return skip(u, "fifo skipped");
	case AE_IFSOCK:
		return skip(u, "socket skipped");
	default:
		return skip(u, "unknown entry type skipped");
	}
}

static int cmp_fixup(const void *pa, const void *pb)
{
	const struct fixup *a = pa, *b = pb;

	if (a->depth != b->depth)
		return a->depth > b->depth ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Modes, owners and times of directories, deepest first. */
static int apply_fixups(struct unpack *u)
{
	bool root_done = false;

	if (u->nfix)
		qsort(u->fix, u->nfix, sizeof(*u->fix), cmp_fixup);
	for (size_t i = 0; i <= u->nfix; i++) {
		struct fixup rootfix = {.path = (char *)"", .mode = 0755};
		struct fixup *f = i < u->nfix ? &u->fix[i] : &rootfix;
		_cleanup_close_ int fd = -1;
		bool is_root = !*f->path;

		if (i == u->nfix && root_done)
			break;
		root_done |= is_root;
		fd = open_beneath(u->root, is_root ? "." : f->path, O_RDONLY);
		if (fd < 0)
			continue; /* replaced by a later non-directory entry */
		if (u->o->preserve_owner && !is_root && fchown(fd, f->uid, f->gid) < 0)
			return sbx_err_set(u->err, errno, "cannot set the owner of '%s'", f->path);
		if (fchmod(fd, is_root ? 0755 : f->mode) < 0)
			return sbx_err_set(u->err, errno, "cannot set the mode of '%s'", f->path);
		if (f->has_times)
			(void)futimens(fd, f->times);
	}
	return 0;
}

/* Empty the destination after a failure. */
static void empty_dir(int root)
{
	int fd = open_beneath(root, ".", O_RDONLY);
	DIR *d;
	struct dirent *de;

	if (fd < 0)
		return;
	(void)fchmod(fd, 0700);
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			(void)sbx_rm_rf_at(dirfd(d), de->d_name);
	closedir(d);
}

static int run(struct unpack *u)
{
	int r;

	for (;;) {
		struct archive_entry *e;

		r = archive_read_next_header(u->a, &e);
		if (r == ARCHIVE_EOF)
			break;
		if (r < ARCHIVE_WARN)
			return archive_fail(u, "cannot read archive");
		if (++u->st->entries > u->max_entries)
			return sbx_err_set(
			    u->err, E2BIG,
			    "image has more than %llu entries (raise [limits] image-entries)",
			    (unsigned long long)u->max_entries);
		r = do_entry(u, e);
		if (r < 0)
			return r;
		sbx_fault_point("during-unpack");
	}
	return apply_fixups(u);
}

static void unpack_init(struct unpack *u, int dest, const struct sbx_image_opts *opts,
			struct sbx_image_stats *st, struct sbx_err *err)
{
	static const struct sbx_image_opts none;

	*u = (struct unpack){
	    .root = dest, .o = opts ? opts : &none, .st = st, .err = err, .pdir_fd = -1};
	if (!err)
		u->err = &u->local_err;
	memset(st, 0, sizeof(*st));
	u->max_bytes = u->o->max_bytes ? u->o->max_bytes : DEFAULT_MAX_BYTES;
	u->max_entries = u->o->max_entries ? u->o->max_entries : DEFAULT_MAX_ENTRIES;
	u->a = archive_read_new();
	if (!u->a)
		abort();
}

static int unpack(struct unpack *u, int fd, const void *mem, size_t len)
{
	uint64_t t0 = sbx_now_ns();
	int r;

	sbx_image_src_init(&u->src, fd, mem, len, u->o);
	if (sbx_image_src_open(&u->src, u->a) != ARCHIVE_OK)
		r = archive_fail(u, "cannot read archive");
	else
		r = run(u);
	if (r == FATAL)
		r = -(u->err->errnum ? u->err->errnum : EIO);
	if (sbx_image_src_finish(&u->src, r == 0, u->st->sha256, u->err) < 0 && r == 0)
		r = -(u->err->errnum ? u->err->errnum : EIO);
	archive_read_free(u->a);
	forget_parent(u);
	if (u->pdir_fd >= 0)
		close(u->pdir_fd);
	for (size_t i = 0; i < u->nfix; i++)
		free(u->fix[i].path);
	free(u->fix);
	if (r < 0)
		empty_dir(u->root);
	/* Hashing overlaps the unpack when a thread decompresses. */
	u->st->hash_ms = (double)u->src.hash_ns / 1e6;
	u->st->unpack_ms = sbx_ms_since(t0) - (u->src.threaded ? 0 : u->st->hash_ms);
	return r;
}

int sbx_image_unpack_fd(int archive_fd, int dest_dirfd, const struct sbx_image_opts *opts,
			struct sbx_image_stats *st, struct sbx_err *err)
{
	struct sbx_image_stats local;
	struct unpack u;

	unpack_init(&u, dest_dirfd, opts, st ? st : &local, err);
	return unpack(&u, archive_fd, NULL, 0);
}

int sbx_image_unpack_mem(const void *buf, size_t len, int dest_dirfd,
			 const struct sbx_image_opts *opts, struct sbx_image_stats *st,
			 struct sbx_err *err)
{
	struct sbx_image_stats local;
	struct unpack u;

	unpack_init(&u, dest_dirfd, opts, st ? st : &local, err);
	return unpack(&u, -1, buf ? buf : "", len);
}
