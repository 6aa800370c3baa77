/* SPDX-License-Identifier: MIT */
/*
 * lib/limits/limits_cg2.c - the cgroup v2 backend, written to the kernel's
 * Documentation/admin-guide/cgroup-v2.rst: memory.max + memory.swap.max=0
 * + memory.oom.group=1, pids.max, cpu.max "QUOTA PERIOD"; memory.peak,
 * pids.peak, cpu.stat usage_usec, memory.events oom_kill; cgroup.kill.
 *
 * Placement (see lib/limits/limits.h): the first cgroup from ours upwards that
 * we may write and that is the root or holds no process gets sbx-ID; the
 * "no internal processes" rule forbids enabling controllers anywhere
 * else.  Failing that, a delegated cgroup holding only us: we move
 * ourselves into sbx-sup-ID below it first.  The jail goes in sbx-ID/jail
 * so the knobs on sbx-ID stay outside its cgroup namespace.
 */
#include "limits_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *const want[] = {"memory", "pids", "cpu"};

bool sbx_cg2_usable(const struct sbx_cgroup_sys *s)
{
	_cleanup_free_ char *ctl = NULL;

	if (!s->v2_mount || sbx_cg_read(s->v2_mount, "cgroup.controllers", &ctl) < 0)
		return false;
	for (size_t i = 0; i < SBX_ARRAY_SIZE(want); i++)
		if (sbx_cg_list_has(ctl, want[i]))
			return true;
	return false;
}

static bool writable(const char *dir)
{
	_cleanup_free_ char *procs = sbx_cg_join(dir, "cgroup.procs");
	_cleanup_free_ char *sub = sbx_cg_join(dir, "cgroup.subtree_control");

	/* Delegation = the directory, cgroup.procs and subtree_control. */
	return access(dir, W_OK) == 0 && access(procs, W_OK) == 0 &&
	       (access(sub, W_OK) == 0 || errno == ENOENT);
}

/* Is dir the hierarchy's real root?  Only the root has no cgroup.type. */
static bool is_root(const char *dir)
{
	return !sbx_cg_has(dir, "cgroup.type");
}

/* Enable the wanted controllers available in dir; what was newly enabled
 * goes to done ("memory pids").  True if any wanted one is now enabled. */
static bool enable(struct sbx_cgroup *cg, const char *dir, char *done, size_t dlen)
{
	_cleanup_free_ char *avail = NULL, *on = NULL, *now = NULL;
	char ok[64] = "";
	bool any = false;

	if (done)
		done[0] = '\0';
	if (sbx_cg_read(dir, "cgroup.controllers", &avail) < 0)
		return false;
	if (sbx_cg_read(dir, "cgroup.subtree_control", &on) < 0)
		on = sbx_xstrdup("");
	/*
	 * One write is applied all or nothing, and one controller may be
	 * refused (cpu with realtime tasks about): add them one at a time,
	 * each write repeating those already accepted (a no-op for them).
	 */
	for (size_t i = 0; i < SBX_ARRAY_SIZE(want); i++) {
		char try[64];

		if (!sbx_cg_list_has(avail, want[i]) || sbx_cg_list_has(on, want[i]))
			continue;
		snprintf(try, sizeof(try), "%s%s+%s", ok, ok[0] ? " " : "", want[i]);
		if (sbx_cg_write(cg->fake, dir, "cgroup.subtree_control", try) == 0)
			memcpy(ok, try, sizeof(ok));
	}
	if (done)
		snprintf(done, dlen, "%s", ok);
	if (sbx_cg_read(dir, "cgroup.subtree_control", &now) < 0)
		return false;
	for (size_t i = 0; i < SBX_ARRAY_SIZE(want); i++)
		any |= sbx_cg_list_has(now, want[i]);
	return any;
}

