/* SPDX-License-Identifier: MIT */
/*
 * lib/jail/jail_int.h - internals shared by the jail's files (jail.c, mounts.c,
 * init.c, command.c, supervise.c).  Not a public interface.
 */
#ifndef SBX_JAIL_INT_H
#define SBX_JAIL_INT_H

#include <signal.h>
#include <sys/types.h>
#include <stdint.h>

#include "jail.h"

/* Messages on the SEQPACKET sync socket between supervisor and jail. */
enum sbx_jail_msg_type {
	SBX_MSG_GO = 1,	   /* supervisor -> init: maps written; fds: idmapped lowers */
	SBX_MSG_ERROR,	   /* jail: set-up failed (errnum, text); then _exit(125) */
	SBX_MSG_WARN,	   /* jail: a note for the run log (text) */
	SBX_MSG_PTY,	   /* command: pty master (fd) */
	SBX_MSG_LISTEN,	   /* init: proxy listener in the netns (fd) */
	SBX_MSG_SECCOMP,   /* command: seccomp notify listener (fd) */
	SBX_MSG_EXEC,	   /* command: about to execve (timestamps) */
	SBX_MSG_EXEC_FAIL, /* command: execve failed (errnum, text) */
	SBX_MSG_STATUS,	   /* init: the command's wait status (value) */
	SBX_MSG_LAYER,	   /* init: root of the in-memory writable layer (fd) */
	SBX_MSG_FENCE,	   /* command: a pipe's read end, at its end once execve is
			    * done (its write end is close-on-exec) or failed */
	SBX_MSG_DISK,	   /* supervisor -> init (opts->layer_later): the layers'
			    * filesystem, a detached clone of its mount (fd); or
			    * none: a tmpfs of ts[0] bytes instead */
	SBX_MSG_STOPPED,   /* init, sbx exec's helper: the command stopped, by
			    * signal value (Ctrl-Z: the supervisor suspends) */
};

enum {
	SBX_TS_GO = 0,	 /* init received GO */
	SBX_TS_MOUNTED,	 /* root built and pivoted */
	SBX_TS_CMD,	 /* command forked */
	SBX_TS_SECCOMP0, /* seccomp load start */
	SBX_TS_SECCOMP1, /* seccomp loaded */
	SBX_TS_EXEC,	 /* right before execve */
	SBX_TS_LAYER0,	 /* init starts waiting for SBX_MSG_DISK (0: never) */
	SBX_TS_LAYER1,	 /* and has it */
	SBX_TS_N
};

#define SBX_MSG_TEXT   900
#define SBX_MSG_MAXFDS 64

struct sbx_jail_msg {
	int type;
	int errnum;
	int value;
	uint64_t ts[SBX_TS_N];
	char text[SBX_MSG_TEXT];
};

/* 0 or -errno.  fds (may be NULL) go as SCM_RIGHTS. */
int sbx_jail_send(int sock, const struct sbx_jail_msg *m, const int *fds, size_t nfds);
/* m with fds[0..n) in slots, -1 for an empty one (GO, SBX_MSG_DISK): 0 or
 * -errno.  Sets m->value and m->text. */
int sbx_jail_send_slots(int sock, struct sbx_jail_msg *m, const int *fds, size_t n);
/* A received slots message: slots[] (SBX_MSG_MAXFDS of room) filled from
 * the nfds received fds, -1 for an empty slot; the number of slots. */
size_t sbx_jail_msg_slots(const struct sbx_jail_msg *m, const int *fds, size_t nfds, int *slots);
/* Bytes received (0 = EOF) or -errno; received fds into fds[], count in *nfds. */
ssize_t sbx_jail_recv(int sock, struct sbx_jail_msg *m, int *fds, size_t maxfds, size_t *nfds);

