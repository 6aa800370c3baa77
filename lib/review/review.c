/* SPDX-License-Identifier: MIT */
/*
 * lib/review/review.c - the change set of a sandbox's copy-on-write host
 * directories (review.h): what each upper layer added, modified, deleted
 * or changed the type of, against the host's current files; what cannot
 * be applied and why; the files that run code later; and the host files
 * that changed after the sandbox started.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "changes.h"
#include "review_int.h"

/*
 * A host file whose ctime is later than this many ms before the sandbox
 * was created changed after the sandbox saw it.  File times may come from
 * the kernel's coarse clock, up to a tick (1-10 ms) behind the one the
 * record's time came from; 20 ms errs towards a conflict (a file written
 * in the last moments before the run), never towards a lost change.
 */
#define START_SLACK_MS 20.0

int sbx_review_dirfd(int root, const char *rel, bool parent, const char **last)
{
	const char *slash = parent ? strrchr(rel, '/') : NULL;
	_cleanup_free_ char *dir = slash ? sbx_xstrndup(rel, (size_t)(slash - rel)) : NULL;
	const char *path = parent ? dir : rel;
	int fd;

	if (parent && last)
		*last = slash ? slash + 1 : rel;
	if (!path || !*path) { /* the root itself */
		fd = dup(root);
		return fd < 0 ? -errno : fd;
	}
	return sbx_changes_open_dir(root, path);
}

int sbx_review_lstat(int root, const char *rel, struct stat *st)
{
	const char *name = NULL;
	int dfd = sbx_review_dirfd(root, rel, true, &name), r;

	if (dfd < 0)
		return dfd;
	r = fstatat(dfd, name, st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
	close(dfd);
	return r;
}

const char *sbx_review_flags_text(unsigned flags, char *buf, size_t len)
{
	static const char *const names[] = {
	    "git-dir", "git-hook",	 "git-config",	  "ci",
	    "editor",  "agent-settings", "shell-startup", "executable"};
	size_t n = 0;

	buf[0] = '\0';
	/* git-dir is said by the more precise ones when they are there */
	if ((flags & (SBX_FLAG_GIT_HOOK | SBX_FLAG_GIT_CONFIG)))
		flags &= ~(unsigned)SBX_FLAG_GIT_DIR;
	for (size_t i = 0; i < SBX_ARRAY_SIZE(names); i++)
		if ((flags & (1u << i)) && n < len)
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", names[i]);
	return buf;
}

static bool has_component(const char *rel, const char *c, const char **after)
{
	size_t n = strlen(c);

	for (const char *p = rel; p; p = strchr(p, '/') ? strchr(p, '/') + 1 : NULL) {
		if (!strncmp(p, c, n) && (p[n] == '/' || p[n] == '\0')) {
			if (after)
				*after = p[n] ? p + n + 1 : p + n;
			return true;
		}
	}
	return false;
}

static unsigned path_flags(const char *rel, bool home)
{
	static const char *const startup[] = {
	    ".bashrc",	 ".bash_profile", ".bash_login", ".bash_logout",
	    ".profile",	 ".zshrc",	  ".zshenv",	 ".zprofile",
	    ".zlogin",	 ".kshrc",	  ".mkshrc",	 ".inputrc",
	    ".xprofile", ".xsession",	  ".xinitrc",	 ".config/fish/config.fish"};
	unsigned f = 0;
	const char *in;

	if (has_component(rel, ".git", &in)) {
		f |= SBX_FLAG_GIT_DIR;
		if (!strncmp(in, "hooks/", 6) || !strcmp(in, "hooks"))
			f |= SBX_FLAG_GIT_HOOK;
		if (!strcmp(in, "config"))
			f |= SBX_FLAG_GIT_CONFIG;
	}
	if ((has_component(rel, ".github", &in) && !strncmp(in, "workflows", 9)) ||
	    !strcmp(strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel, ".gitlab-ci.yml"))
		f |= SBX_FLAG_CI;
	if (has_component(rel, ".vscode", NULL) || has_component(rel, ".idea", NULL))
		f |= SBX_FLAG_EDITOR;
	if (has_component(rel, ".claude", NULL) || has_component(rel, ".codex", NULL) ||
	    has_component(rel, ".gemini", NULL))
		f |= SBX_FLAG_AGENT;
	for (size_t i = 0; home && i < SBX_ARRAY_SIZE(startup); i++)
		if (!strcmp(rel, startup[i]))
			f |= SBX_FLAG_SHELL_STARTUP;
	return f;
}

static double ms_of(const struct timespec *t)
{
	return (double)t->tv_sec * 1000.0 + (double)t->tv_nsec / 1e6;
}

static bool changed_since(const struct stat *st, double started)
{
	return ms_of(&st->st_ctim) >= started - START_SLACK_MS ||
	       ms_of(&st->st_mtim) >= started - START_SLACK_MS;
}

/* ---- building the set ---- */

struct build {
	struct sbx_review *r;
	size_t ov;
	char *const *paths;
	size_t n_paths;
	const char *relative; /* only below this directory, or NULL */
	size_t cap;
};

/* Is full (an absolute path) dir, or below it? */
static bool below(const char *full, const char *dir)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (n == 1 && dir[0] == '/')
		return true;
	return !strncmp(full, dir, n) && (full[n] == '\0' || full[n] == '/');
}

