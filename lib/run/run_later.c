/* SPDX-License-Identifier: MIT */
/*
 * lib/run/run_later.c - what the host runs later, changed during a run:
 * git repositories in what it shares read-write with the host, and the
 * profile's watched files (an agent's hooks).
 *
 * git runs what a repository's directory says (its hooks, commands in its
 * config, the directory a commondir or a .git file names), later, on the
 * host, as its owner; an editor runs `git status` on its own.  A bind's
 * own .git goes in read-only (sbx_config_protect_git), but a repository
 * the command makes where there was none (`git init` in the project, or
 * in a directory of it) cannot be kept from being made.  So after the
 * run, each .git in a read-write bind or in a directory right below one
 * (where an editor looks for repositories) whose config, commondir,
 * config.worktree, hooks directory or hooks, or what its config names
 * in the work tree (a core.hooksPath directory, relative or absolute; an
 * included file),
 * changed since the command started is named in the run log, the exit event and the record, for
 * the user to look at before using git there.  A .git file (a worktree's
 * or a submodule's) counts when it changed.  File times are compared on
 * the clock the kernel stamps them with (CLOCK_REALTIME_COARSE).  Only
 * times are read and nothing is written.  A symlink below a bind is
 * followed only where git follows it and only when it is older than the
 * run (.git itself, its hooks directory, a hook, its config: where they
 * lead went in read-only, sbx_config_protect_git, or was not there); one
 * made or changed during the run counts as changed, and no other is
 * followed (O_NOFOLLOW, AT_SYMLINK_NOFOLLOW).  A watch path's last
 * component is not followed either.
 *
 * The same for each path of the profile's [filesystem] watch: a file an
 * agent (or another program) runs commands from when it next starts,
 * outside sbx too (Claude Code's settings.json hooks, Codex's notify),
 * or follows the instructions of (a CLAUDE.md, a skill): named when it
 * was made or changed while the command ran; a directory when it, an
 * entry in it or an entry of a directory in it was.
 */
#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "gitconfig.h"
#include "run_int.h"

/* entries right below a bind looked at, at most */
#define GIT_SCAN_ENTRIES 16384
/* hooks looked at in one .git/hooks, at most */
#define GIT_SCAN_HOOKS 256

static bool since(const struct stat *st, const struct timespec *t)
{
	return st->st_ctim.tv_sec > t->tv_sec ||
	       (st->st_ctim.tv_sec == t->tv_sec && st->st_ctim.tv_nsec >= t->tv_nsec);
}

/* The directory open at fd (taken): it, or an entry in it (depth 1: right
 * in it; 2: in a directory right in it too), changed since t?  At most
 * *budget entries looked at in all.  links: an entry that is a symlink
 * older than t counts when what it leads to changed (a hook git
 * follows to a script of the work tree). */
static bool tree_changed(int fd, const struct timespec *t, int depth, size_t *budget, bool links)
{
	struct stat st;
	struct dirent *e;
	DIR *d;
	bool changed = false;

	if (fd < 0)
		return false;
	if (fstat(fd, &st) == 0 && since(&st, t)) {
		close(fd);
		return true;
	}
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return false;
	}
	while (!changed && *budget > 0 && (e = readdir(d))) {
		--*budget;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		changed = since(&st, t) ||
			  (links && S_ISLNK(st.st_mode) &&
			   fstatat(dirfd(d), e->d_name, &st, 0) == 0 && since(&st, t)) ||
			  (depth > 1 && S_ISDIR(st.st_mode) &&
			   tree_changed(openat(dirfd(d), e->d_name,
					       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC),
					t, depth - 1, budget, links));
	}
	closedir(d);
	return changed;
}

/* The hooks directory open at fd (taken): it, or a hook right in it (at
 * most GIT_SCAN_HOOKS looked at), or what an older symlink among them
 * leads to, changed since t? */
static bool hooks_changed(int fd, const struct timespec *t)
{
	size_t max = GIT_SCAN_HOOKS;

	return tree_changed(fd, t, 1, &max, true);
}

/* A .git/config being read: a core.hooksPath directory, or a file an
 * include.path or includeIf.*.path names, changed? */
struct git_named {
	int top;	 /* the work tree */
	const char *dir; /* its host path, for an absolute value */
	const struct timespec *t;
	bool includes; /* relative to .git (not a worktree's common directory) */
	bool changed;
};

/*
 * top/rel (rel as a config names it, ".." allowed but never above top),
 * made or changed since t: the end itself (a directory: or an entry right
 * in it), or a symlink on the way made or changed since (the command
 * making .husky/_ a symlink to a directory of its own).  Walked a
 * component at a time with no symlink followed; past an older symlink
 * nothing is known, and nothing is said.
 */
