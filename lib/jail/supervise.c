/* SPDX-License-Identifier: MIT */
/*
 * lib/jail/supervise.c - the supervisor's loop while the command runs: tee its
 * stdout/stderr (or the pty) to the caller and to output.log (capped),
 * forward signals to init (which forwards them to the command), resize the
 * pty, enforce the wall-clock limit (SIGTERM, grace, SIGKILL of the whole
 * jail), and collect the command's wait status and init's rusage.
 */
#include "jail_int.h"
#include "fault.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <termios.h>

enum {
	S_PID,
	S_SYNC,
	S_SIG,
	S_TIMER,
	S_STOP,
	S_OUT,
	S_ERR,
	S_PTY,
	S_IN,
	S_EXTRA,
	S_TEE = S_EXTRA + SBX_JAIL_MAX_WATCH,
	S_N = S_TEE + SBX_JAIL_MAX_TEE
};

struct sup {
	struct sbx_jail *j;
	struct sbx_jail_io *io;
	struct sbx_jail_result *res;
	struct pollfd p[S_N];
	bool watch_off[SBX_JAIL_MAX_WATCH]; /* its fn failed: not watched */
	bool out_broken, err_broken;
	bool init_done;
	bool end_sent;	 /* SBX_JAIL_SIG_END sent to init */
	int timer_stage; /* 0 none, 1 SIGTERM sent, 2 the jail killed */
	int timer_fd;
	int stop_fd;	  /* the stop timeout after a forwarded terminating signal */
	uint64_t stop_ns; /* when that signal came */
	bool raw;
	bool suspended;	  /* stopped with the jail, its SIGCONT not passed on yet */
	bool in_midline;  /* the last byte of stdin sent to the pty was not '\n' */
	bool out_midline; /* the last byte of the command's stdout was not '\n' */
	struct termios saved;
	uint64_t t0;
};

static void sendsig(struct sup *s, int sig)
{
	if (s->j->pidfd >= 0 && !s->init_done)
		(void)syscall(SYS_pidfd_send_signal, s->j->pidfd, sig, NULL, 0);
}

static void tee_log(struct sup *s, const char *buf, size_t n)
{
	const struct sbx_jail_io *io = s->io;
	uint64_t room;

	s->res->output_bytes += n;
	if (io->log_fd < 0 && !io->log_fn)
		return;
	room =
	    io->log_cap > s->res->output_bytes - n ? io->log_cap - (s->res->output_bytes - n) : 0;
	if (room < n)
		s->res->output_truncated = true;
	if (room == 0)
		return;
	if (io->log_fn)
		(void)io->log_fn(io->log_ctx, buf, n < room ? n : room);
	else
		(void)sbx_write_all(io->log_fd, buf, n < room ? n : room);
}

/*
 * buf for the caller's out_fd; false once its reader is gone (EPIPE).  A
 * stream that failed otherwise (ENOSPC, EIO) takes nothing more: what did
 * not reach it is counted (res->lost), the command goes on writing (into
 * the output log), and the run says so at its end.
 */
static bool deliver(struct sup *s, int out_fd, const char *buf, size_t n, bool *broken)
{
	int i = out_fd == STDERR_FILENO;
	size_t done = 0;
	int r;

	if (*broken) {
		if (s->res->lost[i].err)
			s->res->lost[i].bytes += n;
		return true;
	}
	if (n && out_fd == STDOUT_FILENO)
		s->out_midline = buf[n - 1] != '\n';
	r = sbx_write_done(out_fd, buf, n, &done);
	if (r == 0)
		return true;
	*broken = true;
	if (r == -EPIPE)
		return false;
	s->res->lost[i].err = -r;
	s->res->lost[i].bytes += n - done;
	return true;
}

/* Copy what is readable on p[idx] to out_fd (and the log); false at EOF. */
static bool pump(struct sup *s, int idx, int out_fd, bool *broken, bool log)
{
	char buf[65536];
	ssize_t n = read(s->p[idx].fd, buf, sizeof(buf));

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n <= 0)
		return false; /* EOF, or EIO from a pty whose slave is gone */
	if (log)
		tee_log(s, buf, (size_t)n);
	if (!deliver(s, out_fd, buf, (size_t)n, broken)) {
		/* Our reader is gone (`sbx run -- yes | head -1`): so is the
		 * command's, which then gets SIGPIPE as it would without sbx in
		 * between.  dup3 keeps the fd number valid for its owner. */
		int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);

		if (nul >= 0) {
			(void)dup3(nul, s->p[idx].fd, O_CLOEXEC);
			close(nul);
		}
		return false;
	}
	return true;
}

