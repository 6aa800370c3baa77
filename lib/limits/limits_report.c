/* SPDX-License-Identifier: MIT */
/*
 * lib/limits/limits_report.c - the rlimits applied in the jail's child, and the
 * account of which limit is enforced how (run-log line and record JSON).
 */
#include "limits_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

/* ---- rlimits, in the child after clone: no malloc on the success path ---- */

static int set_rlimit(int res, const char *name, uint64_t v, bool only_lower, struct sbx_err *err)
{
	struct rlimit cur = {0}, nl;

	if (getrlimit(res, &cur) < 0)
		return sbx_err_set(err, errno, "cannot read %s", name);
	/* A fallback only ever tightens: a lower hard limit already wins. */
	if (only_lower && cur.rlim_max != RLIM_INFINITY && v > cur.rlim_max)
		v = cur.rlim_max;
	nl.rlim_cur = nl.rlim_max = (rlim_t)v;
	if (setrlimit(res, &nl) < 0) {
		int e = errno;

		if (cur.rlim_max != RLIM_INFINITY && v > cur.rlim_max)
			return sbx_err_set(
			    err, e, "cannot set %s to %" PRIu64 ": the hard limit is %" PRIu64,
			    name, v, (uint64_t)cur.rlim_max);
		return sbx_err_set(err, e, "cannot set %s to %" PRIu64, name, v);
	}
	return 0;
}

int sbx_rlimits_apply(const struct sbx_config *cfg, const struct sbx_cgroup *cg,
		      struct sbx_err *err)
{
	enum sbx_enforce mem = cg ? cg->memory : SBX_ENF_RLIMIT;
	enum sbx_enforce pids = cg ? cg->pids : SBX_ENF_RLIMIT;
	int r;

	r = set_rlimit(RLIMIT_CORE, "RLIMIT_CORE", 0, true, err);
	if (r == 0 && cfg->nofile != SBX_UNSET)
		r = set_rlimit(RLIMIT_NOFILE, "RLIMIT_NOFILE", cfg->nofile, false, err);
	if (r == 0 && cfg->fsize != SBX_UNSET)
		r = set_rlimit(RLIMIT_FSIZE, "RLIMIT_FSIZE", cfg->fsize, false, err);
	if (r == 0 && cfg->memory != SBX_UNSET && mem == SBX_ENF_RLIMIT)
		r = set_rlimit(RLIMIT_AS, "RLIMIT_AS", cfg->memory, true, err);
	/*
	 * RLIMIT_NPROC is checked against the count of the real uid's tasks in
	 * the caller's user namespace (ucounts, kernel >= 5.14): set in the
	 * jail's fresh namespace it counts the jail's processes only.  Host
	 * uid 0 is exempt, which the jail never is (it is mapped).
	 */
	if (r == 0 && cfg->pids != SBX_UNSET && pids == SBX_ENF_RLIMIT)
		r = set_rlimit(RLIMIT_NPROC, "RLIMIT_NPROC", cfg->pids, true, err);
	return r;
}

/* ---- formatting ---- */

