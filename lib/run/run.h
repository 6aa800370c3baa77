/* SPDX-License-Identifier: MIT */
/*
 * lib/run/run.h - one sandbox's whole life: `sbx run` in the library.
 *
 * sbx_run() takes a resolved profile and a command and does everything in
 * between: the sandbox's state directory and lock, the image, the cgroup,
 * the writable layers and their size cap, stdio, the jail, the proxy,
 * secrets and seccomp audit beside it, supervision, the record, and the
 * sandbox kept or removed.  The caller (cmd/run.c) parses options and
 * prints: the run log's human lines come to it as events (human), and the
 * lines sbx prints even with -q (errors, a command that could not start)
 * through say.  The library itself never writes to stdout or stderr.
 */
#ifndef SBX_RUN_H
#define SBX_RUN_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "config.h"
#include "image.h"
#include "state.h"

struct sbx_run_opts {
	struct sbx_config *cfg;		   /* the profile with the options applied (the run
					    * adds its masks; the caller frees it) */
	const char *state_dir, *cache_dir; /* NULL: the defaults (sbx_state_open) */
	const char *name;		   /* --name, or NULL */
	bool keep, rm;			   /* --keep, --rm */
	bool quiet;			   /* -q: no progress bar */
	const char *log_json;		   /* --log-json FILE, or NULL */
	char **argv;			   /* the command (NULL-terminated) */
	char *title;			   /* sbx's own argv strings, for init's title */
	size_t title_len;
	const char *cwd; /* the caller's working directory, or NULL */
	bool detached;	 /* sbx run -d (recorded: the caller forked and returned) */

	/* Once the command has started (exec'd, proxy and published ports
	 * served, the record saved): `sbx run -d` returns then.  NULL: none. */
	void (*started)(const char *id, const char *name, void *data);

	/* Every run-log event as it is logged (NULL: none), for human lines. */
	void (*human)(const json_t *ev, void *data);
	/* A line to print even with -q: an error, or why the command could not
	 * be started ("sbx: " is the caller's). */
	void (*say)(const char *line, void *data);
	/* Around the image's preparation: the caller's progress bar. */
	void (*image_begin)(struct sbx_image_opts *o, const char *spec, void *data);
	void (*image_end)(void *data);
	void *data;
};

/* What the caller may print beside the run log (filled as the run goes). */
struct sbx_run_result {
	int exit_code;	    /* the run's exit status (the command's, or 124-127) */
	const char *reason; /* exited | signaled | timeout | oom | error | ... */
	bool kept;
	bool proxy; /* the proxy served: the counts below are its */
	uint64_t net_allowed, net_failed, net_denied;
	uint64_t net_idle, net_evicted, net_refused;
};

/* Run opts->argv in a new sandbox; returns the exit status (also in *res). */
int sbx_run(const struct sbx_run_opts *opts, struct sbx_run_result *res);

/*
 * Hide sbx's state and cache directories from the jail (masks, applied
 * last): records, logs and other sandboxes' layers are sbx's, and a jail
 * whose host-root, home or working-directory view contains them must not
 * read them.  For `sbx exec` as for a run.
 */
int sbx_run_hide_state(struct sbx_config *cfg, const struct sbx_state *st, struct sbx_err *err);

/*
 * The command's stdout and stderr pipes (none with a terminal): one pipe
 * for both when they go to the same place (a terminal, `>f 2>&1`), which
 * keeps their order, on screen and in output.log; else two.  errp[] stays
 * -1 when shared: write ends out[1] and (errp[1] >= 0 ? errp[1] : out[1]).
 */
int sbx_run_stdio_pipes(bool tty, int out[2], int errp[2], struct sbx_err *err);

/*
 * What the host runs later, changed by a command in the jail (sbx run,
 * sbx exec): git repositories in the read-write binds and the profile's
 * watched files (lib/run/run_later.c, lib/run/run_watch.c).  begin: just
 * before the command starts (the time, and each watch = [KEY ...] file's
 * bytes); then each changed since is added to *out as a host path
 * escaped for display ("PATH: KEY, ..." for a keyed watch).  Nothing is
 * said when begin was never called (since 0).
 */
struct sbx_watch_snap;
struct sbx_later {
	struct timespec since;	      /* on the clock file times use; 0: not begun */
	struct sbx_watch_snap *snaps; /* one per cfg->watch_keys */
	size_t n_snaps;
};
void sbx_later_begin(struct sbx_later *l, const struct sbx_config *cfg);
void sbx_later_git_changed(const struct sbx_later *l, const struct sbx_config *cfg,
			   struct sbx_strv *out);
void sbx_later_watch_changed(const struct sbx_later *l, const struct sbx_config *cfg,
			     struct sbx_strv *out);
void sbx_later_free(struct sbx_later *l);

#endif