/* Does dir's cgroup.procs list exactly our own process? */
static bool only_us(const char *dir)
{
	_cleanup_free_ char *s = NULL;
	char *end;
	long pid;

	if (sbx_cg_read(dir, "cgroup.procs", &s) < 0)
		return false;
	pid = strtol(s, &end, 10);
	return end != s && pid == (long)getpid() && end[strspn(end, " \n")] == '\0';
}

static int move_self(struct sbx_cgroup *cg, const char *dir)
{
	char v[32];

	snprintf(v, sizeof(v), "%d", (int)getpid());
	return sbx_cg_write(cg->fake, dir, "cgroup.procs", v);
}

/* Our cgroup holds only us: move to self/sbx-sup-ID and enable there. */
static char *try_self_move(struct sbx_cgroup *cg, const char *self, const char *id)
{
	_cleanup_free_ char *sup = NULL;
	char name[96];

	if (is_root(self) || !writable(self) || !only_us(self))
		return NULL;
	snprintf(name, sizeof(name), "sbx-sup-%s", id);
	sup = sbx_cg_join(self, name);
	if (mkdir(sup, 0755) < 0)
		return NULL;
	if (move_self(cg, sup) < 0 || !enable(cg, self, cg->enabled2, sizeof(cg->enabled2))) {
		move_self(cg, self);
		rmdir(sup);
		return NULL;
	}
	cg->sup2 = steal_pointer(&sup);
	cg->self2 = sbx_xstrdup(self);
	sbx_cg_why(cg, "moved sbx into '%s' to enable controllers in its delegated cgroup",
		   cg->sup2);
	return sbx_xstrdup(self);
}

/* Where sbx-ID goes (malloc'd), or NULL with the reason in cg->why. */
static char *pick_parent(struct sbx_cgroup *cg, const struct sbx_cgroup_sys *s, const char *id)
{
	_cleanup_free_ char *cur = sbx_xstrdup(s->v2_self ? s->v2_self : "/");
	_cleanup_free_ char *self = sbx_cg_join(s->v2_mount, cur);
	char *stop = NULL, *r;

	for (;;) {
		_cleanup_free_ char *dir = sbx_cg_join(s->v2_mount, cur);
		char *slash;

		if (!writable(dir)) {
			stop = sbx_xasprintf("'%s' is not writable by uid %u (not delegated)", dir,
					     (unsigned)geteuid());
			break;
		}
		if ((is_root(dir) || sbx_cg_procs_empty(dir)) && enable(cg, dir, NULL, 0))
			return steal_pointer(&dir);
		slash = strrchr(cur, '/');
		if (!slash || slash == cur) {
			if (strcmp(cur, "/") == 0)
				break;
			strcpy(cur, "/");
		} else {
			*slash = '\0';
		}
	}
	r = try_self_move(cg, self, id);
	if (!r)
		sbx_cg_why(cg,
			   "cgroup v2: no delegated cgroup without processes above '%s'%s%s (run "
			   "under 'systemd-run --user --scope -p Delegate=yes' to get one)",
			   self, stop ? ": " : "", stop ? stop : "");
	free(stop);
	return r;
}

static int set_memory(struct sbx_cgroup *cg, const struct sbx_config *cfg, struct sbx_err *err)
{
	char v[32];
	int r;

	snprintf(v, sizeof(v), "%" PRIu64, cfg->memory);
	r = sbx_cg_write(cg->fake, cg->path2, "memory.max", v);
	if (r < 0)
		return sbx_err_set(err, -r, "cannot set memory.max in '%s'", cg->path2);
	if (cg->fake || sbx_cg_has(cg->path2, "memory.swap.max")) {
		r = sbx_cg_write(cg->fake, cg->path2, "memory.swap.max", "0");
		if (r < 0)
			return sbx_err_set(err, -r, "cannot set memory.swap.max in '%s'",
					   cg->path2);
		cg->swap_off = true;
	} else {
		sbx_cg_why(cg, "no swap accounting (memory.swap.max missing): swap not limited");
	}
	cg->memory = SBX_ENF_CGROUP2;
	return 0;
}

