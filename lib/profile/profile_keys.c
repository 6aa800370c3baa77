/* SPDX-License-Identifier: MIT */
/*
 * lib/profile/profile_keys.c - the one table of profile keys: validation and
 * setting of each value (shared by profile files and `sbx run` options),
 * "did you mean" suggestions, and writing the resolved profile as INI.
 */
#include "netpolicy.h"
#include "publish.h"
#include "profile_int.h"
#include "seccomp.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <inttypes.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/stat.h>

/* ---------------------------------------------------------------- helpers */

/* Lexically normalise an absolute path: no "//", "/./" or trailing "/". */
static int norm_path(const char *in, bool allow_dotdot, const char *what, char **out,
		     struct sbx_err *err)
{
	char *r;

	if (!in || in[0] != '/')
		return sbx_err_set(err, 0, "%s '%s' is not an absolute path", what, in ? in : "");
	r = sbx_path_clean(in, allow_dotdot ? SBX_DOTDOT_KEEP : SBX_DOTDOT_REFUSE);
	if (!r)
		return sbx_err_set(err, 0, "%s '%s' has a '..' component", what, in);
	/* (a blank at the end, a newline: `profile show` and the record
	 * quote them, sbx_profile_value_text) */
	*out = r;
	return 0;
}

/* A relative path against the profile's directory (or the cwd). */
static char *resolve_rel(const char *base, const char *path)
{
	char cwd[4096];

	if (path[0] == '/')
		return sbx_xstrdup(path);
	if (base && base[0] == '/')
		return sbx_xasprintf("%s/%s", base, path);
	if (!getcwd(cwd, sizeof(cwd)))
		snprintf(cwd, sizeof(cwd), "/");
	if (!base || strcmp(base, ".") == 0)
		return sbx_xasprintf("%s/%s", cwd, path);
	return sbx_xasprintf("%s/%s/%s", cwd, base, path);
}

static bool env_name_ok(const char *s, size_t n)
{
	if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
			return false;
	return true;
}

static bool env_pattern_ok(const char *s)
{
	if (!*s || isdigit((unsigned char)*s))
		return false;
	for (; *s; s++)
		if (!(isalnum((unsigned char)*s) || strchr("_*?[]!", *s)))
			return false;
	return true;
}

static int parse_choice(const char *val, const char *what, const char *const *names, size_t n,
			int *out, struct sbx_err *err)
{
	const char *near;

	for (size_t i = 0; i < n; i++) {
		if (strcmp(val, names[i]) == 0) {
			*out = (int)i;
			return 0;
		}
	}
	near = sbx_closest(val, names, n);
	if (near)
		return sbx_err_set(err, 0, "bad %s '%s' (did you mean '%s'?)", what, val, near);
	return sbx_err_set(err, 0, "bad %s '%s' (expected %s%s%s%s%s%s%s)", what, val, names[0],
			   n > 1 ? ", " : "", n > 1 ? names[1] : "", n > 2 ? ", " : "",
			   n > 2 ? names[2] : "", n > 3 ? " or " : "", n > 3 ? names[3] : "");
}

/* Split a list on spaces and commas; calls fn for each token. */
static int for_each_token(const char *val, int (*fn)(void *, const char *, struct sbx_err *),
			  void *ud, struct sbx_err *err)
{
	_cleanup_free_ char *copy = sbx_xstrdup(val);
	char *save = NULL;
	int n = 0;

	for (char *t = strtok_r(copy, " \t,", &save); t; t = strtok_r(NULL, " \t,", &save)) {
		int r = fn(ud, t, err);

		if (r < 0)
			return r;
		n++;
	}
	if (n == 0)
		return sbx_err_set(err, 0, "empty value");
	return 0;
}

static void set_str(char **dst, const char *val)
{
	free(*dst);
	*dst = val ? sbx_xstrdup(val) : NULL;
}

/* ---------------------------------------------------------------- [sandbox] */

static int set_extends(struct sbx_config *c, const char *key, const char *val,
		       const struct sbx_profile_setctx *sc, struct sbx_err *err)
{
	return sbx_err_set(err, 0, "'extends' is only valid in a profile file");
}

static int set_rootfs(struct sbx_config *c, const char *key, const char *val,
		      const struct sbx_profile_setctx *sc, struct sbx_err *err)
{
	_cleanup_free_ char *abs = NULL, *norm = NULL;
	struct stat st;
	int r;

	if (strcmp(val, "host") == 0 || strcmp(val, "required") == 0) {
		set_str(&c->rootfs, NULL);
		c->rootfs_required = strcmp(val, "required") == 0;
		return 0;
	}
	if (!*val)
		return sbx_err_set(
		    err, 0, "empty rootfs (expected host, required, a tarball or a directory)");
	abs = resolve_rel(sc->base_dir, val);
	r = norm_path(abs, true, "rootfs", &norm, err);
	if (r < 0)
		return r;
	if (stat(norm, &st) < 0 && errno == ENOENT)
		return sbx_err_set(err, 0, "'%s' does not exist", norm);
	if (stat(norm, &st) < 0)
		return sbx_err_set(err, errno, "rootfs '%s'", norm);
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
		return sbx_err_set(err, 0, "rootfs '%s' is neither a tarball nor a directory",
				   norm);
	free(c->rootfs);
	c->rootfs = steal_pointer(&norm);
	c->rootfs_required = false;
	return 0;
}

static int set_hostname(struct sbx_config *c, const char *key, const char *val,
			const struct sbx_profile_setctx *sc, struct sbx_err *err)
{
	size_t n = strlen(val);

	if (n == 0 || n > 64 || val[0] == '-' || val[0] == '.')
		goto bad;
	for (size_t i = 0; i < n; i++)
		if (!(isalnum((unsigned char)val[i]) || val[i] == '-' || val[i] == '.'))
			goto bad;
	set_str(&c->hostname, val);
	return 0;
bad:
	return sbx_err_set(err, 0, "bad hostname '%s' (letters, digits, '-' and '.', at most 64)",
			   val);
}

