/* SPDX-License-Identifier: MIT */
/* lib/profile/config.c - defaults and teardown of struct sbx_config, and the pass
 * that drops overlays an earlier overlay already shows. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "gitconfig.h"
#include "proc.h"

void sbx_config_init(struct sbx_config *c)
{
	memset(c, 0, sizeof(*c));
	c->persist = SBX_PERSIST_ON_FAILURE;
	c->stop_timeout_ms = SBX_STOP_TIMEOUT_DEFAULT_MS;
	c->rootfs_writable = true;
	c->env_clear = true;
	c->net = SBX_NET_NONE;
	c->capture = true;
	c->memory = c->pids = c->cpus_milli = c->time_ms = SBX_UNSET;
	c->nofile = c->fsize = c->disk = SBX_UNSET;
	c->image_size = c->image_entries = SBX_UNSET;
	c->seccomp = sbx_xstrdup("default");
	c->no_new_privs = true;
}

void sbx_config_free(struct sbx_config *c)
{
	free(c->profile_name);
	sbx_strv_free(&c->sources);
	free(c->rootfs);
	free(c->hostname);
	free(c->workdir);
	free(c->sudo_user);
	free(c->sudo_declined);
	for (size_t i = 0; i < c->n_mounts; i++) {
		free(c->mounts[i].src);
		free(c->mounts[i].dst);
		sbx_strv_free(&c->mounts[i].git_named);
	}
	free(c->mounts);
	sbx_strv_free(&c->env_pass);
	sbx_strv_free(&c->watch);
	for (size_t i = 0; i < c->n_watch_keys; i++) {
		free(c->watch_keys[i].path);
		sbx_strv_free(&c->watch_keys[i].keys);
	}
	free(c->watch_keys);
	sbx_strv_free(&c->env_set);
	for (size_t i = 0; i < c->n_secrets; i++) {
		free(c->secrets[i].name);
		free(c->secrets[i].ref);
		sbx_strv_free(&c->secrets[i].inject_hosts);
	}
	free(c->secrets);
	sbx_strv_free(&c->allow);
	sbx_strv_free(&c->publish);
	free(c->upstream_ca);
	free(c->seccomp);
	memset(c, 0, sizeof(*c));
}

const char *sbx_net_mode_name(enum sbx_net_mode m)
{
	static const char *const n[] = {"none", "loopback", "proxy", "host"};

	return (unsigned)m < SBX_ARRAY_SIZE(n) ? n[m] : "?";
}

const char *sbx_persist_name(enum sbx_persist p)
{
	static const char *const n[] = {"never", "on-failure", "always"};

	return (unsigned)p < SBX_ARRAY_SIZE(n) ? n[p] : "?";
}

const char *sbx_mount_kind_name(enum sbx_mount_kind k)
{
	static const char *const n[] = {"bind", "ro-bind", "overlay", "tmpfs", "mask"};

	return (unsigned)k < SBX_ARRAY_SIZE(n) ? n[k] : "?";
}

/* The rest of path p below dir ("" for dir itself, "/a/b"), or NULL. */
static const char *path_below(const char *p, const char *dir)
{
	size_t n = strlen(dir);

	if (p[0] != '/')
		return NULL;
	if (n == 1 && dir[0] == '/')
		return p[1] ? p : "";
	if (strncmp(p, dir, n) != 0 || (p[n] != '\0' && p[n] != '/'))
		return NULL;
	return p + n;
}

static bool related(const char *a, const char *b)
{
	return path_below(a, b) || path_below(b, a);
}

/* Both directories, on one and the same mount (no mount point between). */
static bool same_mount_dirs(const char *a, const char *b)
{
	struct statx sa, sb;
	const unsigned mask = STATX_TYPE | STATX_MNT_ID;

	return statx(AT_FDCWD, a, AT_SYMLINK_NOFOLLOW, mask, &sa) == 0 &&
	       statx(AT_FDCWD, b, AT_SYMLINK_NOFOLLOW, mask, &sb) == 0 &&
	       (sa.stx_mask & sb.stx_mask & STATX_MNT_ID) && S_ISDIR(sa.stx_mode) &&
	       S_ISDIR(sb.stx_mode) && sa.stx_mnt_id == sb.stx_mnt_id;
}