static int set_limits(struct sbx_cgroup *cg, const char *on, const struct sbx_config *cfg,
		      struct sbx_err *err)
{
	char v[64];
	int r;

	if (sbx_cg_list_has(on, "memory")) {
		if (cfg->memory != SBX_UNSET && (r = set_memory(cg, cfg, err)) < 0)
			return r;
		/* An OOM kill takes every process of the jail, not one. */
		if (sbx_cg_write(cg->fake, cg->path2, "memory.oom.group", "1") == 0)
			cg->oom_group = true;
	} else if (cfg->memory != SBX_UNSET) {
		sbx_cg_why(cg, "memory controller not enabled for '%s'", cg->path2);
	}
	if (cfg->pids != SBX_UNSET && sbx_cg_list_has(on, "pids")) {
		sbx_cg_pids_text(cfg->pids, v, sizeof(v));
		r = sbx_cg_write(cg->fake, cg->path2, "pids.max", v);
		if (r < 0)
			return sbx_err_set(err, -r, "cannot set pids.max in '%s'", cg->path2);
		cg->pids = SBX_ENF_CGROUP2;
	} else if (cfg->pids != SBX_UNSET) {
		sbx_cg_why(cg, "pids controller not enabled for '%s'", cg->path2);
	}
	if (cfg->cpus_milli != SBX_UNSET && sbx_cg_list_has(on, "cpu")) {
		uint64_t q = cfg->cpus_milli * SBX_CG_PERIOD_US / 1000;

		snprintf(v, sizeof(v), "%" PRIu64 " %llu", q < 1000 ? 1000 : q, SBX_CG_PERIOD_US);
		r = sbx_cg_write(cg->fake, cg->path2, "cpu.max", v);
		if (r < 0)
			return sbx_err_set(err, -r, "cannot set cpu.max in '%s'", cg->path2);
		cg->cpus = SBX_ENF_CGROUP2;
	} else if (cfg->cpus_milli != SBX_UNSET) {
		sbx_cg_why(cg, "cpu controller not enabled for '%s'", cg->path2);
	}
	return 0;
}

int sbx_cg2_create(struct sbx_cgroup *cg, const struct sbx_cgroup_sys *s, const char *id,
		   const struct sbx_config *cfg, struct sbx_err *err)
{
	_cleanup_free_ char *parent = NULL, *on = NULL;
	char name[96];
	int r;

	cg->fake = !sbx_cg_is_cgroupfs(s->v2_mount);
	parent = pick_parent(cg, s, id);
	if (!parent)
		return 0;
	snprintf(name, sizeof(name), "sbx-%s", id);
	cg->path2 = sbx_cg_join(parent, name);
	if (mkdir(cg->path2, 0755) < 0) {
		r = errno;
		free(cg->path2);
		cg->path2 = NULL;
		sbx_cg2_destroy(cg, NULL);
		if (r == EEXIST)
			return sbx_err_set(err, r,
					   "cgroup '%s/%s' already exists (left by a lost run? try "
					   "'sbx destroy --stale')",
					   parent, name);
		sbx_cg_why(cg, "cannot create a cgroup in '%s': %s", parent, strerror(r));
		return 0;
	}
	cg->version = 2;
	/* The controllers sbx-ID has are those its parent enabled. */
	if (sbx_cg_read(parent, "cgroup.subtree_control", &on) < 0)
		on = sbx_xstrdup("");
	r = set_limits(cg, on, cfg, err);
	if (r >= 0) {
		cg->leaf2 = sbx_cg_join(cg->path2, "jail");
		if (mkdir(cg->leaf2, 0755) < 0)
			r = sbx_err_set(err, errno, "cannot create cgroup '%s'", cg->leaf2);
	}
	if (r < 0) {
		sbx_cg2_destroy(cg, NULL);
		cg->version = 0;
		cg->memory = cg->pids = cg->cpus = SBX_ENF_NONE;
	}
	return r;
}

