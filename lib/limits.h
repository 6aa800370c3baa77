/* SPDX-License-Identifier: MIT */
/*
 * lib/limits.h - resource limits: cgroup v2 where the system has it, cgroup
 * v1 controllers where that is what exists, rlimits always, and a clear
 * account of which limit is enforced how.
 */
#ifndef SBX_LIMITS_H
#define SBX_LIMITS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "util.h"

enum sbx_enforce {
	SBX_ENF_NONE = 0,	/* not requested */
	SBX_ENF_CGROUP2,
	SBX_ENF_CGROUP1,
	SBX_ENF_RLIMIT,		/* fallback (e.g. RLIMIT_NPROC, RLIMIT_AS) */
	SBX_ENF_UNENFORCED,	/* requested but nothing could enforce it */
};
const char *sbx_enforce_name(enum sbx_enforce e);

struct sbx_cgroup {
	int version;		/* 2, 1, or 0 (no usable cgroup) */
	char *path2;		/* v2: /sys/fs/cgroup/.../sbx-ID */
	char *mem1, *pids1, *cpu1, *cpuacct1;	/* v1 controller dirs, NULL if unused */
	enum sbx_enforce memory, pids, cpus;	/* how each limit is enforced */
	char why[256];		/* why cgroups were not used, if not */
};

struct sbx_usage {
	uint64_t cpu_usec;	/* user+system of the jail */
	uint64_t mem_peak;	/* bytes, 0 if unknown */
	uint64_t pids_peak;	/* 0 if unknown */
	uint64_t oom_kills;	/* memory.events oom_kill / v1 oom_control */
	bool have_cgroup_stats;
};

/*
 * Create the sandbox's cgroup (name "sbx-<id>") under the cgroup sbx is in
 * (or a delegated one) and apply memory (swap off), pids and cpu limits.
 * Never fails just because cgroups are unavailable: cg->version = 0, the
 * per-limit enforce fields and cg->why say what happened.  Fails only on a
 * real error with a usable cgroup (-errno).
 */
int sbx_cgroup_create(struct sbx_cgroup *cg, const char *id, const struct sbx_config *cfg,
		      struct sbx_err *err);
/* Move pid into the cgroup (all controllers). */
int sbx_cgroup_attach(struct sbx_cgroup *cg, pid_t pid, struct sbx_err *err);
/* Usage so far (after the command ends: its totals). */
int sbx_cgroup_usage(struct sbx_cgroup *cg, struct sbx_usage *u);
/* Kill every process in the cgroup (cgroup.kill or SIGKILL loop). */
int sbx_cgroup_kill(struct sbx_cgroup *cg);
/* Kill and remove the cgroup directories; idempotent. */
int sbx_cgroup_destroy(struct sbx_cgroup *cg, struct sbx_err *err);
/* Remove cgroup directories named sbx-<id> left by a lost run; idempotent. */
int sbx_cgroup_remove_stale(const char *id, struct sbx_err *err);
void sbx_cgroup_free(struct sbx_cgroup *cg);

/*
 * Apply rlimits in the jail's child before exec: core=0 always, nofile and
 * fsize from cfg, and the fallbacks for limits cgroups could not enforce
 * (pids -> RLIMIT_NPROC, memory -> RLIMIT_AS).  Safe after fork (no malloc).
 */
int sbx_rlimits_apply(const struct sbx_config *cfg, const struct sbx_cgroup *cg,
		      struct sbx_err *err);

#endif
