/* SPDX-License-Identifier: MIT */
/* lib/state/export.c - the change set as a tarball (see export.h). */
#include "export.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "changes.h"
#include "record_text.h"

static const struct {
	const char *suffix;
	const char *filter; /* "none", "gzip", ... */
} suffixes[] = {
    {".tar", "none"},  {".tar.gz", "gzip"},   {".tgz", "gzip"},
    {".tar.xz", "xz"}, {".txz", "xz"},	      {".tar.zst", "zstd"},
    {".tzst", "zstd"}, {".tar.bz2", "bzip2"}, {".tbz2", "bzip2"},
};

static bool ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);

	return a > b && strcmp(s + a - b, suf) == 0;
}

const char *sbx_export_compression(const char *file, struct sbx_err *err)
{
	if (strcmp(file, "-") == 0)
		return "none";
	for (size_t i = 0; i < SBX_ARRAY_SIZE(suffixes); i++)
		if (ends_with(file, suffixes[i].suffix))
			return suffixes[i].filter;
	sbx_err_set(err, 0,
		    "cannot tell the format of '%s' (use .tar, .tar.gz, .tgz, .tar.xz, .tar.zst or "
		    ".tar.bz2)",
		    file);
	return NULL;
}

static int set_filter(struct archive *a, const char *f)
{
	if (strcmp(f, "gzip") == 0)
		return archive_write_add_filter_gzip(a);
	if (strcmp(f, "xz") == 0)
		return archive_write_add_filter_xz(a);
	if (strcmp(f, "zstd") == 0)
		return archive_write_add_filter_zstd(a);
	if (strcmp(f, "bzip2") == 0)
		return archive_write_add_filter_bzip2(a);
	return archive_write_add_filter_none(a);
}

struct ctx {
	struct archive *a;
	struct archive_entry *e;
	const struct sbx_export_opts *o;
	struct sbx_export_stats *s;
	struct sbx_err *err;
	FILE *deleted; /* the manifest being built (not oci) */
	char *del_buf;
	size_t del_len;
	char uname[64], gname[64];
	uint64_t max_file, max_total;
};

static void skip(struct ctx *x, const struct sbx_change *c, const char *why)
{
	_cleanup_free_ char *p = sbx_escape_display(c->path);

	sbx_strv_push_take(&x->s->skipped, sbx_xasprintf("%s (%s)", p, why));
}

static void entry_from(struct ctx *x, const char *name, const struct stat *st)
{
	struct archive_entry *e = x->e;
	mode_t mode = st->st_mode;

	archive_entry_clear(e);
	archive_entry_copy_pathname(e, name);
	if (x->o->oci) {
		archive_entry_set_uid(e, st->st_uid);
		archive_entry_set_gid(e, st->st_gid);
	} else {
		/* The caller's, so that it extracts as theirs; and no file of
		 * the jail's becomes set-user-ID on whoever extracts it. */
		archive_entry_set_uid(e, x->o->uid);
		archive_entry_set_gid(e, x->o->gid);
		if (x->uname[0])
			archive_entry_copy_uname(e, x->uname);
		if (x->gname[0])
			archive_entry_copy_gname(e, x->gname);
		if (!S_ISDIR(mode) && (mode & (S_ISUID | S_ISGID))) {
			mode &= ~(mode_t)(S_ISUID | S_ISGID);
			x->s->setid_dropped++;
		}
	}
	archive_entry_set_mode(e, mode);
	archive_entry_set_mtime(e, st->st_mtim.tv_sec, st->st_mtim.tv_nsec);
}

/* A path for the manifest of deletions, NUL-terminated. */
static void note_deleted(struct ctx *x, const char *name)
{
	fwrite(name, 1, strlen(name) + 1, x->deleted);
}

static int write_manifest(struct ctx *x, const struct stat *like)
{
	struct stat st = *like;

	fflush(x->deleted);
	st.st_mode = S_IFREG | 0644;
	entry_from(x, SBX_EXPORT_DELETED, &st);
	archive_entry_set_size(x->e, (la_int64_t)x->del_len);
	if (archive_write_header(x->a, x->e) != ARCHIVE_OK ||
	    (x->del_len && archive_write_data(x->a, x->del_buf, x->del_len) < 0))
		return sbx_err_set(x->err, EIO, "cannot write '%s': %s", SBX_EXPORT_DELETED,
				   archive_error_string(x->a));
	return 0;
}

static int header(struct ctx *x, const char *what)
{
	int r = archive_write_header(x->a, x->e);

	if (r == ARCHIVE_OK || r == ARCHIVE_WARN)
		return 0;
	return sbx_err_set(x->err, archive_errno(x->a) > 0 ? archive_errno(x->a) : EIO,
			   "cannot write the entry for '%s': %s", what, archive_error_string(x->a));
}

/* name with its last component prefixed: "a/b" + ".wh." -> "a/.wh.b". */
static char *whiteout_name(const char *rel, const char *prefix)
{
	const char *slash = strrchr(rel, '/');

	if (!slash)
		return sbx_xasprintf("%s%s", prefix, rel);
	return sbx_xasprintf("%.*s/%s%s", (int)(slash - rel), rel, prefix, slash + 1);
}