/* In the jail: send an error or a warning. */
void sbx_jail_report(int sock, int type, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Report errno-style failure from err and _exit(code). */
void sbx_jail_die(int sock, const struct sbx_err *err, int code) __attribute__((noreturn));

/* What init needs, filled by sbx_jail_start before clone. */
/* Capture, set up by init before GO (capture.c). */
struct sbx_jail_capture {
	bool started;		/* sbx_jail_capture_start() was called */
	bool on, v6;		/* the result */
	char why[SBX_MSG_TEXT]; /* why not on */
};

struct sbx_jail_child {
	const struct sbx_jail_opts *o;
	int sock;
	int *idmap_fds; /* received with GO: [0] image, then one per overlay mount */
	size_t n_idmap;
	uint64_t ts[SBX_TS_N];
	struct sbx_jail_capture capture;
	/* hostfs.c: where the host has a procfs or sysfs mounted (their mount
	 * points), listed by init before GO; or why they could not be read */
	struct sbx_strv host_proc, host_sys;
	int hostfs_err;
	dev_t root_dev; /* the host's root, to know a bind of it */
	ino_t root_ino;
	/* opts->layer_later: the tmpfs's size SBX_MSG_DISK gave, or 0 (a mount) */
	uint64_t layer_tmpfs;
	int pty_slave; /* opts->tty: sbx_jail_pty_open()'s, until the command has it */
};

/* hostfs.c: the host's procfs and sysfs mounts into c (init, before GO). */
void sbx_jail_hostfs_scan(struct sbx_jail_child *c);
/* hostfs.c: fd is on a procfs; on a procfs or a sysfs. */
bool sbx_jail_on_procfs(int fd);
bool sbx_jail_on_hostfs(int fd);
/* hostfs.c: the jail paths of the host's procfs and sysfs mounts strictly
 * inside src (captured as fd) once it is bound on dst appended to out; fd
 * -1 and dst "/": the host's root as the jail's, its /proc and /sys left
 * to the jail's own.  Before the staging tmpfs covers the host's /tmp.
 * 0 or -errno. */
int sbx_jail_hostfs_inside(const struct sbx_jail_child *c, const char *src, int fd, const char *dst,
			   struct sbx_strv *out);

/* mounts.c: build the new root and pivot into it (in init, after GO). */
int sbx_jail_build_root(struct sbx_jail_child *c, struct sbx_err *err);
/* mounts.c: bring lo up in the current netns. */
int sbx_jail_lo_up(struct sbx_err *err);

/* capture.c: the capture rules and routes in the current netns, redirecting
 * TCP to port and DNS to port 53 (0); -1 and why when it cannot be done.
 * *v6: IPv6 is routed too. */
int sbx_jail_capture(int port, bool *v6, char *why, size_t len);
/* capture.c: sbx_jail_capture(port) in init, the result in c->capture.
 * Before the pivot: libnftnl is loaded from the host's root. */
void sbx_jail_capture_start(struct sbx_jail_child *c, int port);

/* init.c: the jail's pid 1 (runs in the cloned child). */
void sbx_jail_init_main(struct sbx_jail_child *c) __attribute__((noreturn));

/* Signals the supervisor forwards, and init forwards on to the command. */
extern const int sbx_jail_fwd_signals[];
extern const size_t sbx_jail_n_fwd_signals;

/*
 * PR_SET_PDEATHSIG(SIGKILL) and non-dumpable again (credential changes
 * reset both), then make
 * sure the supervisor did not die before: its end of sock would be closed.
 */
int sbx_jail_rearm_pdeathsig(int sock, struct sbx_err *err);

/* openat2 wrapper (no glibc wrapper yet). */
int sbx_openat2(int dirfd, const char *path, int flags, uint64_t resolve);

/* SIGCHLD, SBX_JAIL_SIG_CTL and the signals a jail forwards to its command
 * (sbx_jail_fwd_signals): what its waiting loops take with sigwaitinfo. */
void sbx_jail_fwd_sigset(sigset_t *set);

/*
 * Forwarding a signal.  One the caller's terminal raised (Ctrl-C, Ctrl-\,
 * its hang-up: si_code SI_KERNEL) went to the terminal's whole foreground
 * job, sbx included; the command leads a session of its own in the jail,
 * so the supervisor asks for the same: SI_QUEUE with SBX_JAIL_SIG_GROUP,
 * and init (or sbx exec's helper) signals the command's process group.
 * Init, cloned in sbx's process group, gets the terminal's signal itself
 * too, before the supervisor has read its own: it passes that one on and
 * drops the supervisor's copy, so one key is one signal (a second Ctrl-C
 * means "force" to many programs); the supervisor's request alone (a
 * signal that came before init existed) is passed on.  Anything else
 * (kill, timeout(1), a CI runner) reaches the command alone, as it would
 * reach a process run without sbx.
 */
#define SBX_JAIL_SIG_GROUP 0x5b78 /* si_value of a signal for the group */
/* The supervisor: forward sig, as received (ssi_code), to pidfd's process;
 * true if it is for the command's process group.  SIGCONT is a thaw. */
bool sbx_jail_fwd_send(int pidfd, int sig, int32_t ssi_code);
/*
 * Suspension (Ctrl-Z).  The command leads a session of its own, whose
 * process group the kernel counts as orphaned: the terminal's SIGTSTP
 * would not stop it.  The supervisor takes that SIGTSTP (init and sbx
 * exec's helper, in sbx's process group, ignore their copy): if sbx is its
 * terminal's foreground job, it asks for the jail to be stopped
 * (SBX_JAIL_SIG_CTL with SBX_JAIL_CTL_FREEZE: init sends SIGSTOP to every
 * process of the jail, sbx exec's helper to its command's group), then
 * stops itself, so that the caller's shell has its prompt back and nothing
 * of the jail runs unwatched by a stopped supervisor.  The same when the
 * command stops by itself (SBX_MSG_STOPPED: a stop init did not cause).
 * The shell's SIGCONT (fg, bg) continues sbx, which asks for the jail to
 * continue (SBX_JAIL_CTL_THAW); init and the helper ignore SIGCONT itself.
 * A real-time signal: a SIGCONT or SIGTSTP the supervisor sent could merge
 * with the shell's own still pending (init gets those too), and each
 * flushes the other from the queue.
 */
#define SBX_JAIL_SIG_CTL    (SIGRTMIN + 2)
#define SBX_JAIL_CTL_FREEZE 0x5b7a
#define SBX_JAIL_CTL_THAW   0x5b7b
/* The supervisor: send SBX_JAIL_SIG_CTL (what) to pidfd's process; 0 or
 * -errno. */
int sbx_jail_fwd_ctl(int pidfd, int what);
/* init, sbx exec's helper: pass a forwarded signal on to the command (its
 * process group if the supervisor, seen as pid `from`, asked so: 0 for init,
 * outside whose pid namespace it is; pid1: init, whose freeze and SIGCONT
 * are for the whole jail).  A process of the jail that signals pid 1 gets
 * the plain forward; one that forges si_pid 0 (rt_sigqueueinfo) reaches its
 * own jail's processes, nothing beyond the jail.  Returns SIGSTOP after a
 * freeze, SIGCONT after the supervisor's SIGCONT, else 0. */
int sbx_jail_fwd_pass(const siginfo_t *si, pid_t cmd, pid_t from, bool pid1);

/*
 * The supervisor's request to init to end the jail now (its time limit,
 * --stop-timeout, a second Ctrl-C): init kills and reaps every process of
 * it and reports the command's status, as at the command's own end, so
 * that their CPU time and memory reach init's rusage.  (pid 1 killed
 * first, the kernel reaps the rest uncounted: a run busy for 2 s said
 * "cpu 6 ms".)  Blocked in init from its start; taken only from outside
 * the jail's pid namespace (si_pid 0), so a process of the jail sending
 * it does nothing.  A second kill of the same jail is SIGKILL.
 */
#define SBX_JAIL_SIG_END (SIGRTMIN + 1)

/* An EXEC or EXEC_FAIL message from the command's side into j (the
 * command's pid, or why its execve failed; the seccomp time): true if m
 * was one of them. */
bool sbx_jail_exec_result(struct sbx_jail *j, const struct sbx_jail_msg *m);

#endif