static int parse_id(const char *s, size_t n, uint32_t *out)
{
	uint64_t v = 0;

	if (n == 0 || n > 10)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -EINVAL;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v >= UINT32_MAX) /* (uid_t)-1 means "no change" to the kernel */
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

static int set_user(struct sbx_config *c, const char *key, const char *val,
		    const struct sbx_profile_setctx *sc, struct sbx_err *err)
{
	const char *colon = strchr(val, ':');
	uint32_t uid, gid;

	if (strcmp(val, "inherit") == 0) {
		c->user_set = c->user_root = false;
		c->uid = c->gid = 0;
		return 0;
	}
	if (strcmp(val, "root") == 0) {
		c->user_set = c->user_root = true;
		c->uid = c->gid = 0;
		return 0;
	}
	if (parse_id(val, colon ? (size_t)(colon - val) : strlen(val), &uid) < 0 ||
	    (colon && parse_id(colon + 1, strlen(colon + 1), &gid) < 0))
		return sbx_err_set(err, 0, "bad user '%s' (expected UID[:GID], root or inherit)",
				   val);
	if (!colon)
		gid = uid;
	c->user_set = true;
	c->user_root = uid == 0;
	c->uid = uid;
	c->gid = gid;
	return 0;
}

static int set_workdir(struct sbx_config *c, const char *key, const char *val,
		       const struct sbx_profile_setctx *sc, struct sbx_err *err)
{
	char *p = NULL;
	int r = norm_path(val, false, "workdir", &p, err);

	if (r < 0)
		return r;
	free(c->workdir);
	c->workdir = p;
	return 0;
}

static int set_persist(struct sbx_config *c, const char *key, const char *val,
		       const struct sbx_profile_setctx *sc, struct sbx_err *err)
{
	static const char *const names[] = {"never", "on-failure", "always"};
	int v = 0, r = parse_choice(val, "persist mode", names, SBX_ARRAY_SIZE(names), &v, err);

	if (r == 0)
		c->persist = (enum sbx_persist)v;
	return r;
}

static int set_tty(struct sbx_config *c, const char *key, const char *val,
		   const struct sbx_profile_setctx *sc, struct sbx_err *err)
{
	bool yes;

	if (strcmp(val, "auto") == 0) {
		c->tty_mode = SBX_TTY_AUTO;
		return 0;
	}
	if (sbx_parse_bool(val, &yes, NULL) < 0)
		return sbx_err_set(err, 0, "bad tty mode '%s' (expected auto, yes, no)", val);
	c->tty_mode = yes ? SBX_TTY_YES : SBX_TTY_NO;
	return 0;
}

static int set_stop_timeout(struct sbx_config *c, const char *key, const char *val,
			    const struct sbx_profile_setctx *sc, struct sbx_err *err)
{
	if (strcmp(val, "never") == 0) {
		c->stop_timeout_ms = SBX_UNSET;
		return 0;
	}
	/* 0 is allowed: the first signal kills the jail. */
	if (strcmp(val, "0") == 0) {
		c->stop_timeout_ms = 0;
		return 0;
	}
	return sbx_parse_duration(val, &c->stop_timeout_ms, err);
}

static int set_writable(struct sbx_config *c, const char *key, const char *val,
			const struct sbx_profile_setctx *sc, struct sbx_err *err)
{
	return sbx_parse_bool(val, &c->rootfs_writable, err);
}

/* ---------------------------------------------------------------- [filesystem] */

static void add_mount(struct sbx_config *c, enum sbx_mount_kind kind, char *src, char *dst,
		      uint64_t size, bool optional)
{
	struct sbx_mount *m;

	c->mounts = sbx_xrealloc(c->mounts, (c->n_mounts + 1) * sizeof(*c->mounts));
	m = &c->mounts[c->n_mounts++];
	memset(m, 0, sizeof(*m));
	m->kind = kind;
	m->src = src;
	m->dst = dst;
	m->size = size;
	m->optional = optional;
}

static int check_dst(const char *raw, char **out, struct sbx_err *err)
{
	int r = norm_path(raw, false, "destination", out, err);

	if (r == 0 && strcmp(*out, "/") == 0) {
		free(*out);
		*out = NULL;
		return sbx_err_set(err, 0, "cannot mount over '/' (use rootfs)");
	}
	return r;
}

/* "\:" and "\\" in s[0..n) as ':' and '\' (a new string). */
static char *path_unescape(const char *s, size_t n)
{
	char *out = sbx_xmalloc(n + 1), *o = out;

	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 1 < n && (s[i + 1] == ':' || s[i + 1] == '\\'))
			i++;
		*o++ = s[i];
	}
	*o = '\0';
	return out;
}

/* val split at its first ':' not written "\:" (sbx_profile_key_splits_paths):
 * *first before it, *colon at it (NULL: none), each part unescaped. */
static void split_paths(const char *val, char **first, char **second, const char **colon)
{
	const char *p = val;

	while (*p && *p != ':')
		p += p[0] == '\\' && (p[1] == ':' || p[1] == '\\') ? 2 : 1;
	*colon = *p ? p : NULL;
	*first = path_unescape(val, (size_t)(p - val));
	*second = *p ? path_unescape(p + 1, strlen(p + 1)) : NULL;
}

char *sbx_profile_path_escape(const char *path)
{
	char *out = sbx_xmalloc(2 * strlen(path) + 1), *o = out;

	for (; *path; path++) {
		if (*path == ':' || *path == '\\')
			*o++ = '\\';
		*o++ = *path;
	}
	*o = '\0';
	return out;
}