static int write_marker(struct ctx *x, const char *name, const struct stat *st)
{
	struct stat ws = *st;

	ws.st_mode = S_IFREG | 0644;
	entry_from(x, name, &ws);
	archive_entry_set_size(x->e, 0);
	return header(x, name);
}

/* The data regions of fd (SEEK_DATA/SEEK_HOLE), at most max of them; a
 * file system without hole reporting gives one region, the whole file. */
struct region {
	off_t off, len;
};

static size_t data_regions(int fd, off_t size, struct region *out, size_t max, uint64_t *data)
{
	size_t n = 0;
	off_t pos = 0;

	*data = 0;
	while (pos < size) {
		off_t d = lseek(fd, pos, SEEK_DATA), h;

		if (d < 0 && errno == ENXIO)
			break; /* a hole to the end */
		if (d < 0 || (h = lseek(fd, d, SEEK_HOLE)) < 0 || n == max) {
			/* no hole reporting, or too fragmented: the rest as data */
			if (n == max && n > 0)
				n--, pos = out[n].off, *data -= (uint64_t)out[n].len;
			out[n].off = pos;
			out[n].len = size - pos;
			*data += (uint64_t)(size - pos);
			return n + 1;
		}
		if (h > size)
			h = size;
		out[n].off = d;
		out[n].len = h - d;
		*data += (uint64_t)(h - d);
		n++;
		pos = h;
	}
	return n;
}

/* The jail chose the name: escaped.  -EFBIG. */
static int cap_hit(struct ctx *x, const struct sbx_change *c, uint64_t data, bool total)
{
	_cleanup_free_ char *p = sbx_escape_display(c->path);
	char a[32], b[32];

	sbx_err_set(x->err, 0,
		    "'%s' %s %s of data, over the %s cap of %s (%s SIZE raises it, or "
		    "'unlimited'); nothing was exported",
		    p, total ? "brings the export to" : "holds",
		    sbx_size_text((double)data, a, sizeof(a)), total ? "total" : "per-file",
		    sbx_size_text((double)(total ? x->max_total : x->max_file), b, sizeof(b)),
		    total ? "--max-total" : "--max-file");
	return -EFBIG;
}

/* Write len bytes from fd at off into the entry (zeros past a shrunk end). */
static int copy_range(struct ctx *x, int fd, off_t off, off_t len, const char *name)
{
	char buf[65536];

	while (len > 0) {
		size_t want = len < (off_t)sizeof(buf) ? (size_t)len : sizeof(buf);
		ssize_t n = pread(fd, buf, want, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) { /* shrank or failed: pad, the header promised the size */
			memset(buf, 0, want);
			n = (ssize_t)want;
		}
		if (archive_write_data(x->a, buf, (size_t)n) < 0)
			return sbx_err_set(x->err, EIO, "cannot write '%s': %s", name,
					   archive_error_string(x->a));
		off += n;
		len -= n;
	}
	return 0;
}

/* A hole: zeros the pax writer drops (a sparse entry stores no body for
 * them), never read from the file. */
static int skip_hole(struct ctx *x, off_t len, const char *name)
{
	static const char zeros[1 << 20];

	while (len > 0) {
		size_t n = len < (off_t)sizeof(zeros) ? (size_t)len : sizeof(zeros);

		if (archive_write_data(x->a, zeros, n) < 0)
			return sbx_err_set(x->err, EIO, "cannot write '%s': %s", name,
					   archive_error_string(x->a));
		len -= (off_t)n;
	}
	return 0;
}

#define MAX_REGIONS 4096

static int write_file(struct ctx *x, const struct sbx_change *c, const char *name)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ struct region *rg = NULL;
	struct stat st;
	uint64_t data;
	size_t n;
	off_t pos = 0;
	bool sparse;
	int r = 0;

	fd = openat(c->dirfd, c->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_ino != c->st->st_ino ||
	    st.st_dev != c->st->st_dev) {
		skip(x, c, "cannot be read safely");
		return 0;
	}
	rg = sbx_xcalloc(MAX_REGIONS, sizeof(*rg));
	n = data_regions(fd, st.st_size, rg, MAX_REGIONS, &data);
	if (data > x->max_file)
		return cap_hit(x, c, data, false);
	if (data > x->max_total - x->s->bytes)
		return cap_hit(x, c, x->s->bytes + data, true);
	sparse = !(n == 1 && rg[0].off == 0 && rg[0].len == st.st_size) && st.st_size > 0;
	entry_from(x, name, &st);
	archive_entry_set_size(x->e, st.st_size);
	for (size_t i = 0; sparse && i < n; i++)
		archive_entry_sparse_add_entry(x->e, rg[i].off, rg[i].len);
	if (header(x, name) < 0)
		return -EIO;
	for (size_t i = 0; r == 0 && i < n; i++) {
		r = skip_hole(x, rg[i].off - pos, name);
		if (r == 0)
			r = copy_range(x, fd, rg[i].off, rg[i].len, name);
		pos = rg[i].off + rg[i].len;
	}
	if (r == 0)
		r = skip_hole(x, st.st_size - pos, name);
	if (r < 0)
		return r;
	x->s->files++;
	x->s->bytes += data;
	if (sparse) {
		x->s->sparse++;
		x->s->sparse_apparent += (uint64_t)st.st_size;
	}
	return 0;
}

