/* SPDX-License-Identifier: MIT */
/*
 * lib/profile/config.h - the resolved isolation profile.
 *
 * The profile (lib/profile/profile.c) and the `run` options (cmd/run.c) fill the
 * same struct through the same setter, sbx_profile_set(), so every profile
 * key has one code path (command line wins because it is applied last).
 */
#ifndef SBX_CONFIG_H
#define SBX_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "util.h"

/* Sentinel meaning "not set" for numeric limits. */
#define SBX_UNSET UINT64_MAX
/* [limits] disk = unlimited: no cap on the writable layers (unset means
 * the default cap, lib/jail/disk.h). */
#define SBX_DISK_NO_CAP (UINT64_MAX - 1)
/* The in-memory writable layers' size when nothing sets one (a state
 * directory on an overlayfs, lib/run/run_layers.c). */
#define SBX_LAYER_MEMORY_DEFAULT (4ULL << 30)
/* The smallest [limits] memory a jail starts in. */
#define SBX_MEMORY_MIN (4ULL << 20)
/* [sandbox] stop-timeout when a profile does not set one. */
#define SBX_STOP_TIMEOUT_DEFAULT_MS 10000

enum sbx_net_mode {
	SBX_NET_NONE = 0, /* own netns, its own lo up, nothing outside */
	SBX_NET_LOOPBACK, /* the same (the older name) */
	SBX_NET_PROXY,	  /* own netns, allowlist HTTP proxy at 127.0.0.1:PORT */
	SBX_NET_HOST,	  /* host network: loudly flagged */
};

enum sbx_persist {
	SBX_PERSIST_NEVER = 0,
	SBX_PERSIST_ON_FAILURE,
	SBX_PERSIST_ALWAYS,
};

/* [sandbox] tty: a pty for the command (-t, -T) */
enum sbx_tty {
	SBX_TTY_AUTO = 0, /* when stdin, stdout and stderr are sbx's foreground terminal */
	SBX_TTY_YES,
	SBX_TTY_NO,
};

enum sbx_mount_kind {
	SBX_MNT_BIND = 0, /* bind SRC[:DST], read-write, nosuid,nodev */
	SBX_MNT_RO_BIND,  /* ro-bind SRC[:DST] */
	SBX_MNT_OVERLAY,  /* overlay SRC[:DST], copy-on-write, upper in state */
	SBX_MNT_TMPFS,	  /* tmpfs DST[:SIZE] */
	SBX_MNT_MASK,	  /* mask PATH: hide (empty tmpfs for dirs, /dev/null for files) */
};

/* watch = [KEY ...] PATH: each key a path of object members, "." between
 * them, "*" for any member ("projects.*.allowedTools") */
struct sbx_watch_keys {
	char *path;
	struct sbx_strv keys;
};

struct sbx_mount {
	enum sbx_mount_kind kind;
	char *src;	/* absolute host path (NULL for tmpfs) */
	char *dst;	/* absolute path inside the jail */
	uint64_t size;	/* tmpfs size in bytes, 0 = kernel default */
	bool optional;	/* SRC may be missing (prefix '-' in the value) */
	bool host_only; /* " when host": only with the host's root (not an image) */
	bool git_ro;	/* bind: SRC/.git goes in read-only (sbx_config_protect_git) */
	/* with git_ro: what git's config names below SRC (core.hooksPath,
	 * include.path) and what a symlink git follows leads to there (a
	 * hooks directory, a hook), relative to SRC; read-only too */
	struct sbx_strv git_named;
	/* with git_ro: SRC/.git is a symlink, and git_named's first entry
	 * the directory it leads to (mounted read-only in its stead) */
	bool git_link;
};

enum sbx_secret_source { SBX_SECRET_FROM_ENV = 0, SBX_SECRET_FROM_FILE };
enum sbx_secret_inject { SBX_SECRET_AS_ENV = 0, SBX_SECRET_AS_FILE };

struct sbx_secret {
	char *name; /* env var name / file name under /run/secrets */
	enum sbx_secret_source source;
	char *ref; /* host env var name, or host file path */
	enum sbx_secret_inject inject;
	bool optional; /* "env:VAR?": skipped (not an error) when missing */
	/* "inject HOST[,HOST...]": the jail gets a placeholder and the proxy
	 * puts the value into HTTPS request headers to these hosts (lowercase
	 * names or "*.domain"); empty: the jail gets the value itself. */
	struct sbx_strv inject_hosts;
};

/* [filesystem] sysfs: the jail's own view of /sys, or none at all. */
enum sbx_sysfs {
	SBX_SYSFS_OWN,
	SBX_SYSFS_NONE,
};

