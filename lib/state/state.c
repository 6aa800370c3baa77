/* SPDX-License-Identifier: MIT */
/* lib/state/state.c - the state directory: sandbox ids, names, records, locks. */
#include "state.h"
#include "proc.h"
#include "state_int.h"
#include "jail.h"

#include "fault.h"
#include "rmtree.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

/* ---- directories ---- */

static char *default_dir(const char *env_sbx, const char *root_dir, const char *xdg_env,
			 const char *home_sub)
{
	const char *e = getenv(env_sbx), *home;

	if (e && *e)
		return sbx_xstrdup(e);
	if (geteuid() == 0)
		return sbx_xstrdup(root_dir);
	e = getenv(xdg_env);
	if (e && e[0] == '/')
		return sbx_xasprintf("%s/sbx", e);
	home = getenv("HOME");
	if (!home || home[0] != '/')
		return NULL;
	return sbx_xasprintf("%s/%s/sbx", home, home_sub);
}

/* mkdir -p: parents with the default mode, the last component 0700. */
static int make_private_dir(const char *path)
{
	_cleanup_free_ char *parent = sbx_xstrdup(path);
	char *slash = strrchr(parent, '/');
	int r;

	if (slash && slash != parent) {
		*slash = '\0';
		r = sbx_mkdir_p(parent, 0755);
		if (r < 0)
			return r;
	}
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static int open_subdir(int dfd, const char *name, bool create, int *out)
{
	if (create && mkdirat(dfd, name, 0700) < 0 && errno != EEXIST)
		return -errno;
	*out = openat(dfd, name, DIR_FLAGS);
	if (*out < 0)
		return -errno;
	return 0;
}

/*
 * Every run creates and removes ~40 inodes below STATE/sandboxes (its
 * directory, record, logs, the overlays' upper and work directories and
 * what the kernel makes in them).  ext4 without a journal does not reuse
 * an inode freed in the last minutes, and each allocation steps over the
 * recently freed ones of its block group: with every sandbox in its
 * parent's group, start-up grew from ~7.5 to ~11 ms after a few hundred
 * runs in a row.  The top-directory flag (chattr +T) makes ext4 place
 * each sandbox directory, and so what is made in it, in a group of its
 * own choosing, spreading the freed inodes.  Where the flag means nothing
 * or cannot be set, nothing changes.
 */
static void spread_sandboxes(int fd)
{
	int flags = 0;

	if (ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0 && !(flags & FS_TOPDIR_FL)) {
		flags |= FS_TOPDIR_FL;
		(void)ioctl(fd, FS_IOC_SETFLAGS, &flags);
	}
}

int sbx_state_open(struct sbx_state *st, const char *state_dir, const char *cache_dir, bool create,
		   struct sbx_err *err)
{
	struct stat s;
	int r;

	memset(st, 0, sizeof(*st));
	st->state_fd = st->sandboxes_fd = -1;
	st->state_dir = state_dir && *state_dir ? sbx_xstrdup(state_dir)
						: default_dir("SBX_STATE_DIR", "/var/lib/sbx",
							      "XDG_STATE_HOME", ".local/state");
	st->cache_dir = cache_dir && *cache_dir ? sbx_xstrdup(cache_dir)
						: default_dir("SBX_CACHE_DIR", "/var/cache/sbx",
							      "XDG_CACHE_HOME", ".cache");
	if (!st->state_dir || !st->cache_dir) {
		bool state = !st->state_dir;

		sbx_state_close(st);
		return state ? sbx_err_set(err, 0,
					   "cannot find a state directory ($HOME is not set): "
					   "use --state-dir DIR or set SBX_STATE_DIR")
			     : sbx_err_set(err, 0,
					   "cannot find a cache directory ($HOME is not set): "
					   "set SBX_CACHE_DIR");
	}
	if (create) {
		r = make_private_dir(st->state_dir);
		if (r < 0)
			goto fail_state;
		r = make_private_dir(st->cache_dir);
		if (r < 0) {
			sbx_err_set(err, -r, "cannot create cache directory '%s'", st->cache_dir);
			sbx_state_close(st);
			return r;
		}
	}
	st->state_fd = open(st->state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (st->state_fd < 0) {
		if (errno == ENOENT && !create)
			return 0;
		r = -errno;
		goto fail_state;
	}
	if (fstat(st->state_fd, &s) == 0 && (s.st_mode & 077) && s.st_uid == geteuid() && create)
		(void)fchmod(st->state_fd, 0700); /* keep it private */
	r = open_subdir(st->state_fd, "sandboxes", create, &st->sandboxes_fd);
	if (r == -ENOENT && !create)
		return 0;
	if (r < 0)
		goto fail_state;
	if (create)
		spread_sandboxes(st->sandboxes_fd);
	if (create && mkdirat(st->state_fd, "names", 0700) < 0 && errno != EEXIST) {
		r = -errno;
		goto fail_state;
	}
	return 0;
fail_state:
	sbx_err_set(
	    err, -r,
	    "cannot open state directory '%s' (--state-dir DIR or SBX_STATE_DIR picks another)",
	    st->state_dir);
	sbx_state_close(st);
	return r;
}

void sbx_state_close(struct sbx_state *st)
{
	free(st->state_dir);
	free(st->cache_dir);
	if (st->state_fd >= 0)
		close(st->state_fd);
	if (st->sandboxes_fd >= 0)
		close(st->sandboxes_fd);
	st->state_dir = st->cache_dir = NULL;
	st->state_fd = st->sandboxes_fd = -1;
}

/* ---- ids and names ---- */

bool sbx_state_valid_id(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return i == SBX_ID_LEN;
}

static bool all_hex(const char *s)
{
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

int sbx_state_check_name(const char *name, struct sbx_err *err)
{
	size_t n = strlen(name);
	_cleanup_free_ char *esc = sbx_escape_display(name);

	if (n == 0 || n > SBX_NAME_MAX)
		return sbx_err_set(err, 0, "bad sandbox name '%s' (1 to %d characters)", esc,
				   SBX_NAME_MAX);
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		bool alnum =
		    (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');

		if (!alnum && (i == 0 || (c != '_' && c != '.' && c != '-')))
			return sbx_err_set(err, 0,
					   "bad sandbox name '%s' (letters, digits, '_', '.', '-'; "
					   "starting with a letter or digit)",
					   esc);
	}
	if (all_hex(name))
		return sbx_err_set(err, 0,
				   "bad sandbox name '%s' (it looks like a sandbox id; add a "
				   "letter other than a-f)",
				   esc);
	return 0;
}

static void new_id(char id[SBX_ID_LEN + 1])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char b[SBX_ID_LEN / 2];
	size_t got = 0;

	while (got < sizeof(b)) {
		ssize_t n = getrandom(b + got, sizeof(b) - got, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			/* No entropy source at all: time and pid, still unique-ish; EEXIST retries.
			 */
			uint64_t t = sbx_now_ns() ^ ((uint64_t)getpid() << 32);
			memcpy(b, &t, sizeof(b));
			break;
		}
		got += (size_t)n;
	}
	for (size_t i = 0; i < sizeof(b); i++) {
		id[2 * i] = hex[b[i] >> 4];
		id[2 * i + 1] = hex[b[i] & 15];
	}
	id[SBX_ID_LEN] = '\0';
}

/* The id a name points to (names/NAME holds "ID\n"); -ENOENT if none. */
int sbx_state_read_name(struct sbx_state *st, const char *name, char id[SBX_ID_LEN + 1])
{
	_cleanup_close_ int fd = -1;
	char buf[SBX_ID_LEN + 2];
	ssize_t n;

	if (st->state_fd < 0)
		return -ENOENT;
	fd = openat(st->state_fd, "names", DIR_FLAGS);
	if (fd < 0)
		return -errno;
	int f = openat(fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (f < 0)
		return -errno;
	n = sbx_read_all(f, buf, sizeof(buf));
	close(f);
	if (n < SBX_ID_LEN)
		return -ENOENT;
	memcpy(id, buf, SBX_ID_LEN);
	id[SBX_ID_LEN] = '\0';
	return sbx_state_valid_id(id) ? 0 : -ENOENT;
}

bool sbx_state_sandbox_exists(struct sbx_state *st, const char *id)
{
	struct stat s;

	return st->sandboxes_fd >= 0 &&
	       fstatat(st->sandboxes_fd, id, &s, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(s.st_mode);
}

/* Write a small file atomically in dfd (tmp, fsync, rename, fsync dir). */
static int atomic_write(int dfd, const char *name, const char *data, size_t len)
{
	_cleanup_free_ char *tmp = sbx_xasprintf(".%s.tmp-%d", name, (int)getpid());
	_cleanup_close_ int fd = -1;
	int r;

	(void)unlinkat(dfd, tmp, 0);
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	r = sbx_write_all(fd, data, len);
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (r == 0 && renameat(dfd, tmp, dfd, name) < 0)
		r = -errno;
	if (r < 0) {
		(void)unlinkat(dfd, tmp, 0);
		return r;
	}
	if (fsync(dfd) < 0 && errno != EINVAL)
		return -errno;
	return 0;
}

/* Claim names/NAME for id under STATE/lock; a name whose sandbox is gone is reused. */
static int claim_name(struct sbx_state *st, const char *name, const char *id, struct sbx_err *err)
{
	_cleanup_close_ int lk = -1, nfd = -1;
	char old[SBX_ID_LEN + 1], line[SBX_ID_LEN + 2];
	int r;

	lk = openat(st->state_fd, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (lk < 0 || flock(lk, LOCK_EX) < 0)
		return sbx_err_set(err, errno, "cannot lock state directory '%s'", st->state_dir);
	if (sbx_state_read_name(st, name, old) == 0 && strcmp(old, id) != 0 &&
	    sbx_state_sandbox_exists(st, old)) {
		sbx_err_set(err, 0,
			    "the name '%s' is already used by sandbox %s (sbx destroy %s frees it, "
			    "or pick another --name)",
			    name, old, name);
		return -EEXIST;
	}
	nfd = openat(st->state_fd, "names", DIR_FLAGS);
	if (nfd < 0)
		return sbx_err_set(err, errno, "cannot open '%s/names'", st->state_dir);
	snprintf(line, sizeof(line), "%s\n", id);
	r = atomic_write(nfd, name, line, SBX_ID_LEN + 1);
	if (r < 0)
		return sbx_err_set(err, -r, "cannot record the name '%s'", name);
	return 0;
}

void sbx_state_release_name(struct sbx_state *st, const char *name, const char *id)
{
	_cleanup_close_ int lk = -1, nfd = -1;
	char cur[SBX_ID_LEN + 1];

	if (!name || st->state_fd < 0)
		return;
	lk = openat(st->state_fd, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (lk >= 0)
		(void)flock(lk, LOCK_EX);
	if (sbx_state_read_name(st, name, cur) < 0 || strcmp(cur, id) != 0)
		return;
	nfd = openat(st->state_fd, "names", DIR_FLAGS);
	if (nfd >= 0)
		(void)unlinkat(nfd, name, 0);
}

/* ---- sandboxes ---- */

static void sandbox_init(struct sbx_sandbox *sb)
{
	memset(sb, 0, sizeof(*sb));
	sbx_record_init(&sb->rec);
	sb->dirfd = sb->lockfd = -1;
}

static int open_lockfile(int dirfd)
{
	return openat(dirfd, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
}

static void new_record(struct sbx_sandbox *sb)
{
	char ts[40];

	sb->rec.id = sbx_xstrdup(sb->id);
	sb->rec.name = sb->name ? sbx_xstrdup(sb->name) : NULL;
	sb->rec.state = sbx_xstrdup("created");
	sb->rec.created = sbx_xstrdup(sbx_rfc3339_now(ts, sizeof(ts)));
	sb->record = sbx_record_to_json(&sb->rec);
}

/*
 * Sandbox directories made ahead of time: STATE/sandboxes/.ready-N, each
 * with its lock file, made by the trash purger after a run
 * (sbx_state_ready_fill), or a removed sandbox's own directory emptied and
 * renamed back (sbx_state_ready_recycle), taken by the next run in one
 * rename.  A new directory there costs a run most of a millisecond:
 * sandboxes/ has ext4's top-directory flag (lib/state/RECORD.md), so each
 * lands in a block group of its own, whose bitmaps are read from the disk.
 */
#define READY_DIRS 2

/* The name of ready directory I, in r. */
static const char *ready_name(int i, char r[16])
{
	snprintf(r, 16, ".ready-%d", i);
	return r;
}

/* Open .ready-I (its name in r), or -1. */
static int open_ready(struct sbx_state *st, int i, char r[16])
{
	return openat(st->sandboxes_fd, ready_name(i, r), DIR_FLAGS);
}

/* A ready directory of ours: this user's, no one else's, nothing in it but
 * a lock file (no subdirectory; the lock is checked by the caller). */
static bool ready_dir_ok(int dfd)
{
	struct stat s;

	return fstat(dfd, &s) == 0 && S_ISDIR(s.st_mode) && s.st_uid == geteuid() &&
	       !(s.st_mode & 077) && s.st_nlink == 2;
}

/* A ready directory as sandbox ID (new ids until one is free), locked. */
static bool take_ready_dir(struct sbx_state *st, struct sbx_sandbox *sb)
{
	for (int i = 0; i < READY_DIRS; i++) {
		char r[16];
		int dfd, lk = -1;

		dfd = open_ready(st, i, r);
		if (dfd < 0)
			continue;
		/* the lock first: another run holds it while it has the directory */
		if (ready_dir_ok(dfd) &&
		    (lk = openat(dfd, "lock", O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)) >= 0 &&
		    flock(lk, LOCK_EX | LOCK_NB) == 0 &&
		    sbx_fd_is_named(dfd, st->sandboxes_fd, r)) {
			for (int tries = 0; tries < 16; tries++) {
				new_id(sb->id);
				if (sbx_state_sandbox_exists(st, sb->id))
					continue;
				if (renameat2(st->sandboxes_fd, r, st->sandboxes_fd, sb->id,
					      RENAME_NOREPLACE) == 0) {
					sb->dirfd = dfd;
					sb->lockfd = lk;
					return true;
				}
				if (errno != EEXIST)
					break;
			}
		}
		if (lk >= 0)
			close(lk);
		close(dfd);
	}
	return false;
}

void sbx_state_ready_fill(struct sbx_state *st)
{
	for (int i = 0; st->sandboxes_fd >= 0 && i < READY_DIRS; i++) {
		char r[16], tmp[48];
		int dfd, lk;

		dfd = open_ready(st, i, r);
		if (dfd >= 0) {
			bool ok = ready_dir_ok(dfd);

			close(dfd);
			if (ok)
				continue;
			(void)sbx_rm_rf_at(st->sandboxes_fd, r); /* not one of ours */
		} else if (errno != ENOENT) {
			(void)sbx_rm_rf_at(st->sandboxes_fd, r);
		}
		/* .new-: what a killed filler leaves, gc_new_dirs removes */
		snprintf(tmp, sizeof(tmp), ".new-ready-%d-%d", (int)getpid(), i);
		if (mkdirat(st->sandboxes_fd, tmp, 0700) < 0)
			return;
		dfd = openat(st->sandboxes_fd, tmp, DIR_FLAGS);
		lk = dfd >= 0 ? open_lockfile(dfd) : -1;
		if (lk < 0 ||
		    renameat2(st->sandboxes_fd, tmp, st->sandboxes_fd, r, RENAME_NOREPLACE) < 0)
			(void)sbx_rm_rf_at(st->sandboxes_fd, tmp);
		if (lk >= 0)
			close(lk);
		if (dfd >= 0)
			close(dfd);
	}
}

/*
 * A removed sandbox's directory (name in fromfd: the trash) as a missing
 * ready directory: all but its lock file removed, then renamed to
 * .ready-N.  That spares the purger removing it and making the next one,
 * each a directory freed or placed in a block group of its own (above).
 * False, with whatever is left in place, when no ready directory is
 * missing or the directory is not one a run could take (ready_dir_ok, its
 * lock a plain empty file of this user's).
 */
bool sbx_state_ready_recycle(int sandboxes_fd, int fromfd, const char *name)
{
	_cleanup_close_ int dfd = -1;
	struct stat s;
	DIR *d;
	struct dirent *de;
	char r[16];
	int i;
	bool left = false;

	for (i = 0; i < READY_DIRS; i++)
		if (fstatat(sandboxes_fd, ready_name(i, r), &s, AT_SYMLINK_NOFOLLOW) < 0 &&
		    errno == ENOENT)
			break;
	if (i == READY_DIRS || (dfd = openat(fromfd, name, DIR_FLAGS)) < 0 ||
	    !(d = sbx_opendir_at(dfd, ".")))
		return false;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    strcmp(de->d_name, "lock"))
			left |= sbx_state_rm_tree(dfd, de->d_name) < 0;
	closedir(d);
	return !left && ready_dir_ok(dfd) && fstatat(dfd, "lock", &s, AT_SYMLINK_NOFOLLOW) == 0 &&
	       S_ISREG(s.st_mode) && s.st_uid == geteuid() && !(s.st_mode & 077) &&
	       s.st_size == 0 && s.st_nlink == 1 &&
	       renameat2(fromfd, name, sandboxes_fd, r, RENAME_NOREPLACE) == 0;
}

void sbx_state_ready_clear(struct sbx_state *st)
{
	for (int i = 0; st->sandboxes_fd >= 0 && i < READY_DIRS; i++) {
		char r[16];
		int dfd, lk = -1;

		dfd = open_ready(st, i, r);
		if (dfd < 0)
			continue;
		/* never one a run is taking */
		lk = openat(dfd, "lock", O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		if (lk < 0 || flock(lk, LOCK_EX | LOCK_NB) == 0)
			(void)sbx_rm_rf_at(st->sandboxes_fd, r);
		if (lk >= 0)
			close(lk);
		close(dfd);
	}
}

bool sbx_state_ready_missing(struct sbx_state *st)
{
	for (int i = 0; st->sandboxes_fd >= 0 && i < READY_DIRS; i++) {
		char r[16];
		int dfd;
		bool ok;

		dfd = open_ready(st, i, r);
		ok = dfd >= 0 && ready_dir_ok(dfd);
		if (dfd >= 0)
			close(dfd);
		if (!ok)
			return true;
	}
	return false;
}

/* A ready directory, or make STATE/sandboxes/.new-ID, lock it, rename it to
 * ID (never replacing). */
static int make_sandbox_dir(struct sbx_state *st, struct sbx_sandbox *sb, struct sbx_err *err)
{
	if (take_ready_dir(st, sb))
		return 0;
	for (int tries = 0; tries < 16; tries++) {
		char tmp[SBX_ID_LEN + 8];
		int r;

		new_id(sb->id);
		snprintf(tmp, sizeof(tmp), ".new-%s", sb->id);
		if (sbx_state_sandbox_exists(st, sb->id))
			continue;
		if (mkdirat(st->sandboxes_fd, tmp, 0700) < 0) {
			if (errno == EEXIST)
				continue;
			return sbx_err_set(err, errno, "cannot create a sandbox in '%s/sandboxes'",
					   st->state_dir);
		}
		sb->dirfd = openat(st->sandboxes_fd, tmp, DIR_FLAGS);
		if (sb->dirfd < 0)
			return sbx_err_set(err, errno, "cannot open new sandbox '%s'", tmp);
		sb->lockfd = open_lockfile(sb->dirfd);
		if (sb->lockfd < 0 || flock(sb->lockfd, LOCK_EX | LOCK_NB) < 0)
			r = -errno;
		else if (renameat2(st->sandboxes_fd, tmp, st->sandboxes_fd, sb->id,
				   RENAME_NOREPLACE) < 0)
			r = -errno;
		else
			return 0;
		(void)sbx_rm_rf_at(st->sandboxes_fd, tmp);
		close(sb->dirfd);
		sb->dirfd = -1;
		if (sb->lockfd >= 0)
			close(sb->lockfd);
		sb->lockfd = -1;
		if (r != -EEXIST && r != -ENOTEMPTY)
			return sbx_err_set(err, -r, "cannot create sandbox '%s'", sb->id);
	}
	return sbx_err_set(err, EEXIST, "cannot find a free sandbox id");
}

static int create(struct sbx_state *st, const char *name, struct sbx_sandbox *sb, bool save,
		  struct sbx_err *err)
{
	int r;

	sandbox_init(sb);
	if (st->sandboxes_fd < 0)
		return sbx_err_set(err, ENOENT, "state directory '%s' is not open for writing",
				   st->state_dir ? st->state_dir : "");
	if (name) {
		r = sbx_state_check_name(name, err);
		if (r < 0)
			return r;
	}
	r = make_sandbox_dir(st, sb, err);
	if (r < 0)
		return r;
	sb->dir = sbx_xasprintf("%s/sandboxes/%s", st->state_dir, sb->id);
	if (name) {
		r = claim_name(st, name, sb->id, err);
		if (r < 0) {
			(void)sbx_rm_rf_at(st->sandboxes_fd, sb->id);
			sbx_sandbox_close(sb);
			return r;
		}
		sb->name = sbx_xstrdup(name);
	}
	new_record(sb);
	r = save ? sbx_sandbox_save(sb, err) : 0;
	if (r < 0) {
		sbx_state_release_name(st, name, sb->id);
		(void)sbx_rm_rf_at(st->sandboxes_fd, sb->id);
		sbx_sandbox_close(sb);
	}
	return r;
}

int sbx_sandbox_create(struct sbx_state *st, const char *name, struct sbx_sandbox *sb,
		       struct sbx_err *err)
{
	return create(st, name, sb, true, err);
}

int sbx_sandbox_create_unsaved(struct sbx_state *st, const char *name, struct sbx_sandbox *sb,
			       struct sbx_err *err)
{
	return create(st, name, sb, false, err);
}

static void load_record(struct sbx_sandbox *sb)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = NULL;
	json_error_t je;
	struct sbx_err e = {0};
	struct stat s;
	size_t len = 0;
	int r;

	fd = openat(sb->dirfd, "record.json", O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		sb->record_error = sbx_xasprintf("no record.json (%s)", strerror(errno));
		return;
	}
	if (fstat(fd, &s) < 0 || !S_ISREG(s.st_mode)) {
		sb->record_error = sbx_xstrdup("record.json is not a regular file");
		return;
	}
	r = sbx_read_fd_string(fd, SBX_RECORD_MAX, &buf, &len);
	if (r < 0) {
		sb->record_error = sbx_xasprintf("cannot read record.json (%s)", strerror(-r));
		return;
	}
	sb->record = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
	if (!sb->record || !json_is_object(sb->record)) {
		json_decref(sb->record);
		sb->record = NULL;
		sb->record_error =
		    sbx_xasprintf("record.json is not valid (line %d: %s)", je.line, je.text);
		return;
	}
	if (sbx_sandbox_parse_record(sb, &e) < 0) {
		json_decref(sb->record);
		sb->record = NULL;
		sb->record_error = sbx_xasprintf("record.json is not valid (%s)", e.msg);
		return;
	}
	if (sb->rec.name)
		sb->name = sbx_xstrdup(sb->rec.name);
}

int sbx_sandbox_parse_record(struct sbx_sandbox *sb, struct sbx_err *err)
{
	sbx_record_free(&sb->rec);
	return sbx_record_from_json(sb->record, &sb->rec, err);
}

int sbx_sandbox_save_record(struct sbx_sandbox *sb, struct sbx_err *err)
{
	json_decref(sb->record);
	sb->record = sbx_record_to_json(&sb->rec);
	return sbx_sandbox_save(sb, err);
}

static bool lock_held_at(int dirfd);

/* No record yet, or one that says the run is being set up or running. */
static bool record_says_live(const struct sbx_sandbox *sb)
{
	const char *s = sb->rec.state;

	return !sb->record || !s || strcmp(s, "running") == 0 || strcmp(s, "created") == 0;
}

int sbx_sandbox_open(struct sbx_state *st, const char *id, bool lock, struct sbx_sandbox *sb,
		     struct sbx_err *err)
{
	int r;

	sandbox_init(sb);
	if (!sbx_state_valid_id(id))
		return sbx_err_set(err, 0, "bad sandbox id '%s'", id);
	memcpy(sb->id, id, SBX_ID_LEN + 1);
	if (st->sandboxes_fd < 0)
		return sbx_err_set(err, ENOENT, "no such sandbox '%s'", id);
	sb->dirfd = openat(st->sandboxes_fd, id, DIR_FLAGS);
	if (sb->dirfd < 0)
		return sbx_err_set(err, errno, "cannot open sandbox '%s'", id);
	sb->dir = sbx_xasprintf("%s/sandboxes/%s", st->state_dir, id);
	if (lock) {
		r = sbx_sandbox_lock(sb, true, err);
		if (r < 0) {
			sbx_sandbox_close(sb);
			return r;
		}
	}
	load_record(sb);
	sbx_fault_pause("open-after-read");
	/* A run writes its last record, then lets go of its lock: a live
	 * record whose lock is found free may be from just before that.
	 * Read after the lock was seen free, the record is the last one. */
	if (!lock && record_says_live(sb) && !lock_held_at(sb->dirfd))
		sbx_sandbox_reload(sb);
	return 0;
}

void sbx_sandbox_reload(struct sbx_sandbox *sb)
{
	json_decref(sb->record);
	sb->record = NULL;
	sbx_record_free(&sb->rec);
	free(sb->record_error);
	sb->record_error = NULL;
	free(sb->name);
	sb->name = NULL;
	load_record(sb);
}

int sbx_sandbox_lock(struct sbx_sandbox *sb, bool wait, struct sbx_err *err)
{
	if (sb->lockfd >= 0)
		return 0;
	sb->lockfd = open_lockfile(sb->dirfd);
	if (sb->lockfd < 0)
		return sbx_err_set(err, errno, "cannot open the lock of sandbox '%s'", sb->id);
	while (flock(sb->lockfd, LOCK_EX | (wait ? 0 : LOCK_NB)) < 0) {
		int e = errno;

		if (e == EINTR)
			continue;
		close(sb->lockfd);
		sb->lockfd = -1;
		if (e == EWOULDBLOCK)
			return sbx_err_set(err, e, "sandbox '%s' is in use", sb->id);
		return sbx_err_set(err, e, "cannot lock sandbox '%s'", sb->id);
	}
	return 0;
}

void sbx_sandbox_close(struct sbx_sandbox *sb)
{
	if (sb->lockfd >= 0)
		close(sb->lockfd);
	if (sb->dirfd >= 0)
		close(sb->dirfd);
	json_decref(sb->record);
	sbx_record_free(&sb->rec);
	free(sb->name);
	free(sb->dir);
	free(sb->record_error);
	sandbox_init(sb);
}

int sbx_sandbox_save(struct sbx_sandbox *sb, struct sbx_err *err)
{
	_cleanup_free_ char *text = NULL;
	int r;

	if (!sb->record || sb->dirfd < 0)
		return sbx_err_set(err, EINVAL, "sandbox '%s' has no record to save", sb->id);
	text = json_dumps(sb->record, JSON_INDENT(2) | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(9));
	if (!text)
		return sbx_err_set(err, EINVAL, "cannot serialize the record of sandbox '%s'",
				   sb->id);
	size_t len = strlen(text);
	text = sbx_xrealloc(text, len + 2);
	text[len++] = '\n';
	text[len] = '\0';
	r = atomic_write(sb->dirfd, "record.json", text, len);
	if (r < 0)
		return sbx_err_set(err, -r, "cannot write the record of sandbox '%s'", sb->id);
	return 0;
}

int sbx_state_rm_tree(int dirfd, const char *name)
{
	int r = sbx_rm_rf_at(dirfd, name);

	/* What a jail's subordinate id made (an ordinary user's jail mapping
	 * /etc/subuid): removed from a namespace with the same mapping. */
	if (r < 0 && geteuid() != 0) {
		struct sbx_subid sub;

		if (sbx_subid_lookup(geteuid(), getegid(), &sub))
			r = sbx_subid_rm_rf_at(&sub, dirfd, name);
	}
	return r;
}

int sbx_sandbox_remove(struct sbx_state *st, struct sbx_sandbox *sb, struct sbx_err *err)
{
	int r;

	if (st->sandboxes_fd < 0)
		return 0;
	sbx_state_release_name(st, sb->name, sb->id);
	r = sbx_state_rm_tree(st->sandboxes_fd, sb->id);
	if (r < 0)
		return sbx_err_set(err, -r, "cannot remove '%s'", sb->dir ? sb->dir : sb->id);
	return 0;
}

/* ---- running or not ---- */

static bool lock_held_at(int dirfd)
{
	_cleanup_close_ int fd =
	    openat(dirfd, "lock", O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return false;
	if (flock(fd, LOCK_SH | LOCK_NB) < 0)
		return errno == EWOULDBLOCK;
	return false; /* closing fd drops our shared lock */
}

bool sbx_sandbox_lock_held(const struct sbx_sandbox *sb)
{
	if (sb->lockfd >= 0)
		return true; /* we hold it */
	return sb->dirfd >= 0 && lock_held_at(sb->dirfd);
}

/*
 * Is the recorded supervisor still alive?  (A jail that outlived a killed
 * supervisor may still hold the lock through an inherited fd: the lock
 * alone would then say "running" forever.)  Unknown = alive.
 */
static bool supervisor_alive(const struct sbx_record *rec)
{
	pid_t pid = rec->supervisor_pid;
	uint64_t now;

	if (pid <= 0 || pid > (1 << 30))
		return true;
	if (sbx_proc_starttime(pid, &now) < 0)
		return false;
	return !rec->supervisor_start || rec->supervisor_start == now;
}

bool sbx_sandbox_is_running(struct sbx_state *st, const char *id)
{
	struct sbx_sandbox sb;
	bool r = false;

	if (sbx_sandbox_open(st, id, false, &sb, NULL) < 0)
		return false;
	if (sb.record) {
		const char *s = sb.rec.state;

		r = s && (strcmp(s, "running") == 0 || strcmp(s, "created") == 0) &&
		    lock_held_at(sb.dirfd) && supervisor_alive(&sb.rec);
	}
	sbx_sandbox_close(&sb);
	return r;
}

/*
 * No record: `sbx run` saves the first one (sbx_sandbox_create_unsaved)
 * while the jail is being built.  A directory with no record.json but a
 * lock file is such a sandbox: being set up while its lock is held, lost
 * once nobody holds it (sbx died first).  Anything else (no lock file, an
 * unreadable record) is a leftover: unknown.
 */
static const char *recordless_state(const struct sbx_sandbox *sb)
{
	struct stat st;

	if (sb->dirfd < 0 || fstatat(sb->dirfd, "record.json", &st, AT_SYMLINK_NOFOLLOW) == 0 ||
	    errno != ENOENT || fstatat(sb->dirfd, "lock", &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !S_ISREG(st.st_mode))
		return "unknown";
	return sb->lockfd >= 0 || lock_held_at(sb->dirfd) ? "created" : "lost";
}

const char *sbx_sandbox_state(const struct sbx_sandbox *sb, int *code)
{
	const struct sbx_record_exit *ex = &sb->rec.exit;
	const char *s, *reason;

	*code = 0;
	if (!sb->record)
		return recordless_state(sb);
	s = sb->rec.state;
	if (!s || strcmp(s, "running") == 0 || strcmp(s, "created") == 0) {
		if (sb->lockfd < 0 && (!lock_held_at(sb->dirfd) || !supervisor_alive(&sb->rec)))
			return "lost";
		return s && strcmp(s, "created") == 0 ? "created" : "running";
	}
	if (strcmp(s, "lost") == 0)
		return "lost";
	reason = ex->reason;
	if (!reason)
		return s;
	if (strcmp(reason, "exited") == 0) {
		*code = ex->code < 0 ? 0 : ex->code;
		return "exited";
	}
	if (strcmp(reason, "signaled") == 0) {
		*code = ex->signal;
		return "killed";
	}
	if (strcmp(reason, "timeout") == 0 || strcmp(reason, "oom") == 0 ||
	    strcmp(reason, "error") == 0 || strcmp(reason, "lost") == 0 ||
	    strcmp(reason, "not-found") == 0 || strcmp(reason, "not-executable") == 0 ||
	    strcmp(reason, "stopped") == 0)
		return reason;
	return s;
}

/* ---- leftovers ---- */

static void gc_new_dirs(struct sbx_state *st, struct sbx_strv *removed)
{
	DIR *d = sbx_opendir_at(st->sandboxes_fd, ".");
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		_cleanup_close_ int dfd = -1;

		if (strncmp(de->d_name, ".new-", 5) != 0)
			continue;
		struct stat ds;

		dfd = openat(st->sandboxes_fd, de->d_name, DIR_FLAGS);
		/* Being created right now: locked, or too young to have its lock yet. */
		if (dfd < 0 || fstat(dfd, &ds) < 0 || time(NULL) - ds.st_mtime < 60 ||
		    lock_held_at(dfd))
			continue;
		if (sbx_rm_rf_at(st->sandboxes_fd, de->d_name) == 0)
			sbx_strv_push_take(
			    removed, sbx_xasprintf("sandboxes/%s (half-created)", de->d_name));
	}
	closedir(d);
}

static void gc_names(struct sbx_state *st, struct sbx_strv *removed)
{
	_cleanup_close_ int lk = -1;
	DIR *d = sbx_opendir_at(st->state_fd, "names");
	struct dirent *de;

	if (!d)
		return;
	lk = openat(st->state_fd, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (lk >= 0)
		(void)flock(lk, LOCK_EX);
	while ((de = readdir(d))) {
		char id[SBX_ID_LEN + 1];

		if (de->d_name[0] == '.' && strstr(de->d_name, ".tmp-")) {
			(void)unlinkat(dirfd(d), de->d_name, 0); /* interrupted write */
			continue;
		}
		if (sbx_state_check_name(de->d_name, NULL) < 0)
			continue;
		if (sbx_state_read_name(st, de->d_name, id) == 0 &&
		    sbx_state_sandbox_exists(st, id))
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) == 0)
			sbx_strv_push_take(removed, sbx_xasprintf("names/%s", de->d_name));
	}
	closedir(d);
}

int sbx_state_gc(struct sbx_state *st, struct sbx_strv *removed, struct sbx_err *err)
{
	if (st->sandboxes_fd < 0 || st->state_fd < 0)
		return 0;
	gc_new_dirs(st, removed);
	gc_names(st, removed);
	sbx_state_purge(st, removed);
	return 0;
}
