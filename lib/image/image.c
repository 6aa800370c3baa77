/* SPDX-License-Identifier: MIT */
/*
 * lib/image/image.c - rootfs images: a directory is used as is; a tarball is
 * unpacked once (lib/image/image_unpack.c) into the image cache and shared.
 *
 *   CACHE/images/<sha256>           owned as in the tarball (sbx as root)
 *   CACHE/images/<sha256>-u<UID>    files re-owned to UID (anyone else)
 *   CACHE/images/by-stat/<key>      "<sha256>\n" for the tarball whose
 *                                   (st_dev, st_ino, size, mtime, ctime)
 *                                   is <key>: a second use costs neither
 *                                   hashing nor unpacking
 *   CACHE/images/.sum-<key>         "ENTRIES BYTES\n": what the image held
 *                                   when published; checked at every use
 *                                   unless the caller says no_verify (sbx
 *                                   run: the walk is one fstatat per entry,
 *                                   so it checks with sbx_image_verify()
 *                                   only after a failed command), so a
 *                                   damaged image (files deleted or
 *                                   truncated) is an error, not a silently
 *                                   broken jail
 *   CACHE/images/.tmp-XXXXXX        an unpack in progress (flock()ed)
 *
 * The key is the SHA-256 of the tarball's bytes, computed in the same pass
 * as the unpack.  A tarball is unpacked into a .tmp- directory, synced and
 * published with renameat2(RENAME_NOREPLACE): a crash leaves no half image
 * (a .tmp- directory is never used as one, and a later unpack removes it
 * once it is older than STALE_TMP_SEC and no longer locked), and when two
 * callers unpack the same tarball at once, the loser of the rename race
 * discards its copy and both use the winner's (runs of one cache unpack a
 * tarball one at a time: .unpack-SKEY, unpack_lock()).  Images, index entries and
 * the image root must belong to the caller's euid to be used, so a shared
 * cache directory cannot hand one user's image to another.
 */
#include <dirent.h>
#include <fcntl.h>
#include <linux/limits.h> /* PATH_MAX (lib/limits/limits.h shadows <limits.h>) */
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>

#include "image.h"
#include "rmtree.h"

#define STALE_TMP_SEC (10 * 60)

struct cache {
	char *images; /* absolute CACHE/images */
	int images_fd;
	int bystat_fd;
};

static void cache_close(struct cache *c)
{
	free(c->images);
	if (c->images_fd >= 0)
		close(c->images_fd);
	if (c->bystat_fd >= 0)
		close(c->bystat_fd);
}

