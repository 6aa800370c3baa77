/* SPDX-License-Identifier: MIT */
/*
 * lib/limits/limits.c - resource limits: finding the cgroup hierarchies, choosing
 * v2 / v1 / rlimits, the rlimits applied in the jail, stale cgroups, and
 * the account of which limit is enforced how.  The cgroup backends are in
 * lib/limits/limits_cgfs.c (v1) and lib/limits/limits_cg2.c (v2).
 */
#include "limits_int.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

const char *sbx_enforce_name(enum sbx_enforce e)
{
	static const char *const n[] = {"none", "cgroup2", "cgroup1", "rlimit", "unenforced"};

	return (unsigned)e < SBX_ARRAY_SIZE(n) ? n[e] : "?";
}

void sbx_cg_why(struct sbx_cgroup *cg, const char *fmt, ...)
{
	size_t n = strlen(cg->why);
	va_list ap;

	if (n && n + 2 < sizeof(cg->why)) {
		memcpy(cg->why + n, "; ", 3);
		n += 2;
	}
	if (n + 1 >= sizeof(cg->why))
		return;
	va_start(ap, fmt);
	vsnprintf(cg->why + n, sizeof(cg->why) - n, fmt, ap);
	va_end(ap);
}

/* ---- detection ---- */

void sbx_cgroup_sys_free(struct sbx_cgroup_sys *s)
{
	free(s->v2_mount);
	free(s->v2_root);
	free(s->v2_self);
	for (int c = 0; c < SBX_CG_NCTRL; c++) {
		free(s->v1_mount[c]);
		free(s->v1_root[c]);
		free(s->v1_self[c]);
	}
	memset(s, 0, sizeof(*s));
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static char *unescape(const char *s, size_t n)
{
	char *out = sbx_xmalloc(n + 1), *o = out;

	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 3 < n && s[i + 1] >= '0' && s[i + 1] <= '3') {
			*o++ = (char)(((s[i + 1] - '0') << 6) | ((s[i + 2] - '0') << 3) |
				      (s[i + 3] - '0'));
			i += 3;
		} else {
			*o++ = s[i];
		}
	}
	*o = '\0';
	return out;
}

/* Split one line into at most max space-separated fields (in place). */
static int split(char *line, char **f, int max)
{
	char *save = NULL;
	int n = 0;

	for (char *p = strtok_r(line, " ", &save); p && n < max; p = strtok_r(NULL, " ", &save))
		f[n++] = p;
	return n;
}

static void take_mount(struct sbx_cgroup_sys *s, char **f, int nf, int sep)
{
	const char *fstype = f[sep + 1];

	if (!strcmp(fstype, "cgroup2")) {
		if (!s->v2_mount) {
			s->v2_mount = unescape(f[4], strlen(f[4]));
			s->v2_root = unescape(f[3], strlen(f[3]));
		}
		return;
	}
	if (strcmp(fstype, "cgroup") != 0 || sep + 3 >= nf)
		return;
	/* v1: the controllers are in the super options: rw,cpu,cpuacct */
	for (int c = 0; c < SBX_CG_NCTRL; c++) {
		char opts[1024], *save = NULL;

		snprintf(opts, sizeof(opts), "%s", f[sep + 3]);
		for (char *o = strtok_r(opts, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
			if (strcmp(o, sbx_cg_ctrl_names[c]) != 0 || s->v1_mount[c])
				continue;
			s->v1_mount[c] = unescape(f[4], strlen(f[4]));
			s->v1_root[c] = unescape(f[3], strlen(f[3]));
		}
	}
}

int sbx_cgroup_parse_mountinfo(const char *text, struct sbx_cgroup_sys *s)
{
	_cleanup_free_ char *copy = sbx_xstrdup(text);
	char *save = NULL;

	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *f[64];
		int nf = split(line, f, 64), sep = -1;

		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - TYPE SRC SUPER */
		for (int i = 6; i < nf; i++) {
			if (!strcmp(f[i], "-")) {
				sep = i;
				break;
			}
		}
		if (nf < 7 || sep < 0 || sep + 1 >= nf)
			continue;
		take_mount(s, f, nf, sep);
	}
	return 0;
}