static int set_bind(struct sbx_config *c, const char *key, const char *val,
		    const struct sbx_profile_setctx *sc, struct sbx_err *err)
{
	enum sbx_mount_kind kind = strcmp(key, "bind") == 0	 ? SBX_MNT_BIND
				   : strcmp(key, "ro-bind") == 0 ? SBX_MNT_RO_BIND
								 : SBX_MNT_OVERLAY;
	_cleanup_free_ char *rawsrc = NULL, *rawdst = NULL, *src = NULL, *dst = NULL;
	bool optional = val[0] == '-';
	const char *colon;
	int r;

	if (optional)
		val++;
	split_paths(val, &rawsrc, &rawdst, &colon);
	if (!*rawsrc || (colon && !colon[1]))
		return sbx_err_set(err, 0, "bad mount '%s' (expected [-]SRC[:DST])", val);
	if (sc->cli && rawsrc[0] != '/') {
		char *abs = resolve_rel(NULL, rawsrc);

		free(rawsrc);
		rawsrc = abs;
	}
	r = norm_path(rawsrc, true, "source", &src, err);
	if (r < 0)
		return r;
	/*
	 * An overlay of '/' (e.g. `overlay = $PWD` run from '/') adds nothing:
	 * the root already is the rootfs, copy-on-write for an image and
	 * read-only for the host root.  Nor does one of /proc, /dev or /sys
	 * (or below) on itself: the jail has its own there, which the host's
	 * would cover (its processes, its devices).  A no-op, not an error,
	 * so the built-in profiles work from any directory.
	 */
	if (kind == SBX_MNT_OVERLAY && !colon &&
	    (strcmp(src, "/") == 0 || sbx_path_under(src, "/proc") || sbx_path_under(src, "/dev") ||
	     sbx_path_under(src, "/sys")))
		return 0;
	r = check_dst(colon ? rawdst : src, &dst, err);
	if (r < 0)
		return r;
	add_mount(c, kind, steal_pointer(&src), steal_pointer(&dst), 0, optional);
	/* "SRC when host": only when the root is the host's (not an image);
	 * the reader took it off the profile's text (sbx_profile_key_when_host) */
	c->mounts[c->n_mounts - 1].host_only = sc->host_only;
	return 0;
}

static int set_tmpfs(struct sbx_config *c, const char *key, const char *val,
		     const struct sbx_profile_setctx *sc, struct sbx_err *err)
{
	_cleanup_free_ char *raw = NULL, *rawsize = NULL, *dst = NULL;
	const char *colon;
	uint64_t size = 0;
	int r;

	split_paths(val, &raw, &rawsize, &colon);
	if (colon && sbx_parse_size(rawsize, &size, err) < 0)
		return -EINVAL;
	r = check_dst(raw, &dst, err);
	if (r < 0)
		return r;
	add_mount(c, SBX_MNT_TMPFS, NULL, steal_pointer(&dst), size, false);
	return 0;
}

bool sbx_profile_key_splits_paths(const struct sbx_profile_key *k)
{
	return k->set == set_bind || k->set == set_tmpfs;
}

bool sbx_profile_key_when_host(const struct sbx_profile_key *k)
{
	return k->set == set_bind;
}

static int set_mask(struct sbx_config *c, const char *key, const char *val,
		    const struct sbx_profile_setctx *sc, struct sbx_err *err)
{
	char *dst = NULL;
	int r = check_dst(val, &dst, err);

	if (r < 0)
		return r;
	add_mount(c, SBX_MNT_MASK, NULL, dst, 0, false);
	return 0;
}

/* sysfs = own | none: what /sys shows (lib/jail/mounts.c mount_sys). */
static int set_sysfs(struct sbx_config *c, const char *key, const char *val,
		     const struct sbx_profile_setctx *sc, struct sbx_err *err)
{
	static const char *const names[] = {"own", "none"};
	int v = 0, r = parse_choice(val, "sysfs view", names, SBX_ARRAY_SIZE(names), &v, err);

	if (r == 0)
		c->sysfs = (enum sbx_sysfs)v;
	return r;
}

/* unmask = PATH: drop the masks (inherited through extends, or earlier in
 * this profile) at PATH or below it. */
static int set_unmask(struct sbx_config *c, const char *key, const char *val,
		      const struct sbx_profile_setctx *sc, struct sbx_err *err)
{
	_cleanup_free_ char *dst = NULL;
	size_t j = 0, n;
	int r = check_dst(val, &dst, err);

	if (r < 0)
		return r;
	n = strlen(dst);
	for (size_t i = 0; i < c->n_mounts; i++) {
		struct sbx_mount *m = &c->mounts[i];

		if (m->kind == SBX_MNT_MASK && m->dst && strncmp(m->dst, dst, n) == 0 &&
		    (m->dst[n] == '\0' || m->dst[n] == '/')) {
			free(m->src);
			free(m->dst);
			continue;
		}
		c->mounts[j++] = *m;
	}
	c->n_mounts = j;
	return 0;
}

/* One key of watch = [KEY ...]: members with "." between them, none
 * empty, no blank, quote or bracket in one; "*" any member. */
static bool watch_key_ok(const char *k)
{
	if (!*k || *k == '.' || k[strlen(k) - 1] == '.' || strstr(k, ".."))
		return false;
	return strcspn(k, " \t\"[]") == strlen(k);
}