static int write_symlink(struct ctx *x, const struct sbx_change *c, const char *name)
{
	char target[4097];
	ssize_t n = readlinkat(c->dirfd, c->name, target, sizeof(target) - 1);

	if (n < 0) {
		skip(x, c, "unreadable symlink");
		return 0;
	}
	target[n] = '\0';
	entry_from(x, name, c->st);
	archive_entry_copy_symlink(x->e, target);
	archive_entry_set_size(x->e, 0);
	x->s->symlinks++;
	return header(x, name);
}

static int export_one(const struct sbx_change *c, void *data)
{
	struct ctx *x = data;
	const char *name = c->path[0] == '/' ? c->path + 1 : c->path;
	mode_t m = c->st->st_mode;
	int r;

	if (!*name)
		return 0;
	if (c->kind == 'D') {
		_cleanup_free_ char *wh = whiteout_name(name, ".wh.");

		x->s->whiteouts++;
		if (!x->o->oci) {
			note_deleted(x, name);
			return 0;
		}
		return write_marker(x, wh, c->st);
	}
	if (S_ISDIR(m)) {
		entry_from(x, name, c->st);
		archive_entry_set_size(x->e, 0);
		r = header(x, name);
		x->s->dirs++;
		if (r == 0 && c->opaque) {
			_cleanup_free_ char *opq = sbx_xasprintf("%s/.wh..wh..opq", name);

			x->s->opaque++;
			if (!x->o->oci)
				note_deleted(x, name); /* emptied first; its new contents follow */
			else
				r = write_marker(x, opq, c->st);
		}
		return r;
	}
	if (S_ISREG(m))
		return write_file(x, c, name);
	if (S_ISLNK(m))
		return write_symlink(x, c, name);
	skip(x, c, S_ISFIFO(m) ? "fifo" : S_ISSOCK(m) ? "socket" : "device node");
	return 0;
}

static int open_output(const char *file, struct sbx_err *err)
{
	int fd;

	if (strcmp(file, "-") == 0) {
		if (isatty(STDOUT_FILENO))
			return sbx_err_set(err, ENOTTY,
					   "refusing to write a tarball to a terminal");
		return fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	}
	fd = sbx_open_users_file(file, O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return sbx_err_set(err, -fd, "cannot create '%s'", file);
	return fd;
}

int sbx_export_write(const struct sbx_sandbox *sb, const char *file,
		     const struct sbx_export_opts *opts, struct sbx_export_stats *stats,
		     struct sbx_err *err)
{
	const char *filter = sbx_export_compression(file, err);
	struct ctx x = {.o = opts,
			.s = stats,
			.err = err,
			.max_file = opts->max_file ? opts->max_file : SBX_EXPORT_MAX_FILE,
			.max_total = opts->max_total ? opts->max_total : SBX_EXPORT_MAX_TOTAL};
	_cleanup_close_ int fd = -1;
	struct passwd *pw;
	struct group *gr;
	struct stat now = {0};
	int r;

	memset(stats, 0, sizeof(*stats));
	if (!filter)
		return -EINVAL;
	if (!opts->oci) {
		x.deleted = open_memstream(&x.del_buf, &x.del_len);
		if (!x.deleted)
			return sbx_err_set(err, errno, "cannot list the deletions");
		if ((pw = sbx_user(opts->uid)))
			snprintf(x.uname, sizeof(x.uname), "%s", pw->pw_name);
		if ((gr = sbx_group(opts->gid)))
			snprintf(x.gname, sizeof(x.gname), "%s", gr->gr_name);
	}
	fd = open_output(file, err);
	if (fd < 0)
		return fd;
	x.a = archive_write_new();
	x.e = archive_entry_new();
	if (archive_write_set_format_pax_restricted(x.a) != ARCHIVE_OK ||
	    set_filter(x.a, filter) != ARCHIVE_OK || archive_write_open_fd(x.a, fd) != ARCHIVE_OK) {
		r = sbx_err_set(err, EIO, "cannot write '%s': %s", file, archive_error_string(x.a));
		goto out;
	}
	r = sbx_changes_walk_sandbox(sb, export_one, &x, &stats->errors, err);
	if (r >= 0 && x.deleted) {
		clock_gettime(CLOCK_REALTIME, &now.st_mtim);
		r = write_manifest(&x, &now);
	}
	if (archive_write_close(x.a) != ARCHIVE_OK && r >= 0)
		r = sbx_err_set(err, EIO, "cannot finish '%s': %s", file,
				archive_error_string(x.a));
out:
	if (x.deleted)
		fclose(x.deleted);
	free(x.del_buf);
	archive_entry_free(x.e);
	archive_write_free(x.a);
	if (r < 0 && strcmp(file, "-") != 0)
		(void)unlink(file);
	return r;
}
