/* SPDX-License-Identifier: MIT */
/* cmd/run.h - sbx run: shared between run.c (flow) and run_report.c (log, record). */
#ifndef SBX_CMD_RUN_H
#define SBX_CMD_RUN_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>

#include "config.h"
#include "image.h"
#include "jail.h"
#include "limits.h"
#include "log.h"
#include "netpolicy.h"
#include "proxy.h"
#include "seccomp.h"
#include "secrets.h"
#include "state.h"

/* One option that maps to a profile key, applied in command-line order. */
struct run_set {
	const char *section, *key;
	char *value;
};

struct run_args {
	const char *profile;
	const char *name;
	bool keep, rm, quiet;
	const char *log_json;
	struct run_set *sets;
	size_t n_sets;
	char **argv; /* the payload command (NULL-terminated) */
	char *title; /* sbx's own argv strings (for init's title) */
	size_t title_len;
};

/* Parse `sbx run` options (no side effects; unit-testable). 0, or -EINVAL
 * with err set; 1 when --help was printed. */
int run_parse_args(int argc, char **argv, struct run_args *a, struct sbx_err *err);
void run_args_free(struct run_args *a);

struct run_ctx {
	struct run_args args;
	struct sbx_config cfg;
	struct sbx_state st;
	struct sbx_sandbox sb;
	struct sbx_log log;
	struct sbx_jail_ids ids;
	struct sbx_cgroup cg;
	struct sbx_image_stats img;
	struct sbx_jail jail;
	struct sbx_jail_result res;
	struct sbx_usage usage;
	char *rootfs_dir;    /* NULL: host */
	char *layer_dir;     /* upper/ work/ overlays/: the sandbox dir, or its disk/ */
	bool disk_mounted;   /* disk/ is a size-capped mount ([limits] disk): a
			      * loop-mounted ext4 image, or a tmpfs */
	bool disk_loop;	     /* the image (disk.img): unmounted even when kept */
	bool disk_memory;    /* unprivileged [limits] disk (or a state directory on an
			      * overlayfs): the layers are on a tmpfs in the jail
			      * (jail.layer_fd), copied to disk/ when kept */
	uint64_t layer_size; /* that tmpfs's size */
	char *layer_note;    /* why the layers are in memory, for the run log, or NULL */
	char *cwd;
	char *jail_path;  /* the command's PATH in the jail */
	char *exec_error; /* why the command could not be started (126/127) */
	double t_image;
	double t_disk; /* the writable layers' capped filesystem (lib/jail/disk.h) */
	int exit_code;
	const char *reason; /* exited | signaled | timeout | oom | error */
	char *error;	    /* set-up error message */
	bool kept;
	const char *keep_reason;
	int log_json_fd, jsonl_fd;
	char phases[256]; /* human timings line being built */
	bool stop_said;	  /* the stop timeout was explained once */
	int output_fd;	  /* output.log */
	/* run_net.c */
	struct sbx_secrets secrets;
	struct sbx_redact redact;
	bool redacting;
	struct sbx_jail_file *files;
	size_t n_files;
	struct sbx_proxy *proxy;
	uint64_t net_allowed, net_failed, net_denied;
	uint64_t net_idle, net_evicted, net_refused; /* the proxy's counts (netpolicy.h) */
	struct sbx_seccomp_audit audit;
	bool auditing;
	int oom_fd; /* cgroup v1 OOM eventfd */
	bool oom_seen;
	/* the running record, saved by a thread (run_record_save_async) */
	pthread_t saver;
	bool saving;
	struct sbx_sandbox saver_sb;
	struct sbx_err saver_err;
	int saver_rc;
};

/* run_net.c */
int run_extras_prepare(struct run_ctx *c, struct sbx_strv *extra, struct sbx_err *err);
int run_extras_started(struct run_ctx *c, struct sbx_jail_io *io, struct sbx_err *err);
void run_extras_finish(struct run_ctx *c);
void run_extras_free(struct run_ctx *c);

/* run_report.c */
void run_human(const json_t *ev, void *data);
void run_record_start(struct run_ctx *c);
void run_record_save_async(struct run_ctx *c);
void run_record_join(struct run_ctx *c);
void run_log_policy(struct run_ctx *c);
void run_log_timings(struct run_ctx *c);
void run_log_warnings(struct run_ctx *c);
void run_log_warn(struct run_ctx *c, const char *msg); /* a "warning" event */
void run_record_finish(struct run_ctx *c);
void run_event_cb(const char *what, int value, void *data);

#endif
