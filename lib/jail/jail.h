/* SPDX-License-Identifier: MIT */
/*
 * lib/jail/jail.h - the jail: clone into new namespaces, id maps, mounts,
 * pivot_root, a pid-1 init, dropped privileges, seccomp, execve; and the
 * supervisor side that proxies the command's output and signals.
 *
 *   supervisor (host namespaces)          init (pid 1 of the jail)
 *   sbx_jail_start():  clone ------------> waits for GO
 *     write uid_map/gid_map, attach cgroup,
 *     idmapped lower layers (as root) ---> GO (+ fds over SCM_RIGHTS)
 *                                          mounts, pivot_root, hostname, lo
 *                                          (-t: setsid, the pty; PTY master)
 *                                          fork -> command: setsid (-t: its
 *                                          own group), ids, rlimits, caps,
 *                                          no_new_privs,
 *                                          seccomp, execve
 *     <---------- EXEC (timings) or ERROR (errno, message) or EXEC_FAIL
 *   sbx_jail_supervise(): tee output, forward signals, time limit
 *     <---------- STATUS (the command's wait status); init exits
 *
 * `sbx exec` reuses the command side (sbx_jail_exec_command) after joining
 * the namespaces of a running jail.
 */
#ifndef SBX_JAIL_H
#define SBX_JAIL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/ioctl.h>
#include <termios.h>

#include "config.h"
#include "limits.h"
#include "seccomp.h"
#include "util.h"

/* Host range the jail's ids map to when sbx runs as root: 65536 ids from
 * SBX_JAIL_HOST_BASE, or, when /etc/subuid or /etc/subgid gives some of
 * those to a user (Debian's useradd gives the first user 100000-165535),
 * from the first multiple of 65536 above every range listed there, so
 * that no user can act as a jail's ids (sbx_jail_host_base). */
#define SBX_JAIL_HOST_BASE 100000
#define SBX_JAIL_ID_COUNT  65536
uid_t sbx_jail_host_base(void);
/* Is base one sbx_jail_host_base() can give (a record's, read back)? */
bool sbx_jail_host_base_valid(unsigned long base);

/* An ordinary user's subordinate ids (lib/jail/subid.c). */
struct sbx_subid {
	uid_t uid; /* the user */
	gid_t gid;
	uid_t ustart; /* /etc/subuid range */
	uint32_t ucount;
	gid_t gstart; /* /etc/subgid range */
	uint32_t gcount;
	char newuidmap[64], newgidmap[64];
};

/* The user's ranges and the helpers, when both are there (and SBX_SUBID is
 * not 0).  false: a one-id jail. */
bool sbx_subid_lookup(uid_t uid, gid_t gid, struct sbx_subid *s);
/* Map pid's user namespace: in_uid/in_gid -> the user, the rest -> range. */
int sbx_subid_write_maps(const struct sbx_subid *s, pid_t pid, uid_t in_uid, gid_t in_gid,
			 struct sbx_err *err);
/* "ids 0-65536 of the jail are the subordinate range ... uid 1000 is you" */
void sbx_subid_describe(const struct sbx_subid *s, uid_t in_uid, char *out, size_t len);
/* fn(arg) in a child that made a namespace with that mapping: still the
 * user, with every capability over the mapped ids, so it may read, copy
 * and remove what a subordinate id made in a sandbox's layers; 0, or
 * -EACCES when fn failed.  And sbx_rm_rf_at() there. */
int sbx_subid_call(const struct sbx_subid *s, int (*fn)(void *), void *arg);
int sbx_subid_rm_rf_at(const struct sbx_subid *s, int dirfd, const char *name);

/* An upper's root as it must look: its lower's mode, and its owner as the
 * jail sees it ((uid_t)-1: whoever makes it). */
struct sbx_jail_upper {
	mode_t mode;
	uid_t uid;
	gid_t gid;
};

/* Who the command is, inside and on the host. */
struct sbx_jail_ids {
	bool range; /* true: 0..65535 -> base.. (sbx ran as root) */
	uid_t base; /* that range's first host id */
	bool subid; /* an ordinary user's subordinate range is mapped (sub) */
	struct sbx_subid sub;
	uid_t uid; /* inside */
	gid_t gid;
	uid_t host_uid; /* the same user seen from the host */
	gid_t host_gid;
	uid_t host_root; /* host uid of the jail's uid 0, (uid_t)-1 if unmapped */
	uid_t outer_uid; /* the euid of sbx (mapped when !range) */
	gid_t outer_gid;
	/* sbx itself runs in a user namespace (a container): its uid 0 is not
	 * the host's root; parent_uid is outer_uid one level up. */
	bool nested;
	uid_t parent_uid;
};

