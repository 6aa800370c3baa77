/* SPDX-License-Identifier: MIT */
/*
 * lib/review/review.h - an agent's work out of the sandbox: the change set
 * of a kept sandbox's copy-on-write host directories (the working
 * directory and $HOME overlays of the default profile, each `overlay =` /
 * `--overlay`), as a git-style diff (`sbx diff`), and written back into
 * those directories (`sbx apply`).
 *
 * Paths are relative to the overlay's host directory.  When the change set
 * spans several overlays, every path starts with its overlay's host
 * directory without the leading '/' ("root/.bashrc", "work/proj/f.c"), so
 * the patch applies from '/'.  With one directory given (`sbx diff SANDBOX
 * DIR`, `.` in a project under a $HOME overlay), or with `relative` (`sbx
 * diff --relative`: the caller's directory), paths are relative to it, as
 * `git diff --relative`, and only what is below it is in the set.
 *
 * The upper layers are hostile (written by the jail): they are read with
 * nothing followed, and what cannot be applied safely (device nodes,
 * fifos, sockets, hard links, symlinks that point out of the directory) is
 * named as refused.  Host files are opened beneath the overlay's host
 * directory with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS.
 */
#ifndef SBX_REVIEW_H
#define SBX_REVIEW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

#include "state.h"
#include "util.h"

/* Files that run code on the host later (flagged in diff, apply, inspect). */
enum {
	SBX_FLAG_GIT_DIR = 1 << 0,	 /* under .git/: applied only with --git-dir */
	SBX_FLAG_GIT_HOOK = 1 << 1,	 /* .git/hooks/ */
	SBX_FLAG_GIT_CONFIG = 1 << 2,	 /* .git/config */
	SBX_FLAG_CI = 1 << 3,		 /* .github/workflows/, .gitlab-ci.yml */
	SBX_FLAG_EDITOR = 1 << 4,	 /* .vscode/, .idea/ */
	SBX_FLAG_AGENT = 1 << 5,	 /* .claude/, .codex/, .gemini/ */
	SBX_FLAG_SHELL_STARTUP = 1 << 6, /* .bashrc, .profile, ... of a home directory */
	SBX_FLAG_EXECUTABLE = 1 << 7,	 /* gained an executable bit */
};
/* "git-hook, executable" (every flag set), or "" for none. */
const char *sbx_review_flags_text(unsigned flags, char *buf, size_t len);

struct sbx_review_overlay {
	char *host;   /* the host directory (absolute) */
	char *target; /* where the jail saw it */
	char *prefix; /* "" or "host/dir/" (several overlays) */
	int upper_fd, host_fd;
	bool home; /* the host directory is its owner's home */
};

struct sbx_review_entry {
	char kind;	     /* 'A' added, 'M' modified, 'D' deleted, 'T' type changed */
	size_t ov;	     /* its overlay */
	char *rel;	     /* relative to the overlay's host directory */
	char *shown;	     /* prefix + rel */
	mode_t old_mode;     /* the host's, 0 when none */
	mode_t new_mode;     /* the sandbox's, 0 when deleted */
	off_t size;	     /* the sandbox's file size */
	unsigned flags;	     /* SBX_FLAG_* */
	const char *refused; /* why it cannot be applied, or NULL */
	bool opaque;	     /* a directory that replaced the host's */
	bool setid;	     /* had a set-user-ID or set-group-ID bit (dropped) */
	bool conflict;	     /* the host's file changed after the sandbox started */
};

struct sbx_review {
	struct sbx_review_overlay *ov;
	size_t n_ov;
	struct sbx_review_entry *e;
	size_t n;
	double started_ms; /* when the sandbox was created (ms since the epoch) */
	size_t n_errors;   /* entries of an upper layer that could not be read */
	/* Host directories whose overlay has changes but that cannot be
	 * opened now (moved, removed): their changes are not in the set;
	 * gone_why[i] is why (strerror).  Only those a PATH given concerns. */
	struct sbx_strv gone, gone_why;
};

/*
 * The change set of sb (kept, or running with its layer on disk), limited
 * to the host paths given (absolute; all when n_paths is 0), sorted by
 * shown path.  Each host file a change names is checked against the
 * sandbox's start: one created, deleted or changed on the host since then
 * (its ctime, or its directory's, is later) has .conflict set.
 */
int sbx_review_open(const struct sbx_sandbox *sb, char *const *paths, size_t n_paths,
		    const char *relative, struct sbx_review *r, struct sbx_err *err);
void sbx_review_free(struct sbx_review *r);

enum sbx_diff_format {
	SBX_DIFF_PATCH,
	SBX_DIFF_STAT,
	SBX_DIFF_NAME_ONLY,
};
struct sbx_diff_opts {
	enum sbx_diff_format format;
	bool binary;  /* binary files as git binary patches */
	bool git_dir; /* changes under .git/ as hunks too */
	bool color;
	bool shown; /* out is a terminal: control characters as \xNN */
};
/* The diff (libgit2's patch API) of r's entries on out. */
int sbx_review_diff(const struct sbx_review *r, const struct sbx_diff_opts *o, FILE *out,
		    struct sbx_err *err);

struct sbx_apply_opts {
	bool dry_run;
	bool force;   /* apply what is not refused nor in conflict all the same */
	bool git_dir; /* changes under .git/ too */
};
struct sbx_apply_stats {
	size_t written, removed, dirs, skipped_git, refused, conflicts;
	struct sbx_strv paths;	  /* shown paths applied */
	struct sbx_strv problems; /* "refused: 'p': why", "conflict: 'p' ..." */
};
/*
 * Write r's entries into the host directories, owned by whoever owns the
 * file replaced (or its directory).  Every entry is checked first: one the
 * jail planted that cannot be applied (refused) or whose host file changed
 * since the sandbox started (conflict) is named in st->problems and stops
 * the apply (-EEXIST, nothing written) unless force, which writes the
 * conflicting paths too (the sandbox's version wins), never refused ones.
 * Then each file is written to a temporary name and renamed into place.
 * With dry_run only the check.  Entries under .git/ are skipped unless
 * git_dir.  Free st's vectors with sbx_apply_stats_free.
 */
void sbx_apply_stats_free(struct sbx_apply_stats *st);
int sbx_review_apply(const struct sbx_review *r, const struct sbx_apply_opts *o,
		     struct sbx_apply_stats *st, struct sbx_err *err);

#endif
