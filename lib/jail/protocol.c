/* SPDX-License-Identifier: MIT */
/*
 * lib/jail/protocol.c - the supervisor-init sync protocol (messages with fds over a
 * SOCK_SEQPACKET pair, jail_int.h), and what both sides share: the
 * forwarded signals, the caller's terminal size, openat2.
 */
#include "jail_int.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <linux/openat2.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

const int sbx_jail_fwd_signals[] = {SIGINT,  SIGTERM,  SIGHUP,	SIGQUIT, SIGUSR1,
				    SIGUSR2, SIGWINCH, SIGTSTP, SIGCONT};
const size_t sbx_jail_n_fwd_signals = SBX_ARRAY_SIZE(sbx_jail_fwd_signals);

void sbx_jail_fwd_sigset(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGCHLD);
	sigaddset(set, SBX_JAIL_SIG_CTL);
	for (size_t i = 0; i < sbx_jail_n_fwd_signals; i++)
		sigaddset(set, sbx_jail_fwd_signals[i]);
}

static bool terminal_sig(int sig)
{
	return sig == SIGINT || sig == SIGQUIT || sig == SIGHUP;
}

/* sig with SI_QUEUE and a marker: 0, or -errno. */
static int send_marked(int pidfd, int sig, int marker)
{
	siginfo_t si = {0};

	si.si_signo = sig;
	si.si_code = SI_QUEUE;
	si.si_pid = getpid();
	si.si_uid = getuid();
	si.si_value.sival_int = marker;
	return syscall(SYS_pidfd_send_signal, pidfd, sig, &si, 0) == 0 ? 0 : -errno;
}

bool sbx_jail_fwd_send(int pidfd, int sig, int32_t ssi_code)
{
	if (sig == SIGCONT)
		return sbx_jail_fwd_ctl(pidfd, SBX_JAIL_CTL_THAW) == 0;
	if (ssi_code == SI_KERNEL && terminal_sig(sig) &&
	    send_marked(pidfd, sig, SBX_JAIL_SIG_GROUP) == 0)
		return true;
	(void)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
	return false;
}

int sbx_jail_fwd_ctl(int pidfd, int what)
{
	return send_marked(pidfd, SBX_JAIL_SIG_CTL, what);
}

int sbx_jail_fwd_pass(const siginfo_t *si, pid_t cmd, pid_t from, bool pid1)
{
	/* terminal signals init had itself, whose copy from the supervisor is
	 * still to come (bounded: a copy the kernel merged never comes) */
	static unsigned char owed[NSIG];
	const int sig = si->si_signo;
	const bool ok = sig > 0 && sig < NSIG;
	const bool marked = si->si_code == SI_QUEUE && si->si_pid == from;

	if (sig == SBX_JAIL_SIG_CTL) {
		/* Only the supervisor's: stop or continue the whole jail from
		 * init, the command's group from sbx exec's helper. */
		const int to = si->si_value.sival_int == SBX_JAIL_CTL_FREEZE ? SIGSTOP : SIGCONT;

		if (!marked)
			return 0;
		if (kill(pid1 ? -1 : -cmd, to) < 0)
			(void)kill(cmd, to);
		return to;
	}
	/* The terminal's Ctrl-Z: the supervisor suspends.  A SIGCONT: the
	 * caller's shell continues sbx's whole process group, this process
	 * with it; sbx passes it on (SBX_JAIL_CTL_THAW), once. */
	if ((sig == SIGTSTP && si->si_code == SI_KERNEL) || sig == SIGCONT)
		return 0;
	if (si->si_code == SI_KERNEL && terminal_sig(sig)) {
		if (ok && owed[sig] < 8)
			owed[sig]++;
	} else if (marked && si->si_value.sival_int == SBX_JAIL_SIG_GROUP) {
		if (ok && owed[sig] > 0) {
			owed[sig]--;
			return 0; /* that key again, not another one */
		}
	} else {
		(void)kill(cmd, sig);
		return 0;
	}
	/* no group yet: the command before its setsid() (-t: setpgid()) */
	if (kill(-cmd, sig) < 0)
		(void)kill(cmd, sig);
	return 0;
}

void sbx_jail_term_of_caller(struct sbx_jail_term *term)
{
	if (ioctl(STDIN_FILENO, TIOCGWINSZ, &term->ws) < 0)
		memset(&term->ws, 0, sizeof(term->ws));
	term->no_echo = !isatty(STDIN_FILENO);
}

