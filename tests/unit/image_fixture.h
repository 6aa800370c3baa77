/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/image_fixture.h - shared by test_image.c and test_image_cache.c:
 * a scratch BASE/{target,sentinel,cache,tars} per test, a snapshot of
 * everything but the target (to prove an unpack touched nothing else), and
 * tarballs generated with libarchive's writer.  Included once per test
 * program; every helper is static (and may go unused in one of them).
 */
#ifndef SBX_TEST_IMAGE_FIXTURE_H
#define SBX_TEST_IMAGE_FIXTURE_H

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/limits.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "image.h"
#include "util.h"

#pragma GCC diagnostic ignored "-Wunused-function"

/* ---- fixture: BASE/{target,sentinel,cache,tars} ---- */

static char base[PATH_MAX], target[PATH_MAX], sentinel[PATH_MAX], cache[PATH_MAX];
static char *snap_before;
static int nwarn;
static char last_warn[512];

__attribute__((format(printf, 2, 3))) static void pathf(char *out, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out, PATH_MAX, fmt, ap);
	va_end(ap);
}

static void put(const char *path, const char *content)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(content, f);
	fclose(f);
}

static char *slurp(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	char *s = NULL;

	if (fd < 0)
		return NULL;
	if (sbx_read_fd_string(fd, 64 << 20, &s, NULL) < 0)
		s = NULL;
	close(fd);
	return s;
}

/* Everything under dir except "target", one line per entry, sorted. */
static void snap_dir(const char *dir, const char *rel, char **out, size_t *len)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort);

	if (n < 0)
		return;
	for (int i = 0; i < n; i++) {
		char p[PATH_MAX], r[PATH_MAX], lnk[PATH_MAX] = "", *line;
		const char *nm = names[i]->d_name;
		struct stat st;

		if (!strcmp(nm, ".") || !strcmp(nm, "..") || (!*rel && !strcmp(nm, "target"))) {
			free(names[i]);
			continue;
		}
		pathf(p, "%s/%s", dir, nm);
		pathf(r, "%s/%s", rel, nm);
		assert_int_equal(lstat(p, &st), 0);
		if (S_ISLNK(st.st_mode))
			(void)!readlink(p, lnk, sizeof(lnk) - 1);
		line = sbx_xasprintf("%s %o %u:%u n%lu s%lld m%lld.%ld %s\n", r, st.st_mode,
			 st.st_uid, st.st_gid, (unsigned long)st.st_nlink, (long long)st.st_size,
			 (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec, lnk);
		*out = sbx_xrealloc(*out, *len + strlen(line) + 1);
		memcpy(*out + *len, line, strlen(line) + 1);
		*len += strlen(line);
		free(line);
		if (S_ISREG(st.st_mode)) {
			char *c = slurp(p);
			size_t cl = c ? strlen(c) : 0;

			*out = sbx_xrealloc(*out, *len + cl + 2);
			memcpy(*out + *len, c ? c : "", cl);
			(*out)[*len + cl] = '\n';
			(*out)[*len + cl + 1] = '\0';
			*len += cl + 1;
			free(c);
		}
		if (S_ISDIR(st.st_mode))
			snap_dir(p, r, out, len);
		free(names[i]);
	}
	free(names);
}

static char *snapshot(void)
{
	char *s = sbx_xstrdup("");
	size_t len = 0;

	snap_dir(base, "", &s, &len);
	return s;
}

static void on_warn(const char *path, const char *what, void *data)
{
	(void)data;
	nwarn++;
	snprintf(last_warn, sizeof(last_warn), "%s: %s", path, what);
}