/* Init kills and reaps the jail (counted in its rusage), once asked; a
 * second time, SIGKILL. */
static void kill_jail(struct sup *s)
{
	sendsig(s, s->end_sent ? SIGKILL : SBX_JAIL_SIG_END);
	s->end_sent = true;
	if (s->io->cg)
		(void)sbx_cgroup_kill(s->io->cg);
}

/*
 * The same signal again within this time is the same request, not a second
 * one: timeout(1) sends SIGTERM to sbx and then to its whole process group,
 * which sbx is in, so one `timeout 40 sbx run` delivers it twice.
 */
#define SBX_STOP_SAME_NS (100ULL * 1000000ULL)

/*
 * A terminating signal is forwarded; the first one starts the stop
 * timeout, a second SIGINT or SIGTERM kills the jail at once (the user
 * means it: a second Ctrl-C, or a CI runner that sends SIGTERM again
 * before it gives up).
 */
static void stop_signal(struct sup *s, int sig)
{
	struct itimerspec its = {0};

	if (s->io->stop_ms == SBX_UNSET || s->init_done || s->res->stopped)
		return;
	if (s->res->stop_signal == 0) {
		s->res->stop_signal = sig;
		s->stop_ns = sbx_now_ns();
		s->stop_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		its.it_value.tv_sec = (time_t)(s->io->stop_ms / 1000);
		its.it_value.tv_nsec = (long)(s->io->stop_ms % 1000) * 1000000L;
		if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
			its.it_value.tv_nsec = 1;
		if (s->stop_fd >= 0 && timerfd_settime(s->stop_fd, 0, &its, NULL) == 0)
			s->p[S_STOP].fd = s->stop_fd;
		return;
	}
	if (sig != SIGINT && sig != SIGTERM)
		return;
	if (sig == s->res->stop_signal && sbx_now_ns() - s->stop_ns < SBX_STOP_SAME_NS)
		return;
	s->res->stopped = SBX_STOP_SECOND;
	kill_jail(s);
	s->p[S_STOP].fd = -1;
	if (s->io->event)
		s->io->event("second-signal", sig, s->io->event_data);
}

/* sbx stop: SIGTERM to the command now, the jail killed after ms. */
static void request_stop(struct sup *s, uint64_t ms)
{
	struct itimerspec its = {0};

	if (s->init_done)
		return;
	s->res->stop_requested = true;
	s->res->stop_grace_ms = ms;
	if (s->res->stop_signal == 0) {
		s->res->stop_signal = SIGTERM;
		s->stop_ns = sbx_now_ns();
	}
	sendsig(s, SIGTERM);
	if (s->io->event)
		s->io->event("stop-request", (int)(ms > INT32_MAX ? INT32_MAX : ms),
			     s->io->event_data);
	if (s->stop_fd < 0)
		s->stop_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	its.it_value.tv_sec = (time_t)(ms / 1000);
	its.it_value.tv_nsec = (long)(ms % 1000) * 1000000L;
	if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
		its.it_value.tv_nsec = 1;
	if (s->stop_fd >= 0 && timerfd_settime(s->stop_fd, 0, &its, NULL) == 0)
		s->p[S_STOP].fd = s->stop_fd;
}

/* Output an exec left to the sandbox: to the log only; false at its end. */
static bool pump_tee(struct sup *s, int idx)
{
	char buf[65536];
	ssize_t n = read(s->p[idx].fd, buf, sizeof(buf));

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n <= 0)
		return false;
	tee_log(s, buf, (size_t)n);
	return true;
}

/* until_exit: what is readable on p[idx] now, to out_fd; true if it is
 * still open (someone else holds its other end). */
static bool drain_now(struct sup *s, int idx, int out_fd, bool *broken)
{
	int fd = s->p[idx].fd;

	if (fd < 0)
		return false;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	for (;;) {
		char buf[65536];
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return true;
		if (n <= 0)
			return false;
		tee_log(s, buf, (size_t)n);
		(void)deliver(s, out_fd, buf, (size_t)n, broken);
	}
}