static int cache_open(struct cache *c, const char *cache_dir, struct sbx_err *err)
{
	_cleanup_free_ char *images = NULL, *bystat = NULL;
	char real[PATH_MAX];
	int r;

	*c = (struct cache){.images_fd = -1, .bystat_fd = -1};
	if (!cache_dir || !*cache_dir)
		return sbx_err_set(err, EINVAL, "no cache directory for images");
	images = sbx_xasprintf("%s/images", cache_dir);
	bystat = sbx_xasprintf("%s/by-stat", images);
	r = sbx_mkdir_p(bystat, 0700);
	if (r < 0)
		return sbx_err_set(err, -r, "cannot create the image cache '%s'", images);
	if (!realpath(images, real))
		return sbx_err_set(err, errno, "cannot resolve the image cache '%s'", images);
	c->images = sbx_xstrdup(real);
	c->images_fd = open(real, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (c->images_fd < 0)
		return sbx_err_set(err, errno, "cannot open the image cache '%s'", real);
	c->bystat_fd =
	    openat(c->images_fd, "by-stat", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (c->bystat_fd < 0)
		return sbx_err_set(err, errno, "cannot open '%s/by-stat'", real);
	return 0;
}

static void stat_key(const struct stat *sb, char *buf, size_t len)
{
	snprintf(buf, len, "%llx-%llx-%llx-%llx.%lx-%llx.%lx", (unsigned long long)sb->st_dev,
		 (unsigned long long)sb->st_ino, (unsigned long long)sb->st_size,
		 (unsigned long long)sb->st_mtim.tv_sec, sb->st_mtim.tv_nsec,
		 (unsigned long long)sb->st_ctim.tv_sec, sb->st_ctim.tv_nsec);
}

static void image_key(const char *sha, const struct sbx_image_opts *o, char *buf, size_t len)
{
	if (o->preserve_owner)
		snprintf(buf, len, "%s", sha);
	else
		snprintf(buf, len, "%s-u%u", sha, (unsigned)geteuid());
}

/* Is images/key a published image we may use? */
static bool image_ok(const struct cache *c, const char *key)
{
	struct stat sb;

	return fstatat(c->images_fd, key, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(sb.st_mode) &&
	       sb.st_uid == geteuid();
}

static bool bystat_get(const struct cache *c, const char *skey, char sha[65])
{
	_cleanup_close_ int fd = openat(c->bystat_fd, skey, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat sb;
	char buf[66];

	if (fd < 0 || fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_uid != geteuid())
		return false;
	if (sbx_read_all(fd, buf, sizeof(buf)) != 65 || buf[64] != '\n')
		return false;
	for (int i = 0; i < 64; i++)
		if (!strchr("0123456789abcdef", buf[i]) || !buf[i])
			return false;
	memcpy(sha, buf, 64);
	sha[64] = '\0';
	return true;
}

/* Best effort: a missing index entry only costs a re-hash. */
static void bystat_put(const struct cache *c, const char *skey, const char *sha)
{
	char tmp[NAME_MAX + 1], line[66];
	_cleanup_close_ int fd = -1;

	snprintf(tmp, sizeof(tmp), ".tmp-%d-%.200s", (int)getpid(), skey);
	snprintf(line, sizeof(line), "%s\n", sha);
	fd = openat(c->bystat_fd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (sbx_write_all(fd, line, 65) < 0 || close(steal_fd(&fd)) < 0 ||
	    renameat(c->bystat_fd, tmp, c->bystat_fd, skey) < 0)
		(void)unlinkat(c->bystat_fd, tmp, 0);
}

/*
 * CACHE/images/.unpack-SKEY, flock()ed by the one run that unpacks the tarball
 * whose stat key it names; a run that finds it held waits, then finds the
 * image in the index.  The holder unlinks it when done, whether the unpack
 * worked or not (a run that opened it before gets the lock on the unlinked
 * inode, sees that the name is another file's or none, and locks again,
 * then looks in the index: the image, or its own unpack).  -1: no lock (the
 * unpack goes ahead unserialised, which is still correct).
 */
static int unpack_lock(const struct cache *c, const char *skey)
{
	char name[NAME_MAX + 1];

	snprintf(name, sizeof(name), ".unpack-%.200s", skey);
	/* Locked, and still the file of that name: another run's clean_stale
	 * may unlink it between our open and our lock (it was not locked
	 * yet), and a lock on that inode would serialise nobody. */
	for (int tries = 0; tries < 16; tries++) {
		int fd =
		    openat(c->images_fd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);

		if (fd < 0)
			return -1;
		while (flock(fd, LOCK_EX) < 0) {
			if (errno != EINTR) {
				close(fd);
				return -1;
			}
		}
		if (sbx_fd_is_named(fd, c->images_fd, name))
			return fd;
		/* unlinked meanwhile: by its holder when done (the index has
		 * the image now) or by clean_stale; either way, again */
		close(fd);
	}
	return -1;
}

static void unpack_unlock(const struct cache *c, const char *skey, int fd)
{
	char name[NAME_MAX + 1];

	snprintf(name, sizeof(name), ".unpack-%.200s", skey);
	(void)unlinkat(c->images_fd, name, 0);
	(void)flock(fd, LOCK_UN);
}

/* Remove .tmp- directories of dead unpacks (old and not locked), and
 * their .unpack- lock files (not locked). */
static void clean_stale(const struct cache *c)
{
	int fd = openat(c->images_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	time_t now = time(NULL);
	struct dirent *de;
	DIR *d;

	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((de = readdir(d))) {
		_cleanup_close_ int tfd = -1;
		struct stat sb;

		/* the lock of an unpack whose run was killed: nobody holds it */
		if (strncmp(de->d_name, ".unpack-", 8) == 0) {
			tfd = openat(c->images_fd, de->d_name,
				     O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
			if (tfd >= 0 && fstat(tfd, &sb) == 0 && S_ISREG(sb.st_mode) &&
			    flock(tfd, LOCK_EX | LOCK_NB) == 0)
				(void)unlinkat(c->images_fd, de->d_name, 0);
			continue;
		}
		if (strncmp(de->d_name, ".tmp-", 5) != 0 ||
		    fstatat(c->images_fd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISDIR(sb.st_mode) || now - sb.st_mtim.tv_sec < STALE_TMP_SEC)
			continue;
		tfd = openat(c->images_fd, de->d_name,
			     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (tfd >= 0 && flock(tfd, LOCK_EX | LOCK_NB) == 0)
			(void)sbx_rm_rf_at(c->images_fd, de->d_name);
	}
	closedir(d);
}

/* What an image holds: its entries and the bytes of its regular files.  The
 * same walk runs at publish and at use; a directory we may not read (mode
 * 000 in the tarball, sbx not root) counts, its contents do not. */
struct summary {
	unsigned long long entries, bytes;
};

static int summarize(int dfd, struct summary *s, int depth)
{
	struct dirent *de;
	DIR *d;
	int r = 0;

	if (depth > 1024 || !(d = fdopendir(dfd))) {
		r = depth > 1024 ? -ELOOP : -errno;
		close(dfd);
		return r;
	}
	while (r == 0 && (de = readdir(d))) {
		struct stat sb;
		int sub;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		s->entries++;
		if (de->d_type != DT_REG && de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
			continue;
		if (fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) < 0) {
			r = -errno;
		} else if (S_ISREG(sb.st_mode)) {
			s->bytes += (unsigned long long)sb.st_size;
		} else if (S_ISDIR(sb.st_mode)) {
			sub = openat(dirfd(d), de->d_name,
				     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0)
				r = summarize(sub, s, depth + 1);
			else if (errno != EACCES)
				r = -errno;
		}
	}
	closedir(d);
	return r;
}

static int summarize_image(const struct cache *c, const char *key, struct summary *s)
{
	int fd = openat(c->images_fd, key, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	*s = (struct summary){0};
	return fd < 0 ? -errno : summarize(fd, s, 0);
}

static int write_summary(const struct cache *c, const char *key, int image_fd, struct sbx_err *err)
{
	char name[NAME_MAX + 1], tmp[NAME_MAX + 1], line[64];
	_cleanup_close_ int fd = -1;
	struct summary s = {0};
	int dup_fd = openat(image_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r = dup_fd < 0 ? -errno : summarize(dup_fd, &s, 0);

	if (r < 0)
		return sbx_err_set(err, -r, "cannot read back the unpacked image");
	snprintf(name, sizeof(name), ".sum-%s", key);
	snprintf(tmp, sizeof(tmp), ".tmp-sum-%d-%s", (int)getpid(), key);
	snprintf(line, sizeof(line), "%llu %llu\n", s.entries, s.bytes);
	fd = openat(c->images_fd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || sbx_write_all(fd, line, strlen(line)) < 0 || close(steal_fd(&fd)) < 0 ||
	    renameat(c->images_fd, tmp, c->images_fd, name) < 0) {
		r = sbx_err_set(err, errno, "cannot write '%s/%s'", c->images, name);
		(void)unlinkat(c->images_fd, tmp, 0);
		return r;
	}
	return 0;
}

/* The published image still holds what it held: 0 or -EUCLEAN. */
static int verify_image(const struct cache *c, const char *key, struct sbx_err *err)
{
	char name[NAME_MAX + 1], buf[64] = "";
	_cleanup_close_ int fd = -1;
	struct summary want = {0}, got;
	struct stat sb;
	int r;

	snprintf(name, sizeof(name), ".sum-%s", key);
	fd = openat(c->images_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sb) < 0 || sb.st_uid != geteuid() ||
	    sbx_read_all(fd, buf, sizeof(buf) - 1) <= 0 ||
	    sscanf(buf, "%llu %llu", &want.entries, &want.bytes) != 2)
		return sbx_err_set(err, EUCLEAN,
				   "cached image '%s/%s' has no valid summary '%s'; remove the "
				   "image to unpack the tarball again",
				   c->images, key, name);
	r = summarize_image(c, key, &got);
	if (r < 0 || got.entries != want.entries || got.bytes != want.bytes)
		return sbx_err_set(err, EUCLEAN,
				   "cached image '%s/%s' is damaged (%llu entries and %llu bytes, "
				   "expected %llu and %llu); remove it to unpack the tarball again",
				   c->images, key, got.entries, got.bytes, want.entries,
				   want.bytes);
	return 0;
}

static int use_directory(const char *rootfs, char **out_dir, struct sbx_image_stats *st,
			 struct sbx_err *err)
{
	char real[PATH_MAX];

	if (!realpath(rootfs, real))
		return sbx_err_set(err, errno, "cannot resolve rootfs '%s'", rootfs);
	st->is_dir = true;
	st->cached = true;
	*out_dir = sbx_xstrdup(real);
	return 0;
}

/* Unpack into a locked .tmp- directory, then publish it as images/key. */
static int unpack_publish(const struct cache *c, int fd, const struct sbx_image_opts *o, char *key,
			  size_t keylen, struct sbx_image_stats *st, struct sbx_err *err)
{
	_cleanup_free_ char *tmp = sbx_xasprintf("%s/.tmp-XXXXXX", c->images);
	_cleanup_close_ int tfd = -1;
	const char *tname;
	int r;

	if (!mkdtemp(tmp))
		return sbx_err_set(err, errno, "cannot create a directory in '%s'", c->images);
	tname = strrchr(tmp, '/') + 1;
	tfd = openat(c->images_fd, tname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (tfd < 0 || flock(tfd, LOCK_EX) < 0) {
		r = sbx_err_set(err, errno, "cannot open '%s'", tmp);
		goto fail;
	}
	r = sbx_image_unpack_fd(fd, tfd, o, st, err);
	if (r < 0)
		goto fail;
	image_key(st->sha256, o, key, keylen);
	r = write_summary(c, key, tfd, err);
	if (r < 0)
		goto fail;
	if (syncfs(tfd) < 0) {
		r = sbx_err_set(err, errno, "cannot sync '%s'", tmp);
		goto fail;
	}
	if (renameat2(c->images_fd, tname, c->images_fd, key, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EEXIST && errno != ENOTEMPTY) {
		r = sbx_err_set(err, errno, "cannot publish the image '%s/%s'", c->images, key);
		goto fail;
	}
	/* Someone else published the same image first: use theirs. */
	(void)sbx_rm_rf_at(c->images_fd, tname);
	if (!image_ok(c, key))
		return sbx_err_set(err, EPERM,
				   "image '%s/%s' exists but is not a directory of yours",
				   c->images, key);
	return verify_image(c, key, err);
fail:
	(void)sbx_rm_rf_at(c->images_fd, tname);
	return r;
}

int sbx_image_verify(const char *cache_dir, const char *image_dir, struct sbx_err *err)
{
	const char *key = image_dir ? strrchr(image_dir, '/') : NULL;
	struct cache c;
	int r;

	if (!key || !key[1])
		return sbx_err_set(err, EINVAL, "'%s' is not a cached image",
				   image_dir ? image_dir : "");
	key++;
	r = cache_open(&c, cache_dir, err);
	if (r == 0 && (strlen(c.images) != (size_t)(key - 1 - image_dir) ||
		       strncmp(c.images, image_dir, strlen(c.images)) != 0))
		r = sbx_err_set(err, EINVAL, "'%s' is not an image of the cache '%s'", image_dir,
				c.images);
	if (r == 0 && !image_ok(&c, key))
		r = sbx_err_set(err, EUCLEAN,
				"cached image '%s' is gone or not a directory of yours", image_dir);
	if (r == 0)
		r = verify_image(&c, key, err);
	cache_close(&c);
	return r;
}

/* The image the index names for skey, if it is there: 1 (*r: what
 * verifying it gave), 0 when the index has no entry or its image is gone. */
static int indexed(const struct cache *c, const char *skey, const struct sbx_image_opts *o,
		   char *key, size_t keylen, struct sbx_image_stats *st, int *r,
		   struct sbx_err *err)
{
	char sha[65];

	if (!bystat_get(c, skey, sha))
		return 0;
	image_key(sha, o, key, keylen);
	if (!image_ok(c, key))
		return 0;
	memcpy(st->sha256, sha, sizeof(sha));
	st->cached = true;
	*r = o->no_verify ? 0 : verify_image(c, key, err);
	return 1;
}

int sbx_image_prepare(const char *rootfs, const struct sbx_image_opts *opts, char **out_dir,
		      struct sbx_image_stats *st, struct sbx_err *err)
{
	static const struct sbx_image_opts none;
	const struct sbx_image_opts *o = opts ? opts : &none;
	struct sbx_image_stats local;
	_cleanup_close_ int fd = -1;
	_cleanup_close_ int lk = -1;
	struct cache c;
	char skey[160], key[80];
	struct stat sb;
	int r;

	if (!st)
		st = &local;
	memset(st, 0, sizeof(*st));
	*out_dir = NULL;
	/* O_NONBLOCK: a fifo given as rootfs must not hang us. */
	fd = open(rootfs, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &sb) < 0)
		return sbx_err_set(err, errno, "cannot open rootfs '%s'", rootfs);
	if (S_ISDIR(sb.st_mode))
		return use_directory(rootfs, out_dir, st, err);
	if (!S_ISREG(sb.st_mode))
		return sbx_err_set(err, 0, "rootfs '%s' is neither a directory nor a tarball",
				   rootfs);
	r = cache_open(&c, o->cache_dir, err);
	if (r < 0)
		goto out;
	stat_key(&sb, skey, sizeof(skey));
	if (!o->no_cache && indexed(&c, skey, o, key, sizeof(key), st, &r, err)) {
		if (r < 0)
			goto out;
		goto done;
	}
	clean_stale(&c);
	/* One unpack of a tarball at a time: the others wait for it and use
	 * its image (twenty tasks of an array job on a cold cache unpack it
	 * once, not twenty times over in temporary directories). */
	if (!o->no_cache)
		lk = unpack_lock(&c, skey);
	if (lk >= 0 && indexed(&c, skey, o, key, sizeof(key), st, &r, err)) {
		if (r < 0)
			goto out;
		goto done;
	}
	r = unpack_publish(&c, fd, o, key, sizeof(key), st, err);
	if (r < 0) {
		sbx_err_wrap(err, "cannot unpack '%s'", rootfs);
		goto out;
	}
	bystat_put(&c, skey, st->sha256);
done:
	*out_dir = sbx_xasprintf("%s/%s", c.images, key);
out:
	if (lk >= 0)
		unpack_unlock(&c, skey, lk);
	cache_close(&c);
	return r;
}