/* watch = [KEY ...] PATH: the keys added to PATH's entry. */
static int set_watch_keys(struct sbx_config *c, char *path, const char *keys, struct sbx_err *err)
{
	_cleanup_free_ char *copy = sbx_xstrdup(keys);
	struct sbx_watch_keys *w = NULL;
	char *save = NULL;
	size_t added = 0;

	for (size_t i = 0; i < c->n_watch_keys && !w; i++)
		if (!strcmp(c->watch_keys[i].path, path))
			w = &c->watch_keys[i];
	for (char *t = strtok_r(copy, " \t,", &save); t; t = strtok_r(NULL, " \t,", &save)) {
		if (!watch_key_ok(t)) {
			free(path);
			return sbx_err_set(err, 0,
					   "'[%s]': a key is members with '.' between them, none "
					   "empty, no blank, quote or bracket (mcpServers, "
					   "projects.*.allowedTools)",
					   t);
		}
		if (!w) {
			c->watch_keys = sbx_xrealloc(c->watch_keys, (c->n_watch_keys + 1) *
									sizeof(*c->watch_keys));
			w = &c->watch_keys[c->n_watch_keys++];
			*w = (struct sbx_watch_keys){.path = path};
			path = NULL;
		}
		if (!sbx_strv_contains(&w->keys, t))
			sbx_strv_push(&w->keys, t);
		added++;
	}
	free(path);
	if (!added)
		return sbx_err_set(err, 0, "no key between '[' and ']' (watch = [KEY ...] PATH)");
	return 0;
}

/* watch = PATH: named after the run when it changed while the command
 * ran (lib/run/run_later.c); each path once.  watch = [KEY ...] PATH:
 * when what those keys of the JSON file hold changed. */
static int set_watch(struct sbx_config *c, const char *key, const char *val,
		     const struct sbx_profile_setctx *sc, struct sbx_err *err)
{
	char *path = NULL;
	int r = norm_path(val, false, "watch path", &path, err);

	if (r < 0)
		return r;
	if (sc && sc->keys)
		return set_watch_keys(c, path, sc->keys, err);
	for (size_t i = 0; i < c->watch.n; i++) {
		if (strcmp(c->watch.v[i], path) == 0) {
			free(path);
			return 0;
		}
	}
	sbx_strv_push_take(&c->watch, path);
	return 0;
}

/* ---------------------------------------------------------------- [env] */

static int set_clear(struct sbx_config *c, const char *key, const char *val,
		     const struct sbx_profile_setctx *sc, struct sbx_err *err)
{
	return sbx_parse_bool(val, &c->env_clear, err);
}

static int pass_one(void *ud, const char *tok, struct sbx_err *err)
{
	struct sbx_config *c = ud;

	if (!env_pattern_ok(tok))
		return sbx_err_set(
		    err, 0, "bad variable name '%s' (letters, digits, '_' and glob characters)",
		    tok);
	if (!sbx_strv_contains(&c->env_pass, tok))
		sbx_strv_push(&c->env_pass, tok);
	return 0;
}

static int set_pass(struct sbx_config *c, const char *key, const char *val,
		    const struct sbx_profile_setctx *sc, struct sbx_err *err)
{
	return for_each_token(val, pass_one, c, err);
}

static int set_set(struct sbx_config *c, const char *key, const char *val,
		   const struct sbx_profile_setctx *sc, struct sbx_err *err)
{
	const char *eq = strchr(val, '=');
	size_t n = eq ? (size_t)(eq - val) : 0;

	if (!eq || !env_name_ok(val, n))
		return sbx_err_set(err, 0, "bad variable assignment '%s' (expected NAME=VALUE)",
				   val);
	for (size_t i = 0; i < c->env_set.n; i++) { /* a later value wins */
		if (strncmp(c->env_set.v[i], val, n + 1) == 0) {
			free(c->env_set.v[i]);
			c->env_set.v[i] = sbx_xstrdup(val);
			return 0;
		}
	}
	sbx_strv_push(&c->env_set, val);
	return 0;
}

/* ---------------------------------------------------------------- [secrets] */

/* "inject HOST[,HOST...]": names or *.domain, as the allowlist spells them. */
static int parse_inject_hosts(const char *name, char *list, struct sbx_secret *s,
			      struct sbx_err *err)
{
	char *save = NULL;

	for (char *h = strtok_r(list, ",", &save); h; h = strtok_r(NULL, ",", &save)) {
		_cleanup_free_ char *norm = NULL;
		bool wild = strncmp(h, "*.", 2) == 0;

		norm = sbx_netpolicy_norm_host(wild ? h + 2 : h, strlen(wild ? h + 2 : h));
		if (!norm || strchr(norm, ':') || strspn(norm, "0123456789.") == strlen(norm))
			return sbx_err_set(err, 0,
					   "secret '%s': bad inject host '%s' (expected a DNS "
					   "name or *.domain, no port, no IP address)",
					   name, h);
		if (wild) {
			char *w = sbx_xasprintf("*.%s", norm);

			free(norm);
			norm = w;
		}
		if (!sbx_strv_contains(&s->inject_hosts, norm))
			sbx_strv_push(&s->inject_hosts, norm);
	}
	if (s->inject_hosts.n == 0)
		return sbx_err_set(err, 0, "secret '%s': 'inject' needs HOST[,HOST...]", name);
	return 0;
}

/* The words after SOURCE: [as env|as file] [inject HOST[,HOST...]]. */
static int parse_secret_words(const char *name, char *rest, struct sbx_secret *s,
			      struct sbx_err *err)
{
	char *save = NULL, *w = strtok_r(rest, " \t", &save);
	bool as_seen = false;

	while (w) {
		if (strcmp(w, "as") == 0 && !as_seen && s->inject_hosts.n == 0) {
			w = strtok_r(NULL, " \t", &save);
			if (!w || (strcmp(w, "env") != 0 && strcmp(w, "file") != 0))
				return -1;
			s->inject = strcmp(w, "file") == 0 ? SBX_SECRET_AS_FILE : SBX_SECRET_AS_ENV;
			as_seen = true;
		} else if (strcmp(w, "inject") == 0 && s->inject_hosts.n == 0) {
			w = strtok_r(NULL, " \t", &save);
			if (!w)
				return sbx_err_set(
				    err, 0, "secret '%s': 'inject' needs HOST[,HOST...]", name);
			if (parse_inject_hosts(name, w, s, err) < 0)
				return -EINVAL;
		} else {
			return -1;
		}
		w = strtok_r(NULL, " \t", &save);
	}
	return 0;
}