/* A mount point strictly below dir (or unknown: then yes). */
static bool mounts_below(const char *dir)
{
	struct sbx_strv m = {0};
	bool below = sbx_proc_mounts_under(dir, &m) < 0;

	for (size_t k = 0; !below && k < m.n; k++)
		below = strcmp(m.v[k], dir) != 0;
	sbx_strv_free(&m);
	return below;
}

/*
 * Through the outer overlay, a write below inner first copies inner and
 * the directories above it below outer into the writable layer: each must
 * be ours, or the copy-up may fail (an unprivileged jail maps only our
 * uid: EOVERFLOW) where an overlay of inner itself needs none.
 */
static bool path_ours(const char *outer, const char *inner)
{
	_cleanup_free_ char *p = sbx_xstrdup(inner);
	size_t n = strlen(outer);
	struct stat st;

	for (;;) {
		char *slash;

		if (strlen(p) <= n) /* outer itself is the layer's root: no copy-up */
			return true;
		if (lstat(p, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
			return false;
		slash = strrchr(p, '/');
		if (!slash)
			return false;
		*(slash == p ? slash + 1 : slash) = '\0';
	}
}

/* Is overlay j already shown, unchanged, by the earlier overlay i? */
static bool overlay_covered(const struct sbx_config *c, size_t i, size_t j)
{
	const struct sbx_mount *o = &c->mounts[i], *m = &c->mounts[j];
	const char *rs = path_below(m->src, o->src), *rd = path_below(m->dst, o->dst);

	if (o->kind != SBX_MNT_OVERLAY || !rs || !rd || strcmp(rs, rd) != 0)
		return false;
	for (size_t k = i + 1; k < j; k++)
		if (related(c->mounts[k].dst, o->dst))
			return false;
	if (!same_mount_dirs(o->src, m->src) || !path_ours(o->src, m->src))
		return false;
	/* Unprivileged, the kernel refuses an overlay whose lower holds
	 * mount points, and sbx binds that directory read-only instead
	 * (lib/jail/mounts.c): the inner overlay is then what keeps its part
	 * copy-on-write. */
	return geteuid() == 0 || !mounts_below(o->src);
}

static void mount_remove(struct sbx_config *c, size_t k)
{
	free(c->mounts[k].src);
	free(c->mounts[k].dst);
	sbx_strv_free(&c->mounts[k].git_named);
	memmove(&c->mounts[k], &c->mounts[k + 1], (c->n_mounts - k - 1) * sizeof(*c->mounts));
	c->n_mounts--;
}

size_t sbx_config_drop_covered_overlays(struct sbx_config *c)
{
	size_t dropped = 0;

	for (size_t j = 0; j < c->n_mounts; j++) {
		size_t i = 0;

		if (c->mounts[j].kind != SBX_MNT_OVERLAY || !c->mounts[j].src)
			continue;
		while (i < j && !(c->mounts[i].src && overlay_covered(c, i, j)))
			i++;
		if (i == j)
			continue;
		mount_remove(c, j);
		j--;
		dropped++;
	}
	return dropped;
}

/* Is mount j made (a source it needs there), and so on top of what it covers? */
static bool mount_made(const struct sbx_mount *m)
{
	struct stat st;

	return !m->src || !m->optional || stat(m->src, &st) == 0;
}

/*
 * Does the later mount j hide mount k whole: the same place, and no mount
 * between them on a parent of it, which could change where that path
 * leads (a symlink on the way)?  Masks go on after every other mount
 * (lib/jail/mounts.c): never hidden, and they hide nothing here.
 */
static bool mount_hidden(const struct sbx_config *c, size_t k, size_t j)
{
	const char *dst = c->mounts[k].dst;

	if (c->mounts[k].kind == SBX_MNT_MASK || c->mounts[j].kind == SBX_MNT_MASK ||
	    strcmp(c->mounts[j].dst, dst) != 0 || !mount_made(&c->mounts[j]))
		return false;
	for (size_t i = k + 1; i < j; i++)
		if (c->mounts[i].kind != SBX_MNT_MASK && path_below(dst, c->mounts[i].dst))
			return false;
	return true;
}

size_t sbx_config_drop_hidden(struct sbx_config *c)
{
	size_t dropped = 0;

	for (size_t k = 0; k < c->n_mounts; k++) {
		size_t j = k + 1;

		while (j < c->n_mounts && !mount_hidden(c, k, j))
			j++;
		if (j == c->n_mounts)
			continue;
		mount_remove(c, k);
		k--;
		dropped++;
	}
	return dropped;
}

void sbx_config_drop_host_only(struct sbx_config *c)
{
	size_t j = 0;

	if (!c->rootfs || strcmp(c->rootfs, "host") == 0)
		return;
	for (size_t i = 0; i < c->n_mounts; i++) {
		if (c->mounts[i].host_only) {
			free(c->mounts[i].src);
			free(c->mounts[i].dst);
			continue;
		}
		c->mounts[j++] = c->mounts[i];
	}
	c->n_mounts = j;
}

/* DST/.git, the path a bind's git directory has in the jail */
static char *git_dir_of(const char *dir)
{
	return sbx_xasprintf("%s/.git", strcmp(dir, "/") == 0 ? "" : dir);
}

/* git config files read for one bind, at most */
#define GIT_CONFIGS_MAX 16
/* entries of one hooks directory looked at for symlinks, at most */
#define GIT_HOOKS_MAX 256

/* One bind's repository: what its git config files name. */
struct git_names {
	const char *src;	/* the bind's host directory */
	char *real;		/* src with no symlink (realpath), or NULL */
	const char *homes[2];	/* for "~/": absolute, different, or NULL */
	int srcfd;		/* src, O_PATH */
	struct sbx_strv files;	/* config files to read, in turn (host paths) */
	struct sbx_strv *named; /* out: below src, relative */
	const char *file;	/* the file being read */
};

/* A value of a config file: "~/..." with each home, an absolute path as
 * it is, a relative one against base.  Each, lexically, at most 2. */
static size_t expand(const struct git_names *g, const char *v, const char *base, char *out[2])
{
	size_t n = 0;

	if (!*v)
		return 0;
	if (v[0] == '~' && v[1] == '/') {
		for (size_t i = 0; i < 2; i++) {
			_cleanup_free_ char *p =
			    g->homes[i] ? sbx_xasprintf("%s/%s", g->homes[i], v + 2) : NULL;

			if (p)
				out[n++] = sbx_path_clean(p, SBX_DOTDOT_COLLAPSE);
		}
	} else if (v[0] == '/') {
		out[n++] = sbx_path_clean(v, SBX_DOTDOT_COLLAPSE);
	} else if (v[0] != '~') {
		_cleanup_free_ char *p = sbx_xasprintf("%s/%s", base, v);

		out[n++] = sbx_path_clean(p, SBX_DOTDOT_COLLAPSE);
	}
	return n;
}

/* path (absolute, lexical) below the bind, not its .git (already
 * read-only) nor the bind itself nor in what is already kept, a
 * directory (dir) or a regular file reached with no symlink: kept in
 * g->named. */
static void name_below(struct git_names *g, const char *path, bool dir)
{
	size_t sl = strcmp(g->src, "/") == 0 ? 0 : strlen(g->src);
	const char *rel;
	struct stat st;
	int fd;

	if (!sbx_path_under(path, g->src) || strlen(path) <= sl + 1)
		return;
	rel = path + sl + 1;
	if (!strcmp(rel, ".git") || !strncmp(rel, ".git/", 5))
		return;
	for (size_t i = 0; i < g->named->n; i++)
		if (sbx_path_under(rel, g->named->v[i]))
			return; /* there, or in a directory already named */
	fd = sbx_open_beneath(g->srcfd, rel, O_PATH | O_NOFOLLOW);
	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && (dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode)))
		sbx_strv_push(g->named, rel);
	close(fd);
}