/* Is the host path host/rel one of the paths asked for, or below one? */
static bool wanted(const struct build *b, const char *rel)
{
	const char *host = b->r->ov[b->ov].host;
	_cleanup_free_ char *full = NULL;

	if (!b->n_paths && !b->relative)
		return true;
	full = sbx_xasprintf("%s%s%s", host, strcmp(host, "/") ? "/" : "", rel);
	if (b->relative && !below(full, b->relative))
		return false;
	if (!b->n_paths)
		return true;
	for (size_t i = 0; i < b->n_paths; i++)
		if (below(full, b->paths[i]))
			return true;
	return false;
}

static struct sbx_review_entry *add(struct build *b, char kind, const char *rel)
{
	struct sbx_review *r = b->r;
	struct sbx_review_entry *e;

	if (r->n == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 64;
		r->e = sbx_xrealloc(r->e, b->cap * sizeof(*r->e));
	}
	e = &r->e[r->n++];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->ov = b->ov;
	e->rel = sbx_xstrdup(rel);
	e->shown = sbx_xasprintf("%s%s", r->ov[b->ov].prefix, rel);
	e->flags = path_flags(rel, r->ov[b->ov].home);
	return e;
}

/* A symlink target that stays inside the overlay's directory. */
static bool link_inside(const char *rel, const char *target)
{
	int depth = 0;
	_cleanup_free_ char *t = NULL;
	char *save = NULL;

	if (!*target || target[0] == '/')
		return false;
	for (const char *p = rel; (p = strchr(p, '/')); p++)
		depth++; /* directories above the link, within the overlay */
	t = sbx_xstrdup(target);
	for (char *c = strtok_r(t, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (!strcmp(c, ".."))
			depth--;
		else if (strcmp(c, "."))
			depth++;
		if (depth < 0)
			return false;
	}
	return true;
}

static const char *upper_refusal(const struct sbx_change *c, const char *rel)
{
	const struct stat *st = c->st;
	char target[4096];
	ssize_t n;

	if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode))
		return "a device node";
	if (S_ISFIFO(st->st_mode))
		return "a fifo";
	if (S_ISSOCK(st->st_mode))
		return "a socket";
	if (S_ISREG(st->st_mode) && st->st_nlink > 1)
		return "a hard link (more than one name for one file)";
	if (S_ISLNK(st->st_mode)) {
		n = readlinkat(c->dirfd, c->name, target, sizeof(target) - 1);
		if (n < 0)
			return "an unreadable symlink";
		target[n] = '\0';
		if (!link_inside(rel, target))
			return target[0] == '/' ? "a symlink to an absolute path"
						: "a symlink that points out of the directory";
	}
	return NULL;
}