static int setup(void **state)
{
	char p[PATH_MAX];
	const char *tmp = getenv("TMPDIR");

	(void)state;
	pathf(base, "%s/sbx-test-image-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(base));
	assert_non_null(realpath(base, p));
	pathf(base, "%s", p);
	pathf(target, "%s/target", base);
	pathf(sentinel, "%s/sentinel", base);
	pathf(cache, "%s/cache", base);
	assert_int_equal(mkdir(target, 0755), 0);
	assert_int_equal(mkdir(sentinel, 0755), 0);
	pathf(p, "%s/secret", sentinel);
	put(p, "SECRET\n");
	pathf(p, "%s/sub", sentinel);
	assert_int_equal(mkdir(p, 0755), 0);
	pathf(p, "%s/tars", base);
	assert_int_equal(mkdir(p, 0755), 0);
	nwarn = 0;
	last_warn[0] = '\0';
	snap_before = NULL;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	/* Read-only directories of the image: make them writable first. */
	char *cmd = sbx_xasprintf("chmod -R u+rwX '%s' && rm -rf '%s'", base, base);

	free(snap_before);
	snap_before = NULL;
	assert_int_equal(system(cmd), 0);
	free(cmd);
	return 0;
}

static void take_snapshot(void)
{
	free(snap_before);
	snap_before = snapshot();
}

/* The host around the target is exactly as before. */
static void assert_outside_unchanged(void)
{
	char *now = snapshot();

	assert_non_null(snap_before);
	assert_string_equal(now, snap_before);
	free(now);
}

/* ---- building archives ---- */

#define MODE_0 0170000 /* an explicit mode 0000 (0 means the default) */

struct ent {
	const char *path;
	char type;		/* f file, d dir, l symlink, h hardlink, c b p devices/fifo */
	mode_t mode;
	const char *data;	/* file content, symlink or hardlink target */
	uint64_t size;		/* file: declared size when data is NULL (zeros) */
};

static void add_entry(struct archive *a, const struct ent *x)
{
	struct archive_entry *e = archive_entry_new();
	size_t dl = x->data ? strlen(x->data) : 0;

	archive_entry_set_pathname(e, x->path);
	archive_entry_set_mtime(e, 1500000000, 0);
	archive_entry_set_uid(e, 1234);
	archive_entry_set_gid(e, 2345);
	switch (x->type) {
	case 'f':
		archive_entry_set_filetype(e, AE_IFREG);
		archive_entry_set_size(e, x->data ? (la_int64_t)dl : (la_int64_t)x->size);
		break;
	case 'd': archive_entry_set_filetype(e, AE_IFDIR); break;
	case 'l':
		archive_entry_set_filetype(e, AE_IFLNK);
		archive_entry_set_symlink(e, x->data);
		break;
	case 'h':
		archive_entry_set_filetype(e, AE_IFREG);
		archive_entry_set_hardlink(e, x->data);
		break;
	case 'c': archive_entry_set_filetype(e, AE_IFCHR); archive_entry_set_rdev(e, makedev(1, 3)); break;
	case 'b': archive_entry_set_filetype(e, AE_IFBLK); archive_entry_set_rdev(e, makedev(8, 0)); break;
	case 'p': archive_entry_set_filetype(e, AE_IFIFO); break;
	}
	archive_entry_set_perm(e, x->mode == MODE_0 ? 0 : x->mode ? x->mode : x->type == 'd' ? 0755 : 0644);
	assert_int_equal(archive_write_header(a, e), ARCHIVE_OK);
	if (x->type == 'f' && x->data)
		assert_int_equal(archive_write_data(a, x->data, dl), (la_ssize_t)dl);
	/* Files without data: the writer pads them with zeros. */
	archive_write_finish_entry(a);
	archive_entry_free(e);
}

/*
 * Write BASE/tars/name with the given entries; filter 0, 'g', 'x', 'z', 'b'.
 * Returns a static buffer, overwritten by the next call.
 */
static const char *make_tar(const char *name, const struct ent *ents, size_t n, char filter)
{
	static char path[PATH_MAX];
	struct archive *a = archive_write_new();

	pathf(path, "%s/tars/%s", base, name);
	archive_write_set_format_pax_restricted(a);
	switch (filter) {
	case 'g': archive_write_add_filter_gzip(a); break;
	case 'x': archive_write_add_filter_xz(a); break;
	case 'z': archive_write_add_filter_zstd(a); break;
	case 'b': archive_write_add_filter_bzip2(a); break;
	}
	assert_int_equal(archive_write_open_filename(a, path), ARCHIVE_OK);
	for (size_t i = 0; i < n; i++)
		add_entry(a, &ents[i]);
	assert_int_equal(archive_write_close(a), ARCHIVE_OK);
	archive_write_free(a);
	return path;
}

static struct sbx_image_opts opts(void)
{
	return (struct sbx_image_opts){ .cache_dir = cache, .warn = on_warn,
					.preserve_owner = geteuid() == 0 };
}

/* Unpack BASE/tars/file into target. */
static int unpack_o(const char *tar, const struct sbx_image_opts *o, struct sbx_image_stats *st,
		    struct sbx_err *err)
{
	int fd = open(tar, O_RDONLY | O_CLOEXEC);
	int dfd = open(target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r;

	assert_true(fd >= 0 && dfd >= 0);
	r = sbx_image_unpack_fd(fd, dfd, o, st, err);
	close(fd);
	close(dfd);
	return r;
}

static int unpack(const char *tar, struct sbx_image_stats *st)
{
	struct sbx_image_opts o = opts();
	struct sbx_err err = { 0 };
	int r = unpack_o(tar, &o, st, &err);

	if (r < 0)
		print_message("unpack: %s\n", err.msg);
	return r;
}

static bool exists_in(const char *dir, const char *rel)
{
	char p[PATH_MAX];
	struct stat st;

	pathf(p, "%s/%s", dir, rel);
	return lstat(p, &st) == 0;
}

static struct stat lst(const char *rel)
{
	char p[PATH_MAX];
	struct stat st;

	pathf(p, "%s/%s", target, rel);
	assert_int_equal(lstat(p, &st), 0);
	return st;
}

static char *tcontent(const char *rel)
{
	char p[PATH_MAX];

	pathf(p, "%s/%s", target, rel);
	return slurp(p);
}

static size_t count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return n;
}

static void sha256_file(const char *path, char out[65])
{
	unsigned char md[32];
	unsigned int len = 0;
	char *buf = sbx_xmalloc(1 << 16);
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	EVP_DigestInit_ex(c, EVP_sha256(), NULL);
	while ((n = read(fd, buf, 1 << 16)) > 0)
		EVP_DigestUpdate(c, buf, (size_t)n);
	EVP_DigestFinal_ex(c, md, &len);
	for (int i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
	EVP_MD_CTX_free(c);
	close(fd);
	free(buf);
}

#endif