/*
 * Where path (a host path, lexical) leads with every symlink on its way
 * followed, as git follows them, when that is below the bind: kept in
 * g->named (name_below).  So .git/hooks -> ../githooks names githooks, a
 * hook -> ../../scripts/pre-commit.sh that script, .git -> .repo-git the
 * repository, and a core.hooksPath through a symlinked directory where
 * it leads.  Returns whether it was kept just now.
 */
static bool name_real(struct git_names *g, const char *path, bool dir)
{
	_cleanup_free_ char *to = NULL, *p = NULL;
	struct stat st;
	size_t rl, had = g->named->n;

	if (!g->real || !(to = realpath(path, NULL)) || stat(to, &st) < 0 ||
	    (dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)))
		return false;
	rl = strcmp(g->real, "/") ? strlen(g->real) : 0;
	if (!sbx_path_under(to, g->real) || strlen(to) <= rl + 1)
		return false;
	p = sbx_xasprintf("%s/%s", strcmp(g->src, "/") ? g->src : "", to + rl + 1);
	name_below(g, p, dir);
	return g->named->n > had;
}

/* Each entry of a hooks directory (dir, a host path; symlinks to it
 * followed) that is a symlink: where it leads, below the bind. */
static void hook_links(struct git_names *g, const char *dir)
{
	DIR *d = g->real ? opendir(dir) : NULL;
	struct dirent *e;
	size_t n = 0;

	if (!d)
		return;
	while (n++ < GIT_HOOKS_MAX && (e = readdir(d))) {
		struct stat st;

		if ((e->d_type == DT_LNK || e->d_type == DT_UNKNOWN) &&
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISLNK(st.st_mode)) {
			_cleanup_free_ char *p = sbx_xasprintf("%s/%s", dir, e->d_name);

			(void)name_real(g, p, false);
		}
	}
	closedir(d);
}

