/* SPDX-License-Identifier: MIT */
/*
 * lib/run/run_watch.c - watch = [KEY ...] PATH: a JSON file that a
 * program rewrites on its own, where only some keys name what it runs.
 *
 * Claude Code rewrites ~/.claude.json on every start (counters, tips,
 * per-project history), so its time says nothing; but the same file holds
 * the MCP servers it starts (mcpServers, projects.*.mcpServers) and, per
 * project, the tools it runs without asking and the project servers it
 * trusts.  Written from the jail, they run the next time Claude Code
 * starts outside sbx.  So the file's bytes are read just before the
 * command starts (at most WATCH_MAX; no symlink followed), and after the
 * run, when the file changed since, both are parsed and what each key
 * holds compared: each member path whose value differs is named
 * ("/home/a/.claude.json: mcpServers, projects["/home/a/p"].allowedTools").
 * A missing member counts as an empty one (null, false, "", {}, []): a
 * new project's entry that Claude Code fills with empty lists is no
 * change.  A file that is not JSON after the run is named as a whole; one
 * that was not JSON before, or was bigger than WATCH_MAX, is compared as
 * if empty, or (too big) named whenever it changed.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "run_int.h"

/* bytes of one watched JSON file read, at most */
#define WATCH_MAX (64u << 20)
/* member paths named for one file, at most (then "and N more") */
#define WATCH_NAMED 8

struct sbx_watch_snap {
	char *data; /* the file's bytes before the run (NULL: absent) */
	size_t len;
	bool big; /* more than WATCH_MAX: compared by time only */
};

/* path's bytes (a regular file, not a symlink), or NULL when absent, not
 * readable, or (*big) more than WATCH_MAX */
static char *slurp(const char *path, size_t *len, bool *big)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;
	size_t cap, n = 0;
	char *buf = NULL;

	*len = 0;
	*big = false;
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return NULL;
	}
	/* its size, and more while it grows, up to one byte past the most */
	cap = (uint64_t)st.st_size < WATCH_MAX ? (size_t)st.st_size + 4096 : WATCH_MAX + 1;
	buf = sbx_xmalloc(cap);
	for (;;) {
		ssize_t r = sbx_read_all(fd, buf + n, cap - n);

		if (r < 0) {
			free(buf);
			close(fd);
			return NULL;
		}
		n += (size_t)r;
		if (n < cap || cap > WATCH_MAX)
			break;
		cap = cap * 2 > WATCH_MAX + 1 ? WATCH_MAX + 1 : cap * 2;
		buf = sbx_xrealloc(buf, cap);
	}
	close(fd);
	if (n > WATCH_MAX) {
		free(buf);
		*big = true;
		return NULL;
	}
	*len = n;
	return buf;
}

void sbx_later_begin(struct sbx_later *l, const struct sbx_config *cfg)
{
	sbx_later_free(l);
	if (cfg->n_watch_keys) {
		l->snaps = sbx_xcalloc(cfg->n_watch_keys, sizeof(*l->snaps));
		l->n_snaps = cfg->n_watch_keys;
	}
	for (size_t i = 0; i < l->n_snaps; i++) {
		struct sbx_watch_snap *s = &l->snaps[i];

		s->data = slurp(cfg->watch_keys[i].path, &s->len, &s->big);
	}
	clock_gettime(CLOCK_REALTIME_COARSE, &l->since);
}

void sbx_later_free(struct sbx_later *l)
{
	for (size_t i = 0; i < l->n_snaps; i++)
		free(l->snaps[i].data);
	free(l->snaps);
	*l = (struct sbx_later){0};
}

/* A member path's value in one document: what one key matched. */
struct match {
	char *name; /* mcpServers, projects["/p"].allowedTools */
	const json_t *before, *after;
};

struct matches {
	struct match *v;
	size_t n;
};

static struct match *find(struct matches *m, const char *name)
{
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->v[i].name, name))
			return &m->v[i];
	m->v = sbx_xrealloc(m->v, (m->n + 1) * sizeof(*m->v));
	m->v[m->n] = (struct match){.name = sbx_xstrdup(name)};
	return &m->v[m->n++];
}

/* name + one member: ".x" (just "x" first), or ["x"] for a "*" (as it
 * is: the line is escaped for display as a whole) */
static char *member(const char *name, const char *key, bool any)
{
	if (any)
		return sbx_xasprintf("%s[\"%s\"]", name, key);
	return *name ? sbx_xasprintf("%s.%s", name, key) : sbx_xstrdup(key);
}

