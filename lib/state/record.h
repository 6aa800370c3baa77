/* SPDX-License-Identifier: MIT */
/*
 * lib/state/record.h - record.json, typed: what a run says about itself.
 *
 * struct sbx_record is the one model of a sandbox's record.  The run fills
 * it; sbx_record_to_json() is the only code that turns it into
 * record.json's JSON, sbx_record_from_json() the only code that reads that
 * JSON back, and every other file works on the struct.  The schema, with
 * an example and what each field means, is lib/state/RECORD.md (the unit
 * test test_record checks every key the writer makes against it).
 *
 * Four parts are made by the module that owns their meaning and are kept
 * as JSON values here, passed through unchanged: policy.limits
 * (sbx_limits_json, lib/limits/limits.h), policy.secrets
 * (sbx_secrets_describe, lib/profile/secrets.h), cgroup (sbx_cgroup_json)
 * and the event arrays (network_events, seccomp_events: run-log events).
 *
 * Absent and null: a sub-object that the record does not have yet (a record
 * of a run still running has no exit) has .set false and is not written;
 * a string that is NULL is written as null (or left out where RECORD.md
 * says so); pids and process start times are 0 when unknown.
 */
#ifndef SBX_RECORD_H
#define SBX_RECORD_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "enter.h"
#include "util.h"

#define SBX_RECORD_VERSION 1

/* policy.filesystem.layers[]: an overlay whose upper is in the sandbox. */
struct sbx_record_layer {
	char *target; /* where it is mounted in the jail ("/" for the root) */
	char *upper;  /* relative to the sandbox directory */
	char *lower;  /* absolute host path, or NULL */
};

/* policy.filesystem.mounts[] */
struct sbx_record_mount {
	char *kind; /* bind | ro-bind | overlay | tmpfs | ... (sbx_mount_kind_name) */
	char *src;  /* NULL for a tmpfs */
	char *dst;
	char *read_only;    /* "read_only": why a read-write bind as root is not
			     * ("root owns it"), or NULL */
	int64_t written_as; /* "written_as": the owner a bind is idmapped to, or -1 */
	bool git_ro;	    /* "git_read_only": its .git went in read-only */
	/* "git_named_read_only": what git reaches from its .git, below src,
	 * that went in read-only too (core.hooksPath, include.path, where a
	 * symlink git follows leads) */
	struct sbx_strv git_named;
};

struct sbx_record_user {
	int64_t uid, gid, host_uid, host_gid; /* -1: not recorded */
	bool root_inside, root_on_host;
	char *mapping; /* range | subordinate | one */
	char *mapping_summary, *summary;
	char *sudo_user; /* run as this user, who ran sudo; NULL: not so */
};

struct sbx_record_network {
	char *mode; /* none | loopback | proxy | host */
	struct sbx_strv allow;
	char *summary;
};

struct sbx_record_filesystem {
	char *writable_layer; /* private | none */
	char *upper;	      /* the root layer's upper, or NULL */
	struct sbx_strv shared;
	struct sbx_record_mount *mounts;
	size_t n_mounts;
	char *summary;
	struct sbx_record_layer *layers;
	size_t n_layers;
	bool has_layers; /* records older than "layers": the default layout */
	bool layers_in_memory;
	char *sysfs; /* own | none */
};

struct sbx_record_policy {
	bool set;
	bool has_user; /* read: the record has policy.user */
	struct sbx_record_user user;
	struct sbx_record_network network;
	json_t *secrets; /* sbx_secrets_describe() */
	char *secrets_summary;
	struct sbx_record_filesystem filesystem;
	char *persist;	       /* what happens at the end: the profile's, or --rm/--keep's */
	char *persist_summary; /* persist, and the option that overrode the profile */
	json_t *limits;	       /* sbx_limits_json() */
	int64_t disk;	       /* read: limits.disk.value, the layers' cap; -1: none */
	char *seccomp;
	uint64_t capabilities; /* bit N: capability N kept */
	bool no_new_privs;
};

struct sbx_record_timings {
	bool set;
	double image, disk, namespaces, mounts, seccomp, exec, total; /* ms */
};

struct sbx_record_exit {
	bool set;
	int status;	  /* what sbx exited with */
	char *reason;	  /* exited | signaled | timeout | oom | error | ... */
	char *stop;	  /* stop-timeout | second-signal | NULL */
	int code;	  /* the command's exit code, -1: none */
	int signal;	  /* the signal that ended it, 0: none */
	char *error;	  /* sbx's own error, or NULL */
	char *exec_error; /* why the command could not start, or NULL */
	/* "git_changed": each .git in a read-write bind (or a directory right
	 * below one) whose config, hooks or gitdir changed during the run */
	struct sbx_strv git_changed;
	/* "watch_changed": each [filesystem] watch path changed during it */
	struct sbx_strv watch_changed;
};