struct sbx_config {
	/* Where it came from. */
	char *profile_name;	 /* "default", "ci", or the file path as given */
	struct sbx_strv sources; /* every file/built-in read, in order */

	/* [sandbox] */
	char *rootfs;	      /* "host" (NULL means host), tarball path or directory */
	bool rootfs_required; /* rootfs = required: run must be given --rootfs */
	char *hostname;	      /* NULL: "sbx-<id>" */
	bool user_set;	      /* user = given; otherwise invoking user's ids */
	bool user_root;	      /* user = root */
	uid_t uid;
	gid_t gid;
	char *sudo_user;     /* the run acts for this user, who ran sudo (below) */
	char *sudo_declined; /* why it does not (a caller was there), or NULL */
	char *workdir;	     /* NULL: $PWD if visible inside, else / */
	enum sbx_persist persist;
	enum sbx_tty tty_mode; /* tty = auto | yes | no (-t, -T) */
	bool tty;	       /* allocate a pty: tty_mode for this caller (sbx_config_tty) */
	/* After SIGINT/SIGTERM/SIGHUP/SIGQUIT reached sbx and was forwarded:
	 * how long the command may take to end before the jail is killed
	 * (SBX_UNSET: never).  A second SIGINT/SIGTERM kills at once. */
	uint64_t stop_timeout_ms;

	/* [filesystem]: in order of appearance */
	struct sbx_mount *mounts;
	size_t n_mounts;
	bool rootfs_writable; /* writable overlay layer on the root (default yes) */
	enum sbx_sysfs sysfs; /* what /sys shows (lib/jail/mounts.c mount_sys) */
	/* watch = PATH: host files (or directories) that a program runs code
	 * from later (an agent's hooks): each changed while the command ran
	 * is named after the run (lib/run/run_later.c) */
	struct sbx_strv watch;
	/* watch = [KEY ...] PATH: a JSON file a program rewrites on its own
	 * (Claude Code's ~/.claude.json), named after the run only when what
	 * these keys hold changed (lib/run/run_watch.c); each path once */
	struct sbx_watch_keys *watch_keys;
	size_t n_watch_keys;

	/* [env] */
	bool env_clear;		  /* default true */
	struct sbx_strv env_pass; /* names (glob patterns allowed: LC_*) */
	struct sbx_strv env_set;  /* "NAME=VALUE" */

	/* [secrets] */
	struct sbx_secret *secrets;
	size_t n_secrets;

	/* [network] */
	enum sbx_net_mode net;
	struct sbx_strv allow;	 /* host, host:port, *.domain[:port] */
	char *upstream_ca;	 /* PEM file of extra CAs for upstream TLS, or NULL */
	bool capture;		 /* proxy mode: capture all TCP and DNS (default yes) */
	struct sbx_strv publish; /* published ports, canonical (lib/net/publish.h) */

	/* [limits]; SBX_UNSET when not set */
	uint64_t memory; /* bytes */
	uint64_t pids;
	uint64_t cpus_milli; /* 1500 = 1.5 cpus */
	uint64_t time_ms;
	uint64_t nofile;
	uint64_t fsize;		/* bytes */
	uint64_t disk;		/* bytes, writable layer */
	uint64_t image_size;	/* bytes, max unpacked image */
	uint64_t image_entries; /* max entries in an image */

	/* [security] */
	char *seccomp;	    /* "default" | "strict" | path to a policy file */
	uint64_t caps_keep; /* bitmask of CAP_* kept (default 0) */
	bool no_new_privs;  /* default true; "no" is refused unless caps are kept */
};

void sbx_config_init(struct sbx_config *c); /* defaults of the built-in contract */
void sbx_config_free(struct sbx_config *c);
/*
 * Drop each overlay that an earlier overlay already shows unchanged: its
 * source and destination lie at the same place below the earlier one's,
 * on the same host mount (no mount point between them), and no mount in
 * between touches that tree.  The default profile's working directory
 * inside $HOME is then one overlay, not two (each costs a writable layer
 * and an overlay mount).  Returns how many were dropped.
 */
size_t sbx_config_drop_covered_overlays(struct sbx_config *c);
/*
 * Drop each mount that a later one at the same place hides whole (a
 * command line's --overlay . over the agent profile's read-write bind of
 * the project, or --bind . over the default profile's overlay): the jail
 * would make it only to cover it, and the run log, the record, diff and
 * apply would name it.  Kept when the later one may not be made (an
 * optional source that is missing), when a mount between them is on a
 * parent of that place (a symlink on the way could lead elsewhere), and
 * for masks, which go on after every other mount.  Returns how many were
 * dropped.
 */