static int git_names_var(void *user, const char *section, const char *sub, const char *name,
			 const char *value)
{
	struct git_names *g = user;
	enum sbx_gitconfig_path kind = sbx_gitconfig_path_kind(section, sub, name);
	char *paths[2];
	size_t n;

	if (!value)
		return 1;
	if (kind == SBX_GITCONFIG_HOOKS) {
		/* relative: to the top of the work tree, where hooks run */
		n = expand(g, value, g->src, paths);
		for (size_t i = 0; i < n; i++) {
			(void)name_real(g, paths[i], true);
			hook_links(g, paths[i]);
			free(paths[i]);
		}
	} else if (kind == SBX_GITCONFIG_INCLUDE) {
		/* relative: to the directory of the file that includes it */
		_cleanup_free_ char *base = sbx_xstrdup(g->file);
		char *slash = strrchr(base, '/');

		if (slash)
			*slash = '\0';
		n = expand(g, value, *base ? base : "/", paths);
		for (size_t i = 0; i < n; i++) {
			(void)name_real(g, paths[i], false);
			if (g->files.n < GIT_CONFIGS_MAX && !sbx_strv_contains(&g->files, paths[i]))
				sbx_strv_push(&g->files, paths[i]);
			free(paths[i]);
		}
	}
	return 1;
}

/* What git's config names below m->src: the repository's config (in
 * .git, or where a linked worktree's .git file points) and the files it
 * includes, and the user's global config (where a core.hooksPath applies
 * to every repository).  gitdir_is_dir: .git is a directory. */
