/* SPDX-License-Identifier: MIT */
/*
 * lib/limits/limits.h - resource limits: cgroup v2 where the system has it, cgroup
 * v1 controllers where that is what exists, rlimits always, and a clear
 * account of which limit is enforced how.
 *
 * How `sbx run` uses it (the whole flow):
 *
 *	struct sbx_cgroup cg;
 *	sbx_cgroup_create(&cg, id, cfg, &err);	// before clone; -errno only on
 *						// a real error (not "no cgroups")
 *	pid = clone(...);			// child waits on the sync pipe
 *	sbx_cgroup_attach(&cg, pid, &err);	// move it into every controller
 *	// release the child; it unshare(CLONE_NEWCGROUP)s so its cgroup view
 *	// is rooted at its own cgroup, then, before exec:
 *	sbx_rlimits_apply(cfg, &cg, &err);	// in the child: core=0, nofile,
 *						// fsize, fallbacks; no malloc
 *	oomfd = sbx_cgroup_oom_fd(&cg, &err);	// optional, v1 only: poll it;
 *						// readable -> sbx_cgroup_kill(&cg)
 *	... wait for the command ...
 *	sbx_cgroup_usage(&cg, &usage);		// cpu, peak memory/pids, OOM kills
 *	sbx_cgroup_destroy(&cg, &err);		// kill what is left, rmdir
 *	sbx_cgroup_free(&cg);
 *
 * A command that died of SIGKILL with usage.oom_kills > 0 was OOM-killed.
 * sbx_limits_describe() / sbx_limits_json() say, for the run log and the
 * record, which limit is enforced how; cg.why holds the reasons and
 * caveats (no delegation, v1 OOM kills one process, ...).
 *
 * Where the cgroup goes:
 *   v2: the supervisor's own cgroup P (from /proc/self/cgroup) usually holds
 *	processes, and the "no internal processes" rule forbids enabling
 *	controllers in such a cgroup.  So sbx walks up from P while the
 *	cgroup is writable by it (delegated to the user, or anything for
 *	root) and takes the first one that is the hierarchy root or holds no
 *	process (e.g. systemd's user@UID.service/app.slice beside the user's
 *	scope), enables memory/pids/cpu in its cgroup.subtree_control, and
 *	creates sbx-ID there.  If none qualifies but P is writable and holds
 *	only the supervisor (a scope made with `systemd-run --user --scope -p
 *	Delegate=yes`), sbx moves itself to P/sbx-sup-ID, enables controllers
 *	in P and creates P/sbx-ID; destroy undoes that.  The limits are set on
 *	sbx-ID and the jail is put in sbx-ID/jail, so the knobs that limit it
 *	are outside its cgroup namespace (kernel doc: interface files of a
 *	delegated cgroup belong to its parent).
 *   v1: sbx-ID under the cgroup the supervisor is in, in each of the
 *	memory, pids, cpu, cpuacct and freezer hierarchies found in
 *	/proc/self/mountinfo.  v1 OOM kills one process, not the group.
 *   Neither usable (unprivileged, no delegation): version 0, memory ->
 *	RLIMIT_AS, pids -> RLIMIT_NPROC, cpus unenforced; cg.why says why.
 *
 * Test hooks (environment of the process calling sbx_cgroup_create /
 * sbx_cgroup_remove_stale):
 *   SBX_CGROUP=auto|v2|v1|none	force a flavour (none: rlimits only)
 *   SBX_CGROUP_ROOT=DIR		use DIR as the cgroup2 hierarchy (no v1)
 *   SBX_CGROUP_V1_ROOT=DIR	use DIR/<controller> as v1 hierarchies
 *   SBX_CGROUP_SELF=FILE		read membership from FILE, not /proc/self/cgroup
 * A root that is not a cgroup filesystem (a test tree) gets its interface
 * files created on write and never has signals sent to the pids it lists.
 */
#ifndef SBX_LIMITS_H
#define SBX_LIMITS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "util.h"

enum sbx_enforce {
	SBX_ENF_NONE = 0, /* not requested */
	SBX_ENF_CGROUP2,
	SBX_ENF_CGROUP1,
	SBX_ENF_RLIMIT,	    /* fallback (e.g. RLIMIT_NPROC, RLIMIT_AS) */
	SBX_ENF_UNENFORCED, /* requested but nothing could enforce it */
};
#define SBX_DISK_ON_DISK   1
#define SBX_DISK_IN_MEMORY 2

/* "none", "cgroup2", "cgroup1", "rlimit", "unenforced" */
const char *sbx_enforce_name(enum sbx_enforce e);