bool sbx_jail_tty_wanted(enum sbx_tty mode, bool detached)
{
	pid_t fg;

	if (mode != SBX_TTY_AUTO)
		return mode == SBX_TTY_YES;
	if (detached || !isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO) || !isatty(STDERR_FILENO))
		return false;
	/* a background job that set the terminal raw would be stopped (SIGTTOU) */
	fg = tcgetpgrp(STDIN_FILENO);
	return fg > 0 && fg == getpgrp();
}

int sbx_openat2(int dirfd, const char *path, int flags, uint64_t resolve)
{
	struct open_how how = {.flags = (uint64_t)flags | O_CLOEXEC, .resolve = resolve};

	return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

/* ---- the sync protocol ---- */

int sbx_jail_send(int sock, const struct sbx_jail_msg *m, const int *fds, size_t nfds)
{
	if (nfds > SBX_MSG_MAXFDS)
		return -E2BIG;
	return sbx_send_fds(sock, m, sizeof(*m), fds, nfds);
}

ssize_t sbx_jail_recv(int sock, struct sbx_jail_msg *m, int *fds, size_t maxfds, size_t *nfds)
{
	char cbuf[CMSG_SPACE(sizeof(int) * SBX_MSG_MAXFDS)];
	struct iovec iov = {.iov_base = m, .iov_len = sizeof(*m)};
	struct msghdr mh = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
	ssize_t n;

	if (nfds)
		*nfds = 0;
	memset(m, 0, sizeof(*m));
	/* A peer that closed with messages of ours unread (init dying on an
	 * error while SBX_MSG_DISK waits for it) makes the next read fail once
	 * with ECONNRESET, before what it sent last: read on, or its error
	 * report is lost ("the jail's init died during set-up"). */
	for (int reset = 0;;) {
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
		if (n >= 0 || (errno != EINTR && (errno != ECONNRESET || reset++)))
			break;
	}
	if (n < 0)
		return -errno;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		size_t k;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (fds && nfds && *nfds < maxfds)
				fds[(*nfds)++] = fd;
			else
				close(fd);
		}
	}
	m->text[SBX_MSG_TEXT - 1] = '\0';
	return n;
}

void sbx_jail_report(int sock, int type, int errnum, const char *fmt, ...)
{
	struct sbx_jail_msg m;
	va_list ap;

	memset(&m, 0, sizeof(m));
	m.type = type;
	m.errnum = errnum;
	va_start(ap, fmt);
	vsnprintf(m.text, sizeof(m.text), fmt, ap);
	va_end(ap);
	(void)sbx_jail_send(sock, &m, NULL, 0);
}

void sbx_jail_die(int sock, const struct sbx_err *err, int code)
{
	sbx_jail_report(sock, SBX_MSG_ERROR, err->errnum, "%s", err->msg);
	_exit(code);
}

int sbx_jail_rearm_pdeathsig(int sock, struct sbx_err *err)
{
	struct pollfd p = {.fd = sock, .events = POLLIN};

	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		return sbx_err_set(err, errno, "cannot set the parent-death signal");
	/* The id change also reset dumpable to fs.suid_dumpable. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return sbx_err_set(err, errno, "cannot make init non-dumpable");
	/* While init sets up the supervisor sends at most SBX_MSG_DISK, which
	 * waits to be read: hung up, or readable with nothing to read, is the
	 * supervisor gone. */
	if (poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP))) {
		char b;

		if ((p.revents & POLLHUP) || recv(sock, &b, 1, MSG_PEEK | MSG_DONTWAIT) <= 0)
			_exit(1);
	}
	return 0;
}

/* SCM_RIGHTS cannot carry -1: the valid fds, and in text a bitmap of which
 * slots they fill. */
int sbx_jail_send_slots(int sock, struct sbx_jail_msg *m, const int *fds, size_t n)
{
	int valid[SBX_MSG_MAXFDS];
	size_t nv = 0;

	for (size_t i = 0; i < n && i < SBX_MSG_MAXFDS; i++) {
		if (fds[i] >= 0) {
			valid[nv++] = fds[i];
			if (i < sizeof(m->text))
				m->text[i] = 1;
		}
	}
	m->value = (int)n;
	return sbx_jail_send(sock, m, valid, nv);
}

size_t sbx_jail_msg_slots(const struct sbx_jail_msg *m, const int *fds, size_t nfds, int *slots)
{
	size_t n = m->value > 0 && m->value <= SBX_MSG_MAXFDS ? (size_t)m->value : 0, k = 0;

	for (size_t i = 0; i < n; i++)
		slots[i] = (i < sizeof(m->text) && m->text[i] && k < nfds) ? fds[k++] : -1;
	while (k < nfds) /* in no slot: not ours to keep */
		close(fds[k++]);
	return n;
}
