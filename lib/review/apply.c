/* SPDX-License-Identifier: MIT */
/*
 * lib/review/apply.c - `sbx apply`: a sandbox's change set written into the
 * host directories.
 *
 * Three passes, so that nothing is half-applied: check every entry (what
 * the jail planted that cannot be applied, host files changed since the
 * sandbox started); write every new file's contents to a temporary file in
 * its overlay's host directory (created 0600, the mode set after); then
 * delete, make directories and rename the temporaries into place, in path
 * order (deletions deepest first).  A failure in the second pass removes
 * the temporaries and changes nothing.  Host paths are reached one
 * component at a time with O_NOFOLLOW below the overlay's directory fd: a
 * symlink on the host side is never followed, nothing outside is written.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "review_int.h"

struct stage {
	char *tmp; /* name of the temporary in the overlay's host directory */
};

static bool selected(const struct sbx_review_entry *e, const struct sbx_apply_opts *o)
{
	return !(e->flags & SBX_FLAG_GIT_DIR) || o->git_dir;
}

/* Who owns what is written: the file it replaces, else its directory. */
static void owner_of(int host, const char *rel, uid_t *uid, gid_t *gid)
{
	struct stat st;
	_cleanup_free_ char *dir = sbx_xstrdup(rel);
	char *slash = strrchr(dir, '/');

	if (sbx_review_lstat(host, rel, &st) == 0 ||
	    (slash && (*slash = '\0', sbx_review_lstat(host, dir, &st) == 0)) ||
	    fstat(host, &st) == 0) {
		*uid = st.st_uid;
		*gid = st.st_gid;
		return;
	}
	*uid = geteuid();
	*gid = getegid();
}

static mode_t safe_mode(mode_t m)
{
	return m & 0777; /* no set-user-ID, set-group-ID or sticky bit from the jail */
}

static int copy_to(int ufd, int tfd, const char *shown, struct sbx_err *err)
{
	char buf[65536];
	ssize_t n;

	while ((n = sbx_read_all(ufd, buf, sizeof(buf))) > 0)
		if (sbx_write_all(tfd, buf, (size_t)n) < 0)
			return sbx_err_set(err, errno, "cannot write '%s'", shown);
	if (n < 0)
		return sbx_err_set(err, (int)-n, "cannot read '%s' in the sandbox", shown);
	if (fdatasync(tfd) < 0)
		return sbx_err_set(err, errno, "cannot write '%s'", shown);
	return 0;
}

/* The new contents of e, in a temporary file (or symlink) of its overlay's
 * host directory. */
static int stage_one(const struct sbx_review *r, const struct sbx_review_entry *e, struct stage *s,
		     struct sbx_err *err)
{
	const struct sbx_review_overlay *ov = &r->ov[e->ov];
	const char *uname = NULL;
	_cleanup_close_ int udir = sbx_review_dirfd(ov->upper_fd, e->rel, true, &uname);
	_cleanup_close_ int ufd = -1, tfd = -1;
	uid_t uid;
	gid_t gid;
	int rc;

