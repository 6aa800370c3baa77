/* SPDX-License-Identifier: MIT */
/* lib/run/run_int.h - the run's state, shared by lib/run/ only. */
#ifndef SBX_RUN_INT_H
#define SBX_RUN_INT_H

#include <pthread.h>

#include "disk.h"
#include "jail.h"
#include "limits.h"
#include "log.h"
#include "netpolicy.h"
#include "proxy.h"
#include "publish.h"
#include "tls.h"
#include "record.h"
#include "run.h"
#include "seccomp.h"
#include "secrets.h"

struct sbx_run {
	const struct sbx_run_opts *opt;
	struct sbx_run_result *res_out;
	struct sbx_config *cfg;
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
	bool disk_later;     /* that image is mounted once init is released
			      * (sbx_run_layers_ready), alongside its start */
	uint64_t disk_asked; /* [limits] disk as asked, for disk_later */
	bool disk_memory;    /* unprivileged [limits] disk (or a state directory on an
			      * overlayfs): the layers are on a tmpfs in the jail
			      * (jail.layer_fd), copied to disk/ when kept */
	uint64_t layer_size; /* that tmpfs's size */
	struct sbx_jail_upper *layer_uppers; /* (sbx_jail_opts.layer_uppers) */
	char *layer_note; /* why the layers are in memory, for the run log, or NULL */
	const char *cwd;
	char *jail_path;  /* the command's PATH in the jail */
	char *exec_error; /* why the command could not be started (126/127) */
	double t_image;
	double t_disk; /* the writable layers' capped filesystem (lib/jail/disk.h);
			* with disk_later, what the jail's start waited for it */
	int exit_code;
	const char *reason; /* exited | signaled | timeout | oom | error */
	char *error;	    /* set-up error message */
	char *output_lost;  /* what of the output the caller did not take */
	bool kept;
	const char *keep_reason;
	bool say_discarded; /* not kept, by the profile or sbx stop: say what
			     * of the command's writes went (sbx_run_layers_written) */
	json_t *written;    /* the copy-on-write views it wrote to, for the
			     * kept or removed event (NULL: none, or not said) */
	/* the layers' capped filesystem at the end (sbx_run_layers_usage) */
	struct sbx_disk_usage disk_usage;
	/* what the host runs later, as the command started (run_later.c) */
	struct sbx_later later;
	int log_json_fd, jsonl_fd;
	int output_fd; /* output.log */
	/* run_extras.c */
	struct sbx_secrets secrets;
	struct sbx_redact redact;
	bool redacting;
	struct sbx_jail_file *files;
	size_t n_files;
	struct sbx_proxy *proxy;
	struct sbx_proxy_inject *inject; /* one per secret the proxy injects */
	size_t n_inject;
	struct sbx_tls_ca *ca; /* the sandbox's CA, when a secret is injected */
	pid_t ca_pid;	       /* the helper making it while the run sets up (run_extras.c) */
	int ca_key_fd;	       /* from the helper: the CA's certificate and key */
	int ca_rc;
	struct sbx_err ca_err;
	char ca_label[32];
	bool ca_ahead;			/* the CA was made ahead (run_extras.c) */
	bool ca_bundle;			/* the jail gets a CA bundle */
	int ca_files[2];		/* its files: the host's CAs, upstream-ca */
	int ca_pipe[2];			/* its last part, the CA, written by the helper */
	struct sbx_seccomp_audit audit; /* audit mode: with its notify filter */
	bool auditing;
	struct sbx_seccomp_filter filter; /* else the plain filter */
	int oom_fd;			  /* cgroup v1 OOM eventfd */
	bool oom_seen;
	/* run_control.c: the control socket and who waits for the end */
	int ctl_fd;
	int *waiters;
	size_t n_waiters;
	struct sbx_jail_io *io; /* while supervising: where requests go */
	bool stop_requested;	/* by sbx stop */
	/* run_publish.c */
	struct sbx_publish *pub;
	struct sbx_jail_netsock netsock;
	/* the running record, saved by a thread (sbx_run_record_save_async) */
	pthread_t saver;
	bool saving;
	struct sbx_sandbox saver_sb;
	struct sbx_err saver_err;
	int saver_rc;
};

/* run_extras.c: start what can be made beside the set-up (the CA). */
void sbx_run_extras_begin(struct sbx_run *c);

/* A line for the caller to print (opts->say). */
void sbx_run_say(struct sbx_run *c, const char *msg);
void sbx_run_say_err(struct sbx_run *c, const struct sbx_err *e);

/* run_watch.c: each watch = [KEY ...] file whose keys hold something
 * else than at sbx_later_begin, as "PATH: KEY, ..." (escaped). */
void sbx_later_keys_changed(const struct sbx_later *l, const struct sbx_config *cfg,
			    struct sbx_strv *out);

/* run_layers.c */
int sbx_run_prepare_layers(struct sbx_run *c, struct sbx_err *err);
/* sbx_jail_opts.layer_ready for disk_later (data: the run). */
int sbx_run_layers_ready(void *data, int *mnt, uint64_t *tmpfs, struct sbx_err *err);
void sbx_run_keep_layers(struct sbx_run *c);
/* The host directories whose copy-on-write view the command wrote to
 * ("/" for the image's root), for the run log's "kept" or "removed"
 * event; NULL when none (or none can be read). */
json_t *sbx_run_layers_written(struct sbx_run *c);
/* c->disk_usage: the layers' capped filesystem after the command (in
 * decide_keep, when a record or run log will show it). */
void sbx_run_layers_usage(struct sbx_run *c);

/* run_extras.c */
int sbx_run_extras_prepare(struct sbx_run *c, struct sbx_strv *extra, struct sbx_err *err);
int sbx_run_extras_started(struct sbx_run *c, struct sbx_jail_io *io, struct sbx_err *err);
void sbx_run_extras_finish(struct sbx_run *c);
void sbx_run_extras_free(struct sbx_run *c);

/* run_control.c */
int sbx_run_control_open(struct sbx_run *c, struct sbx_err *err);
int sbx_run_control_on_ready(int fd, void *data); /* a watch's fn */
void sbx_run_control_finish(struct sbx_run *c);	  /* answer the waiters */

/* run_publish.c */
int sbx_run_publish_listen(struct sbx_run *c, struct sbx_err *err);
void sbx_run_publish_log(struct sbx_run *c); /* the "publish" event of the start */
int sbx_run_publish_start(struct sbx_run *c, struct sbx_jail_io *io, struct sbx_err *err);
void sbx_run_publish_finish(struct sbx_run *c);
void sbx_run_publish_free(struct sbx_run *c);

/* run_record.c */
void sbx_run_record_start(struct sbx_run *c);
void sbx_run_record_save_async(struct sbx_run *c);
void sbx_run_record_join(struct sbx_run *c);
void sbx_run_log_policy(struct sbx_run *c);
void sbx_run_log_timings(struct sbx_run *c);
void sbx_run_log_warnings(struct sbx_run *c);
void sbx_run_log_warn(struct sbx_run *c, const char *msg); /* a "warning" event */
void sbx_run_record_finish(struct sbx_run *c);
void sbx_run_event_cb(const char *what, int value, void *data);

#endif