static void on_stop_timer(struct sup *s)
{
	uint64_t ticks;

	if (read(s->p[S_STOP].fd, &ticks, sizeof(ticks)) < 0)
		return;
	s->p[S_STOP].fd = -1;
	if (s->init_done || s->res->stopped)
		return;
	s->res->stopped = SBX_STOP_GRACE;
	kill_jail(s);
	if (s->io->event)
		s->io->event("stop-kill", s->res->stop_signal, s->io->event_data);
}

/* -t: the caller's terminal raw (from s->saved), the pty's size its. */
static bool make_raw(struct sup *s)
{
	struct termios raw = s->saved;

	cfmakeraw(&raw);
	return tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
}

static void pass_winsize(struct sup *s)
{
	struct winsize ws;

	if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0)
		(void)ioctl(s->j->pty_fd, TIOCSWINSZ, &ws);
}

/*
 * Ctrl-Z (the terminal's SIGTSTP), or the command stopped (SBX_MSG_STOPPED,
 * by sig: by itself, or with -t by the Ctrl-Z typed for it, which the
 * jail's pty turns into a SIGTSTP for the command's group).  If sbx is its
 * terminal's foreground job, the jail is stopped (jail_int.h) and sbx
 * stops with sig, so that the caller's shell has its prompt back and says
 * "Stopped"; the shell's SIGCONT (fg, bg) continues sbx, which passes it
 * on (on_signal).
 * Anywhere else (a CI job, a pipe, -d) nobody would continue sbx, and its
 * time limit must keep running: nothing is done.  With -t the caller's
 * terminal is in its own mode while sbx is stopped.  The time limit counts
 * the time the jail runs: it waits while sbx and the jail are stopped (an
 * editor left in the background is not killed on its return to the
 * foreground); the grace period after a SIGTERM, once begun, does not.
 */
static void suspend(struct sup *s, int sig, bool key)
{
	int tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	bool fg = tty >= 0 && tcgetpgrp(tty) == getpgrp(), paused;
	struct itimerspec left = {0}, none = {0};
	struct sigaction sa;
	sigset_t one;

	if (tty >= 0)
		close(tty);
	if (!fg || s->init_done || s->j->pidfd < 0 ||
	    sbx_jail_fwd_ctl(s->j->pidfd, SBX_JAIL_CTL_FREEZE) < 0)
		return;
	if (s->raw)
		(void)tcsetattr(STDIN_FILENO, TCSADRAIN, &s->saved);
	paused = s->timer_stage == 0 && s->p[S_TIMER].fd >= 0 &&
		 timerfd_gettime(s->p[S_TIMER].fd, &left) == 0 &&
		 (left.it_value.tv_sec || left.it_value.tv_nsec) &&
		 timerfd_settime(s->p[S_TIMER].fd, 0, &none, NULL) == 0;
	s->suspended = true;
	if (s->io->event)
		s->io->event(key ? "suspend-key" : "suspend", sig, s->io->event_data);
	/* stop as the command did (bash says "Stopped" for SIGTSTP, "Stopped
	 * (signal)" for SIGSTOP); sig is blocked here, for the signalfd */
	if (sig != SIGTSTP && sig != SIGTTIN && sig != SIGTTOU)
		sig = SIGSTOP;
	if (sig != SIGSTOP && (sigaction(sig, NULL, &sa) < 0 || sa.sa_handler != SIG_DFL))
		sig = SIGSTOP;
	sigemptyset(&one);
	sigaddset(&one, sig);
	(void)raise(sig);
	sigprocmask(SIG_UNBLOCK, &one, NULL); /* stopped here until SIGCONT */
	sigprocmask(SIG_BLOCK, &one, NULL);
	if (paused)
		(void)timerfd_settime(s->p[S_TIMER].fd, 0, &left, NULL);
	if (s->raw) {
		/* in the background (bg) that stops sbx with SIGTTOU, the jail
		 * still stopped: it needs the terminal */
		(void)make_raw(s);
		pass_winsize(s);
	}
}

bool sbx_jail_output_lost(const struct sbx_jail_result *r, char *msg, size_t n)
{
	static const char *const name[2] = {"stdout", "stderr"};
	size_t len = 0;

	if (n)
		msg[0] = '\0';
	for (int i = 0; i < 2; i++) {
		char size[32];

		if (!r->lost[i].err)
			continue;
		sbx_size_text((double)r->lost[i].bytes, size, sizeof(size));
		len += (size_t)snprintf(
		    msg + len, len < n ? n - len : 0,
		    "%scannot write the command's output to %s: %s (%s of it did not reach it)",
		    len ? "; " : "", name[i], strerror(r->lost[i].err), size);
		if (len >= n)
			len = n ? n - 1 : 0;
	}
	return len > 0;
}