	if (udir < 0)
		return sbx_err_set(err, -udir, "cannot open '%s' in the sandbox", e->shown);
	s->tmp = sbx_xasprintf(".sbx-apply-%d-%08x", (int)getpid(), (unsigned)random());
	owner_of(ov->host_fd, e->rel, &uid, &gid);
	if (S_ISLNK(e->new_mode)) {
		size_t len;
		_cleanup_free_ char *t = sbx_review_read(ov->upper_fd, e->rel, true, &len);

		if (!t || symlinkat(t, ov->host_fd, s->tmp) < 0)
			return sbx_err_set(err, errno, "cannot write the symlink '%s'", e->shown);
		if (geteuid() == 0 &&
		    fchownat(ov->host_fd, s->tmp, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
			return sbx_err_set(err, errno, "cannot give '%s' to uid %u", e->shown, uid);
		return 0;
	}
	ufd = openat(udir, uname, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (ufd < 0)
		return sbx_err_set(err, errno, "cannot open '%s' in the sandbox", e->shown);
	tfd =
	    openat(ov->host_fd, s->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (tfd < 0)
		return sbx_err_set(err, errno, "cannot write in '%s'", ov->host);
	rc = copy_to(ufd, tfd, e->shown, err);
	if (rc == 0 && geteuid() == 0 && fchown(tfd, uid, gid) < 0)
		rc = sbx_err_set(err, errno, "cannot give '%s' to uid %u", e->shown, uid);
	if (rc == 0 && fchmod(tfd, safe_mode(e->new_mode)) < 0)
		rc = sbx_err_set(err, errno, "cannot set the mode of '%s'", e->shown);
	return rc;
}

static void unstage(const struct sbx_review *r, struct stage *st)
{
	for (size_t i = 0; i < r->n; i++) {
		if (st[i].tmp)
			(void)unlinkat(r->ov[r->e[i].ov].host_fd, st[i].tmp, 0);
		free(st[i].tmp);
		st[i].tmp = NULL;
	}
}

static int delete_one(const struct sbx_review *r, const struct sbx_review_entry *e,
		      struct sbx_err *err)
{
	const char *name = NULL;
	_cleanup_close_ int dfd = sbx_review_dirfd(r->ov[e->ov].host_fd, e->rel, true, &name);

	if (dfd < 0)
		return dfd == -ENOENT ? 0 : sbx_err_set(err, -dfd, "cannot reach '%s'", e->shown);
	if (unlinkat(dfd, name, S_ISDIR(e->old_mode) ? AT_REMOVEDIR : 0) < 0 && errno != ENOENT)
		return sbx_err_set(err, errno, "cannot remove '%s'", e->shown);
	return 0;
}

/* Put e in place: a directory made or its mode set, a file renamed in. */
static int place_one(const struct sbx_review *r, const struct sbx_review_entry *e,
		     const struct stage *s, struct sbx_apply_stats *st, struct sbx_err *err)
{
	const struct sbx_review_overlay *ov = &r->ov[e->ov];
	const char *name = NULL;
	_cleanup_close_ int dfd = sbx_review_dirfd(ov->host_fd, e->rel, true, &name);
	struct stat cur;
	uid_t uid;
	gid_t gid;

	if (dfd < 0)
		return sbx_err_set(
		    err, -dfd, "cannot reach the directory of '%s'%s", e->shown,
		    dfd == -ELOOP || dfd == -ENOTDIR ? " (a symlink on the host side)" : "");
	if (S_ISDIR(e->new_mode)) {
		bool exists = fstatat(dfd, name, &cur, AT_SYMLINK_NOFOLLOW) == 0;

		if (exists && !S_ISDIR(cur.st_mode) && unlinkat(dfd, name, 0) < 0)
			return sbx_err_set(err, errno, "cannot replace '%s'", e->shown);
		if (!exists || !S_ISDIR(cur.st_mode)) {
			owner_of(ov->host_fd, e->rel, &uid, &gid);
			if (mkdirat(dfd, name, 0700) < 0)
				return sbx_err_set(err, errno, "cannot make '%s'", e->shown);
			if (geteuid() == 0 &&
			    fchownat(dfd, name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
				return sbx_err_set(err, errno, "cannot give '%s' to uid %u",
						   e->shown, uid);
			st->dirs++;
		}
		if (fchmodat(dfd, name, safe_mode(e->new_mode), 0) < 0)
			return sbx_err_set(err, errno, "cannot set the mode of '%s'", e->shown);
		return 0;
	}
	if (fstatat(dfd, name, &cur, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(cur.st_mode) &&
	    unlinkat(dfd, name, AT_REMOVEDIR) < 0)
		return sbx_err_set(err, errno, "cannot replace the directory '%s'", e->shown);
	if (renameat(ov->host_fd, s->tmp, dfd, name) < 0)
		return sbx_err_set(err, errno, "cannot put '%s' in place", e->shown);
	st->written++;
	return 0;
}

/* Is the way to rel's directory on the host free of symlinks (a missing
 * directory is made by the apply)?  NULL, or why not. */
static const char *host_way(const struct sbx_review *r, const struct sbx_review_entry *e)
{
	const char *name = NULL;
	int fd = sbx_review_dirfd(r->ov[e->ov].host_fd, e->rel, true, &name);

	if (fd >= 0) {
		close(fd);
		return NULL;
	}
	if (fd == -ENOENT)
		return NULL;
	return fd == -ELOOP || fd == -ENOTDIR ? "a symlink (or a file) on the host side of its path"
					      : "its directory cannot be reached on the host";
}

/* The first pass: every problem named, -EEXIST when one stops the apply. */
static int check(const struct sbx_review *r, const struct sbx_apply_opts *o,
		 struct sbx_apply_stats *st, struct sbx_strv *problems, const char **way)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct sbx_review_entry *e = &r->e[i];

		if (!selected(e, o)) {
			st->skipped_git++;
			continue;
		}
		way[i] = e->refused ? NULL : host_way(r, e);
		if (way[i]) {
			st->refused++;
			sbx_strv_push_take(problems,
					   sbx_xasprintf("refused: '%s': %s", e->shown, way[i]));
		} else if (e->refused) {
			st->refused++;
			sbx_strv_push_take(
			    problems, sbx_xasprintf("refused: '%s': %s", e->shown, e->refused));
		} else if (e->conflict) {
			st->conflicts++;
			sbx_strv_push_take(
			    problems, sbx_xasprintf("conflict: '%s' changed on the host after the "
						    "sandbox started",
						    e->shown));
		}
	}
	return (st->refused || st->conflicts) && !o->force ? -EEXIST : 0;
}

static bool applies(const struct sbx_review_entry *e, const struct sbx_apply_opts *o,
		    const char *way)
{
	return selected(e, o) && !e->refused && !way && (!e->conflict || o->force);
}

int sbx_review_apply(const struct sbx_review *r, const struct sbx_apply_opts *o,
		     struct sbx_apply_stats *st, struct sbx_err *err)
{
	struct sbx_strv *problems = &st->problems;
	struct stage *stages = sbx_xcalloc(r->n + 1, sizeof(*stages));
	const char **way = sbx_xcalloc(r->n + 1, sizeof(*way));
	int rc;

	memset(st, 0, sizeof(*st));
	rc = check(r, o, st, problems, way);
	if (rc < 0) {
		sbx_err_set(err, 0,
			    "nothing applied: %zu refused, %zu in conflict (--force applies "
			    "the rest)",
			    st->refused, st->conflicts);
		goto out;
	}
	for (size_t i = 0; !o->dry_run && rc == 0 && i < r->n; i++) {
		const struct sbx_review_entry *e = &r->e[i];

		if (applies(e, o, way[i]) && e->kind != 'D' &&
		    (S_ISREG(e->new_mode) || S_ISLNK(e->new_mode)))
			rc = stage_one(r, e, &stages[i], err);
	}
	if (rc < 0) {
		unstage(r, stages);
		goto out;
	}
	for (size_t i = r->n; !o->dry_run && rc == 0 && i-- > 0;)
		if (applies(&r->e[i], o, way[i]) && r->e[i].kind == 'D' &&
		    (rc = delete_one(r, &r->e[i], err)) == 0)
			st->removed++;
	for (size_t i = 0; !o->dry_run && rc == 0 && i < r->n; i++) {
		const struct sbx_review_entry *e = &r->e[i];

		if (!applies(e, o, way[i]) || e->kind == 'D')
			continue;
		rc = place_one(r, e, &stages[i], st, err);
		if (rc == 0)
			sbx_strv_push(&st->paths, e->shown);
	}
	for (size_t i = 0; i < r->n; i++)
		if (applies(&r->e[i], o, way[i]) && r->e[i].kind == 'D' && !o->dry_run && rc == 0)
			sbx_strv_push(&st->paths, r->e[i].shown);
	unstage(r, stages); /* what a failure left; placed ones are renamed away */
out:
	free(way);
	free(stages);
	return rc;
}

void sbx_apply_stats_free(struct sbx_apply_stats *st)
{
	sbx_strv_free(&st->paths);
	sbx_strv_free(&st->problems);
}