/* The writable layers' capped filesystem at the end of the run
 * (lib/jail/disk.h sbx_disk_usage); not set without a cap. */
struct sbx_record_disk {
	bool set;
	uint64_t size, used, inodes, inodes_used; /* bytes; inodes 0: not counted */
	bool full; /* no room (or no inode) left: writes may have failed */
};

struct sbx_record_resources {
	bool set;
	double wall_ms, cpu_ms;
	uint64_t mem_peak, pids_peak, output_bytes;
	bool output_truncated;
	struct sbx_record_disk disk;
};

struct sbx_record_proxy {
	bool set;
	uint64_t connections, allowed, failed, denied, idle, evicted, refused;
	int max_connections;
	uint64_t captured, dns; /* events from the capture rules; DNS queries */
	bool capture;		/* the capture rules were in place */
	char *capture_why;	/* why not, or NULL */
};

struct sbx_record {
	int version;
	char *id, *name;
	char *state;			       /* created | running | exited */
	char *created;			       /* RFC 3339 */
	char *ended;			       /* RFC 3339, or NULL */
	pid_t supervisor_pid, init_pid;	       /* 0: unknown */
	uint64_t supervisor_start, init_start; /* /proc/PID/stat start times, 0: unknown */
	bool has_command;
	struct sbx_strv command;
	char *workdir;
	struct {
		bool set;
		char *name;
		struct sbx_strv sources;
		char *ini;
	} profile;
	struct {
		bool set;
		char *spec, *dir, *sha256;
		bool cached;
	} rootfs;
	struct sbx_record_policy policy;
	struct sbx_record_timings timings;
	struct sbx_record_exit exit;
	struct sbx_record_resources resources;
	bool kept_set, kept;
	char *keep_reason;
	json_t *cgroup;		/* sbx_cgroup_json(), or NULL */
	bool detached;		/* started by sbx run -d */
	bool tty;		/* the command had a pty (-t, or at a terminal) */
	json_t *publish;	/* published ports (lib/net/publish.h's JSON), or NULL */
	json_t *network_events; /* "net" run-log events, or NULL */
	json_t *seccomp_events; /* sbx_seccomp_audit_json(), or NULL */
	struct sbx_record_proxy proxy_stats;
	struct {
		bool set;
		char *at;	       /* RFC 3339: when `sbx apply` wrote the change set */
		struct sbx_strv paths; /* what it wrote (diff paths) */
	} applied;
};

void sbx_record_init(struct sbx_record *r);
void sbx_record_free(struct sbx_record *r);

/* The JSON of record.json (a new reference). */
json_t *sbx_record_to_json(const struct sbx_record *r);
/* The JSON of the "policy" object alone (also the run log's policy event). */
json_t *sbx_record_policy_json(const struct sbx_record_policy *p);
/* {"exit": ..., "resources": ...}: the run log's exit event, as the record has them. */
json_t *sbx_record_exit_json(const struct sbx_record *r);
/*
 * Read record.json's JSON into r (initialised here; free it either way).
 * -EINVAL with err set when j is not an object, has no version 1, or a
 * field has the wrong type; missing fields stay unset.
 */
int sbx_record_from_json(const json_t *j, struct sbx_record *r, struct sbx_err *err);

/*
 * The top-level "state" of record.json from the first n bytes of its text
 * (sbx writes it as the fourth key, before any nested value): copied to
 * state (len bytes) and true, or false when the prefix does not hold it
 * whole (or holds anything unexpected): then parse the record.  For the
 * purger's sweep, which would otherwise parse every kept record.
 */
bool sbx_record_state_peek(const char *text, size_t n, char *state, size_t len);

/* timings_ms as (name, ms) pairs, in the order the phases happen, then
 * "total". */
#define SBX_RECORD_PHASES 7
void sbx_record_phases(const struct sbx_record_timings *t, const char *names[SBX_RECORD_PHASES],
		       double ms[SBX_RECORD_PHASES]);

/* What `sbx exec` checks of the jail it enters (lib/jail/enter.h). */
void sbx_record_enter(const struct sbx_record *r, struct sbx_enter_record *out);

#endif
