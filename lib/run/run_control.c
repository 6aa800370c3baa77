/* SPDX-License-Identifier: MIT */
/*
 * lib/run/run_control.c - the control socket (control.h): the supervisor's
 * side (listen, take requests while the jail runs, answer the waiters once
 * the sandbox has ended) and the clients' side.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "control.h"
#include "run_int.h"

#define CONTROL_MAGIC  0x73627863u /* "sbxc" */
#define CONTROL_MAXFDS 4

struct control_req {
	uint32_t magic;
	uint32_t op;
	uint64_t ms;
};

struct control_msg {
	uint32_t magic;
	int32_t exit_code;
	uint8_t ok, kept;
	char reason[32];
	char message[200];
};

static int sock_path(int dirfd, struct sockaddr_un *sa, socklen_t *len)
{
	int n;

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	/* through the directory's fd: the state directory's path may be long */
	n = snprintf(sa->sun_path, sizeof(sa->sun_path), "/proc/self/fd/%d/%s", dirfd,
		     SBX_CONTROL_SOCK);
	if (n < 0 || (size_t)n >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + (size_t)n + 1);
	return 0;
}

/* ---- the supervisor ---- */

int sbx_run_control_open(struct sbx_run *c, struct sbx_err *err)
{
	struct sockaddr_un sa;
	socklen_t sl;
	int fd;

	c->ctl_fd = -1;
	if (sock_path(c->sb.dirfd, &sa, &sl) < 0)
		return sbx_err_set(err, ENAMETOOLONG, "the control socket's path is too long");
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return sbx_err_set(err, errno, "cannot create the control socket");
	/* the sandbox directory is new: nothing is in the way */
	if (bind(fd, (struct sockaddr *)&sa, sl) < 0 || listen(fd, 16) < 0) {
		int e = errno;

		close(fd);
		return sbx_err_set(err, e, "cannot listen on '%s/%s'", c->sb.dir, SBX_CONTROL_SOCK);
	}
	c->ctl_fd = fd;
	return 0;
}

static void send_msg(int fd, const struct control_msg *m)
{
	(void)send(fd, m, sizeof(*m), MSG_NOSIGNAL | MSG_DONTWAIT);
}

static void refuse(int fd, const char *why)
{
	struct control_msg m = {.magic = CONTROL_MAGIC};

	snprintf(m.message, sizeof(m.message), "%s", why);
	send_msg(fd, &m);
	close(fd);
}

/* The peer is this supervisor's user, or root. */
static bool peer_ok(int fd)
{
	struct ucred uc;
	socklen_t l = sizeof(uc);

	return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &l) == 0 &&
	       (uc.uid == 0 || uc.uid == geteuid());
}

static ssize_t recv_req(int fd, struct control_req *rq, int *fds, size_t *nfds)
{
	char cbuf[CMSG_SPACE(sizeof(int) * CONTROL_MAXFDS)];
	struct iovec iov = {.iov_base = rq, .iov_len = sizeof(*rq)};
	struct msghdr mh = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
	struct pollfd q = {.fd = fd, .events = POLLIN};
	ssize_t n;

	*nfds = 0;
	/* a client sends its request right after connect */
	if (poll(&q, 1, 1000) <= 0)
		return -1;
	n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); n >= 0 && cm; cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);

		for (size_t i = 0; i < k; i++) {
			int f;

			memcpy(&f, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (*nfds < CONTROL_MAXFDS)
				fds[(*nfds)++] = f;
			else
				close(f);
		}
	}
	return n;
}

static void add_waiter(struct sbx_run *c, int fd)
{
	c->waiters = sbx_xrealloc(c->waiters, (c->n_waiters + 1) * sizeof(*c->waiters));
	c->waiters[c->n_waiters++] = fd;
}

/* Output left by an exec: read into output.log by the supervisor. */
static void adopt(struct sbx_run *c, int conn, int *fds, size_t nfds)
{
	struct control_msg m = {.magic = CONTROL_MAGIC, .ok = 1};
	size_t taken = 0;

	for (size_t i = 0; i < nfds; i++) {
		struct stat st;

		if (c->io && c->io->n_tee < SBX_JAIL_MAX_TEE && fstat(fds[i], &st) == 0 &&
		    (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))) {
			fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) | O_NONBLOCK);
			c->io->tee[c->io->n_tee++] = fds[i];
			taken++;
		} else {
			close(fds[i]);
		}
	}
	if (taken < nfds) {
		m.ok = 0;
		snprintf(m.message, sizeof(m.message),
			 "the supervisor reads at most %d outputs left by 'sbx exec'",
			 SBX_JAIL_MAX_TEE);
	}
	send_msg(conn, &m);
	close(conn);
}