static void fmt_size(uint64_t b, char *buf, size_t len)
{
	static const char units[] = "KMGT";
	int u = -1;

	while (u < 3 && b >= 1024 && b % 1024 == 0) {
		b /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%" PRIu64, b);
	else
		snprintf(buf, len, "%" PRIu64 "%c", b, units[u]);
}

static void fmt_cpus(uint64_t milli, char *buf, size_t len)
{
	if (milli % 1000 == 0)
		snprintf(buf, len, "%" PRIu64, milli / 1000);
	else if (milli % 100 == 0)
		snprintf(buf, len, "%" PRIu64 ".%" PRIu64, milli / 1000, milli % 1000 / 100);
	else if (milli % 10 == 0)
		snprintf(buf, len, "%" PRIu64 ".%02" PRIu64, milli / 1000, milli % 1000 / 10);
	else
		snprintf(buf, len, "%" PRIu64 ".%03" PRIu64, milli / 1000, milli % 1000);
}

/* How each limit is enforced; cg NULL: as if no cgroup. */
static enum sbx_enforce enf(const struct sbx_cgroup *cg, uint64_t v, enum sbx_enforce have,
			    enum sbx_enforce fallback)
{
	if (v == SBX_UNSET)
		return SBX_ENF_NONE;
	return cg ? have : fallback;
}

static void how_memory(const struct sbx_cgroup *cg, enum sbx_enforce e, char *buf, size_t len)
{
	bool swap = cg && cg->swap_off;

	switch (e) {
	case SBX_ENF_CGROUP2:
		snprintf(buf, len, "cgroup v2, %s%s", swap ? "swap off" : "swap not limited",
			 cg->oom_group ? ", OOM kills the whole jail" : "");
		break;
	case SBX_ENF_CGROUP1:
		snprintf(buf, len, "cgroup v1, %s, OOM kills one process",
			 swap ? "swap off" : "swap not limited");
		break;
	case SBX_ENF_RLIMIT:
		snprintf(buf, len, "rlimit AS: address space, approximate");
		break;
	default:
		snprintf(buf, len, "not enforced");
	}
}

static const char *how_pids(enum sbx_enforce e)
{
	switch (e) {
	case SBX_ENF_CGROUP2:
		return "cgroup v2";
	case SBX_ENF_CGROUP1:
		return "cgroup v1";
	case SBX_ENF_RLIMIT:
		return "rlimit NPROC, per uid in the jail's user namespace";
	default:
		return "not enforced";
	}
}

static const char *how_cpus(enum sbx_enforce e)
{
	switch (e) {
	case SBX_ENF_CGROUP2:
		return "cgroup v2 cpu.max";
	case SBX_ENF_CGROUP1:
		return "cgroup v1 cfs";
	default:
		return "not enforced: no cpu controller";
	}
}

/* One entry of the description: name, shown value, enforcement, how. */
struct entry {
	const char *name;
	char value[32];
	const char *enforced;
	char how[320];
};

static size_t entries(const struct sbx_config *cfg, const struct sbx_cgroup *cg, struct entry *e)
{
	size_t n = 0;
	enum sbx_enforce m = enf(cg, cfg->memory, cg ? cg->memory : 0, SBX_ENF_RLIMIT);
	enum sbx_enforce p = enf(cg, cfg->pids, cg ? cg->pids : 0, SBX_ENF_RLIMIT);
	enum sbx_enforce c = enf(cg, cfg->cpus_milli, cg ? cg->cpus : 0, SBX_ENF_UNENFORCED);

	if (m) {
		e[n] = (struct entry){.name = "memory", .enforced = sbx_enforce_name(m)};
		fmt_size(cfg->memory, e[n].value, sizeof(e[n].value));
		how_memory(cg, m, e[n].how, sizeof(e[n].how));
		n++;
	}
	if (p) {
		e[n] = (struct entry){.name = "pids", .enforced = sbx_enforce_name(p)};
		snprintf(e[n].value, sizeof(e[n].value), "%" PRIu64, cfg->pids);
		snprintf(e[n].how, sizeof(e[n].how), "%s", how_pids(p));
		n++;
	}
	if (c) {
		e[n] = (struct entry){.name = "cpus", .enforced = sbx_enforce_name(c)};
		fmt_cpus(cfg->cpus_milli, e[n].value, sizeof(e[n].value));
		snprintf(e[n].how, sizeof(e[n].how), "%s", how_cpus(c));
		n++;
	}
	if (cfg->time_ms != SBX_UNSET) {
		e[n] =
		    (struct entry){.name = "time", .enforced = "timer", .how = "supervisor timer"};
		sbx_duration_text(cfg->time_ms, e[n].value, sizeof(e[n].value));
		n++;
	}
	if (cfg->nofile != SBX_UNSET) {
		e[n] = (struct entry){.name = "nofile", .enforced = "rlimit", .how = "rlimit"};
		snprintf(e[n].value, sizeof(e[n].value), "%" PRIu64, cfg->nofile);
		n++;
	}
	if (cfg->fsize != SBX_UNSET) {
		e[n] = (struct entry){.name = "fsize", .enforced = "rlimit", .how = "rlimit"};
		fmt_size(cfg->fsize, e[n].value, sizeof(e[n].value));
		n++;
	}
	if (cfg->disk == SBX_DISK_NO_CAP) {
		e[n] = (struct entry){
		    .name = "disk",
		    .value = "unlimited",
		    .enforced = "none",
		    .how = "no cap ([limits] disk = unlimited): the writable layer is on "
			   "the state filesystem"};
		n++;
	} else if (cfg->disk != SBX_UNSET) {
		bool on_disk = cg && cg->disk_where == SBX_DISK_ON_DISK;

		e[n] = (struct entry){.name = "disk", .enforced = on_disk ? "loop-ext4" : "tmpfs"};
		fmt_size(cfg->disk, e[n].value, sizeof(e[n].value));
		if (on_disk)
			snprintf(e[n].how, sizeof(e[n].how),
				 "the writable layer is an ext4 image on the state filesystem, "
				 "%" PRIu64 " inodes%s%s",
				 cg->disk_inodes, cg->disk_why[0] ? "; " : "", cg->disk_why);
		else
			snprintf(e[n].how, sizeof(e[n].how),
				 "the writable layer is a tmpfs, in memory%s%s",
				 cg && cg->disk_why[0] ? "; " : "", cg ? cg->disk_why : "");
		n++;
	}
	e[n] = (struct entry){.name = "core", .value = "0", .enforced = "rlimit", .how = "rlimit"};
	return n + 1;
}

int sbx_limits_describe(const struct sbx_config *cfg, const struct sbx_cgroup *cg, char *buf,
			size_t len)
{
	struct entry e[10];
	size_t n = entries(cfg, cg, e);
	int total = 0;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		size_t at = (size_t)total < len ? (size_t)total : len;
		int w = snprintf(buf + at, len - at, "%s%s %s (%s)", i ? ", " : "", e[i].name,
				 e[i].value, e[i].how);

		if (w > 0)
			total += w;
	}
	return total;
}