/* PATH relative to the mount's root: "/a/b" with root "/a" is "/b". */
static char *rel(const char *path, const char *root)
{
	size_t rl = root ? strlen(root) : 0;

	if (rl > 1 && strncmp(path, root, rl) == 0 && (path[rl] == '/' || !path[rl]))
		return sbx_xstrdup(path[rl] ? path + rl : "/");
	return sbx_xstrdup(path);
}

int sbx_cgroup_parse_self(const char *text, struct sbx_cgroup_sys *s)
{
	_cleanup_free_ char *copy = sbx_xstrdup(text);
	char *save = NULL;

	/* HIERARCHY-ID:CONTROLLER-LIST:PATH; v2 is "0::PATH". */
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		char *list, *path, *save2 = NULL;

		if (!c2)
			continue;
		*c2 = '\0';
		list = c1 + 1;
		path = c2 + 1;
		if (!*list) {
			if (!s->v2_self)
				s->v2_self = rel(path, s->v2_root);
			continue;
		}
		for (char *o = strtok_r(list, ",", &save2); o; o = strtok_r(NULL, ",", &save2)) {
			for (int c = 0; c < SBX_CG_NCTRL; c++) {
				if (!strcmp(o, sbx_cg_ctrl_names[c]) && !s->v1_self[c])
					s->v1_self[c] = rel(path, s->v1_root[c]);
			}
		}
	}
	return 0;
}

static int read_text(const char *path, char **out)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	size_t len;

	*out = NULL;
	if (fd < 0)
		return -errno;
	return sbx_read_fd_string(fd, 4 << 20, out, &len);
}

static int probe_force(struct sbx_cgroup_sys *s, struct sbx_err *err)
{
	const char *f = getenv("SBX_CGROUP");

	if (!f || !*f || !strcmp(f, "auto"))
		s->force = 0;
	else if (!strcmp(f, "v2") || !strcmp(f, "2"))
		s->force = 2;
	else if (!strcmp(f, "v1") || !strcmp(f, "1"))
		s->force = 1;
	else if (!strcmp(f, "none") || !strcmp(f, "0"))
		s->force = -1;
	else
		return sbx_err_set(err, 0, "bad SBX_CGROUP '%s' (auto, v2, v1 or none)", f);
	return 0;
}

int sbx_cgroup_probe(struct sbx_cgroup_sys *s, struct sbx_err *err)
{
	const char *root2 = getenv("SBX_CGROUP_ROOT"), *root1 = getenv("SBX_CGROUP_V1_ROOT");
	const char *selff = getenv("SBX_CGROUP_SELF");
	_cleanup_free_ char *self = NULL, *mi = NULL;
	int r;

	memset(s, 0, sizeof(*s));
	r = probe_force(s, err);
	if (r < 0)
		return r;
	r = read_text(selff && *selff ? selff : "/proc/self/cgroup", &self);
	if (r < 0)
		return sbx_err_set(err, -r, "cannot read '%s'",
				   selff && *selff ? selff : "/proc/self/cgroup");
	if (root2 && *root2) {
		s->v2_mount = sbx_xstrdup(root2);
		s->v2_root = sbx_xstrdup("/");
	} else if (root1 && *root1) {
		for (int c = 0; c < SBX_CG_NCTRL; c++) {
			_cleanup_free_ char *d = sbx_cg_join(root1, sbx_cg_ctrl_names[c]);
			struct stat st;

			if (stat(d, &st) == 0 && S_ISDIR(st.st_mode)) {
				s->v1_mount[c] = steal_pointer(&d);
				s->v1_root[c] = sbx_xstrdup("/");
			}
		}
	} else {
		r = read_text("/proc/self/mountinfo", &mi);
		if (r < 0)
			return sbx_err_set(err, -r, "cannot read '/proc/self/mountinfo'");
		sbx_cgroup_parse_mountinfo(mi, s);
	}
	return sbx_cgroup_parse_self(self, s);
}

