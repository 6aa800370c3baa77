/* SPDX-License-Identifier: MIT */
/*
 * lib/state/state.h - the state directory: sandboxes, records, locks.
 *
 *   STATE/                     0700
 *   STATE/lock                 flock()ed briefly while a name is claimed
 *   STATE/names/NAME           a name's sandbox id (sbx's own file)
 *   STATE/sandboxes/ID/record.json   (atomic: tmp, fsync, rename, fsync dir)
 *                      log.jsonl     run-log events
 *                      output.log    captured stdout+stderr, capped
 *                      disk.img      as root: the layers' ext4 image
 *                      disk/         the writable layers (upper/ work/
 *                                    overlays/N/), or where disk.img mounts
 *                      lock          flock()ed by whoever mutates the sandbox
 *
 * A new sandbox is built as STATE/sandboxes/.new-ID (locked) and renamed to
 * ID, so nobody ever sees an unlocked sandbox without a record.
 *
 * Everything under a sandbox directory except record.json, log.jsonl,
 * output.log and lock may have been written by a hostile jail (upper/):
 * never follow symlinks there, never trust those files.
 */
#ifndef SBX_STATE_H
#define SBX_STATE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "record.h"
#include "util.h"

#define SBX_ID_LEN   12
#define SBX_NAME_MAX 64
/* record.json larger than this is refused (it is sbx's own, but still). */
#define SBX_RECORD_MAX (64u << 20)

struct sbx_state {
	char *state_dir;  /* STATE (0700) */
	char *cache_dir;  /* CACHE */
	int state_fd;	  /* O_DIRECTORY fd of STATE, -1 if it does not exist */
	int sandboxes_fd; /* O_DIRECTORY fd of STATE/sandboxes, -1 if none */
	/* work for the trash purger once it has removed what it was started
	 * for (detached, nice 19, idle I/O class: never on a caller's path),
	 * given STATE and two numbers by value: the purger may outlive the
	 * caller's memory (a handed-off one, lib/state/trash.c) */
	struct sbx_idle_work {
		void (*fn)(const char *state_dir, const uint64_t args[2]);
		uint64_t args[2];
	} idle[2]; /* sbx_state_idle_add(); done in this order */
	size_t n_idle;
	bool exiting; /* the caller exits next: a purger may be its child */
	/* with holding, hold_fd is an O_PATH fd of a detached mount (a thrown
	 * away layer's filesystem): the purger closes the last one, so the
	 * filesystem's teardown (sync, loop device release) is never on the
	 * caller's path (lib/state/trash.c) */
	bool holding;
	int hold_fd;
};

/* Add work for the purger (see idle above); false when there is no room. */
bool sbx_state_idle_add(struct sbx_state *st,
			void (*fn)(const char *state_dir, const uint64_t args[2]), uint64_t a0,
			uint64_t a1);

/*
 * Resolve the directories: explicit arguments, else $SBX_STATE_DIR and
 * $SBX_CACHE_DIR, else /var/lib/sbx and /var/cache/sbx for root, else
 * $XDG_STATE_HOME/sbx ($HOME/.local/state/sbx) and $XDG_CACHE_HOME/sbx
 * ($HOME/.cache/sbx).  Creates them (0700) when create is true.  When
 * create is false and the state directory does not exist, succeeds with
 * state_fd = sandboxes_fd = -1 (no sandboxes: list is empty, find fails
 * with ENOENT).
 */
int sbx_state_open(struct sbx_state *st, const char *state_dir, const char *cache_dir, bool create,
		   struct sbx_err *err);
void sbx_state_close(struct sbx_state *st);

struct sbx_sandbox {
	char id[SBX_ID_LEN + 1];
	char *name;	       /* NULL when none */
	char *dir;	       /* STATE/sandboxes/ID */
	int dirfd;	       /* O_DIRECTORY fd */
	int lockfd;	       /* held flock, -1 if not locked */
	struct sbx_record rec; /* record.json, typed: what every reader uses */
	json_t *record;	       /* the document as read or last saved (owned), NULL
				* if missing or bad: what is written, and what
				* `inspect --json` shows as it is */
	char *record_error;    /* why record is NULL (malloc'd), NULL if fine */
};