/* Compute the ids from the profile and the calling process. */
int sbx_jail_ids_resolve(const struct sbx_config *cfg, struct sbx_jail_ids *ids,
			 struct sbx_err *err);

/* A file the jail gets in a tmpfs (e.g. secrets in /run/secrets); each
 * such tmpfs holds SBX_JAIL_FILES_MAX bytes. */
#define SBX_JAIL_FILE_FDS  3
#define SBX_JAIL_FILES_MAX 1048576
struct sbx_jail_file {
	const char *dir;  /* absolute dir inside, a fresh tmpfs (e.g. /run/secrets) */
	const char *name; /* file name in it */
	const void *data;
	size_t len;
	mode_t mode; /* owned by the jail user */
	/*
	 * n_fds > 0: the content is read from these instead (data and len
	 * unused), in order, a newline between two (a PEM bundle from its
	 * parts): regular files the supervisor opened, copied in the kernel up
	 * to their size, or a pipe it writes while the jail is set up, read to
	 * its end.  Init reads them as the last step before the pivot and
	 * closes them (the CA bundle: the host's CAs, upstream-ca, the
	 * sandbox's CA from its helper).
	 */
	int fds[SBX_JAIL_FILE_FDS];
	size_t n_fds;
};

struct sbx_jail;

#define SBX_JAIL_LATE_LAYERS 31 /* opts->layer_later: 1 + 2 per layer fds in a message */

/* A jail's pty as it starts (-t): sbx_jail_term_of_caller(). */
struct sbx_jail_term {
	struct winsize ws; /* its size; 0 rows: none */
	bool no_echo;	   /* the caller's input is piped, not typed */
};

struct sbx_jail_opts {
	const struct sbx_config *cfg;
	const char *id;		 /* sandbox id (default hostname sbx-<id>) */
	const char *rootfs_dir;	 /* image directory, NULL = the host's root */
	const char *sandbox_dir; /* STATE/sandboxes/ID: upper/ work/ overlays/ */
	char *const *argv;	 /* the command */
	char *const *envp;	 /* its environment (sbx_jail_build_env) */
	const char *workdir;	 /* inside; NULL = host cwd if visible, else / */
	const char *host_cwd;	 /* for the default workdir */
	struct sbx_jail_ids ids;
	struct sbx_cgroup *cg;	   /* NULL or version 0: no cgroup */
	int out_fd, err_fd;	   /* write ends for the command's stdout/stderr; -1 inherit */
	bool tty;		   /* allocate a pty inside (master comes back) */
	struct sbx_jail_term term; /* its initial size, and echo */
	int proxy_port;		   /* > 0: listen on 127.0.0.1:port in the jail's netns */
	bool capture;		   /* and capture all TCP and DNS there (lib/jail/capture.c) */
	bool keep_ns;		   /* open ns_user_fd, ns_net_fd (published ports) */
	bool exec_fence;	   /* sbx_jail_exec_landed() will be asked */
	/* The command's filter, prepared on the host before the clone
	 * (sbx_seccomp_prepare; in audit mode a notify one, whose listener fd
	 * comes back in sbx_jail.seccomp_fd).  Required. */
	const struct sbx_seccomp_filter *seccomp;
	/* Overlays mounted "volatile" (no sync of the state disk when the jail
	 * ends); whoever keeps the layers calls sbx_jail_layers_settle(). */
	bool volatile_layers;
	/* > 0: the writable layers live on a tmpfs of this many bytes in the
	 * jail's mount namespace (an unprivileged [limits] disk, --rm): init
	 * makes their directories there, each upper with the mode and owner
	 * in layer_uppers ([0] the image root's, [1 + N] overlay entry N's;
	 * sandbox_dir is not read), and its root comes back in
	 * sbx_jail.layer_fd, for the supervisor to keep. */
	uint64_t layer_tmpfs;
	const struct sbx_jail_upper *layer_uppers;
	/* Instead: the directories of sandbox_dir (a kept sandbox's disk/)
	 * copied onto it, their contents too. */
	bool layer_tmpfs_fill;
	const struct sbx_jail_file *files;
	size_t n_files;
	/* sbx's argv strings: init rewrites them to "sbx-init" before the
	 * command starts, so /proc/1/cmdline never shows the host's command
	 * line to the jail (argv, envp and the rest must not point into
	 * them: sbx run gives init a copy of the command's).  NULL to leave
	 * them. */
	char *title;
	size_t title_len;
	/* Called once init has been released (GO sent), while it builds the
	 * root: the supervisor's own slow work (the record's fsync) overlaps
	 * the jail's set-up.  May be NULL. */
	void (*after_go)(struct sbx_jail *j, void *data);
	void *after_go_data;
	/*
	 * The layers' filesystem, made by the supervisor while init starts
	 * building the root: layer_ready (with after_go_data) is called right
	 * after GO, before after_go, and gives a mount of it (*mnt, the
	 * caller's to close) or -1 and a tmpfs's size (*tmpfs: init makes that
	 * tmpfs, as with layer_tmpfs, and its root comes back in layer_fd).
	 * Init gets it with every layer's upper and work directory opened, and
	 * waits for it only where it first needs a layer (sandbox_dir is not
	 * read).  A failure ends the start.  At most SBX_JAIL_LATE_LAYERS
	 * layers (the image root and the overlay entries).
	 */
	bool layer_later;
	int (*layer_ready)(void *data, int *mnt, uint64_t *tmpfs, struct sbx_err *err);
};

