/* SPDX-License-Identifier: MIT */
/*
 * lib/jail/netsock.c - sockets made in a running jail's network namespace,
 * for the supervisor's published ports (lib/net/publish.h).
 *
 * A socket belongs to the network namespace it was made in, whoever then
 * uses it: the supervisor connects, on the host, a socket made in the
 * jail's namespace to the jail's own loopback.  Making one there needs a
 * process in that namespace, and setns(2) into it needs capabilities over
 * the jail's user namespace, which an unprivileged supervisor has only by
 * joining that user namespace, which a threaded process cannot.  So a
 * forked helper joins the jail's user and network namespaces (opened by
 * the supervisor before init made itself non-dumpable) and answers each request with a new socket
 * over a SEQPACKET pair.  The helper stays in the host's pid and mount namespaces, out of the
 * jail's sight (it has no pid there), holds no host fd but its end of the pair, is not dumpable,
 * drops every capability once joined, and dies with the supervisor.
 */
#include "jail_int.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static pthread_mutex_t netsock_lock = PTHREAD_MUTEX_INITIALIZER;

static bool same_ns(int fd, const char *ns)
{
	char path[64];
	struct stat a, b;

	if (fstat(fd, &a) < 0)
		return false;
	snprintf(path, sizeof(path), "/proc/self/ns/%s", ns);
	return stat(path, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev;
}

static void __attribute__((noreturn))
helper(int sock, int userfd, int netfd, int flags, pid_t parent)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct none[2];
	unsigned char req;

	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (getppid() != parent)
		_exit(1);
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	prctl(PR_SET_NAME, "sbx-netsock", 0, 0, 0);
	struct sbx_jail_msg ready = {.type = SBX_MSG_LISTEN};

	/* one at a time: the network namespace's check wants the capability
	 * in the user namespace the process is in, the jail's by then */
	if (((flags & CLONE_NEWUSER) && setns(userfd, CLONE_NEWUSER) < 0) ||
	    setns(netfd, CLONE_NEWNET) < 0) {
		ready.errnum = errno;
		snprintf(ready.text, sizeof(ready.text), "setns(%s)",
			 flags & CLONE_NEWUSER ? "user, net" : "net");
		(void)sbx_jail_send(sock, &ready, NULL, 0);
		_exit(2);
	}
	/* joining a user namespace reset both */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (getppid() != parent)
		_exit(1);
	close(userfd);
	close(netfd);
	memset(none, 0, sizeof(none));
	if (syscall(SYS_capset, &h, none) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		ready.errnum = errno;
		snprintf(ready.text, sizeof(ready.text), "dropping capabilities");
		(void)sbx_jail_send(sock, &ready, NULL, 0);
		_exit(3);
	}
	(void)sbx_jail_send(sock, &ready, NULL, 0);
	while (read(sock, &req, 1) == 1) {
		struct sbx_jail_msg m = {.type = SBX_MSG_LISTEN};
		int fd = socket(req == 6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd < 0) {
			m.errnum = errno;
			(void)sbx_jail_send(sock, &m, NULL, 0);
			continue;
		}
		(void)sbx_jail_send(sock, &m, &fd, 1);
		close(fd);
	}
	_exit(0);
}

int sbx_jail_netsock_start(struct sbx_jail *j, struct sbx_jail_netsock *ns, struct sbx_err *err)
{
	int sv[2], flags = CLONE_NEWNET;
	pid_t parent = getpid();

	ns->fd = -1;
	ns->pid = -1;
	ns->direct = false;
	if (j->ns_user_fd < 0 || j->ns_net_fd < 0)
		return sbx_err_set(err, ESRCH, "no jail to publish ports of");
	/* network host: the jail's namespace is ours (and not its user
	 * namespace's to enter) */
	if (same_ns(j->ns_net_fd, "net")) {
		ns->direct = true;
		return 0;
	}
	if (!same_ns(j->ns_user_fd, "user"))
		flags |= CLONE_NEWUSER;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return sbx_err_set(err, errno, "cannot create the published ports' socket pair");
	ns->pid = fork();
	if (ns->pid < 0) {
		int e = errno;

		close(sv[0]);
		close(sv[1]);
		return sbx_err_set(err, e, "cannot fork the published ports' helper");
	}
	if (ns->pid == 0) {
		/* only the pair and the two namespaces, at 3, 4 and 5 */
		int s = fcntl(sv[1], F_DUPFD_CLOEXEC, 10);
		int u = fcntl(j->ns_user_fd, F_DUPFD_CLOEXEC, 10);
		int n = fcntl(j->ns_net_fd, F_DUPFD_CLOEXEC, 10);

		if (s < 0 || u < 0 || n < 0 || dup3(s, 3, O_CLOEXEC) < 0 ||
		    dup3(u, 4, O_CLOEXEC) < 0 || dup3(n, 5, O_CLOEXEC) < 0)
			_exit(1);
		close_range(6, ~0U, 0);
		helper(3, 4, 5, flags, parent);
	}
	close(sv[1]);
	ns->fd = sv[0];
	{
		struct sbx_jail_msg m;
		int fds[2];
		size_t nfds = 0;
		ssize_t n = sbx_jail_recv(ns->fd, &m, fds, SBX_ARRAY_SIZE(fds), &nfds);

		for (size_t i = 0; i < nfds; i++)
			close(fds[i]);
		if (n <= 0 || m.errnum) {
			int e = n <= 0 ? EPIPE : m.errnum;

			sbx_jail_netsock_stop(ns);
			return sbx_err_set(
			    err, e, "cannot make sockets in the jail's network namespace (%s)",
			    n <= 0 ? "the helper died" : m.text);
		}
	}
	return 0;
}

int sbx_jail_netsock_get(struct sbx_jail_netsock *ns, int family)
{
	unsigned char req = family == AF_INET6 ? 6 : 4;
	struct sbx_jail_msg m;
	int fds[2];
	size_t nfds = 0;
	ssize_t n;

	if (ns->direct) {
		int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);

		return fd < 0 ? -errno : fd;
	}
	if (ns->fd < 0)
		return -ESRCH;
	pthread_mutex_lock(&netsock_lock);
	if (write(ns->fd, &req, 1) != 1) {
		pthread_mutex_unlock(&netsock_lock);
		return -EPIPE;
	}
	n = sbx_jail_recv(ns->fd, &m, fds, SBX_ARRAY_SIZE(fds), &nfds);
	pthread_mutex_unlock(&netsock_lock);
	if (n <= 0)
		return -EPIPE;
	for (size_t i = 1; i < nfds; i++)
		close(fds[i]);
	if (nfds == 0)
		return -(m.errnum ? m.errnum : EIO);
	/* only a stream socket of the family asked for */
	{
		int type = 0, dom = 0;
		socklen_t tl = sizeof(type), dl = sizeof(dom);
		struct stat st;

		if (fstat(fds[0], &st) < 0 || !S_ISSOCK(st.st_mode) ||
		    getsockopt(fds[0], SOL_SOCKET, SO_TYPE, &type, &tl) < 0 ||
		    type != SOCK_STREAM ||
		    getsockopt(fds[0], SOL_SOCKET, SO_DOMAIN, &dom, &dl) < 0 || dom != family) {
			close(fds[0]);
			return -EPROTO;
		}
	}
	return fds[0];
}

void sbx_jail_netsock_stop(struct sbx_jail_netsock *ns)
{
	sbx_fd_close(&ns->fd);
	if (ns->pid > 0) {
		kill(ns->pid, SIGKILL);
		waitpid(ns->pid, NULL, 0);
	}
	ns->pid = -1;
}