static json_t *entry_json(const struct sbx_config *cfg, const struct entry *e)
{
	json_t *o = json_object();
	json_t *v;

	if (!strcmp(e->name, "memory"))
		v = json_integer((json_int_t)cfg->memory);
	else if (!strcmp(e->name, "pids"))
		v = json_integer((json_int_t)cfg->pids);
	else if (!strcmp(e->name, "cpus"))
		v = json_real((double)cfg->cpus_milli / 1000.0);
	else if (!strcmp(e->name, "time"))
		v = json_integer((json_int_t)cfg->time_ms);
	else if (!strcmp(e->name, "nofile"))
		v = json_integer((json_int_t)cfg->nofile);
	else if (!strcmp(e->name, "fsize"))
		v = json_integer((json_int_t)cfg->fsize);
	else if (!strcmp(e->name, "disk"))
		v = cfg->disk == SBX_DISK_NO_CAP ? json_null()
						 : json_integer((json_int_t)cfg->disk);
	else
		v = json_integer(0);
	json_object_set_new(o, !strcmp(e->name, "time") ? "value_ms" : "value", v);
	json_object_set_new(o, "enforced", json_string(e->enforced));
	json_object_set_new(o, "how", json_string(e->how));
	return o;
}

json_t *sbx_limits_json(const struct sbx_config *cfg, const struct sbx_cgroup *cg)
{
	struct entry e[10];
	size_t n = entries(cfg, cg, e);
	json_t *o = json_object();

	for (size_t i = 0; i < n; i++)
		json_object_set_new(o, e[i].name, entry_json(cfg, &e[i]));
	return o;
}

/* A JSON string even for bytes that are not UTF-8 (paths come from the
 * host and may hold anything). */
static json_t *jstr(const char *s)
{
	_cleanup_free_ char *esc = NULL;

	if (sbx_utf8_valid(s, strlen(s)))
		return json_string(s);
	esc = sbx_escape_display(s);
	return json_string(esc);
}

json_t *sbx_cgroup_json(const struct sbx_cgroup *cg)
{
	json_t *o = json_object(), *paths = json_array();
	const char *v1[] = {cg->mem1, cg->pids1, cg->cpu1, cg->cpuacct1, cg->freezer1};

	json_object_set_new(o, "version", json_integer(cg->version));
	if (cg->path2)
		json_array_append_new(paths, jstr(cg->path2));
	for (size_t i = 0; i < SBX_ARRAY_SIZE(v1); i++) {
		bool dup = false;

		for (size_t j = 0; j < i; j++)
			dup |= v1[i] && v1[j] && !strcmp(v1[i], v1[j]);
		if (v1[i] && !dup)
			json_array_append_new(paths, jstr(v1[i]));
	}
	json_object_set_new(o, "paths", paths);
	json_object_set_new(o, "why", cg->why[0] ? jstr(cg->why) : json_null());
	json_object_set_new(o, "note", cg->note[0] ? jstr(cg->note) : json_null());
	return o;
}