static bool git_named(struct sbx_mount *m, const char *home, bool gitdir_is_dir)
{
	const char *top = strcmp(m->src, "/") ? m->src : "";
	const char *xdg = getenv("XDG_CONFIG_HOME");
	const char *env_home = getenv("HOME");
	struct git_names g = {.src = m->src, .named = &m->git_named};
	bool linked = false;

	/* the run's home, and $HOME when it is another */
	if (home && home[0] == '/')
		g.homes[0] = home;
	if (env_home && env_home[0] == '/' && !(home && !strcmp(home, env_home)))
		g.homes[1] = env_home;

	g.srcfd = open(m->src, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (g.srcfd < 0)
		return false;
	g.real = realpath(m->src, NULL);
	if (gitdir_is_dir) {
		static const char *const links[] = {"/hooks", "/config", "/config.worktree"};
		_cleanup_free_ char *git = sbx_xasprintf("%s/.git", top);
		_cleanup_free_ char *hooks = sbx_xasprintf("%s/.git/hooks", top);

		/* what git reaches through a symlink (what is in .git is
		 * read-only with it): .git itself, first */
		linked = name_real(&g, git, true);
		for (size_t i = 0; i < SBX_ARRAY_SIZE(links); i++) {
			_cleanup_free_ char *p = sbx_xasprintf("%s%s", git, links[i]);

			(void)name_real(&g, p, i == 0);
		}
		hook_links(&g, hooks);
		sbx_strv_push_take(&g.files, sbx_xasprintf("%s/.git/config", top));
		sbx_strv_push_take(&g.files, sbx_xasprintf("%s/.git/config.worktree", top));
	} else {
		(void)sbx_git_file_configs(m->src, &g.files);
	}
	sbx_strv_push(&g.files, "/etc/gitconfig");
	for (size_t i = 0; i < 2; i++) {
		if (!g.homes[i])
			continue;
		sbx_strv_push_take(&g.files, sbx_xasprintf("%s/.gitconfig", g.homes[i]));
		sbx_strv_push_take(&g.files, sbx_xasprintf("%s/.config/git/config", g.homes[i]));
	}
	if (xdg && xdg[0] == '/')
		sbx_strv_push_take(&g.files, sbx_xasprintf("%s/git/config", xdg));
	for (size_t i = 0; i < g.files.n && i < GIT_CONFIGS_MAX; i++) {
		int fd = open(g.files.v[i], O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

		g.file = g.files.v[i];
		if (fd >= 0)
			(void)sbx_gitconfig_parse_fd(fd, git_names_var, &g);
	}
	sbx_strv_free(&g.files);
	close(g.srcfd);
	free(g.real);
	return linked;
}

size_t sbx_config_protect_git(struct sbx_config *c, const char *home)
{
	size_t marked = 0;

	for (size_t i = 0; i < c->n_mounts; i++) {
		struct sbx_mount *m = &c->mounts[i];
		_cleanup_free_ char *src = NULL, *dst = NULL;
		struct stat st;
		bool asked = false;

		m->git_ro = m->git_link = false;
		sbx_strv_free(&m->git_named);
		if (m->kind != SBX_MNT_BIND || !m->src)
			continue;
		src = git_dir_of(m->src);
		if (lstat(src, &st) < 0)
			continue;
		/* a symlink to a directory (named below, when that is in the
		 * bind: one elsewhere is not the bind's to protect) */
		if (S_ISLNK(st.st_mode)) {
			if (stat(src, &st) < 0 || !S_ISDIR(st.st_mode))
				continue;
			m->git_link = true;
		} else if (!(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
			continue;
		}
		dst = git_dir_of(m->dst);
		for (size_t k = 0; k < c->n_mounts && !asked; k++)
			asked =
			    c->mounts[k].kind == SBX_MNT_BIND && strcmp(c->mounts[k].dst, dst) == 0;
		m->git_ro = !asked;
		/* with git_link, the directory .git leads to is named first,
		 * or the bind is left as it was (.git leads out of it) */
		if (!m->git_ro)
			m->git_link = false;
		else if (!git_named(m, home, S_ISDIR(st.st_mode)) && m->git_link) {
			m->git_ro = m->git_link = false;
			sbx_strv_free(&m->git_named);
		}
		marked += m->git_ro;
	}
	return marked;
}

/* A home directory of ~/... masks: a normalised absolute path, not "/". */
static char *home_dir(const char *h)
{
	size_t n = h ? strlen(h) : 0;

	while (n > 1 && h[n - 1] == '/')
		n--;
	return n > 1 && h[0] == '/' ? sbx_xstrndup(h, n) : NULL;
}

bool sbx_sudo_caller(struct sbx_sudo_caller *out)
{
	int64_t uid = sbx_env_id("SUDO_UID"), gid = sbx_env_id("SUDO_GID");
	struct passwd *pw;
	_cleanup_free_ char *home = NULL;

	if (getuid() != 0 || uid <= 0 || !(pw = sbx_user((uid_t)uid)) || !pw->pw_name)
		return false;
	if (gid < 0)
		gid = pw->pw_gid;
	home = home_dir(pw->pw_dir);
	if (!home || strlen(pw->pw_name) >= sizeof(out->name) || strlen(home) >= sizeof(out->home))
		return false;
	out->uid = (uid_t)uid;
	out->gid = (gid_t)gid;
	snprintf(out->name, sizeof(out->name), "%s", pw->pw_name);
	snprintf(out->home, sizeof(out->home), "%s", home);
	return true;
}

/* Can uid:gid, with no other group (as the jail's user will be), reach
 * dir?  Asked in a child that becomes them: a project under /root (0700)
 * is the caller's own yet out of the caller's reach. */
static bool reachable_as(uid_t uid, gid_t gid, const char *dir)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		bool ok = setgroups(0, NULL) == 0 && setresgid(gid, gid, gid) == 0 &&
			  setresuid(uid, uid, uid) == 0 && access(dir, X_OK) == 0;

		_exit(ok ? 0 : 1);
	}
	while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

char *sbx_config_sudo_caller_check(const struct sbx_config *c, const char *pwd,
				   struct sbx_sudo_caller *out, bool *acts)
{
	struct stat st;
	const char *who = out->name;

	*acts = false;
	/* -u, an image: the profile chose; no caller at all: nothing to say */
	if (c->user_set || (c->rootfs && strcmp(c->rootfs, "host") != 0) || !sbx_sudo_caller(out))
		return NULL;
	/* The jail's ids are 0..65535 (lib/jail/jail.h SBX_JAIL_ID_COUNT);
	 * the root group is never the caller's to act as. */
	if (out->uid >= 65536)
		return sbx_xasprintf("not as %s, who ran sudo: their uid %u is above the jail's "
				     "ids 0-65535",
				     who, out->uid);
	if (out->gid >= 65536)
		return sbx_xasprintf("not as %s, who ran sudo: their gid %u is above the jail's "
				     "ids 0-65535",
				     who, out->gid);
	if (out->gid == 0)
		return sbx_xasprintf("not as %s, who ran sudo: their group is root", who);
	if (!pwd || stat(pwd, &st) < 0 || st.st_uid != out->uid)
		return sbx_xasprintf("not as %s, who ran sudo: %s is not theirs (-u %u:%u for "
				     "their ids)",
				     who, pwd ? pwd : "the working directory", out->uid, out->gid);
	if (!reachable_as(out->uid, out->gid, pwd))
		return sbx_xasprintf("not as %s, who ran sudo: they cannot reach %s (-u %u:%u for "
				     "their ids)",
				     who, pwd, out->uid, out->gid);
	*acts = true;
	return NULL;
}

void sbx_config_act_for(struct sbx_config *c, const struct sbx_sudo_caller *who)
{
	c->user_set = true;
	c->user_root = false;
	c->uid = who->uid;
	c->gid = who->gid;
	sbx_strv_push_take(&c->env_set, sbx_xasprintf("HOME=%s", who->home));
	sbx_strv_push_take(&c->env_set, sbx_xasprintf("USER=%s", who->name));
	sbx_strv_push_take(&c->env_set, sbx_xasprintf("LOGNAME=%s", who->name));
	free(c->sudo_user);
	c->sudo_user = sbx_xstrdup(who->name);
}

/* Every ~/... mask under from (a normalised home) repeated under to. */
static size_t mask_also(struct sbx_config *c, const char *from, const char *to)
{
	size_t n = c->n_mounts, added = 0;

	for (size_t i = 0; i < n; i++) {
		const char *rest =
		    c->mounts[i].kind == SBX_MNT_MASK ? path_below(c->mounts[i].dst, from) : NULL;
		struct sbx_mount *x;

		if (!rest || !*rest)
			continue;
		c->mounts = sbx_xrealloc(c->mounts, (c->n_mounts + 1) * sizeof(*c->mounts));
		x = &c->mounts[c->n_mounts++];
		*x = (struct sbx_mount){.kind = SBX_MNT_MASK,
					.dst = sbx_xasprintf("%s%s", to, rest)};
		added++;
	}
	return added;
}

size_t sbx_config_mask_sudo_home(struct sbx_config *c, const char *home)
{
	struct sbx_sudo_caller who;
	struct passwd *pw;
	_cleanup_free_ char *from = home_dir(home), *root = NULL;

	if (!from || !sbx_sudo_caller(&who))
		return 0;
	if (strcmp(from, who.home) != 0)
		return mask_also(c, from, who.home);
	/* Expanded with the caller's home (the run is the caller's, or sudo
	 * -E): root's own home keeps its masks too. */
	pw = sbx_user(getuid());
	root = pw ? home_dir(pw->pw_dir) : NULL;
	return root && strcmp(root, from) != 0 ? mask_also(c, from, root) : 0;
}

int sbx_config_check_sources(const struct sbx_config *c, struct sbx_err *err)
{
	for (size_t i = 0; i < c->n_mounts; i++) {
		const struct sbx_mount *m = &c->mounts[i];
		struct stat st;

		if (!m->src || m->optional ||
		    (m->kind != SBX_MNT_BIND && m->kind != SBX_MNT_RO_BIND &&
		     m->kind != SBX_MNT_OVERLAY))
			continue;
		if (stat(m->src, &st) < 0 && errno == ENOENT)
			return sbx_err_set(
			    err, 0,
			    "%s '%s': does not exist on the host (a leading '-' makes "
			    "an entry optional)",
			    sbx_mount_kind_name(m->kind), m->src);
	}
	return 0;
}