struct sbx_jail {
	pid_t init_pid; /* host pid of the jail's init */
	int pidfd;	/* of init */
	int sync_fd;	/* SEQPACKET socket to init */
	int pty_fd;	/* pty master (tty mode) or -1 */
	int listen_fd;	/* proxy listener inside the netns or -1 */
	/* with capture on: the other sockets in the netns ([::1]:PORT TCP,
	 * port 53 UDP), -1 when absent */
	int capture_fds[3];
	bool capture_on;       /* the capture rules are in place */
	char capture_why[256]; /* why not, when proxy mode has none */
	int seccomp_fd;	       /* seccomp notify listener or -1 */
	int layer_fd;	       /* root of the in-memory writable layer (layer_tmpfs) or -1 */
	/* with opts->keep_ns: init's user and network namespaces, opened
	 * before init makes itself non-dumpable (then they cannot be) */
	int ns_user_fd, ns_net_fd;
	int fence_fd;  /* opts->exec_fence: see sbx_jail_exec_landed() */
	pid_t cmd_pid; /* the command's pid inside the jail */
	/* phase timings, ms */
	double t_namespaces, t_mounts, t_seccomp, t_exec;
	double t_layer_wait; /* init waited for the layers (layer_later); not in t_mounts */
	bool exec_ok;	     /* the command reached execve */
	int exec_errno;	     /* execve failed with this (status 126/127) */
	char *exec_msg;	     /* and why, as the jail saw it (sbx_exec_diagnose) */
	bool exec_absent;    /* the file is not there in the jail (or masked) */
	bool have_status;
	int status; /* the command's wait status (have_status) */
	/* Per [filesystem] entry, as root: the host owner a read-write bind
	 * is written as (idmapped), else (uid_t)-1 (a plain bind, or shown
	 * read-only); and why one is shown read-only (root owns it), or
	 * NULL. */
	uid_t *mount_owner;
	char **mount_ro;
	size_t n_mount_ro;
	char *warnings; /* NUL-separated notes from the child (e.g. no /sys) */
	size_t warnings_len;
};

void sbx_jail_init(struct sbx_jail *j);
void sbx_jail_free(struct sbx_jail *j);

/*
 * Start the jail and run opts->argv in it; returns once the command has
 * been exec'd (0), or exec failed (0, exec_errno set, the status will
 * follow), or the set-up failed (-errno, err names what failed, the jail is
 * gone).  The opts' fds may be closed by the caller afterwards.
 */
int sbx_jail_start(struct sbx_jail *j, const struct sbx_jail_opts *opts, struct sbx_err *err);

/*
 * After sbx_jail_start() with opts->exec_fence and exec_ok: wait (at most
 * timeout_ms) until the command's execve is done, and say whether it
 * worked.  A failed execve is also reported as usual (exec_errno, set by
 * the supervision that follows); nothing is read from the sync socket.
 */
bool sbx_jail_exec_landed(struct sbx_jail *j, int timeout_ms);