int sbx_cg2_attach(struct sbx_cgroup *cg, pid_t pid, struct sbx_err *err)
{
	char v[32];
	int r;

	snprintf(v, sizeof(v), "%d", (int)pid);
	r = sbx_cg_write(cg->fake, cg->leaf2, "cgroup.procs", v);
	if (r < 0)
		return sbx_err_set(err, -r, "cannot move pid %d into cgroup '%s'", (int)pid,
				   cg->leaf2);
	return 0;
}

void sbx_cg2_usage(struct sbx_cgroup *cg, struct sbx_usage *u)
{
	uint64_t v;

	/* All hierarchical: sbx-ID covers sbx-ID/jail and below. */
	if (sbx_cg_read_key(cg->path2, "cpu.stat", "usage_usec", &v) == 0)
		u->cpu_usec = v;
	if (sbx_cg_read_u64(cg->path2, "memory.peak", &v) == 0)
		u->mem_peak = v;
	if (sbx_cg_read_u64(cg->path2, "pids.peak", &v) == 0)
		u->pids_peak = v;
	if (sbx_cg_read_key(cg->path2, "memory.events", "oom_kill", &v) == 0)
		u->oom_kills = v;
	if (sbx_cg_read_key(cg->path2, "memory.events", "max", &v) == 0)
		u->mem_limit_hits = v;
	if (sbx_cg_read_key(cg->path2, "pids.events", "max", &v) == 0)
		u->pids_denied = v;
	u->have_cgroup_stats = true;
}

int sbx_cg2_kill(struct sbx_cgroup *cg)
{
	int r;

	if (!cg->path2)
		return 0;
	r = sbx_cg_write(cg->fake, cg->path2, "cgroup.kill", "1");
	if (r == 0 || cg->fake)
		return r;
	/* Before 5.14 there is no cgroup.kill: freeze and kill by hand. */
	return sbx_cg_kill_tree(cg->path2, cg->path2, "cgroup.freeze", "1", "0");
}

static void wait_unpopulated(const char *dir)
{
	for (int i = 0; i < 200; i++) {
		uint64_t pop = 0;
		struct timespec ts = {0, 10 * 1000000L};

		if (sbx_cg_read_key(dir, "cgroup.events", "populated", &pop) < 0 || !pop)
			return;
		nanosleep(&ts, NULL);
	}
}

/* Undo the self-move: controllers off in self2, back into it, rmdir sup. */
static void undo_self_move(struct sbx_cgroup *cg)
{
	char off[64] = "";

	for (const char *p = cg->enabled2; *p;) {
		size_t n = strcspn(p, " ");

		snprintf(off + strlen(off), sizeof(off) - strlen(off), "%s-%.*s", off[0] ? " " : "",
			 (int)(n > 0 ? n - 1 : 0), p + 1);
		p += n + strspn(p + n, " ");
	}
	if (off[0])
		sbx_cg_write(cg->fake, cg->self2, "cgroup.subtree_control", off);
	if (move_self(cg, cg->self2) == 0 && sbx_cg_rmtree(cg->sup2, cg->fake) == 0) {
		free(cg->sup2);
		cg->sup2 = NULL;
		free(cg->self2);
		cg->self2 = NULL;
	}
}

int sbx_cg2_destroy(struct sbx_cgroup *cg, struct sbx_err *err)
{
	int r = 0;

	if (cg->path2) {
		sbx_cg2_kill(cg);
		if (!cg->fake)
			wait_unpopulated(cg->path2);
		r = sbx_cg_rmtree(cg->path2, cg->fake);
		if (r < 0)
			sbx_err_set(err, -r, "cannot remove cgroup '%s'", cg->path2);
		if (r == 0) {
			free(cg->path2);
			free(cg->leaf2);
			cg->path2 = cg->leaf2 = NULL;
		}
	}
	if (cg->sup2 && !cg->path2)
		undo_self_move(cg);
	return r;
}