static bool named_changed(int top, const char *rel, bool dir, const struct timespec *t)
{
	_cleanup_free_ char *path = sbx_xmalloc(strlen(rel) + 1);
	struct stat st = {0};
	size_t o = 0;

	for (const char *p = rel; *p;) {
		const char *e = strchrnul(p, '/');
		size_t n = (size_t)(e - p);

		if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (o == 0)
				return false; /* above the bind */
			while (o > 0 && path[o - 1] != '/')
				o--;
			o -= o > 0;
		} else if (n && !(n == 1 && p[0] == '.')) {
			if (o)
				path[o++] = '/';
			memcpy(path + o, p, n);
			o += n;
			path[o] = '\0';
			if (fstatat(top, path, &st, AT_SYMLINK_NOFOLLOW) < 0)
				return false;
			if (S_ISLNK(st.st_mode))
				return since(&st, t);
		}
		p = *e ? e + 1 : e;
	}
	if (o == 0)
		return false;
	path[o] = '\0';
	if (dir && S_ISDIR(st.st_mode))
		return hooks_changed(
		    openat(top, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), t);
	return since(&st, t);
}

/*
 * Husky's hooks directory (core.hooksPath .husky/_, read-only in the jail)
 * runs the hook of the same name one directory up, .husky/pre-commit, a
 * tracked file of the project that the command may edit: that directory,
 * or a hook in it, made or changed since t (rel: the hooks path, relative
 * to the work tree top)?
 */
static bool husky_changed(int top, const char *rel, const struct timespec *t)
{
	/* "/.husky/_", cleaned; then ".husky", below top */
	_cleanup_free_ char *p = sbx_path_clean(rel, SBX_DOTDOT_REFUSE);
	size_t n = p ? strlen(p) : 0, budget = GIT_SCAN_HOOKS;

	if (n < 9 || strcmp(p + n - 9, "/.husky/_"))
		return false;
	p[n - 2] = '\0';
	return tree_changed(sbx_open_beneath(top, p + 1, O_RDONLY | O_DIRECTORY | O_CLOEXEC), t, 1,
			    &budget, false);
}

static int named_var(void *user, const char *section, const char *sub, const char *name,
		     const char *value)
{
	struct git_named *h = user;
	enum sbx_gitconfig_path kind = sbx_gitconfig_path_kind(section, sub, name);
	_cleanup_free_ char *inc = NULL, *abs = NULL;

	/* relative ones, and an absolute one in the work tree: one
	 * elsewhere is no bind's to check */
	if (!value || !*value || *value == '~')
		return 1;
	if (*value == '/') {
		size_t n = strcmp(h->dir, "/") ? strlen(h->dir) : 0;

		abs = sbx_path_clean(value, SBX_DOTDOT_COLLAPSE);
		if (kind != SBX_GITCONFIG_HOOKS || !sbx_path_under(abs, h->dir) ||
		    strlen(abs) <= n + 1)
			return 1;
		value = abs + n + 1;
	}
	if (kind == SBX_GITCONFIG_HOOKS) {
		/* relative to the work tree */
		h->changed =
		    named_changed(h->top, value, true, h->t) || husky_changed(h->top, value, h->t);
	} else if (kind == SBX_GITCONFIG_INCLUDE && h->includes) {
		/* relative to .git, where the config is; git reads it when it
		 * is there, so one made during the run counts */
		inc = sbx_xasprintf(".git/%s", value);
		h->changed = named_changed(h->top, inc, false, h->t);
	}
	return !h->changed;
}

/* dirfd's .git (dirfd: src, or src/name): made or changed since t?  What
 * its config names in the work tree too: a core.hooksPath directory
 * (husky's .husky/_), whose hooks git runs at the next commit, and a file
 * it includes (a tracked .gitconfig), whose config git runs as its own
 * (a linked worktree's: its hooks directory).  Made during the run
 * (they went in read-only when they were there: sbx_config_protect_git),
 * they are what git would run. */