/* ---- create and the rest, per version ---- */

static bool valid_id(const char *id)
{
	size_t n = strlen(id);

	if (n == 0 || n > 64 || !strcmp(id, ".") || !strcmp(id, ".."))
		return false;
	return strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n;
}

static bool v1_any(const struct sbx_cgroup_sys *s)
{
	return s->v1_mount[SBX_CG_MEMORY] || s->v1_mount[SBX_CG_PIDS] || s->v1_mount[SBX_CG_CPU];
}

/* What the limits cgroups did not take: rlimits, or nothing for cpus. */
static void fallbacks(struct sbx_cgroup *cg, const struct sbx_config *cfg)
{
	if (cfg->memory != SBX_UNSET && cg->memory == SBX_ENF_NONE)
		cg->memory = SBX_ENF_RLIMIT;
	if (cfg->pids != SBX_UNSET && cg->pids == SBX_ENF_NONE)
		cg->pids = SBX_ENF_RLIMIT;
	if (cfg->cpus_milli != SBX_UNSET && cg->cpus == SBX_ENF_NONE)
		cg->cpus = SBX_ENF_UNENFORCED;
	if (cg->memory == SBX_ENF_RLIMIT)
		sbx_cg_why(cg, "memory falls back to RLIMIT_AS, which caps address space, not "
			       "resident memory");
	if (cg->pids == SBX_ENF_RLIMIT)
		sbx_cg_why(
		    cg,
		    "pids falls back to RLIMIT_NPROC, counted per uid in the jail's user namespace "
		    "(kernel >= 5.14; older kernels count every process of that host uid)");
}

int sbx_cgroup_create_in(struct sbx_cgroup *cg, const struct sbx_cgroup_sys *s, const char *id,
			 const struct sbx_config *cfg, struct sbx_err *err)
{
	int r = 0;

	memset(cg, 0, sizeof(*cg));
	if (!valid_id(id))
		return sbx_err_set(err, EINVAL, "bad sandbox id '%s' for a cgroup name", id);
	if (s->force < 0) {
		sbx_cg_why(cg, "cgroups disabled by SBX_CGROUP=none");
	} else if (s->force != 1 && sbx_cg2_usable(s)) {
		r = sbx_cg2_create(cg, s, id, cfg, err);
	} else if (s->force == 2) {
		sbx_cg_why(cg, "no cgroup v2 hierarchy with controllers (SBX_CGROUP=v2)");
	} else if (v1_any(s)) {
		if (s->v2_mount && s->force == 0)
			snprintf(cg->note, sizeof(cg->note),
				 "cgroup2 at '%s' has no memory, pids or cpu controller: using v1",
				 s->v2_mount);
		r = sbx_cg1_create(cg, s, id, cfg, err);
	} else {
		sbx_cg_why(cg,
			   "no cgroup hierarchy with memory, pids or cpu controllers is mounted");
	}
	if (r < 0)
		return r;
	fallbacks(cg, cfg);
	return 0;
}

/*
 * Only a pids limit, and no cgroup v2: RLIMIT_NPROC in the jail's own user
 * namespace holds it as well, and a v1 attach (the supervisor moving init
 * into the cgroup) waits for an RCU grace period, ~10 ms a run.
 */
static bool pids_alone_on_v1(const struct sbx_cgroup_sys *s, const struct sbx_config *cfg)
{
	return cfg->pids != SBX_UNSET && cfg->memory == SBX_UNSET && cfg->cpus_milli == SBX_UNSET &&
	       s->force == 0 && !sbx_cg2_usable(s);
}