static void take_one(struct sbx_run *c, int conn, bool ending)
{
	struct control_req rq;
	int fds[CONTROL_MAXFDS];
	size_t nfds = 0;
	ssize_t n;

	if (!peer_ok(conn)) {
		refuse(conn, "not this sandbox's user");
		return;
	}
	n = recv_req(conn, &rq, fds, &nfds);
	if (n != (ssize_t)sizeof(rq) || rq.magic != CONTROL_MAGIC) {
		for (size_t i = 0; i < nfds; i++)
			close(fds[i]);
		refuse(conn, "not a control request");
		return;
	}
	if (rq.op == SBX_CONTROL_OUTPUT) {
		if (ending) {
			for (size_t i = 0; i < nfds; i++)
				close(fds[i]);
			refuse(conn, "the sandbox is ending");
			return;
		}
		adopt(c, conn, fds, nfds);
		return;
	}
	for (size_t i = 0; i < nfds; i++)
		close(fds[i]);
	if (rq.op == SBX_CONTROL_STOP && !ending && c->io) {
		c->io->stop_request = true;
		c->io->stop_request_ms = rq.ms;
		c->stop_requested = true;
	} else if (rq.op != SBX_CONTROL_WAIT && rq.op != SBX_CONTROL_STOP) {
		refuse(conn, "unknown request");
		return;
	}
	add_waiter(c, conn);
}

static void accept_all(struct sbx_run *c, bool ending)
{
	for (;;) {
		int conn = accept4(c->ctl_fd, NULL, NULL, SOCK_CLOEXEC);

		if (conn < 0)
			return;
		take_one(c, conn, ending);
	}
}

int sbx_run_control_on_ready(int fd, void *data)
{
	struct sbx_run *c = data;

	(void)fd;
	accept_all(c, false);
	return 0;
}

/* What the host runs later that changed during the run (run_later.c),
 * in the one line a waiter's answer has room for; "" if nothing did. */
static void later_text(const struct sbx_record_exit *x, char *buf, size_t len)
{
	const struct sbx_strv *v = x->git_changed.n ? &x->git_changed : &x->watch_changed;
	size_t more = x->git_changed.n + x->watch_changed.n - 1;

	buf[0] = '\0';
	if (v->n)
		snprintf(buf, len, "%s during the run: %.90s%s%s",
			 v == &x->git_changed ? "git repository made or changed"
					      : "watched file changed",
			 v->v[0], more ? ", and more" : "",
			 x->git_changed.n ? ": look at it before using git there"
					  : ": look at it before its program starts");
}

void sbx_run_control_finish(struct sbx_run *c)
{
	struct control_msg m = {.magic = CONTROL_MAGIC, .ok = 1};

	if (c->ctl_fd < 0)
		return;
	accept_all(c, true);
	m.exit_code = c->exit_code;
	m.kept = c->kept;
	snprintf(m.reason, sizeof(m.reason), "%s", c->reason ? c->reason : "error");
	later_text(&c->sb.rec.exit, m.message, sizeof(m.message));
	for (size_t i = 0; i < c->n_waiters; i++) {
		send_msg(c->waiters[i], &m);
		close(c->waiters[i]);
	}
	free(c->waiters);
	c->waiters = NULL;
	c->n_waiters = 0;
	if (c->kept && c->sb.dirfd >= 0)
		(void)unlinkat(c->sb.dirfd, SBX_CONTROL_SOCK, 0);
	sbx_fd_close(&c->ctl_fd);
}

/* ---- the clients ---- */

int sbx_control_request(const struct sbx_sandbox *sb, enum sbx_control_op op, uint64_t ms,
			const int *fds, size_t nfds, struct sbx_err *err)
{
	struct control_req rq = {.magic = CONTROL_MAGIC, .op = (uint32_t)op, .ms = ms};
	struct sockaddr_un sa;
	socklen_t sl;
	int fd, e;

	if (nfds > CONTROL_MAXFDS)
		return sbx_err_set(err, EINVAL, "too many descriptors for the control socket");
	if (sock_path(sb->dirfd, &sa, &sl) < 0)
		return sbx_err_set(err, ENAMETOOLONG, "the control socket's path is too long");
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return sbx_err_set(err, errno, "cannot create a socket");
	if (connect(fd, (struct sockaddr *)&sa, sl) < 0) {
		e = errno;
		close(fd);
		return sbx_err_set(err, e, "sandbox '%s' has no supervisor to ask (%s)", sb->id,
				   e == ENOENT || e == ECONNREFUSED ? "it is not running"
								    : strerror(e));
	}
	e = sbx_send_fds(fd, &rq, sizeof(rq), fds, nfds);
	if (e < 0) {
		e = -e;
		close(fd);
		return sbx_err_set(err, e, "cannot ask sandbox '%s''s supervisor", sb->id);
	}
	return fd;
}

int sbx_control_reply(int fd, int timeout_ms, struct sbx_control_reply *r)
{
	struct pollfd q = {.fd = fd, .events = POLLIN};
	struct control_msg m;
	ssize_t n;
	int pr;

	memset(r, 0, sizeof(*r));
	do
		pr = poll(&q, 1, timeout_ms);
	while (pr < 0 && errno == EINTR);
	if (pr == 0)
		return -ETIMEDOUT;
	n = recv(fd, &m, sizeof(m), 0);
	if (n != (ssize_t)sizeof(m) || m.magic != CONTROL_MAGIC)
		return -EPIPE;
	r->ok = m.ok;
	r->exit_code = m.exit_code;
	r->kept = m.kept;
	memcpy(r->reason, m.reason, sizeof(r->reason));
	r->reason[sizeof(r->reason) - 1] = '\0';
	memcpy(r->message, m.message, sizeof(r->message));
	r->message[sizeof(r->message) - 1] = '\0';
	return 0;
}