/*
 * After a jail with volatile_layers has ended, make its writable layers in
 * layer_dir (upper/ work/, overlays/N/) durable and mountable again: syncfs
 * of their filesystem, then the overlay's "volatile" marker (work/work/
 * incompat/volatile) removed, as the kernel documents for a clean end.
 */
int sbx_jail_layers_settle(const char *layer_dir, const struct sbx_config *cfg, bool rootfs_layer,
			   struct sbx_err *err);

/* The upper directories of the layout below, one a call from *k = 0: "upper"
 * (rootfs_layer), then "overlays/I/upper" for each overlay entry I, in
 * buf; after each, *k - 1 is its index as in sbx_jail_opts.layer_uppers
 * (0 the image root's, 1 + I overlay entry I's).  NULL past the end. */
const char *sbx_jail_layer_upper(const struct sbx_config *cfg, bool rootfs_layer, size_t *k,
				 char buf[48]);

/*
 * The writable layers of a layout: upper/ (and its work/) when
 * rootfs_layer, overlays/N/upper (and work) for cfg's overlays, from
 * directory `from` to the same names below `to`:
 *   SKELETON  the directories only, with their modes (an empty layer);
 *   INTO      the upper directories' contents, into the empty ones there;
 *   REPLACE   the same, into a copy beside each, which then takes its
 *             place (the old one removed).
 * Every layer is tried; the first failure is returned (err names it).
 */
enum sbx_layers_copy { SBX_LAYERS_SKELETON, SBX_LAYERS_INTO, SBX_LAYERS_REPLACE };
int sbx_jail_layers_copy(int from, int to, const struct sbx_config *cfg, bool rootfs_layer,
			 enum sbx_layers_copy how, struct sbx_err *err);
/* The SKELETON of that layout made in `to` from nothing: each upper with
 * its mode and owner in uppers ([0] the image root's, [1 + N] overlay
 * entry N's, as sbx_jail_opts.layer_uppers), each work/ 0700. */
int sbx_jail_layers_make(int to, const struct sbx_config *cfg, bool rootfs_layer,
			 const struct sbx_jail_upper *uppers, struct sbx_err *err);
/* After a jail with layer_tmpfs: its layers' upper directories into
 * layer_dir (INTO, or REPLACE what a kept sandbox had). */
int sbx_jail_keep_layers(const struct sbx_jail *j, const char *layer_dir,
			 const struct sbx_config *cfg, bool rootfs_layer, bool replace,
			 struct sbx_err *err);
/* The same for a jail whose ids are an ordinary user's subordinate range
 * (ids->subid): the copy runs where the range's files can be read
 * (sbx_subid_call); the other cases as sbx_jail_keep_layers(). */
int sbx_jail_keep_layers_as(const struct sbx_jail *j, const struct sbx_jail_ids *ids,
			    const char *layer_dir, const struct sbx_config *cfg, bool rootfs_layer,
			    bool replace, struct sbx_err *err);

/* Build the command's environment: cleared (unless [env] clear = no), then
 * pass (glob patterns), set, PATH, HOME, TERM (tty), USER.  `extra` are more
 * NAME=VALUE entries (secrets, proxy variables). */
void sbx_jail_build_env(const struct sbx_config *cfg, const struct sbx_jail_ids *ids,
			bool host_root, bool tty, char *const *extra, struct sbx_strv *out);

/* Supervision: proxy I/O, forward signals, enforce the time limit. */
/* what: "signal" (forwarded: value), "signal-group" (one the caller's
 * terminal raised, forwarded to the command's process group), "timeout",
 * "kill" (time limit),
 * "stop-kill" (the stop timeout ran out), "second-signal" (value),
 * "stop-request" (sbx stop: value is its grace time in ms). */
typedef void (*sbx_jail_event_fn)(const char *what, int value, void *data);

/* A descriptor served while the jail runs (proxy events, seccomp notify):
 * fn is called when it polls readable; a negative return stops watching. */
struct sbx_jail_watch {
	int fd;
	int (*fn)(int fd, void *data);
	void *data;
};
#define SBX_JAIL_MAX_WATCH 8
#define SBX_JAIL_MAX_TEE   16