/*
 * Where the words after SOURCE start in v ([as env|as file] [inject
 * HOSTS], taken from the end), at the blank before them (NULL: none).
 * SOURCE may hold blanks (file:~/My Keys/token, a home with a space), but
 * not a word "as" or "inject": *bad then.
 */
static char *secret_words_at(char *v, bool *bad)
{
	char *w[64];
	size_t n = 0, i;

	*bad = false;
	for (char *p = v + strspn(v, " \t"); *p && n < SBX_ARRAY_SIZE(w);
	     p += strcspn(p, " \t"), p += strspn(p, " \t"))
		w[n++] = p;
	if (n == SBX_ARRAY_SIZE(w)) {
		*bad = true;
		return NULL;
	}
#define WORD_IS(k, lit) (!strncmp(w[k], lit, strlen(lit)) && strchr(" \t", w[k][strlen(lit)]))
	i = n;
	if (i >= 3 && WORD_IS(i - 2, "inject"))
		i -= 2;
	else if (i >= 2 && WORD_IS(i - 1, "inject"))
		i -= 1;
	if (i >= 3 && WORD_IS(i - 2, "as"))
		i -= 2;
	else if (i >= 2 && WORD_IS(i - 1, "as"))
		i -= 1;
	for (size_t k = 1; k < i; k++)
		if (WORD_IS(k, "as") || WORD_IS(k, "inject"))
			*bad = true;
#undef WORD_IS
	return i < n ? w[i] - 1 : NULL;
}

static int parse_secret(const char *name, const char *val, struct sbx_secret *s,
			struct sbx_err *err)
{
	_cleanup_free_ char *v = sbx_xstrdup(val);
	bool bad;
	char *sp = secret_words_at(v, &bad), *ref, *end;

	s->inject = SBX_SECRET_AS_ENV;
	if (bad)
		goto bad;
	if (sp) {
		char *words = sp + 1;
		int r;

		*sp = '\0';
		while (sp > v && (sp[-1] == ' ' || sp[-1] == '\t')) /* blanks between */
			*--sp = '\0';
		r = parse_secret_words(name, words, s, err);
		if (r == -EINVAL)
			goto fail;
		if (r < 0)
			goto bad;
	}
	if (strncmp(v, "env:", 4) == 0)
		s->source = SBX_SECRET_FROM_ENV;
	else if (strncmp(v, "file:", 5) == 0)
		s->source = SBX_SECRET_FROM_FILE;
	else
		goto bad;
	ref = strchr(v, ':') + 1;
	end = ref + strlen(ref);
	s->optional = end > ref && end[-1] == '?';
	if (s->optional)
		*--end = '\0';
	if (s->source == SBX_SECRET_FROM_ENV && !env_name_ok(ref, strlen(ref))) {
		sbx_err_set(err, 0, "secret '%s': bad variable name '%s'", name, ref);
		goto fail;
	}
	if (s->source == SBX_SECRET_FROM_FILE) {
		char *p = NULL;
		int r = norm_path(ref, true, "secret file", &p, err);

		if (r < 0) {
			sbx_err_wrap(err, "secret '%s'", name);
			goto fail;
		}
		s->ref = p;
	} else {
		s->ref = sbx_xstrdup(ref);
	}
	return 0;
bad:
	sbx_err_set(err, 0,
		    "secret '%s': bad value '%s' (expected env:VAR or file:PATH, '?' "
		    "for optional, then 'as env' or 'as file', then 'inject HOST[,HOST...]')",
		    name, val);
fail:
	sbx_strv_free(&s->inject_hosts);
	return -EINVAL;
}

static int set_secret(struct sbx_config *c, const char *key, const char *val,
		      const struct sbx_profile_setctx *sc, struct sbx_err *err)
{
	struct sbx_secret s = {0};
	int r;

	if (!env_name_ok(key, strlen(key)))
		return sbx_err_set(err, 0, "bad secret name '%s' (expected [A-Za-z_][A-Za-z0-9_]*)",
				   key);
	r = parse_secret(key, val, &s, err);
	if (r < 0)
		return r;
	s.name = sbx_xstrdup(key);
	for (size_t i = 0; i < c->n_secrets; i++) { /* a later definition wins */
		if (strcmp(c->secrets[i].name, key) == 0) {
			free(c->secrets[i].name);
			free(c->secrets[i].ref);
			sbx_strv_free(&c->secrets[i].inject_hosts);
			c->secrets[i] = s;
			return 0;
		}
	}
	c->secrets = sbx_xrealloc(c->secrets, (c->n_secrets + 1) * sizeof(*c->secrets));
	c->secrets[c->n_secrets++] = s;
	return 0;
}

/* ---------------------------------------------------------------- [network] */

static int set_mode(struct sbx_config *c, const char *key, const char *val,
		    const struct sbx_profile_setctx *sc, struct sbx_err *err)
{
	static const char *const names[] = {"none", "loopback", "proxy", "host"};
	int v = 0, r = parse_choice(val, "network mode", names, SBX_ARRAY_SIZE(names), &v, err);

	if (r == 0)
		c->net = (enum sbx_net_mode)v;
	return r;
}

static bool hostname_ok(const char *h, size_t n)
{
	size_t label = 0;

	if (n == 0 || n > 253)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (h[i] == '.') {
			if (label == 0 || h[i - 1] == '-')
				return false;
			label = 0;
			continue;
		}
		if (!(isalnum((unsigned char)h[i]) || h[i] == '-'))
			return false;
		if (label == 0 && h[i] == '-')
			return false;
		if (++label > 63)
			return false;
	}
	return label > 0 && h[n - 1] != '-';
}