int sbx_cgroup_create(struct sbx_cgroup *cg, const char *id, const struct sbx_config *cfg,
		      struct sbx_err *err)
{
	struct sbx_cgroup_sys s;
	int r;

	memset(cg, 0, sizeof(*cg));
	r = sbx_cgroup_probe(&s, err);
	if (r == 0 && pids_alone_on_v1(&s, cfg)) {
		cg->pids = SBX_ENF_RLIMIT;
		snprintf(cg->note, sizeof(cg->note),
			 "pids by RLIMIT_NPROC: no memory or cpu limit needs a cgroup, and "
			 "a cgroup v1 attach costs about 10 ms a run");
	} else if (r == 0) {
		r = sbx_cgroup_create_in(cg, &s, id, cfg, err);
	}
	sbx_cgroup_sys_free(&s);
	return r;
}

int sbx_cgroup_attach(struct sbx_cgroup *cg, pid_t pid, struct sbx_err *err)
{
	if (cg->version == 2)
		return sbx_cg2_attach(cg, pid, err);
	if (cg->version == 1)
		return sbx_cg1_attach(cg, pid, err);
	return 0;
}

int sbx_cgroup_usage(struct sbx_cgroup *cg, struct sbx_usage *u)
{
	memset(u, 0, sizeof(*u));
	if (cg->version == 2)
		sbx_cg2_usage(cg, u);
	else if (cg->version == 1)
		sbx_cg1_usage(cg, u);
	return 0;
}

int sbx_cgroup_kill(struct sbx_cgroup *cg)
{
	if (cg->version == 2)
		return sbx_cg2_kill(cg);
	if (cg->version == 1)
		return sbx_cg1_kill(cg);
	return 0;
}

int sbx_cgroup_destroy(struct sbx_cgroup *cg, struct sbx_err *err)
{
	int r1 = sbx_cg2_destroy(cg, err);
	int r2 = sbx_cg1_destroy(cg, r1 < 0 ? NULL : err);

	return r1 < 0 ? r1 : r2;
}

void sbx_cgroup_free(struct sbx_cgroup *cg)
{
	free(cg->path2);
	free(cg->leaf2);
	free(cg->mem1);
	free(cg->pids1);
	free(cg->cpu1);
	free(cg->cpuacct1);
	free(cg->freezer1);
	free(cg->self2);
	free(cg->sup2);
	memset(cg, 0, sizeof(*cg));
}

/* ---- stale cgroups of lost runs ---- */

struct stale {
	char name[96], sup[96];
	bool fake;
	int removed;
	int err;
};

static void stale_remove(struct stale *st, const char *dir, bool is_sup)
{
	int r;

	/* A supervisor still in sbx-sup-ID is alive: not stale. */
	if (is_sup && !sbx_cg_tree_empty(dir))
		return;
	if (!st->fake && !is_sup)
		sbx_cg_kill_tree(dir, NULL, NULL, NULL, NULL);
	r = sbx_cg_rmtree(dir, st->fake);
	if (r == 0)
		st->removed++;
	else if (!st->err)
		st->err = r;
}

static void stale_walk(struct stale *st, const char *dir, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		_cleanup_free_ char *sub = NULL;

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		sub = sbx_cg_join(dir, de->d_name);
		if (!strcmp(de->d_name, st->name))
			stale_remove(st, sub, false);
		else if (!strcmp(de->d_name, st->sup))
			stale_remove(st, sub, true);
		else if (depth < 16)
			stale_walk(st, sub, depth + 1);
	}
	closedir(d);
}