static bool git_changed(int dirfd, const char *src, const char *name, const struct timespec *t)
{
	static const char *const files[] = {"config", "commondir", "config.worktree"};
	static const char *const configs[] = {"config", "config.worktree"};
	_cleanup_free_ char *top =
	    name ? sbx_xasprintf("%s/%s", strcmp(src, "/") ? src : "", name) : NULL;
	struct git_named h = {.top = dirfd, .dir = top ? top : src, .t = t, .includes = true};
	bool link = false;
	struct stat st;
	int g;

	if (fstatat(dirfd, ".git", &st, AT_SYMLINK_NOFOLLOW) < 0)
		return false;
	/* a symlink older than t to a directory (.git -> .repo-git): git
	 * follows it, and so does this; one made or changed since is named */
	if (S_ISLNK(st.st_mode) && !since(&st, t) && fstatat(dirfd, ".git", &st, 0) == 0 &&
	    S_ISDIR(st.st_mode))
		link = true;
	else if (!S_ISDIR(st.st_mode)) {
		/* a linked worktree's (or a submodule's) .git file: it, and
		 * a hooks directory its repository's config names here */
		struct sbx_strv cfgs = {0};

		h.includes = false;
		h.changed = since(&st, t);
		if (!h.changed && S_ISREG(st.st_mode) && sbx_git_file_configs(h.dir, &cfgs) == 0)
			for (size_t i = 0; !h.changed && i < cfgs.n; i++)
				(void)sbx_gitconfig_parse_fd(
				    open(cfgs.v[i], O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC),
				    named_var, &h);
		sbx_strv_free(&cfgs);
		return h.changed;
	}
	/* the directory's own time moves with every lock file git makes */
	g = openat(dirfd, ".git", O_RDONLY | O_DIRECTORY | (link ? 0 : O_NOFOLLOW) | O_CLOEXEC);
	if (g < 0)
		return false;
	/* each, or where it leads when it is a symlink older than t */
	for (size_t i = 0; !h.changed && i < SBX_ARRAY_SIZE(files); i++)
		h.changed = fstatat(g, files[i], &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    (since(&st, t) || (S_ISLNK(st.st_mode) &&
					       fstatat(g, files[i], &st, 0) == 0 && since(&st, t)));
	h.changed = h.changed ||
		    (fstatat(g, "hooks", &st, AT_SYMLINK_NOFOLLOW) == 0 && since(&st, t)) ||
		    hooks_changed(openat(g, "hooks", O_RDONLY | O_DIRECTORY | O_CLOEXEC), t);
	for (size_t i = 0; !h.changed && i < SBX_ARRAY_SIZE(configs); i++)
		(void)sbx_gitconfig_parse_fd(
		    openat(g, configs[i], O_RDONLY | O_NONBLOCK | O_CLOEXEC), named_var, &h);
	close(g);
	return h.changed;
}

static void add(struct sbx_strv *out, const char *dir, const char *name)
{
	_cleanup_free_ char *p = name ? sbx_xasprintf("%s/%s/.git", dir, name)
				      : sbx_xasprintf("%s/.git", strcmp(dir, "/") ? dir : "");
	char *e = sbx_escape_display(p);

	/* once, when two binds overlap; compared as kept (escaped) */
	if (sbx_strv_contains(out, e))
		free(e);
	else
		sbx_strv_push_take(out, e);
}

static void scan_bind(const char *src, const struct timespec *t, struct sbx_strv *out)
{
	int fd = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *e;
	size_t n = 0;
	DIR *d;

	if (fd < 0)
		return;
	if (git_changed(fd, src, NULL, t))
		add(out, src, NULL);
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while (n++ < GIT_SCAN_ENTRIES && (e = readdir(d))) {
		int sub;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    !strcmp(e->d_name, ".git") || (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN))
			continue;
		sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			continue;
		if (git_changed(sub, src, e->d_name, t))
			add(out, strcmp(src, "/") ? src : "", e->d_name);
		close(sub);
	}
	closedir(d);
}

/* path (no symlink followed at its end): made or changed since t; a
 * directory: it, an entry in it, or an entry of a directory in it (a
 * skill's skills/NAME/SKILL.md) */
static bool path_changed(const char *path, const struct timespec *t)
{
	size_t budget = GIT_SCAN_ENTRIES;
	struct stat st;

	if (lstat(path, &st) < 0)
		return false;
	if (since(&st, t))
		return true;
	return S_ISDIR(st.st_mode) &&
	       tree_changed(open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), t, 2,
			    &budget, false);
}

void sbx_later_watch_changed(const struct sbx_later *l, const struct sbx_config *cfg,
			     struct sbx_strv *out)
{
	if (!l->since.tv_sec)
		return;
	for (size_t i = 0; i < cfg->watch.n; i++)
		if (path_changed(cfg->watch.v[i], &l->since))
			sbx_strv_push_take(out, sbx_escape_display(cfg->watch.v[i]));
	sbx_later_keys_changed(l, cfg, out);
}

void sbx_later_git_changed(const struct sbx_later *l, const struct sbx_config *cfg,
			   struct sbx_strv *out)
{
	if (!l->since.tv_sec)
		return;
	for (size_t i = 0; i < cfg->n_mounts; i++) {
		const struct sbx_mount *m = &cfg->mounts[i];

		if (m->kind == SBX_MNT_BIND && m->src)
			scan_bind(m->src, &l->since, out);
	}
}