static int allow_one(void *ud, const char *tok, struct sbx_err *err)
{
	struct sbx_config *c = ud;
	const char *host = tok, *port = NULL;
	size_t hlen;
	bool wild = strncmp(tok, "*.", 2) == 0;
	char *norm;

	if (wild)
		host += 2;
	if (host[0] == '[' && !wild) { /* [v6] or [v6]:port */
		const char *rb = strchr(host, ']');
		char a[INET6_ADDRSTRLEN + 1];
		struct in6_addr in6;

		if (!rb || (size_t)(rb - host - 1) >= sizeof(a))
			goto bad;
		memcpy(a, host + 1, (size_t)(rb - host - 1));
		a[rb - host - 1] = '\0';
		if (inet_pton(AF_INET6, a, &in6) != 1 || (rb[1] && rb[1] != ':'))
			goto bad;
		port = rb[1] ? rb + 2 : NULL;
		hlen = (size_t)(rb - host + 1);
	} else {
		port = strchr(host, ':');
		hlen = port ? (size_t)(port - host) : strlen(host);
		if (port)
			port++;
		if (!hostname_ok(host, hlen))
			goto bad;
	}
	if (port) {
		uint64_t p;

		if (sbx_parse_u64(port, &p, NULL) < 0 || p < 1 || p > 65535)
			return sbx_err_set(err, 0, "bad allow entry '%s' (port must be 1..65535)",
					   tok);
	}
	/* The proxy's own rules (e.g. no '*.com'), so `profile check` catches
	 * what the run would refuse, with the file and line. */
	if (sbx_netpolicy_check_entry(tok, err) < 0)
		return -EINVAL;
	norm = sbx_xstrdup(tok);
	for (char *q = norm; *q; q++)
		*q = (char)tolower((unsigned char)*q);
	if (sbx_strv_contains(&c->allow, norm))
		free(norm);
	else
		sbx_strv_push_take(&c->allow, norm);
	return 0;
bad:
	return sbx_err_set(
	    err, 0, "bad allow entry '%s' (expected host, host:port, *.domain[:port] or [v6]:port)",
	    tok);
}

static int set_allow(struct sbx_config *c, const char *key, const char *val,
		     const struct sbx_profile_setctx *sc, struct sbx_err *err)
{
	return for_each_token(val, allow_one, c, err);
}

static int set_capture(struct sbx_config *c, const char *key, const char *val,
		       const struct sbx_profile_setctx *sc, struct sbx_err *err)
{
	return sbx_parse_bool(val, &c->capture, err);
}

/* A published port: "[ADDR:]HOSTPORT:PORT[:open]" or "PORT[:open]". */
static int publish_one(void *ud, const char *tok, struct sbx_err *err)
{
	struct sbx_config *c = ud;
	struct sbx_publish_port pp;
	char canon[96];

	if (sbx_publish_parse(tok, &pp, err) < 0)
		return -EINVAL;
	sbx_publish_format(&pp, canon, sizeof(canon));
	if (!sbx_strv_contains(&c->publish, canon))
		sbx_strv_push(&c->publish, canon);
	return 0;
}

/* One of several ports is named in the error; a value of one already is. */
static int publish_token(void *ud, const char *tok, struct sbx_err *err)
{
	int r = publish_one(ud, tok, err);

	return r < 0 ? sbx_err_wrap(err, "'%s'", tok) : r;
}

static int set_publish(struct sbx_config *c, const char *key, const char *val,
		       const struct sbx_profile_setctx *sc, struct sbx_err *err)
{
	bool several = strpbrk(val, " \t,") != NULL;

	return for_each_token(val, several ? publish_token : publish_one, c, err);
}

/* A PEM file of CAs the proxy trusts for upstream TLS, besides the host's. */
static int set_upstream_ca(struct sbx_config *c, const char *key, const char *val,
			   const struct sbx_profile_setctx *sc, struct sbx_err *err)
{
	char *p = NULL;
	int r = norm_path(val, true, "upstream-ca", &p, err);

	if (r < 0)
		return r;
	free(c->upstream_ca);
	c->upstream_ca = p;
	return 0;
}

/* ---------------------------------------------------------------- [limits] */

uint64_t *sbx_profile_limit_field(struct sbx_config *c, const char *key)
{
	static const struct {
		const char *name;
		size_t off;
	} f[] = {
	    {"memory", offsetof(struct sbx_config, memory)},
	    {"pids", offsetof(struct sbx_config, pids)},
	    {"cpus", offsetof(struct sbx_config, cpus_milli)},
	    {"time", offsetof(struct sbx_config, time_ms)},
	    {"nofile", offsetof(struct sbx_config, nofile)},
	    {"fsize", offsetof(struct sbx_config, fsize)},
	    {"disk", offsetof(struct sbx_config, disk)},
	    {"image-size", offsetof(struct sbx_config, image_size)},
	    {"image-entries", offsetof(struct sbx_config, image_entries)},
	};

	for (size_t i = 0; i < SBX_ARRAY_SIZE(f); i++)
		if (strcmp(f[i].name, key) == 0)
			return (uint64_t *)((char *)c + f[i].off);
	return NULL;
}

static int parse_cpus(const char *val, uint64_t *milli, struct sbx_err *err)
{
	uint64_t whole = 0, frac = 0;
	const char *p = val;
	int digits = 0;

	if (!isdigit((unsigned char)*p))
		goto bad;
	for (; isdigit((unsigned char)*p); p++) {
		whole = whole * 10 + (uint64_t)(*p - '0');
		if (whole > 100000)
			goto bad;
	}
	if (*p == '.') {
		for (p++; isdigit((unsigned char)*p) && digits < 3; p++, digits++)
			frac = frac * 10 + (uint64_t)(*p - '0');
		if (digits == 0)
			goto bad;
	}
	if (*p)
		goto bad;
	while (digits++ < 3)
		frac *= 10;
	*milli = whole * 1000 + frac;
	if (*milli == 0)
		goto bad;
	return 0;
bad:
	return sbx_err_set(
	    err, 0,
	    "bad cpu count '%s' (expected a positive decimal with at most 3 decimals, e.g. 1.5)",
	    val);
}