/* Same bytes?  (Regular files of the same size.) */
static bool same_content(int ufd, const char *uname, int hfd, const char *hname)
{
	_cleanup_close_ int a = openat(ufd, uname, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	_cleanup_close_ int b = openat(hfd, hname, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	char x[65536], y[65536];

	if (a < 0 || b < 0)
		return false;
	for (;;) {
		ssize_t m = sbx_read_all(a, x, sizeof(x)), n = sbx_read_all(b, y, sizeof(y));

		if (m < 0 || n < 0 || m != n || memcmp(x, y, (size_t)m))
			return false;
		if (m == 0)
			return true;
	}
}

static bool same_link(int ufd, const char *uname, int hfd, const char *hname)
{
	char a[4096], b[4096];
	ssize_t m = readlinkat(ufd, uname, a, sizeof(a)), n = readlinkat(hfd, hname, b, sizeof(b));

	return m >= 0 && m == n && !memcmp(a, b, (size_t)m);
}

/* Every file and directory of the host tree at rel, deleted (deepest last
 * in the list; apply removes in reverse). */
static void add_deleted_tree(struct build *b, const char *rel, const struct stat *st)
{
	struct sbx_review_entry *e = add(b, 'D', rel);
	int host = b->r->ov[b->ov].host_fd;
	_cleanup_close_ int dfd = -1;
	DIR *d;
	struct dirent *de;

	e->old_mode = st->st_mode;
	if (!S_ISDIR(st->st_mode))
		return;
	dfd = sbx_review_dirfd(host, rel, false, NULL);
	if (dfd < 0 || !(d = fdopendir(dfd)))
		return;
	dfd = -1;
	while ((de = readdir(d))) {
		_cleanup_free_ char *sub = NULL;
		struct stat cs;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		sub = sbx_xasprintf("%s/%s", rel, de->d_name);
		if (fstatat(dirfd(d), de->d_name, &cs, AT_SYMLINK_NOFOLLOW) == 0)
			add_deleted_tree(b, sub, &cs);
	}
	closedir(d);
}

/* An opaque directory hides the host's entries below it that the upper
 * does not have: each of them is deleted. */
static void add_hidden(struct build *b, const struct sbx_change *c, const char *rel)
{
	int host = b->r->ov[b->ov].host_fd;
	_cleanup_close_ int hfd = sbx_review_dirfd(host, rel, false, NULL);
	_cleanup_close_ int ufd =
	    openat(c->dirfd, c->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d;
	struct dirent *de;

	if (hfd < 0 || ufd < 0)
		return;
	d = fdopendir(hfd);
	if (!d)
		return;
	hfd = -1;
	while ((de = readdir(d))) {
		struct stat hs, us;
		_cleanup_free_ char *sub = NULL;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(ufd, de->d_name, &us, AT_SYMLINK_NOFOLLOW) == 0)
			continue; /* the upper's own entry: walked as A */
		if (fstatat(dirfd(d), de->d_name, &hs, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		sub = sbx_xasprintf("%s/%s", rel, de->d_name);
		add_deleted_tree(b, sub, &hs);
	}
	closedir(d);
}

static void classify(struct build *b, const struct sbx_change *c, const char *rel,
		     const struct stat *hs)
{
	int host = b->r->ov[b->ov].host_fd;
	const struct stat *us = c->st;
	const char *hname = NULL;
	_cleanup_close_ int hdir = sbx_review_dirfd(host, rel, true, &hname);
	struct sbx_review_entry *e;
	char kind;

	if (S_ISDIR(us->st_mode) && S_ISDIR(hs->st_mode)) {
		if (c->opaque)
			add_hidden(b, c, rel);
		if ((us->st_mode & 07777) == (hs->st_mode & 07777))
			return; /* copied up for what changed below it */
		kind = 'M';
	} else if ((us->st_mode & S_IFMT) != (hs->st_mode & S_IFMT)) {
		kind = 'T';
	} else if (S_ISREG(us->st_mode)) {
		if ((us->st_mode & 07777) == (hs->st_mode & 07777) && us->st_size == hs->st_size &&
		    hdir >= 0 && same_content(c->dirfd, c->name, hdir, hname))
			return; /* copied up, not changed (chown, touch) */
		kind = 'M';
	} else if (S_ISLNK(us->st_mode)) {
		if (hdir >= 0 && same_link(c->dirfd, c->name, hdir, hname))
			return;
		kind = 'M';
	} else {
		kind = 'M'; /* a fifo or device over a host one: refused below */
	}
	if (kind == 'T' && S_ISDIR(hs->st_mode))
		add_deleted_tree(b, rel, hs);
	e = add(b, kind, rel);
	e->old_mode = hs->st_mode;
	e->new_mode = us->st_mode;
	e->size = us->st_size;
	e->opaque = c->opaque;
	e->conflict = changed_since(hs, b->r->started_ms);
	e->refused = upper_refusal(c, rel);
	e->setid = (us->st_mode & (S_ISUID | S_ISGID)) && !S_ISDIR(us->st_mode);
	if (S_ISREG(us->st_mode) && (us->st_mode & 0111) && !(hs->st_mode & 0111))
		e->flags |= SBX_FLAG_EXECUTABLE;
}

/* A host file created or deleted next to rel since the start shows in its
 * directory's times. */
static bool parent_changed(struct build *b, const char *rel)
{
	int host = b->r->ov[b->ov].host_fd;
	_cleanup_free_ char *dir = sbx_xstrdup(rel);
	char *slash = strrchr(dir, '/');
	struct stat st;
	int r;

	if (slash)
		*slash = '\0';
	r = slash ? sbx_review_lstat(host, dir, &st) : fstat(host, &st) < 0 ? -errno : 0;
	return r == 0 && changed_since(&st, b->r->started_ms);
}

/*
 * Is the upper entry the command's own, made in the sandbox (not a host
 * file copied up to be changed)?  Overlayfs marks a copy-up with an
 * origin xattr (user.overlay.origin in the jail's user namespace,
 * trusted.overlay.origin otherwise); a new file has none.  Not known
 * (false) where the upper takes no such xattr (a symlink's user ones).
 */
static bool made_in_sandbox(const struct sbx_change *c)
{
	char path[64 + 256];
	ssize_t u, t;

	if (strlen(c->name) > 255)
		return false;
	snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", c->dirfd, c->name);
	u = lgetxattr(path, "user.overlay.origin", NULL, 0);
	if (u >= 0 || errno != ENODATA)
		return false;
	t = lgetxattr(path, "trusted.overlay.origin", NULL, 0);
	return t < 0 && (errno == ENODATA || errno == EPERM);
}

static int on_change(const struct sbx_change *c, void *data)
{
	struct build *b = data;
	int host = b->r->ov[b->ov].host_fd;
	const char *rel = c->rel;
	struct stat hs;
	struct sbx_review_entry *e;
	bool on_host;

	if (!rel || !*rel || !wanted(b, rel))
		return 0;
	on_host = sbx_review_lstat(host, rel, &hs) == 0;
	if (c->kind == 'D') {
		if (!on_host)
			return 0; /* gone on both sides */
		size_t first = b->r->n;

		add_deleted_tree(b, rel, &hs);
		b->r->e[first].conflict = changed_since(&hs, b->r->started_ms);
		return 0;
	}
	if (on_host) { /* C, or A below an opaque directory */
		classify(b, c, rel, &hs);
		return 0;
	}
	e = add(b, 'A', rel);
	e->new_mode = c->st->st_mode;
	e->size = c->st->st_size;
	e->opaque = c->opaque;
	e->refused = upper_refusal(c, rel);
	e->setid = (c->st->st_mode & (S_ISUID | S_ISGID)) && !S_ISDIR(c->st->st_mode);
	/* not on the host: a file the command made, or one it changed that
	 * the host removed since (its directory's times show that; also a
	 * file written there just before the run, within the clock's slack,
	 * so a file known to be the command's own is none) */
	e->conflict = parent_changed(b, rel) && !made_in_sandbox(c);
	if (S_ISREG(c->st->st_mode) && (c->st->st_mode & 0111))
		e->flags |= SBX_FLAG_EXECUTABLE;
	return 0;
}

/* ---- the overlays ---- */

/* A home directory: its owner's, or the caller's $HOME. */
static bool is_home(int fd, const char *host)
{
	const char *home = getenv("HOME");
	struct stat st;
	struct passwd *pw;

	if (home && !strcmp(home, host))
		return true;
	if (fstat(fd, &st) < 0)
		return false;
	pw = sbx_user(st.st_uid);
	return pw && pw->pw_dir && !strcmp(pw->pw_dir, host);
}

/* When the sandbox was created, in ms (0 when unknown: every host
 * change then reads as later, a conflict). */
static double parse_created(const char *t)
{
	double s = sbx_rfc3339_parse(t);

	return s < 0 ? 0 : s * 1000.0;
}

/* Does one of the PATHs given lie below dir, or dir below it (all do
 * when none is given), and so the --relative directory? */
static bool concerns(const char *dir, char *const *paths, size_t n_paths, const char *relative)
{
	bool any = n_paths == 0;

	for (size_t i = 0; !any && i < n_paths; i++)
		any = sbx_path_under(paths[i], dir) || sbx_path_under(dir, paths[i]);
	return any && (!relative || sbx_path_under(relative, dir) || sbx_path_under(dir, relative));
}

/* The layers that are copy-on-write views of host directories: each
 * policy.filesystem.mounts entry of kind overlay. */
static int host_overlays(const struct sbx_sandbox *sb, struct sbx_review *r, struct sbx_err *err)
{
	struct sbx_layer *ls = NULL;
	size_t n = 0;
	int rc = sbx_changes_layers(sb, &ls, &n, err);

	if (rc < 0)
		return rc;
	r->ov = sbx_xcalloc(n + 1, sizeof(*r->ov));
	for (size_t i = 0; i < n; i++) {
		struct sbx_review_overlay *o;
		bool overlay = false;

		for (size_t k = 0; k < sb->rec.policy.filesystem.n_mounts; k++) {
			const struct sbx_record_mount *m = &sb->rec.policy.filesystem.mounts[k];

			overlay |= m->kind && !strcmp(m->kind, "overlay") && m->dst && m->src &&
				   !strcmp(m->dst, ls[i].target) && ls[i].lower &&
				   !strcmp(m->src, ls[i].lower);
		}
		if (overlay && ls[i].lower_missing && sbx_dir_has_entry(ls[i].upper_fd, ".")) {
			sbx_strv_push(&r->gone, ls[i].lower);
			sbx_strv_push(&r->gone_why, strerror(ls[i].lower_errno));
		}
		if (!overlay || ls[i].lower_fd < 0)
			continue;
		o = &r->ov[r->n_ov++];
		o->host = sbx_xstrdup(ls[i].lower);
		o->target = sbx_xstrdup(ls[i].target);
		o->upper_fd = steal_fd(&ls[i].upper_fd);
		o->host_fd = steal_fd(&ls[i].lower_fd);
		o->home = is_home(o->host_fd, o->host);
	}
	sbx_changes_layers_free(ls, n);
	return 0;
}

/* One directory asked for: the paths below it relative to it (its
 * overlay: the one whose host directory is the longest prefix of it). */
static void relative_to(struct sbx_review *r, const char *dir)
{
	size_t best = SIZE_MAX, best_len = 0;
	const char *sub;
	struct stat st;

	for (size_t k = 0; k < r->n_ov; k++) {
		const char *host = r->ov[k].host;
		size_t n = strlen(host);

		if (!strncmp(dir, host, n) && (n == 1 || dir[n] == '/' || dir[n] == '\0') &&
		    (best == SIZE_MAX || n > best_len)) {
			best = k;
			best_len = n;
		}
	}
	if (best == SIZE_MAX)
		return;
	sub = best_len == 1 ? dir + 1 : dir + best_len + (dir[best_len] == '/');
	if (*sub && (sbx_review_lstat(r->ov[best].host_fd, sub, &st) < 0 || !S_ISDIR(st.st_mode)))
		return; /* a file, or not there: paths as they are */
	for (size_t i = 0; i < r->n; i++) {
		struct sbx_review_entry *e = &r->e[i];
		size_t sl = strlen(sub);

		if (e->ov != best)
			continue;
		free(e->shown);
		e->shown = sbx_xstrdup(!*sub		     ? e->rel
				       : strlen(e->rel) > sl ? e->rel + sl + 1
							     : ".");
	}
}

static int cmp_entry(const void *a, const void *b)
{
	const struct sbx_review_entry *x = a, *y = b;

	return strcmp(x->shown, y->shown);
}

int sbx_review_open(const struct sbx_sandbox *sb, char *const *paths, size_t n_paths,
		    const char *relative, struct sbx_review *r, struct sbx_err *err)
{
	struct build b = {.r = r, .paths = paths, .n_paths = n_paths, .relative = relative};
	size_t used = 0;
	int rc;

	memset(r, 0, sizeof(*r));
	r->started_ms = parse_created(sb->rec.created);
	rc = host_overlays(sb, r, err);
	if (rc < 0)
		return rc;
	for (size_t i = r->gone.n; i-- > 0;) {
		if (concerns(r->gone.v[i], paths, n_paths, relative))
			continue;
		free(r->gone.v[i]);
		free(r->gone_why.v[i]);
		memmove(&r->gone.v[i], &r->gone.v[i + 1], (r->gone.n - i) * sizeof(char *));
		memmove(&r->gone_why.v[i], &r->gone_why.v[i + 1],
			(r->gone_why.n - i) * sizeof(char *));
		r->gone.n--;
		r->gone_why.n--;
	}
	for (size_t i = 0; i < r->n_ov; i++)
		r->ov[i].prefix = sbx_xstrdup("");
	for (size_t i = 0; rc == 0 && i < r->n_ov; i++) {
		size_t before = r->n;

		b.ov = i;
		rc = sbx_changes_walk(r->ov[i].upper_fd, r->ov[i].host_fd, "", on_change, &b,
				      &r->n_errors, err);
		used += r->n > before;
	}
	if (rc < 0)
		return rc;
	/* Several directories changed: every path says which. */
	if (used > 1) {
		for (size_t i = 0; i < r->n_ov; i++) {
			free(r->ov[i].prefix);
			r->ov[i].prefix = sbx_xasprintf("%s/", r->ov[i].host + 1);
		}
		for (size_t i = 0; i < r->n; i++) {
			free(r->e[i].shown);
			r->e[i].shown =
			    sbx_xasprintf("%s%s", r->ov[r->e[i].ov].prefix, r->e[i].rel);
		}
	}
	if (relative)
		relative_to(r, relative);
	else if (n_paths == 1)
		relative_to(r, paths[0]);
	qsort(r->e, r->n, sizeof(*r->e), cmp_entry);
	return 0;
}

void sbx_review_free(struct sbx_review *r)
{
	for (size_t i = 0; i < r->n_ov; i++) {
		free(r->ov[i].host);
		free(r->ov[i].target);
		free(r->ov[i].prefix);
		sbx_closep(&r->ov[i].upper_fd);
		sbx_closep(&r->ov[i].host_fd);
	}
	free(r->ov);
	for (size_t i = 0; i < r->n; i++) {
		free(r->e[i].rel);
		free(r->e[i].shown);
	}
	free(r->e);
	sbx_strv_free(&r->gone);
	sbx_strv_free(&r->gone_why);
	memset(r, 0, sizeof(*r));
}
