/* SPDX-License-Identifier: MIT */
/*
 * lib/state.h - the state directory: sandboxes, records, locks.
 *
 *   STATE/sandboxes/ID/record.json   (atomic: tmp, fsync, rename)
 *                      log.jsonl     run-log events
 *                      output.log    captured stdout+stderr, capped
 *                      upper/ work/  the writable layer
 *                      lock          flock()ed by whoever mutates the sandbox
 *
 * Everything under a sandbox directory may have been written by a hostile
 * jail (upper/): never follow symlinks there, never trust those files.
 */
#ifndef SBX_STATE_H
#define SBX_STATE_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

#include "util.h"

#define SBX_ID_LEN 12

struct sbx_state {
	char *state_dir;	/* STATE (0700) */
	char *cache_dir;	/* CACHE */
	int sandboxes_fd;	/* O_PATH|O_DIRECTORY fd of STATE/sandboxes */
};

/*
 * Resolve the directories: explicit arguments, else $SBX_STATE_DIR and
 * $SBX_CACHE_DIR, else /var/lib/sbx and /var/cache/sbx for root, else
 * $XDG_STATE_HOME/sbx ($HOME/.local/state/sbx) and $XDG_CACHE_HOME/sbx.
 * Creates them (0700) when create is true.
 */
int sbx_state_open(struct sbx_state *st, const char *state_dir, const char *cache_dir,
		   bool create, struct sbx_err *err);
void sbx_state_close(struct sbx_state *st);

struct sbx_sandbox {
	char id[SBX_ID_LEN + 1];
	char *name;		/* NULL when none */
	char *dir;		/* STATE/sandboxes/ID */
	int dirfd;		/* O_DIRECTORY fd */
	int lockfd;		/* held flock, -1 if not locked */
	json_t *record;		/* parsed record.json (owned) */
};

/* New sandbox: fresh random id, unique name (EEXIST if taken), dir 0700, locked. */
int sbx_sandbox_create(struct sbx_state *st, const char *name, struct sbx_sandbox *sb,
		       struct sbx_err *err);

/* Find by id, unique id prefix or name; ENOENT / EAMBIGUOUS (-ENOTUNIQ). */
int sbx_sandbox_find(struct sbx_state *st, const char *ref, char id_out[SBX_ID_LEN + 1],
		     struct sbx_err *err);
/* Open (and optionally lock, blocking) an existing sandbox and read its record. */
int sbx_sandbox_open(struct sbx_state *st, const char *id, bool lock, struct sbx_sandbox *sb,
		     struct sbx_err *err);
/* List ids of all sandboxes (sorted by creation time). */
int sbx_sandbox_list(struct sbx_state *st, struct sbx_strv *ids, struct sbx_err *err);

/* Write sb->record atomically (tmp file, fsync, rename, fsync dir). */
int sbx_sandbox_save(struct sbx_sandbox *sb, struct sbx_err *err);
/* Remove the sandbox directory (never following symlinks); idempotent. */
int sbx_sandbox_remove(struct sbx_state *st, struct sbx_sandbox *sb, struct sbx_err *err);
void sbx_sandbox_close(struct sbx_sandbox *sb);

/* Is the sandbox's supervisor alive (lock held by someone else)? */
bool sbx_sandbox_is_running(struct sbx_state *st, const char *id);

#endif