struct sbx_jail_io {
	int out_r, err_r; /* read ends of the command's stdout/stderr pipes, or -1 */
	int log_fd;	  /* output.log (capped) or -1 */
	uint64_t log_cap; /* bytes */
	/* instead of writing log_fd directly (e.g. secrets redaction); may be NULL */
	int (*log_fn)(void *ctx, const void *buf, size_t len);
	void *log_ctx;
	uint64_t time_ms;  /* wall-clock limit, SBX_UNSET for none */
	uint64_t grace_ms; /* between SIGTERM and SIGKILL */
	/* After the first SIGINT, SIGTERM, SIGHUP or SIGQUIT forwarded: the
	 * jail is killed when it has not ended within stop_ms, or at once on
	 * a second SIGINT or SIGTERM.  SBX_UNSET: never (only forwarded). */
	uint64_t stop_ms;
	struct sbx_cgroup *cg;	 /* killed on timeout, may be NULL */
	sbx_jail_event_fn event; /* "signal" (forwarded), "timeout", "kill" */
	void *event_data;
	struct sbx_jail_watch watch[SBX_JAIL_MAX_WATCH];
	size_t n_watch;
	/* Output left to the sandbox by a `sbx exec` whose command ended while
	 * its background processes still hold it: read and written to the log
	 * only, closed at its end.  A watch's fn may add some (n_tee grows). */
	int tee[SBX_JAIL_MAX_TEE];
	size_t n_tee;
	/* Set by a watch's fn (sbx stop): SIGTERM to the command now, the
	 * whole jail killed after stop_request_ms. */
	bool stop_request;
	uint64_t stop_request_ms;
	/* `sbx exec`: end when init (the entering helper) has ended and what
	 * is readable now was read, even if the output pipes are still open
	 * (background processes); out_open/err_open/pty_open in the result
	 * say which ones are. */
	bool until_exit;
};

enum sbx_jail_stop {
	SBX_STOP_NONE = 0,
	SBX_STOP_GRACE,	 /* killed: the stop timeout ran out after a signal */
	SBX_STOP_SECOND, /* killed: a second SIGINT/SIGTERM */
};

/* A socket helper in a running jail's user and network namespaces
 * (lib/jail/netsock.c): for the published ports. */
struct sbx_jail_netsock {
	pid_t pid;
	int fd;
	bool direct; /* the jail shares our network namespace (host): no helper */
};
int sbx_jail_netsock_start(struct sbx_jail *j, struct sbx_jail_netsock *ns, struct sbx_err *err);
/* A new TCP socket (AF_INET or AF_INET6) in the jail's network namespace,
 * or -errno; thread-safe. */
int sbx_jail_netsock_get(struct sbx_jail_netsock *ns, int family);
void sbx_jail_netsock_stop(struct sbx_jail_netsock *ns);

struct sbx_jail_result {
	int status;	  /* the command's wait status */
	bool have_status; /* false: init died before reporting (killed) */
	bool timed_out;
	int stop_signal;		   /* the first terminating signal forwarded, or 0 */
	enum sbx_jail_stop stopped;	   /* whether sbx then killed the jail, and why */
	bool stop_requested;		   /* by sbx stop (io->stop_request) */
	uint64_t stop_grace_ms;		   /* its grace time */
	bool out_open, err_open, pty_open; /* until_exit: still open at the end */
	uint64_t output_bytes;		   /* bytes of output seen */
	struct {
		int err;	/* the write error (not EPIPE: that is the command's SIGPIPE) */
		uint64_t bytes; /* how much did not reach it */
	} lost[2];		/* output the caller's stdout [0], stderr [1] did not take */
	bool output_truncated;	/* output.log hit the cap */
	uint64_t cpu_usec;	/* rusage of the jail's init (includes what it reaped) */
	uint64_t maxrss;	/* bytes, largest process */
	double wall_ms;
};

int sbx_jail_supervise(struct sbx_jail *j, struct sbx_jail_io *io, struct sbx_jail_result *res,
		       struct sbx_err *err);

/* The command's output the caller's stdout or stderr did not take (a full
 * disk, an I/O error): one line into msg, false if nothing was lost. */
bool sbx_jail_output_lost(const struct sbx_jail_result *r, char *msg, size_t n);

/* Kill the whole jail (init: SIGKILL tears down the pid namespace). */
void sbx_jail_kill(struct sbx_jail *j);