static void walk(const json_t *v, const char *rest, const char *name, bool after,
		 struct matches *m);

/* sub, found at name: walked on by next, or (the key's last member) kept */
static void step(const json_t *sub, const char *next, const char *name, bool after,
		 struct matches *m)
{
	if (next)
		walk(sub, next, name, after, m);
	else if (after)
		find(m, name)->after = sub;
	else
		find(m, name)->before = sub;
}

/* What the key's members from *rest on lead to in v (after: the document
 * after the run), each kept in m under its member path. */
static void walk(const json_t *v, const char *rest, const char *name, bool after, struct matches *m)
{
	const char *dot = strchrnul(rest, '.');
	_cleanup_free_ char *key = sbx_xstrndup(rest, (size_t)(dot - rest));
	const char *next = *dot ? dot + 1 : NULL;
	const json_t *sub;

	if (!json_is_object(v))
		return;
	if (!strcmp(key, "*")) {
		const char *k;
		json_t *each;

		json_object_foreach((json_t *)v, k, each)
		{
			_cleanup_free_ char *n = member(name, k, true);

			step(each, next, n, after, m);
		}
	} else if ((sub = json_object_get(v, key))) {
		_cleanup_free_ char *n = member(name, key, false);

		step(sub, next, n, after, m);
	}
}

/* null, false, "", 0, {} or []: the same as a missing member */
static bool empty(const json_t *v)
{
	return !v || json_is_null(v) || json_is_false(v) ||
	       (json_is_string(v) && !*json_string_value(v)) ||
	       (json_is_integer(v) && !json_integer_value(v)) ||
	       (json_is_object(v) && !json_object_size(v)) ||
	       (json_is_array(v) && !json_array_size(v));
}

static json_t *parse(const char *data, size_t len)
{
	return data ? json_loadb(data, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL) : NULL;
}

/* One watched JSON file: its entry in *out when what its keys hold
 * changed since t. */
static void compare(const struct sbx_watch_keys *w, const struct sbx_watch_snap *s,
		    const struct timespec *t, struct sbx_strv *out)
{
	struct stat st;
	size_t len = 0, changed = 0;
	bool big = false;
	_cleanup_free_ char *data = NULL, *list = NULL;
	json_t *before = NULL, *after = NULL;
	struct matches m = {0};
	char *line = NULL;

	if (lstat(w->path, &st) < 0
		? !s->data && !s->big
		: (st.st_ctim.tv_sec < t->tv_sec ||
		   (st.st_ctim.tv_sec == t->tv_sec && st.st_ctim.tv_nsec < t->tv_nsec)))
		return; /* absent before and after, or not changed since */
	data = slurp(w->path, &len, &big);
	if (big || s->big) {
		line = sbx_xasprintf("%s (changed; more than %u MiB: its keys not compared)",
				     w->path, WATCH_MAX >> 20);
		goto done;
	}
	after = parse(data, len);
	if (data && !after) {
		line = sbx_xasprintf("%s (not JSON after the run)", w->path);
		goto done;
	}
	before = parse(s->data, s->len);
	for (size_t i = 0; i < w->keys.n; i++) {
		walk(before, w->keys.v[i], "", false, &m);
		walk(after, w->keys.v[i], "", true, &m);
	}
	for (size_t i = 0; i < m.n; i++) {
		const struct match *x = &m.v[i];
		bool same = (empty(x->before) && empty(x->after)) ||
			    (x->before && x->after && json_equal(x->before, x->after));

		if (same)
			continue;
		if (changed < WATCH_NAMED) {
			char *l =
			    list ? sbx_xasprintf("%s, %s", list, x->name) : sbx_xstrdup(x->name);

			free(list);
			list = l;
		}
		changed++;
	}
	if (changed > WATCH_NAMED)
		line = sbx_xasprintf("%s: %s and %zu more", w->path, list, changed - WATCH_NAMED);
	else if (changed)
		line = sbx_xasprintf("%s: %s", w->path, list);
done:
	if (line) {
		sbx_strv_push_take(out, sbx_escape_display(line));
		free(line);
	}
	for (size_t i = 0; i < m.n; i++)
		free(m.v[i].name);
	free(m.v);
	json_decref(before);
	json_decref(after);
}

void sbx_later_keys_changed(const struct sbx_later *l, const struct sbx_config *cfg,
			    struct sbx_strv *out)
{
	if (!l->since.tv_sec)
		return;
	for (size_t i = 0; i < cfg->n_watch_keys && i < l->n_snaps; i++)
		compare(&cfg->watch_keys[i], &l->snaps[i], &l->since, out);
}