/* The file `sbx destroy` makes in a running sandbox's directory before it
 * kills the jail, so that its supervisor reports it destroyed, not kept. */
#define SBX_SANDBOX_DESTROYING "destroying"

/* Is s a syntactically valid id (12 lowercase hex chars)? */
bool sbx_state_valid_id(const char *s);
/* Is s an acceptable --name?  [A-Za-z0-9][A-Za-z0-9_.-]*, <= 64, not all hex. */
int sbx_state_check_name(const char *name, struct sbx_err *err);

/*
 * New sandbox: fresh random id, unique name (-EEXIST if taken; NULL for
 * none), dir 0700, locked (sb->lockfd held until sbx_sandbox_close).
 * sb->record is a fresh object with version, id, name, created.
 */
int sbx_sandbox_create(struct sbx_state *st, const char *name, struct sbx_sandbox *sb,
		       struct sbx_err *err);
/*
 * The same, but sb->record is not written yet: the caller saves it (its
 * tmp/fsync/rename off the critical path).  Until then the locked directory
 * has no record.json: sbx_sandbox_state() says "created" while the lock is
 * held, "lost" once it is not (destroy --stale then removes it).
 */
int sbx_sandbox_create_unsaved(struct sbx_state *st, const char *name, struct sbx_sandbox *sb,
			       struct sbx_err *err);

/*
 * Find by exact id, exact name, or unique id prefix (in that order).
 * -ENOENT if nothing matches; -ENOTUNIQ if the prefix is ambiguous (the
 * message lists the candidates).
 */
int sbx_sandbox_find(struct sbx_state *st, const char *ref, char id_out[SBX_ID_LEN + 1],
		     struct sbx_err *err);
/*
 * Open (and optionally lock, blocking) an existing sandbox and read its
 * record.  A missing or unreadable record is not an error: sb->record is
 * NULL and sb->record_error says why (destroy still works on it).
 */
int sbx_sandbox_open(struct sbx_state *st, const char *id, bool lock, struct sbx_sandbox *sb,
		     struct sbx_err *err);
/* Read sb's record again (after taking its lock, say). */
void sbx_sandbox_reload(struct sbx_sandbox *sb);
/* Take the sandbox lock now (blocking, or -EWOULDBLOCK when !wait). */
int sbx_sandbox_lock(struct sbx_sandbox *sb, bool wait, struct sbx_err *err);
/* List ids of all sandboxes (sorted by creation time, oldest first). */
int sbx_sandbox_list(struct sbx_state *st, struct sbx_strv *ids, struct sbx_err *err);

/* Write sb->record atomically (tmp file, fsync, rename, fsync dir). */
int sbx_sandbox_save(struct sbx_sandbox *sb, struct sbx_err *err);
/* sb->rec as sb->record (sbx_record_to_json), then saved. */
int sbx_sandbox_save_record(struct sbx_sandbox *sb, struct sbx_err *err);
/* sb->rec again from sb->record (after the document was edited). */
int sbx_sandbox_parse_record(struct sbx_sandbox *sb, struct sbx_err *err);
/*
 * Remove the sandbox directory (never following symlinks, never crossing
 * a mount point) and its name; idempotent.  Unmount first
 * (sbx_sandbox_unmount_all).
 */
int sbx_sandbox_remove(struct sbx_state *st, struct sbx_sandbox *sb, struct sbx_err *err);
void sbx_sandbox_close(struct sbx_sandbox *sb);
/*
 * The same, off the caller's path (lib/state/trash.c): the directory moves
 * to STATE/trash/ in one rename (never seen by ps, inspect or a name again)
 * and a detached, low-priority purger removes it.  Unmount first.  Falls
 * back to sbx_sandbox_remove() where the rename cannot be.
 */