struct sbx_cgroup {
	int version; /* 2, 1, or 0 (no usable cgroup) */
	char *path2; /* v2: .../sbx-ID, carries the limits */
	char *leaf2; /* v2: .../sbx-ID/jail, holds the jail's processes */
	char *mem1, *pids1, *cpu1, *cpuacct1, *freezer1; /* v1 dirs, NULL if unused */
	enum sbx_enforce memory, pids, cpus;		 /* how each limit is enforced */
	bool swap_off;					 /* the memory limit covers swap too */
	bool oom_group;					 /* an OOM kill takes the whole jail (v2) */
	bool fake;	   /* the tree is not a cgroup filesystem (tests) */
	char *self2;	   /* v2 self-move: the cgroup sbx left (to go back) */
	char *sup2;	   /* v2 self-move: P/sbx-sup-ID, holds the supervisor */
	char enabled2[64]; /* v2 self-move: controllers enabled in self2 */
	char why[512];	   /* reasons and caveats, human, "" if none (the run log
			    * shows them as a warning) */
	char note[256];	   /* which hierarchy and why, when that is no caveat
			    * (doctor and the record only) */
	/* [limits] disk as the run applied it (lib/jail/disk.h), for the run log
	 * and the record: SBX_DISK_ON_DISK or SBX_DISK_IN_MEMORY (0 before),
	 * the inode cap, and why the cap is less than asked ("" if it is not). */
	int disk_where;
	uint64_t disk_inodes;
	char disk_why[200];
};

struct sbx_usage {
	uint64_t cpu_usec;	 /* user+system of the jail */
	uint64_t mem_peak;	 /* bytes, 0 if unknown */
	uint64_t pids_peak;	 /* 0 if unknown */
	uint64_t oom_kills;	 /* memory.events oom_kill / v1 oom_control */
	uint64_t mem_limit_hits; /* v2 memory.events max / v1 memory.failcnt */
	uint64_t pids_denied;	 /* forks refused by pids.max (pids.events max) */
	bool under_oom;		 /* v1 memory.oom_control under_oom */
	bool have_cgroup_stats;
};

/*
 * Create the sandbox's cgroup (name "sbx-<id>") under the cgroup sbx is in
 * (or a delegated one) and apply memory (swap off), pids and cpu limits.
 * Never fails just because cgroups are unavailable: cg->version = 0, the
 * per-limit enforce fields and cg->why say what happened.  Fails only on a
 * real error with a usable cgroup (-errno).  id: [A-Za-z0-9_.-]+.
 */
int sbx_cgroup_create(struct sbx_cgroup *cg, const char *id, const struct sbx_config *cfg,
		      struct sbx_err *err);
/* Move pid into the cgroup (all controllers).  No-op for version 0. */
int sbx_cgroup_attach(struct sbx_cgroup *cg, pid_t pid, struct sbx_err *err);
/* Usage so far (after the command ends: its totals).  Zeroes u first. */
int sbx_cgroup_usage(struct sbx_cgroup *cg, struct sbx_usage *u);
/*
 * cgroup v1 only: an eventfd (O_CLOEXEC, caller closes it) that becomes
 * readable when the jail's memory cgroup hits OOM.  v1 OOM-kills one
 * process; a supervisor that polls this fd and calls sbx_cgroup_kill() on
 * it gives v1 the v2 behaviour (memory.oom.group: the whole jail dies).
 * -EOPNOTSUPP for v2 (the kernel already kills the group) and version 0.
 */
int sbx_cgroup_oom_fd(struct sbx_cgroup *cg, struct sbx_err *err);
/* Kill every process in the cgroup (cgroup.kill or freeze + SIGKILL loop). */
int sbx_cgroup_kill(struct sbx_cgroup *cg);
/* Kill and remove the cgroup directories; idempotent. */
int sbx_cgroup_destroy(struct sbx_cgroup *cg, struct sbx_err *err);
/*
 * Remove cgroup directories named sbx-<id> (and an empty sbx-sup-<id>) left
 * by a lost run, in every v1 and v2 hierarchy, killing what is left in
 * them; idempotent.  Returns the number of directories removed or -errno.
 */
int sbx_cgroup_remove_stale(const char *id, struct sbx_err *err);
void sbx_cgroup_free(struct sbx_cgroup *cg);
/*
 * Remove the cgroup directories a record's "cgroup" object names (the
 * same checks as sbx_cgroup_from_json) that hold no process: what a run
 * whose supervisor was SIGKILLed leaves once its jail died with it.  A
 * directory still in use is left alone (nothing is killed).  Returns the
 * number removed or -errno.
 */