static int set_limit(struct sbx_config *c, const char *key, const char *val,
		     const struct sbx_profile_setctx *sc, struct sbx_err *err)
{
	uint64_t *f = sbx_profile_limit_field(c, key), v = 0;
	int r;

	if (strcmp(val, "unlimited") == 0) {
		*f = strcmp(key, "disk") == 0 ? SBX_DISK_NO_CAP : SBX_UNSET;
		return 0;
	}
	/* disk = default: the default cap (lib/jail/disk.h), as when it is not set */
	if (strcmp(key, "disk") == 0 && strcmp(val, "default") == 0) {
		*f = SBX_UNSET;
		return 0;
	}
	if (strcmp(key, "cpus") == 0)
		r = parse_cpus(val, &v, err);
	else if (strcmp(key, "time") == 0)
		r = sbx_parse_duration(val, &v, err);
	else if (strcmp(key, "disk") == 0 && sbx_parse_size(val, &v, NULL) < 0)
		r = sbx_err_set(err, 0,
				"bad size '%s' (expected a size such as 512m or 16G, default or "
				"unlimited)",
				val);
	else if (strcmp(key, "memory") == 0 || strcmp(key, "fsize") == 0 ||
		 strcmp(key, "disk") == 0 || strcmp(key, "image-size") == 0)
		r = sbx_parse_size(val, &v, err);
	else if ((r = sbx_parse_u64(val, &v, NULL)) < 0)
		r = sbx_err_set(err, 0,
				"bad number '%s' (expected a positive integer or unlimited)", val);
	if (r < 0)
		return r;
	if (v == 0 || v == SBX_UNSET)
		return sbx_err_set(err, 0, "bad limit '%s' (must be above 0; unlimited for none)",
				   val);
	if (strcmp(key, "memory") == 0 && v < SBX_MEMORY_MIN)
		return sbx_err_set(err, 0,
				   "memory limit '%s' is too small: a jail needs at least 4m (its "
				   "init, the command and the kernel's own pages count against it)",
				   val);
	*f = v;
	return 0;
}

/* ---------------------------------------------------------------- [security] */

static int set_seccomp(struct sbx_config *c, const char *key, const char *val,
		       const struct sbx_profile_setctx *sc, struct sbx_err *err)
{
	_cleanup_free_ char *abs = NULL, *norm = NULL;
	struct stat st;
	int r;

	if (strcmp(val, "default") == 0 || strcmp(val, "strict") == 0) {
		set_str(&c->seccomp, val);
		return 0;
	}
	if (!*val)
		return sbx_err_set(err, 0,
				   "empty seccomp policy (expected default, strict or a file)");
	abs = resolve_rel(sc->base_dir, val);
	r = norm_path(abs, true, "seccomp policy", &norm, err);
	if (r < 0)
		return r;
	if (stat(norm, &st) < 0)
		return sbx_err_set(err, errno, "seccomp policy '%s'", norm);
	if (!S_ISREG(st.st_mode))
		return sbx_err_set(
		    err, 0,
		    "seccomp policy '%s' is not a file (expected default, strict or a file)", norm);
	r = sbx_seccomp_validate(norm, err); /* its own errors name its lines */
	if (r < 0)
		return r;
	free(c->seccomp);
	c->seccomp = steal_pointer(&norm);
	return 0;
}

static int cap_one(void *ud, const char *tok, struct sbx_err *err)
{
	uint64_t *mask = ud;
	_cleanup_free_ char *name = NULL;
	cap_value_t v;

	if (strcasecmp(tok, "none") == 0)
		return sbx_err_set(err, 0, "'none' cannot be combined with capability names");
	name = strncasecmp(tok, "cap_", 4) == 0 ? sbx_xstrdup(tok) : sbx_xasprintf("cap_%s", tok);
	for (char *q = name; *q; q++)
		*q = (char)tolower((unsigned char)*q);
	if (isdigit((unsigned char)tok[0]) || cap_from_name(name, &v) < 0 || v < 0 || v > 63)
		return sbx_err_set(
		    err, 0,
		    "unknown capability '%s' (e.g. CAP_NET_BIND_SERVICE or net_bind_service)", tok);
	*mask |= 1ULL << v;
	return 0;
}

static int set_caps(struct sbx_config *c, const char *key, const char *val,
		    const struct sbx_profile_setctx *sc, struct sbx_err *err)
{
	uint64_t mask = 0;
	int r;

	if (strcasecmp(val, "none") == 0) {
		c->caps_keep = 0;
		return 0;
	}
	r = for_each_token(val, cap_one, &mask, err);
	if (r == 0)
		c->caps_keep = mask;
	return r;
}

static int set_nnp(struct sbx_config *c, const char *key, const char *val,
		   const struct sbx_profile_setctx *sc, struct sbx_err *err)
{
	return sbx_parse_bool(val, &c->no_new_privs, err);
}

/* ---------------------------------------------------------------- the table */

#define K(sec, name, rep, set, wr, syn)                                                            \
	{                                                                                          \
		sec, name, rep, set, wr, syn                                                       \
	}