/*
 * The command side, shared with `sbx exec`: in the current process (already
 * inside the jail's namespaces and root), become the command: new session
 * (with tty: a process group of its own in its parent's session, the pty's
 * foreground job; see sbx_jail_pty_open), ids, rlimits, capabilities,
 * no_new_privs, seccomp, execve looked up in envp's PATH.  Failures are sent
 * over report_fd (see jail.c's protocol) and end in _exit(125/126/127);
 * never returns.
 */
struct sbx_jail_cmd {
	const struct sbx_config *cfg;
	const struct sbx_jail_ids *ids;
	const struct sbx_cgroup *cg;
	char *const *argv;
	char *const *envp;
	const char *workdir; /* NULL: try host_cwd, then / */
	const char *host_cwd;
	int out_fd, err_fd; /* -1 = keep */
	bool tty;
	int pty_slave;				  /* tty: what sbx_jail_pty_open() returned */
	const struct sbx_seccomp_filter *seccomp; /* sbx_jail_opts.seccomp */
	int report_fd;				  /* SEQPACKET, CLOEXEC */
	bool exec_fence;			  /* send SBX_MSG_FENCE (opts->exec_fence) */
	uint64_t ts_go, ts_mounted;		  /* phase timestamps (CLOCK_MONOTONIC ns) or 0 */
	uint64_t ts_layer0, ts_layer1;		  /* init's wait for the layers (layer_later) */
};
void sbx_jail_exec_command(const struct sbx_jail_cmd *c) __attribute__((noreturn));
/* In the command's parent, before it is started with tty: a new session
 * whose controlling terminal is a new pty of the jail's devpts owned by
 * uid:gid, of term's size (none if 0 rows), not echoing when term says so;
 * the master is sent over report_fd.  The slave (for sbx_jail_cmd.pty_slave,
 * closed once the command has it), or -errno. */
int sbx_jail_pty_open(uid_t uid, gid_t gid, const struct sbx_jail_term *term, int report_fd,
		      struct sbx_err *err);

/*
 * Why a command could not be started (lib/jail/exec_explain.c).  In the jail,
 * after execve of `file` failed with errnum: what the jail sees (not on
 * PATH, not executable, a missing interpreter), one line into out; true
 * when the file itself is absent (or masked).  On the host, for such a
 * file: when it exists on the host, the
 * profile entry that hides it and the option that would show it (true), or
 * nothing to add (false).  `path` is the jail's PATH, `cwd` where a
 * relative name was looked up.
 */
bool sbx_exec_diagnose(const char *file, const char *path, int errnum, char *out, size_t len);
bool sbx_exec_hint(const struct sbx_config *cfg, bool image, const char *file, const char *path,
		   const char *cwd, char *out, size_t len);

/*
 * Idmapped mounts (lib/jail/idmap.c), for a jail started by root.  The owner a
 * read-write bind of src is written as: 1 and uid, gid (an ordinary user
 * and a group that is not root's), 0 when root owns it or its group is
 * root's and its owner has no other (never mapped: shown read-only,
 * sbx_idmap_read_only_why() says which), or -errno.  A user namespace mapping uid -> to_uid and gid
 * -> to_gid (one id each), as an fd.  A detached clone of path idmapped with userns_fd (and attrs),
 * as an fd, or -errno.
 */
int sbx_idmap_bind_owner(const char *src, uid_t *uid, gid_t *gid);
char *sbx_idmap_read_only_why(uid_t owner);
int sbx_idmap_userns(uid_t uid, uid_t to_uid, gid_t gid, gid_t to_gid, struct sbx_err *err);
int sbx_idmap_tree(const char *path, int userns_fd, bool recursive, uint64_t attrs);

/* Map a jail result to the exit status contract (own, 128+N, 124, 126, 127). */
int sbx_jail_exit_code(const struct sbx_jail *j, const struct sbx_jail_result *r);

/* What a jail's pty starts with (-t), from the caller's stdin: its
 * terminal's size, or all zeros; and no echo when stdin is no terminal
 * (`printf 'a\n' | sbx run -t -- cat`: the input was not typed, and its
 * echo would reach the output beside what the command prints). */
void sbx_jail_term_of_caller(struct sbx_jail_term *term);
/* Whether the command gets a pty: tty = yes (-t); with auto, when sbx is
 * not detached and its stdin, stdout and stderr are the terminal it runs
 * in the foreground of (no redirection, not a background job). */
bool sbx_jail_tty_wanted(enum sbx_tty mode, bool detached);

#endif