int sbx_cgroup_remove_stale(const char *id, struct sbx_err *err)
{
	struct sbx_cgroup_sys s;
	struct stale st = {0};
	const char *mounts[SBX_CG_NCTRL + 1];
	int n = 0, r;

	if (!valid_id(id))
		return sbx_err_set(err, EINVAL, "bad sandbox id '%s' for a cgroup name", id);
	r = sbx_cgroup_probe(&s, err);
	if (r < 0)
		return r;
	snprintf(st.name, sizeof(st.name), "sbx-%s", id);
	snprintf(st.sup, sizeof(st.sup), "sbx-sup-%s", id);
	if (s.v2_mount)
		mounts[n++] = s.v2_mount;
	for (int c = 0; c < SBX_CG_NCTRL; c++) {
		bool dup = false;

		for (int o = 0; o < n && s.v1_mount[c]; o++)
			dup |= !strcmp(mounts[o], s.v1_mount[c]);
		if (s.v1_mount[c] && !dup)
			mounts[n++] = s.v1_mount[c];
	}
	for (int i = 0; i < n; i++) {
		st.fake = !sbx_cg_is_cgroupfs(mounts[i]);
		stale_walk(&st, mounts[i], 0);
	}
	sbx_cgroup_sys_free(&s);
	if (st.err)
		return sbx_err_set(err, -st.err, "cannot remove stale cgroup 'sbx-%s'", id);
	return st.removed;
}

/* ---- a running sandbox's cgroup, from its record ---- */