const struct sbx_profile_key sbx_profile_keys[] = {
    K("sandbox", "extends", false, set_extends, NULL, "NAME|PATH"),
    K("sandbox", "rootfs", false, set_rootfs, sbx_profile_write_sandbox,
      "host|required|TARBALL|DIR"),
    K("sandbox", "hostname", false, set_hostname, NULL, "NAME"),
    K("sandbox", "user", false, set_user, NULL, "UID[:GID]|root|inherit"),
    K("sandbox", "workdir", false, set_workdir, NULL, "ABSOLUTE-PATH"),
    K("sandbox", "persist", false, set_persist, NULL, "never|on-failure|always"),
    K("sandbox", "tty", false, set_tty, NULL, "auto|yes|no"),
    K("sandbox", "writable", false, set_writable, NULL, "BOOL"),
    K("sandbox", "stop-timeout", false, set_stop_timeout, NULL, "DURATION|0|never"),
    K("filesystem", "bind", true, set_bind, sbx_profile_write_mounts, "[-]SRC[:DST] [when host]"),
    K("filesystem", "ro-bind", true, set_bind, NULL, "[-]SRC[:DST] [when host]"),
    K("filesystem", "overlay", true, set_bind, NULL, "[-]SRC[:DST] [when host]"),
    K("filesystem", "tmpfs", true, set_tmpfs, NULL, "DST[:SIZE]"),
    K("filesystem", "mask", true, set_mask, NULL, "PATH"),
    K("filesystem", "unmask", true, set_unmask, NULL, "PATH"),
    K("filesystem", "sysfs", false, set_sysfs, NULL, "own|none"),
    K("filesystem", "watch", true, set_watch, NULL, "[KEY ...] PATH"),
    K("env", "clear", false, set_clear, sbx_profile_write_env, "BOOL"),
    K("env", "pass", true, set_pass, NULL, "NAME|GLOB ..."),
    K("env", "set", true, set_set, NULL, "NAME=VALUE"),
    K("secrets", "*", true, set_secret, sbx_profile_write_secrets,
      "env:VAR[?]|file:PATH[?] [as env|as file] [inject HOST[,HOST...]]"),
    K("network", "mode", false, set_mode, sbx_profile_write_network, "none|loopback|proxy|host"),
    K("network", "allow", true, set_allow, NULL, "HOST[:PORT]|*.DOMAIN[:PORT] ..."),
    K("network", "upstream-ca", false, set_upstream_ca, NULL, "FILE"),
    K("network", "capture", false, set_capture, NULL, "BOOL"),
    K("network", "publish", true, set_publish, NULL, "[ADDR:]HOSTPORT:PORT[:open]|PORT[:open] ..."),
    K("limits", "memory", false, set_limit, sbx_profile_write_limits, "SIZE|unlimited"),
    K("limits", "pids", false, set_limit, NULL, "N|unlimited"),
    K("limits", "cpus", false, set_limit, NULL, "DECIMAL|unlimited"),
    K("limits", "time", false, set_limit, NULL, "DURATION|unlimited"),
    K("limits", "nofile", false, set_limit, NULL, "N|unlimited"),
    K("limits", "fsize", false, set_limit, NULL, "SIZE|unlimited"),
    K("limits", "disk", false, set_limit, NULL, "SIZE|default|unlimited"),
    K("limits", "image-size", false, set_limit, NULL, "SIZE|unlimited"),
    K("limits", "image-entries", false, set_limit, NULL, "N|unlimited"),
    K("security", "seccomp", false, set_seccomp, sbx_profile_write_security, "default|strict|FILE"),
    K("security", "capabilities", false, set_caps, NULL, "none|CAP_NAME ..."),
    K("security", "no-new-privs", false, set_nnp, NULL, "BOOL"),
};
const size_t sbx_profile_n_keys = SBX_ARRAY_SIZE(sbx_profile_keys);

const char *const sbx_profile_sections[] = {"sandbox", "filesystem", "env",	"secrets",
					    "network", "limits",     "security"};
const size_t sbx_profile_n_sections = SBX_ARRAY_SIZE(sbx_profile_sections);

bool sbx_profile_section_known(const char *section)
{
	for (size_t i = 0; i < sbx_profile_n_sections; i++)
		if (strcmp(sbx_profile_sections[i], section) == 0)
			return true;
	return false;
}

const struct sbx_profile_key *sbx_profile_key_find(const char *section, const char *name)
{
	for (size_t i = 0; i < sbx_profile_n_keys; i++) {
		const struct sbx_profile_key *k = &sbx_profile_keys[i];

		if (strcmp(k->section, section) == 0 &&
		    (strcmp(k->name, "*") == 0 || strcmp(k->name, name) == 0))
			return k;
	}
	return NULL;
}

int sbx_profile_err_section(const char *section, struct sbx_err *err)
{
	const char *near = sbx_closest(section, sbx_profile_sections, sbx_profile_n_sections);

	if (near)
		return sbx_err_set(err, 0, "unknown section [%s] (did you mean [%s]?)", section,
				   near);
	return sbx_err_set(err, 0,
			   "unknown section [%s] (expected sandbox, filesystem, env, secrets, "
			   "network, limits or security)",
			   section);
}

int sbx_profile_err_key(const char *section, const char *name, struct sbx_err *err)
{
	const char *cand[SBX_ARRAY_SIZE(sbx_profile_keys)];
	const char *near;
	size_t n = 0;

	for (size_t i = 0; i < sbx_profile_n_keys; i++)
		if (strcmp(sbx_profile_keys[i].section, section) == 0)
			cand[n++] = sbx_profile_keys[i].name;
	near = sbx_closest(name, cand, n);
	if (near)
		return sbx_err_set(err, 0, "unknown key '%s' in [%s] (did you mean '%s'?)", name,
				   section, near);
	/* The right key in the wrong section. */
	for (size_t i = 0; i < sbx_profile_n_keys; i++)
		if (strcmp(sbx_profile_keys[i].name, name) == 0)
			return sbx_err_set(err, 0, "unknown key '%s' in [%s] (it belongs in [%s])",
					   name, section, sbx_profile_keys[i].section);
	return sbx_err_set(err, 0, "unknown key '%s' in [%s]", name, section);
}

int sbx_profile_key_apply(struct sbx_config *c, const struct sbx_profile_key *k, const char *name,
			  const char *val, const struct sbx_profile_setctx *sc, struct sbx_err *err)
{
	int r = k->set(c, name, val, sc, err);

	if (r < 0 && err && err->errnum == EINVAL)
		err->errnum = 0; /* the message says what is wrong */
	/* Secrets name themselves; others get the key as context. */
	if (r < 0 && strcmp(k->name, "*") != 0)
		sbx_err_wrap(err, "key '%s'", name);
	return r;
}
