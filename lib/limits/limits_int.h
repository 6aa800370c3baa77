/* SPDX-License-Identifier: MIT */
/*
 * lib/limits/limits_int.h - internals shared by lib/limits/limits.c (detection, rlimits,
 * descriptions), lib/limits/limits_cgfs.c (cgroup file helpers, v1) and
 * lib/limits/limits_cg2.c (v2).  Not for other areas: use lib/limits/limits.h.
 */
#ifndef SBX_LIMITS_INT_H
#define SBX_LIMITS_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "limits.h"

/* Controller names, indexed by enum sbx_cg_ctrl. */
extern const char *const sbx_cg_ctrl_names[SBX_CG_NCTRL];

/* The CPU quota period sbx uses (v1 cfs_period_us, v2 cpu.max), in us. */
#define SBX_CG_PERIOD_US 100000ULL

/* pids.max text: the kernel refuses numbers above PID_MAX_LIMIT (4M on
 * 64-bit), a limit no system reaches anyway: "max" then. */
void sbx_cg_pids_text(uint64_t pids, char *buf, size_t len);

/* "a/b" without doubled slashes; malloc'd. */
char *sbx_cg_join(const char *dir, const char *name);
/* Is dir on a cgroup (v1 or v2) filesystem?  (false: a test tree) */
bool sbx_cg_is_cgroupfs(const char *dir);
/* Does dir/file exist? */
bool sbx_cg_has(const char *dir, const char *file);
/* Write val to dir/file in one write(2); fake: create the file.  0/-errno. */
int sbx_cg_write(bool fake, const char *dir, const char *file, const char *val);
/* Read dir/file into *out (malloc'd, NUL-terminated).  0/-errno. */
int sbx_cg_read(const char *dir, const char *file, char **out);
/* A single number in dir/file ("max" reads as UINT64_MAX). */
int sbx_cg_read_u64(const char *dir, const char *file, uint64_t *v);
/* "key value" line of a flat-keyed file (memory.events, cpu.stat...). */
int sbx_cg_read_key(const char *dir, const char *file, const char *key, uint64_t *v);
/* Is word in a space-separated list (a leading '+' on items is ignored)? */
bool sbx_cg_list_has(const char *list, const char *word);
/* Does dir's cgroup.procs list no process (or not exist)? */
bool sbx_cg_procs_empty(const char *dir);
/* Is dir and everything below it empty of processes? */
bool sbx_cg_tree_empty(const char *dir);
/*
 * SIGKILL every process in dir and below, repeatedly, until none is left
 * or about two seconds passed.  freeze_dir/freeze_file/on/off: the freezer
 * to hold them still first (v1 freezer.state FROZEN/THAWED, v2
 * cgroup.freeze 1/0), or NULL.  0, or -EBUSY if processes remain.
 */
int sbx_cg_kill_tree(const char *dir, const char *freeze_dir, const char *freeze_file,
		     const char *on, const char *off);
/* rmdir dir and its child cgroups, depth first, retrying EBUSY briefly;
 * fake: unlink the plain files too.  ENOENT is success.  0/-errno. */
int sbx_cg_rmtree(const char *dir, bool fake);

/* cgroup v1 (lib/limits/limits_cgfs.c) */
int sbx_cg1_create(struct sbx_cgroup *cg, const struct sbx_cgroup_sys *s, const char *id,
		   const struct sbx_config *cfg, struct sbx_err *err);
int sbx_cg1_attach(struct sbx_cgroup *cg, pid_t pid, struct sbx_err *err);
void sbx_cg1_usage(struct sbx_cgroup *cg, struct sbx_usage *u);
int sbx_cg1_kill(struct sbx_cgroup *cg);
int sbx_cg1_destroy(struct sbx_cgroup *cg, struct sbx_err *err);

/* cgroup v2 (lib/limits/limits_cg2.c) */
bool sbx_cg2_usable(const struct sbx_cgroup_sys *s);
int sbx_cg2_create(struct sbx_cgroup *cg, const struct sbx_cgroup_sys *s, const char *id,
		   const struct sbx_config *cfg, struct sbx_err *err);
int sbx_cg2_attach(struct sbx_cgroup *cg, pid_t pid, struct sbx_err *err);
void sbx_cg2_usage(struct sbx_cgroup *cg, struct sbx_usage *u);
int sbx_cg2_kill(struct sbx_cgroup *cg);
int sbx_cg2_destroy(struct sbx_cgroup *cg, struct sbx_err *err);

/* Append "; "-separated text to cg->why (truncates quietly). */
void sbx_cg_why(struct sbx_cgroup *cg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