int sbx_cgroup_remove_empty(const char *id, const json_t *j, struct sbx_err *err);
/*
 * Rebuild the handle of a running sandbox's cgroup from its record's
 * "cgroup" object (sbx_cgroup_json), e.g. for `sbx exec` to attach its
 * process and apply the same rlimit fallbacks (sbx_rlimits_apply with the
 * sandbox's cfg).  Every path must be a directory named sbx-<id> on a
 * cgroup filesystem (or under SBX_CGROUP_ROOT/_V1_ROOT in tests), else
 * -EINVAL.  Version 0 records give a version-0 handle.
 */
int sbx_cgroup_from_json(struct sbx_cgroup *cg, const char *id, const json_t *j,
			 const struct sbx_config *cfg, struct sbx_err *err);

/*
 * Apply rlimits in the jail's child before exec: core=0 always, nofile and
 * fsize from cfg, and the fallbacks for limits cgroups could not enforce
 * (pids -> RLIMIT_NPROC, memory -> RLIMIT_AS).  cg may be NULL (= no
 * cgroup).  Safe after fork/clone: no malloc, only setrlimit/getrlimit.
 * Soft and hard limits are both set, so the jail cannot raise them.
 */
int sbx_rlimits_apply(const struct sbx_config *cfg, const struct sbx_cgroup *cg,
		      struct sbx_err *err);

/*
 * One line for the run log, e.g. "memory 512M (cgroup v1, swap off), pids 64
 * (cgroup v1), cpus 1.5 (cgroup v1 cfs), time 30s (supervisor timer),
 * nofile 1024 (rlimit), core 0 (rlimit)".  cg may be NULL (before
 * create).  Returns the length it wanted (as snprintf).
 */
int sbx_limits_describe(const struct sbx_config *cfg, const struct sbx_cgroup *cg, char *buf,
			size_t len);
/*
 * record.json "policy.limits": {"memory": {"value": N, "enforced":
 * "cgroup1", "how": "..."}, "pids": ..., "cpus": {"value": 1.5, ...},
 * "time": {"value_ms": N, "enforced": "timer"}, "nofile", "fsize", "core"}.
 */
json_t *sbx_limits_json(const struct sbx_config *cfg, const struct sbx_cgroup *cg);
/* record.json "cgroup": {"version": 1, "paths": [...], "why": "..."} */
json_t *sbx_cgroup_json(const struct sbx_cgroup *cg);

/*
 * Detection, exposed for tests.  A snapshot of where the hierarchies are
 * mounted and which cgroup the caller is in.
 */
enum sbx_cg_ctrl {
	SBX_CG_MEMORY = 0,
	SBX_CG_PIDS,
	SBX_CG_CPU,
	SBX_CG_CPUACCT,
	SBX_CG_FREEZER,
	SBX_CG_NCTRL,
};

struct sbx_cgroup_sys {
	char *v2_mount;		      /* cgroup2 mount point, NULL if none */
	char *v2_root;		      /* its mountinfo root ("/" unless bind/ns) */
	char *v2_self;		      /* our v2 cgroup ("0::PATH"), relative to v2_root */
	char *v1_mount[SBX_CG_NCTRL]; /* v1 mount point per controller */
	char *v1_root[SBX_CG_NCTRL];
	char *v1_self[SBX_CG_NCTRL]; /* our cgroup in it, relative to v1_root */
	int force;		     /* 0 auto, 2 or 1 force a version, -1 none */
};

void sbx_cgroup_sys_free(struct sbx_cgroup_sys *s);
/* Parse /proc/self/mountinfo text: cgroup2 and cgroup (v1) mounts. */
int sbx_cgroup_parse_mountinfo(const char *text, struct sbx_cgroup_sys *s);
/* Parse /proc/self/cgroup text (after mountinfo: strips mount roots). */
int sbx_cgroup_parse_self(const char *text, struct sbx_cgroup_sys *s);
/* Fill s from /proc (or the SBX_CGROUP* test overrides above). */
int sbx_cgroup_probe(struct sbx_cgroup_sys *s, struct sbx_err *err);
/* sbx_cgroup_create with an explicit snapshot instead of probing. */
int sbx_cgroup_create_in(struct sbx_cgroup *cg, const struct sbx_cgroup_sys *s, const char *id,
			 const struct sbx_config *cfg, struct sbx_err *err);

#endif