/*
 * The caller's stdin into the pty.  At its end (`echo hi | sbx run -t --
 * cat`) the pty is told as a terminal would be: the EOF character (^D),
 * twice when a line is pending (the first only ends the line).
 */
static bool pump_stdin(struct sup *s)
{
	char buf[65536];
	ssize_t n = read(s->p[S_IN].fd, buf, sizeof(buf));
	struct termios t;
	char eof[2];

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n > 0) {
		if (sbx_write_all(s->j->pty_fd, buf, (size_t)n) < 0)
			return false;
		s->in_midline = buf[n - 1] != '\n';
		return true;
	}
	if (tcgetattr(s->j->pty_fd, &t) == 0 && (t.c_lflag & ICANON)) {
		eof[0] = eof[1] = (char)(t.c_cc[VEOF] ? t.c_cc[VEOF] : 4);
		(void)sbx_write_all(s->j->pty_fd, eof, s->in_midline ? 2 : 1);
	}
	return false;
}

static void on_signal(struct sup *s)
{
	struct signalfd_siginfo si;

	while (read(s->p[S_SIG].fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		int sig = (int)si.ssi_signo;
		bool group;

		if (sig == SIGWINCH && s->j->pty_fd >= 0) {
			pass_winsize(s);
			continue;
		}
		if (s->res->stop_signal && (sig == SIGINT || sig == SIGTERM) &&
		    s->io->stop_ms != SBX_UNSET) {
			stop_signal(s, sig);
			continue;
		}
		if (sig == SIGTSTP && si.ssi_code == SI_KERNEL) {
			suspend(s, sig, true); /* Ctrl-Z */
			continue;
		}
		sbx_fault_pause("before-forward");
		group = s->j->pidfd >= 0 && !s->init_done &&
			sbx_jail_fwd_send(s->j->pidfd, sig, si.ssi_code);
		if (sig == SIGCONT) {
			if (s->io->event && s->suspended && !s->init_done)
				s->io->event("continue", sig, s->io->event_data);
			s->suspended = false;
			continue;
		}
		if (s->io->event)
			s->io->event(group ? "signal-group" : "signal", sig, s->io->event_data);
		if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT)
			stop_signal(s, sig);
	}
}

static void on_timer(struct sup *s)
{
	uint64_t ticks;
	struct itimerspec its = {0};

	if (read(s->p[S_TIMER].fd, &ticks, sizeof(ticks)) < 0)
		return;
	if (s->timer_stage == 0) {
		s->res->timed_out = true;
		s->timer_stage = 1;
		sendsig(s, SIGTERM);
		if (s->io->event)
			s->io->event("timeout", SIGTERM, s->io->event_data);
		its.it_value.tv_sec = (time_t)(s->io->grace_ms / 1000);
		its.it_value.tv_nsec = (long)(s->io->grace_ms % 1000) * 1000000L;
		if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
			its.it_value.tv_nsec = 1;
		timerfd_settime(s->p[S_TIMER].fd, 0, &its, NULL);
	} else if (s->timer_stage == 1) {
		s->timer_stage = 2;
		kill_jail(s);
		if (s->io->event)
			s->io->event("kill", SIGKILL, s->io->event_data);
		s->p[S_TIMER].fd = -1;
	}
}

static void on_sync(struct sup *s)
{
	struct sbx_jail_msg m;
	int fds[4];
	size_t nfds = 0;
	ssize_t n = sbx_jail_recv(s->p[S_SYNC].fd, &m, fds, SBX_ARRAY_SIZE(fds), &nfds);

	for (size_t i = 0; i < nfds; i++)
		close(fds[i]);
	if (n <= 0) {
		s->p[S_SYNC].fd = -1;
		return;
	}
	if (m.type == SBX_MSG_STATUS) {
		s->res->status = m.value;
		s->res->have_status = true;
	} else if (m.type == SBX_MSG_STOPPED) {
		suspend(s, m.value, false);
	} else if (m.type == SBX_MSG_EXEC_FAIL) {
		s->j->exec_errno = m.errnum ? m.errnum : ENOENT;
		free(s->j->exec_msg);
		s->j->exec_msg = m.text[0] ? sbx_xstrdup(m.text) : NULL;
		s->j->exec_absent = m.value != 0;
	}
}