size_t sbx_config_drop_hidden(struct sbx_config *c);
/*
 * A read-write bind never makes a repository's git directory writable:
 * git runs what that directory says (hooks, core.fsmonitor and the other
 * commands of its config, a commondir or gitdir pointing at another
 * config), later, on the host, as the directory's owner.  Marks each bind
 * whose SRC/.git is a directory or a file (a linked worktree's) git_ro:
 * the jail mounts it read-only onto itself, a mount point that cannot be
 * renamed, replaced or removed.  Not when a read-write bind of its own
 * names that .git (asked for).  With it go what git's config names below
 * SRC (git_named): the hooks directory of a core.hooksPath (husky's
 * .husky/_, a tracked .githooks) and each file an include.path or
 * includeIf.*.path names (a tracked .gitconfig): git runs and reads them
 * as it does .git itself.  The repository's config (a linked worktree's
 * too, where its .git file points), the files it includes, and the
 * user's global ones (/etc/gitconfig, ~/.gitconfig,
 * ~/.config/git/config, with home and with $HOME) are read, at most 16
 * in all.  What git reaches through a symlink below SRC goes in
 * read-only too: where .git itself leads (git_link), its hooks
 * directory, its config, and each hook of a hooks directory (a tracked
 * scripts/pre-commit.sh); a symlink that leads out of SRC is not
 * followed further.  One that is not there at the start is named at the
 * run's end when made (lib/run/run_later.c).  Returns how many binds
 * were marked.
 */
size_t sbx_config_protect_git(struct sbx_config *c, const char *home);
/*
 * With an image root: drop the entries marked "when host" (the default
 * profile's copy-on-write home: an image has a home of its own).  Call
 * once the rootfs is final (after the command-line options).
 */
void sbx_config_drop_host_only(struct sbx_config *c);
/*
 * Under sudo (root, $SUDO_UID a user's), the ~/... masks (the credential
 * files: ~/.npmrc, ~/.aws, ...) expanded with home (root's, as sudo sets
 * $HOME) hide the same paths in the home of the user who ran sudo too: the
 * host's root shows that home read-only, with what is world-readable in
 * it.  Expanded with the caller's home (a run that is the caller's, or
 * sudo -E), they hide the same paths in root's home.  Returns how many
 * were added.
 */
size_t sbx_config_mask_sudo_home(struct sbx_config *c, const char *home);

/* The ordinary user who ran sbx through sudo. */
struct sbx_sudo_caller {
	uid_t uid;
	gid_t gid;
	char name[64];
	char home[4096];
};
/*
 * sbx runs as root through sudo: the real uid is 0 and $SUDO_UID names a
 * user in the password database other than root (group: $SUDO_GID, else
 * the user's own).  Fills *out.
 */
bool sbx_sudo_caller(struct sbx_sudo_caller *out);
/*
 * Should a run act for that caller?  With the host's root, the profile's
 * user = inherit (no -u), a caller whose ids fit in the jail's, and a
 * working directory pwd that the caller owns and can reach (a
 * developer's project): the command then runs as the caller, with the
 * caller's HOME, USER and LOGNAME, as it would without sudo.  Root's own
 * directories (sudo -i in /root) keep root.  *acts is the answer (*out
 * filled); when a caller is there and the run stays root's (their ids do
 * not fit, pwd is not theirs or out of their reach), returns why, one
 * clause for the run log ("not as NAME, who ran sudo: ...", malloc'd).
 * NULL when there is nothing to say: it acts for them, there is no
 * caller, or -u or an image chose the user.
 */
char *sbx_config_sudo_caller_check(const struct sbx_config *c, const char *pwd,
				   struct sbx_sudo_caller *out, bool *acts);
/* Make c run as that caller: user = UID:GID, HOME, USER and LOGNAME set,
 * and sudo_user named (for the run log). */
void sbx_config_act_for(struct sbx_config *c, const struct sbx_sudo_caller *who);
/*
 * Every bind, ro-bind and overlay source that is not optional exists on
 * the host: a missing one is one line before any jail starts, naming the
 * entry (0 or -ENOENT).
 */
int sbx_config_check_sources(const struct sbx_config *c, struct sbx_err *err);
const char *sbx_net_mode_name(enum sbx_net_mode m);
const char *sbx_persist_name(enum sbx_persist p);
const char *sbx_mount_kind_name(enum sbx_mount_kind k);

#endif