int sbx_sandbox_trash(struct sbx_state *st, struct sbx_sandbox *sb, struct sbx_err *err);
/* Make the ready sandbox directories that are missing or not sbx's own
 * (the trash purger does, after a run), and is one? */
void sbx_state_ready_fill(struct sbx_state *st);
bool sbx_state_ready_missing(struct sbx_state *st);
/* A trashed sandbox directory (name in fromfd) made a missing ready one. */
bool sbx_state_ready_recycle(int sandboxes_fd, int fromfd, const char *name);
/* Remove them (destroy --all: sandboxes/ is empty after it). */
void sbx_state_ready_clear(struct sbx_state *st);
/* An interrupted removal left in STATE/trash, or idle work set, or (the
 * caller exiting) a ready directory missing: a purger for it (detached). */
void sbx_state_purge_background(struct sbx_state *st);
/* sbx run's purger shares the caller's memory and takes it over when the
 * caller has exited (lib/state/trash.c): pending, the caller flushes its
 * output, calls sbx_state_handoff_exit() and then _exit(), nothing in
 * between; a caller that ends otherwise leaves the removal to the next run. */
bool sbx_state_handoff_pending(void);
void sbx_state_handoff_exit(void);
/* Return once no purger is at work in this state directory (one started
 * before this call; destroy --all/--stale call it first). */
void sbx_state_purgers_wait(struct sbx_state *st);
/* The same, now, waiting for any purger at work (destroy --all/--stale);
 * what was removed goes to removed (may be NULL). */
void sbx_state_purge(struct sbx_state *st, struct sbx_strv *removed);

/* Is the sandbox's supervisor alive (lock held by someone)? */
bool sbx_sandbox_is_running(struct sbx_state *st, const char *id);
/* Is the lock of an open sandbox held by someone (another open file)? */
bool sbx_sandbox_lock_held(const struct sbx_sandbox *sb);

/*
 * Derived state for display: "running", "exited", "killed", "timeout",
 * "oom", "error", "lost" (record says running, or no record yet but a lock
 * file: lock free), "created" (no record yet, lock held) or "unknown" (no
 * record nor lock file, or an unreadable record).  For exited/killed,
 * *code is the exit code / signal.
 */
const char *sbx_sandbox_state(const struct sbx_sandbox *sb, int *code);

/* Unmount everything mounted under sb->dir (deepest first, MNT_DETACH). */
int sbx_sandbox_unmount_all(const struct sbx_sandbox *sb, size_t *n_unmounted, struct sbx_err *err);

/* What sbx_sandbox_destroy() did. */
struct sbx_teardown {
	bool was_running;	/* the lock was held by a live supervisor */
	bool killed_init;	/* the jail's init was SIGKILLed (whole pid namespace) */
	bool killed_supervisor; /* the supervisor did not let go and was SIGKILLed */
	size_t n_unmounted;
	bool cgroup_removed; /* a cgroup sbx-ID was found and removed */
};

/*
 * Destroy a sandbox: kill its jail (init_pid, verified by its recorded
 * start time so a reused pid is never signalled) and cgroup, wait for the
 * supervisor to let go of the lock (SIGKILL it after a grace period, also
 * verified), unmount what is left under its dir, remove cgroup, name and
 * directory.  Idempotent.  sb stays open (its fds point at a removed dir).
 */
int sbx_sandbox_destroy(struct sbx_state *st, struct sbx_sandbox *sb, struct sbx_teardown *t,
			struct sbx_err *err);

/*
 * Leftovers that are not sandboxes: half-created STATE/sandboxes/.new-*
 * dirs nobody holds, and names whose sandbox is gone.  Removes them and
 * lists what it removed (strings for display).
 */
int sbx_state_gc(struct sbx_state *st, struct sbx_strv *removed, struct sbx_err *err);

#endif