static void on_init_exit(struct sup *s)
{
	struct rusage ru;
	int st;

	if (wait4(s->j->init_pid, &st, 0, &ru) == s->j->init_pid) {
		s->res->cpu_usec =
		    (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000ULL +
		    (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
		s->res->maxrss = (uint64_t)ru.ru_maxrss * 1024;
	}
	s->init_done = true;
	s->j->init_pid = -1;
	s->p[S_PID].fd = -1;
	/* The status message, if any, was sent before init exited. */
	while (s->p[S_SYNC].fd >= 0) {
		struct pollfd q = {.fd = s->p[S_SYNC].fd, .events = POLLIN};

		if (poll(&q, 1, 0) <= 0)
			break;
		on_sync(s);
	}
	s->p[S_TIMER].fd = -1;
	s->p[S_STOP].fd = -1;
	s->p[S_IN].fd = -1;
}

static int setup_fds(struct sup *s, sigset_t *mask, struct sbx_err *err)
{
	const struct sbx_jail_io *io = s->io;

	for (int i = 0; i < S_N; i++)
		s->p[i] = (struct pollfd){.fd = -1, .events = POLLIN};
	s->p[S_PID].fd = s->j->pidfd;
	s->p[S_SYNC].fd = s->j->sync_fd;
	s->p[S_OUT].fd = io->out_r;
	s->p[S_ERR].fd = io->err_r;
	s->p[S_PTY].fd = s->j->pty_fd;
	for (size_t i = 0; i < io->n_watch && i < SBX_JAIL_MAX_WATCH; i++)
		s->p[S_EXTRA + i].fd = io->watch[i].fd;
	sigemptyset(mask);
	for (size_t i = 0; i < sbx_jail_n_fwd_signals; i++)
		sigaddset(mask, sbx_jail_fwd_signals[i]);
	sigprocmask(SIG_BLOCK, mask, NULL);
	s->p[S_SIG].fd = signalfd(-1, mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (s->p[S_SIG].fd < 0)
		return sbx_err_set(err, errno, "cannot create a signalfd");
	if (io->time_ms != SBX_UNSET && io->time_ms > 0) {
		struct itimerspec its = {0};

		its.it_value.tv_sec = (time_t)(io->time_ms / 1000);
		its.it_value.tv_nsec = (long)(io->time_ms % 1000) * 1000000L;
		s->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		s->p[S_TIMER].fd = s->timer_fd;
		if (s->timer_fd < 0 || timerfd_settime(s->timer_fd, 0, &its, NULL) < 0)
			return sbx_err_set(err, errno, "cannot create the time-limit timer");
	}
	if (s->j->pty_fd >= 0) {
		s->p[S_IN].fd = STDIN_FILENO;
		if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &s->saved) == 0)
			s->raw = make_raw(s);
	}
	return 0;
}

static void dispatch(struct sup *s)
{

	if (s->p[S_SIG].revents & POLLIN)
		on_signal(s);
	if (s->p[S_TIMER].revents & POLLIN)
		on_timer(s);
	if (s->p[S_STOP].revents & POLLIN)
		on_stop_timer(s);
	if (s->p[S_SYNC].revents)
		on_sync(s);
	if (s->p[S_OUT].revents && !pump(s, S_OUT, STDOUT_FILENO, &s->out_broken, true))
		s->p[S_OUT].fd = -1;
	if (s->p[S_ERR].revents && !pump(s, S_ERR, STDERR_FILENO, &s->err_broken, true))
		s->p[S_ERR].fd = -1;
	if (s->p[S_PTY].revents && !pump(s, S_PTY, STDOUT_FILENO, &s->out_broken, true))
		s->p[S_PTY].fd = -1;
	if (s->p[S_IN].revents && !pump_stdin(s))
		s->p[S_IN].fd = -1;
	for (size_t i = 0; i < s->io->n_watch && i < SBX_JAIL_MAX_WATCH; i++) {
		const struct sbx_jail_watch *w = &s->io->watch[i];

		short ev = s->p[S_EXTRA + i].revents;

		if (!ev || s->p[S_EXTRA + i].fd < 0)
			continue;
		/* Hung up with nothing to read (e.g. a seccomp listener whose
		 * tasks are gone): stop watching, or poll would spin. */
		if (!(ev & POLLIN) || w->fn(w->fd, w->data) < 0) {
			s->p[S_EXTRA + i].fd = -1;
			s->watch_off[i] = true;
		}
	}
	for (size_t i = 0; i < s->io->n_tee && i < SBX_JAIL_MAX_TEE; i++) {
		if (s->p[S_TEE + i].fd < 0 || !s->p[S_TEE + i].revents)
			continue;
		if (!pump_tee(s, S_TEE + i)) {
			sbx_fd_close(&s->io->tee[i]);
			s->p[S_TEE + i].fd = -1;
		}
	}
	if (s->io->stop_request) {
		s->io->stop_request = false;
		request_stop(s, s->io->stop_request_ms);
	}
	if (s->p[S_PID].revents)
		on_init_exit(s);
}

/* The watches and tees as io has them now (a watch's fn may add some). */
static void refresh(struct sup *s)
{
	for (size_t i = 0; i < s->io->n_watch && i < SBX_JAIL_MAX_WATCH; i++)
		s->p[S_EXTRA + i].fd = s->watch_off[i] ? -1 : s->io->watch[i].fd;
	for (size_t i = 0; i < s->io->n_tee && i < SBX_JAIL_MAX_TEE; i++)
		s->p[S_TEE + i].fd = s->io->tee[i];
}

static bool tees_open(const struct sup *s)
{
	for (size_t i = 0; i < s->io->n_tee && i < SBX_JAIL_MAX_TEE; i++)
		if (s->io->tee[i] >= 0)
			return true;
	return false;
}

static void close_tees(struct sup *s)
{
	for (size_t i = 0; i < s->io->n_tee && i < SBX_JAIL_MAX_TEE; i++)
		sbx_fd_close(&s->io->tee[i]);
}

/* The jail has ended: whoever held the tees is dead, so they end at
 * once; a second with nothing read and they are closed anyway. */
#define TEE_LINGER_MS 1000

int sbx_jail_supervise(struct sbx_jail *j, struct sbx_jail_io *io, struct sbx_jail_result *res,
		       struct sbx_err *err)
{
	struct sup s = {
	    .j = j, .io = io, .res = res, .t0 = sbx_now_ns(), .timer_fd = -1, .stop_fd = -1};
	sigset_t mask;
	int r;

	memset(res, 0, sizeof(*res));
	r = setup_fds(&s, &mask, err);
	sbx_fault_point("during-run");
	while (r == 0) {
		bool pipes = s.p[S_OUT].fd >= 0 || s.p[S_ERR].fd >= 0 || s.p[S_PTY].fd >= 0;
		int n;

		if (s.init_done && io->until_exit) {
			res->out_open = drain_now(&s, S_OUT, STDOUT_FILENO, &s.out_broken);
			res->err_open = drain_now(&s, S_ERR, STDERR_FILENO, &s.err_broken);
			res->pty_open = drain_now(&s, S_PTY, STDOUT_FILENO, &s.out_broken);
			break;
		}
		if (s.init_done && !pipes && !tees_open(&s))
			break;
		refresh(&s);
		n = poll(s.p, S_N, s.init_done && !pipes ? TEE_LINGER_MS : -1);
		if (n < 0 && errno != EINTR)
			r = sbx_err_set(err, errno, "poll");
		else if (n > 0)
			dispatch(&s);
		else if (n == 0)
			close_tees(&s);
	}
	close_tees(&s);
	if (!s.init_done) {
		sbx_jail_kill(j);
		on_init_exit(&s);
	}
	if (s.raw)
		tcsetattr(STDIN_FILENO, TCSANOW, &s.saved);
	/* what the pty's command left mid-line (an echoed ^C): sbx's lines
	 * after it start on a line of their own, as after a shell's job */
	if (j->pty_fd >= 0 && s.out_midline && !s.out_broken && isatty(STDOUT_FILENO))
		(void)sbx_write_all(STDOUT_FILENO, "\r\n", 2);
	sbx_closep(&s.p[S_SIG].fd);
	sbx_closep(&s.timer_fd);
	sbx_closep(&s.stop_fd);
	res->wall_ms = sbx_ms_since(s.t0);
	return r;
}