static bool sandbox_dir(const char *path, const char *id, const char *mount)
{
	const char *base = strrchr(path, '/');
	size_t n = strlen(mount);
	struct stat st;

	return base && !strncmp(base + 1, "sbx-", 4) && !strcmp(base + 5, id) &&
	       !strncmp(path, mount, n) && path[n] == '/' && !strstr(path, "/../") &&
	       lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int restore_path(struct sbx_cgroup *cg, const struct sbx_cgroup_sys *s, const char *id,
			const char *path)
{
	char **slots[SBX_CG_NCTRL] = {
	    &cg->mem1, &cg->pids1, &cg->cpu1, &cg->cpuacct1, &cg->freezer1,
	};
	int found = 0;

	if (cg->version == 2) {
		if (cg->path2 || !s->v2_mount || !sandbox_dir(path, id, s->v2_mount))
			return -EINVAL;
		cg->path2 = sbx_xstrdup(path);
		cg->leaf2 = sbx_cg_join(path, "jail");
		return 0;
	}
	/* v1: the path belongs to every controller mounted where it lies
	 * (co-mounted cpu,cpuacct share one). */
	for (int c = 0; c < SBX_CG_NCTRL; c++) {
		if (!s->v1_mount[c] || !sandbox_dir(path, id, s->v1_mount[c]))
			continue;
		if (*slots[c])
			return -EINVAL;
		*slots[c] = sbx_xstrdup(path);
		found++;
	}
	return found ? 0 : -EINVAL;
}

/* How a requested limit was enforced, seen from the directory it lives in. */
static enum sbx_enforce restored(uint64_t want, const char *dir, const char *file,
				 enum sbx_enforce e)
{
	if (want == SBX_UNSET || !dir || (file && !sbx_cg_has(dir, file)))
		return SBX_ENF_NONE;
	return e;
}

/* The paths of the record's "cgroup" object into cg (version 0: none). */
static int restore_all(struct sbx_cgroup *cg, const char *id, const json_t *j, struct sbx_err *err)
{
	struct sbx_cgroup_sys s;
	json_t *paths = json_object_get(j, "paths"), *p;
	size_t i;
	int r;

	memset(cg, 0, sizeof(*cg));
	if (!valid_id(id))
		return sbx_err_set(err, EINVAL, "bad sandbox id '%s' for a cgroup name", id);
	cg->version = (int)json_integer_value(json_object_get(j, "version"));
	if (cg->version != 1 && cg->version != 2) {
		cg->version = 0;
		return 0;
	}
	r = sbx_cgroup_probe(&s, err);
	if (r < 0)
		return r;
	json_array_foreach(paths, i, p)
	{
		const char *path = json_string_value(p);

		if (!path || restore_path(cg, &s, id, path) < 0) {
			sbx_cgroup_sys_free(&s);
			sbx_cgroup_free(cg);
			return sbx_err_set(err, EINVAL,
					   "cgroup path '%s' of sandbox '%s' is not its cgroup",
					   path ? path : "?", id);
		}
	}
	sbx_cgroup_sys_free(&s);
	if (cg->version == 2
		? !cg->path2
		: !(cg->mem1 || cg->pids1 || cg->cpu1 || cg->cpuacct1 || cg->freezer1)) {
		sbx_cgroup_free(cg);
		return sbx_err_set(err, EINVAL, "the record of sandbox '%s' names no cgroup path",
				   id);
	}
	return 0;
}

int sbx_cgroup_remove_empty(const char *id, const json_t *j, struct sbx_err *err)
{
	struct sbx_cgroup cg;
	const char *dirs[SBX_CG_NCTRL + 1];
	_cleanup_free_ char *sup = NULL;
	int n = 0, removed = 0, r = restore_all(&cg, id, j, err);

	if (r < 0 || cg.version == 0)
		return r;
	if (cg.version == 2) {
		/* and the supervisor's own sbx-sup-ID beside it, if it made one */
		const char *slash = strrchr(cg.path2, '/');

		dirs[n++] = cg.path2;
		sup = sbx_xasprintf("%.*s/sbx-sup-%s", (int)(slash - cg.path2), cg.path2, id);
		dirs[n++] = sup;
	} else {
		const char *v1[SBX_CG_NCTRL] = {cg.mem1, cg.pids1, cg.cpu1, cg.cpuacct1,
						cg.freezer1};

		for (int c = 0; c < SBX_CG_NCTRL; c++) {
			bool dup = false;

			for (int o = 0; o < n && v1[c]; o++)
				dup |= !strcmp(dirs[o], v1[c]);
			if (v1[c] && !dup)
				dirs[n++] = v1[c];
		}
	}
	for (int i = 0; i < n; i++) {
		struct stat st;
		bool fake = !sbx_cg_is_cgroupfs(dirs[i]);

		if (lstat(dirs[i], &st) < 0 || !sbx_cg_tree_empty(dirs[i]))
			continue;
		if (sbx_cg_rmtree(dirs[i], fake) == 0)
			removed++;
	}
	sbx_cgroup_free(&cg);
	return removed;
}

int sbx_cgroup_from_json(struct sbx_cgroup *cg, const char *id, const json_t *j,
			 const struct sbx_config *cfg, struct sbx_err *err)
{
	int r = restore_all(cg, id, j, err);

	if (r < 0)
		return r;
	if (cg->version == 0) {
		fallbacks(cg, cfg);
		return 0;
	}
	if (cg->version == 2) {
		cg->fake = !sbx_cg_is_cgroupfs(cg->path2);
		cg->memory = restored(cfg->memory, cg->path2, "memory.max", SBX_ENF_CGROUP2);
		cg->pids = restored(cfg->pids, cg->path2, "pids.max", SBX_ENF_CGROUP2);
		cg->cpus = restored(cfg->cpus_milli, cg->path2, "cpu.max", SBX_ENF_CGROUP2);
	} else {
		cg->memory = restored(cfg->memory, cg->mem1, NULL, SBX_ENF_CGROUP1);
		cg->pids = restored(cfg->pids, cg->pids1, NULL, SBX_ENF_CGROUP1);
		cg->cpus = restored(cfg->cpus_milli, cg->cpu1, NULL, SBX_ENF_CGROUP1);
		for (int c = 0; c < SBX_CG_NCTRL; c++) {
			const char *d[] = {cg->mem1, cg->pids1, cg->cpu1, cg->cpuacct1,
					   cg->freezer1};

			if (d[c]) {
				cg->fake = !sbx_cg_is_cgroupfs(d[c]);
				break;
			}
		}
	}
	fallbacks(cg, cfg);
	return 0;
}
