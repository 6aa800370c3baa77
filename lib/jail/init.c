/* SPDX-License-Identifier: MIT */
/*
 * lib/jail/init.c - the jail's pid 1.  After the supervisor's GO it builds the
 * root, sets the hostname and the network, starts the command, then reaps
 * every zombie and forwards signals to the command until it exits; then
 * it kills and reaps every other process of the jail, reports the
 * command's wait status to the supervisor, and exits.
 */
#include "jail_int.h"
#include "fault.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "proc.h"

/* Receive GO and the idmapped lowers (a bitmap in text says which slots). */
static void wait_go(struct sbx_jail_child *c)
{
	static int slots[SBX_MSG_MAXFDS];
	struct sbx_jail_msg m;
	int fds[SBX_MSG_MAXFDS];
	size_t nfds = 0;
	ssize_t n;

	n = sbx_jail_recv(c->sock, &m, fds, SBX_ARRAY_SIZE(fds), &nfds);
	if (n <= 0 || m.type != SBX_MSG_GO)
		_exit(1); /* the supervisor is gone */
	c->ts[SBX_TS_GO] = sbx_now_ns();
	c->n_idmap = sbx_jail_msg_slots(&m, fds, nfds, slots);
	c->idmap_fds = slots;
}

/* A socket of type on addr:port in the jail's netns (listening if TCP). */
static int jail_socket(int family, int type, int port, struct sbx_err *err)
{
	struct sockaddr_storage ss = {0};
	socklen_t sl;
	_cleanup_close_ int s = socket(family, type | SOCK_CLOEXEC, 0);
	int one = 1;

	if (family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sl = sizeof(*a);
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		a->sin6_addr = in6addr_loopback;
		sl = sizeof(*a);
		if (s >= 0)
			setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	}
	if (s < 0 || bind(s, (struct sockaddr *)&ss, sl) < 0 ||
	    (type == SOCK_STREAM && listen(s, 128) < 0))
		return sbx_err_set(err, errno, "cannot %s on %s:%d in the jail",
				   type == SOCK_STREAM ? "listen" : "bind",
				   family == AF_INET ? "127.0.0.1" : "[::1]", port);
	return steal_fd(&s);
}

/* fds[*n] = a new socket, or the error. */
static int add_socket(int *fds, int *n, int family, int type, int port, struct sbx_err *err)
{
	int fd = jail_socket(family, type, port, err);

	if (fd < 0)
		return fd;
	fds[(*n)++] = fd;
	return 0;
}

/*
 * The proxy's listener on 127.0.0.1:PORT, and with capture also [::1]:PORT
 * and the DNS sockets on port 53 (the supervisor tells TCP from UDP by
 * SO_TYPE).  The message's value says whether capture is on, its text why
 * not.
 */
static int proxy_listener(struct sbx_jail_child *c, bool capture, bool v6, const char *why,
			  struct sbx_err *err)
{
	struct sbx_jail_msg m = {.type = SBX_MSG_LISTEN, .value = capture};
	const int port = c->o->proxy_port;
	int fds[4], n = 0, r;

	r = add_socket(fds, &n, AF_INET, SOCK_STREAM, port, err);
	if (r == 0 && capture && v6)
		r = add_socket(fds, &n, AF_INET6, SOCK_STREAM, port, err);
	if (r == 0 && capture)
		r = add_socket(fds, &n, AF_INET, SOCK_DGRAM, 53, err);
	if (r == 0 && capture && v6)
		r = add_socket(fds, &n, AF_INET6, SOCK_DGRAM, 53, err);
	snprintf(m.text, sizeof(m.text), "%s", why);
	if (r == 0 && sbx_jail_send(c->sock, &m, fds, (size_t)n) < 0)
		r = sbx_err_set(err, errno, "cannot pass the proxy listener to sbx");
	for (int i = 0; i < n; i++)
		close(fds[i]);
	return r;
}

/* lo up (every mode but host), and in proxy mode the capture rules, while
 * the host's files are still visible (libnftnl is loaded from them), when
 * early_capture did not. */
static int net_setup(struct sbx_jail_child *c, struct sbx_err *err)
{
	const struct sbx_config *cfg = c->o->cfg;
	int r;

	/* Every mode but host has its own namespace, and its lo up: "none"
	 * means nothing outside, not even the jail itself unreachable (test
	 * servers, asyncio, multiprocessing talk to themselves). */
	if (cfg->net == SBX_NET_HOST || c->capture.started)
		return 0; /* lo is up already, and capture set up (early_capture) */
	r = sbx_jail_lo_up(err);
	if (r < 0)
		return r;
	if (cfg->net == SBX_NET_PROXY && !c->o->capture)
		snprintf(c->capture.why, sizeof(c->capture.why),
			 "turned off ([network] capture = no)");
	else if (cfg->net == SBX_NET_PROXY && c->o->proxy_port > 0)
		sbx_jail_capture_start(c, c->o->proxy_port);
	return 0;
}

/*
 * Proxy mode's capture is set up before GO: the jail's init holds every
 * capability in its namespaces from the clone on, and libnftnl and its
 * files are world-readable, so init loads them and sets up the rules while
 * the supervisor writes the id maps.  lo first (the routes need it up); if
 * that fails, net_setup says why after GO.
 */
static void early_capture(struct sbx_jail_child *c)
{
	struct sbx_err e = {0};

	c->capture = (struct sbx_jail_capture){0};
	if (c->o->cfg->net == SBX_NET_PROXY && c->o->capture && c->o->proxy_port > 0 &&
	    sbx_jail_lo_up(&e) == 0)
		sbx_jail_capture_start(c, c->o->proxy_port);
}

static int setup(struct sbx_jail_child *c, struct sbx_err *err)
{
	const struct sbx_config *cfg = c->o->cfg;
	char host[64];
	int r;

	if (unshare(CLONE_NEWCGROUP) < 0)
		return sbx_err_set(err, errno, "cannot create the cgroup namespace");
	r = net_setup(c, err);
	if (r < 0)
		return r;
	r = sbx_jail_build_root(c, err);
	if (r < 0)
		return r;
	if (cfg->hostname)
		snprintf(host, sizeof(host), "%s", cfg->hostname);
	else
		snprintf(host, sizeof(host), "sbx-%.8s", c->o->id ? c->o->id : "jail");
	/* The UTS namespace is the jail's own either way; a container's seccomp
	 * profile may still refuse sethostname (podman's and docker's do
	 * without CAP_SYS_ADMIN): the name then stays the container's. */
	if (sethostname(host, strlen(host)) < 0) {
		if (errno != EPERM || cfg->hostname)
			return sbx_err_set(err, errno, "cannot set the hostname '%s'", host);
		sbx_jail_report(c->sock, SBX_MSG_WARN, 0,
				"the hostname stays the container's: its seccomp profile refuses "
				"sethostname (the jail's UTS namespace is still its own)");
	}
	if (cfg->net == SBX_NET_PROXY && c->o->proxy_port > 0)
		return proxy_listener(c, c->capture.on, c->capture.v6, c->capture.why, err);
	return 0;
}

static void run_command(struct sbx_jail_child *c)
{
	const struct sbx_jail_opts *o = c->o;
	struct sbx_jail_cmd cmd = {
	    .cfg = o->cfg,
	    .ids = &o->ids,
	    .cg = o->cg,
	    .argv = o->argv,
	    .envp = o->envp,
	    .workdir = o->workdir,
	    .host_cwd = o->host_cwd,
	    .out_fd = o->out_fd,
	    .err_fd = o->err_fd,
	    .tty = o->tty,
	    .pty_slave = c->pty_slave,
	    .seccomp = o->seccomp,
	    .report_fd = c->sock,
	    .exec_fence = o->exec_fence,
	    .ts_go = c->ts[SBX_TS_GO],
	    .ts_mounted = c->ts[SBX_TS_MOUNTED],
	    .ts_layer0 = c->ts[SBX_TS_LAYER0],
	    .ts_layer1 = c->ts[SBX_TS_LAYER1],
	};

	sbx_jail_exec_command(&cmd);
}

static int command_main(void *arg)
{
	run_command(arg);
	return 125; /* not reached: it execs or _exits */
}

/*
 * The command is a clone sharing init's memory until its execve
 * (CLONE_VM | CLONE_VFORK, as posix_spawn does it), on a stack of its own:
 * no copy of init's page tables (init is a clone of the supervisor, whose
 * memory it still maps), and an execve with nothing to tear down.  Init
 * sleeps until the execve (or the command's _exit before it), so only one
 * of them runs in that memory at a time.  Its ids, capabilities, rlimits,
 * signal handlers, descriptors and seccomp filter are its own, as after a
 * fork; its dumpable flag is the memory's, hence init's too until the
 * execve, which it sets to 0 again before it.  No other process of the
 * jail exists yet that could trace it.  2-CPU VM: 0.33 ms less in init,
 * the command's execve ~0.5 ms shorter.  A fork where that clone fails.
 */
#define COMMAND_STACK (1u << 20) /* reserved, not committed */

static pid_t spawn_command(struct sbx_jail_child *c)
{
	char *stack = mmap(NULL, COMMAND_STACK, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	pid_t pid = -1;

	if (stack != MAP_FAILED)
		pid =
		    clone(command_main, stack + COMMAND_STACK, CLONE_VM | CLONE_VFORK | SIGCHLD, c);
	if (pid < 0) {
		pid = fork();
		if (pid == 0)
			run_command(c);
	}
	if (stack != MAP_FAILED)
		munmap(stack, COMMAND_STACK);
	return pid;
}

/*
 * The command has ended, and with it the jail: every other process of it
 * is killed and reaped here before init reports and exits.  Left to the
 * kernel (init's exit kills what is left in the pid namespace), their
 * CPU time never reached the rusage the supervisor reads of init: a busy
 * process left running in the background counted 0 in the record.
 */
static void __attribute__((noreturn)) end_jail(struct sbx_jail_child *c, int status)
{
	struct sbx_jail_msg m = {.type = SBX_MSG_STATUS, .value = status};

	(void)kill(-1, SIGKILL); /* pid 1: all but itself */
	while (waitpid(-1, NULL, __WALL) > 0 || errno == EINTR)
		;
	(void)sbx_jail_send(c->sock, &m, NULL, 0);
	_exit(0);
}

/* The supervisor ends the jail (SBX_JAIL_SIG_END): the command is killed
 * with the rest, and its status (SIGKILL, or its exit if it won the race)
 * reported. */
static void __attribute__((noreturn)) kill_jail(struct sbx_jail_child *c, pid_t cmd)
{
	int st = SIGKILL; /* a wait status: killed by SIGKILL */

	(void)kill(-1, SIGKILL);
	while (waitpid(cmd, &st, __WALL) < 0 && errno == EINTR)
		;
	end_jail(c, st);
}

/* Reap what has ended; the jail ends with the command.  A stop of the
 * command that init did not cause (frozen) is told to the supervisor,
 * which may suspend. */
static void reap(struct sbx_jail_child *c, pid_t cmd, bool frozen)
{
	int st;
	pid_t p;

	while ((p = waitpid(-1, &st, WNOHANG | WUNTRACED)) > 0) {
		if (p != cmd)
			continue;
		if (WIFSTOPPED(st)) {
			if (frozen)
				continue;
			struct sbx_jail_msg m = {.type = SBX_MSG_STOPPED, .value = WSTOPSIG(st)};

			(void)sbx_jail_send(c->sock, &m, NULL, 0);
			continue;
		}
		end_jail(c, st);
	}
}

static void __attribute__((noreturn)) supervise_command(struct sbx_jail_child *c, pid_t cmd)
{
	bool frozen = false; /* the supervisor's freeze, until its SIGCONT */
	sigset_t set;

	sbx_jail_fwd_sigset(&set);
	sigaddset(&set, SBX_JAIL_SIG_END);
	for (;;) {
		siginfo_t si;
		int sig = sigwaitinfo(&set, &si);

		if (sig == SIGCHLD || sig < 0) {
			reap(c, cmd, frozen);
		} else if (sig == SBX_JAIL_SIG_END) {
			if (si.si_pid == 0) /* the supervisor's, from outside */
				kill_jail(c, cmd);
		} else {
			int did = sbx_jail_fwd_pass(&si, cmd, 0, true);

			if (did)
				frozen = did == SIGSTOP;
		}
	}
}

/* clone() keeps every fd of the supervisor (state dir, lock, logs): close
 * all but stdio, the sync socket, the command's output pipes and the fds
 * of files whose content init copies (sbx_jail_file.fds). */
static void close_inherited(const struct sbx_jail_child *c)
{
	int keep[3 + 2 * SBX_JAIL_FILE_FDS] = {c->sock, c->o->out_fd, c->o->err_fd};
	size_t n = 3;
	unsigned int from = 3;

	for (size_t i = 0; i < c->o->n_files; i++)
		for (size_t k = 0; k < c->o->files[i].n_fds && n < SBX_ARRAY_SIZE(keep); k++)
			keep[n++] = c->o->files[i].fds[k];
	for (size_t i = 0; i < n; i++) /* sort them */
		for (size_t k = i + 1; k < n; k++)
			if (keep[k] < keep[i]) {
				int t = keep[i];

				keep[i] = keep[k];
				keep[k] = t;
			}
	for (size_t i = 0; i < n; i++) {
		if (keep[i] < (int)from)
			continue;
		if ((unsigned int)keep[i] > from)
			close_range(from, (unsigned int)keep[i] - 1, 0);
		from = (unsigned int)keep[i] + 1;
	}
	close_range(from, ~0U, 0);
}

void sbx_jail_init_main(struct sbx_jail_child *c)
{
	struct sbx_err err = {0};
	sigset_t set;
	pid_t cmd;

	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	sigemptyset(&set);
	sigaddset(&set, SBX_JAIL_SIG_END);
	sigaddset(&set, SBX_JAIL_SIG_CTL);
	sigprocmask(SIG_BLOCK, &set, NULL);
	close_inherited(c);
	early_capture(c);
	sbx_jail_hostfs_scan(c);
	wait_go(c);
	sbx_fault_pause("init-after-go");
	/* The supervisor may have died before the prctl above took effect
	 * (nothing re-checks it otherwise for an unprivileged run). */
	if (sbx_jail_rearm_pdeathsig(c->sock, &err) < 0)
		_exit(1);
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	prctl(PR_SET_NAME, "sbx-init", 0, 0, 0);
	if (setup(c, &err) < 0)
		sbx_jail_die(c->sock, &err, 125);
	c->ts[SBX_TS_MOUNTED] = sbx_now_ns();
	/* Before the command exists: its first read of /proc/1/cmdline must
	 * not find sbx's command line (host paths, -e values). */
	sbx_proc_set_title(c->o->title, c->o->title_len, "sbx-init");
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	/* -t: init leads the pty's session, the command's group its job */
	c->pty_slave = -1;
	if (c->o->tty) {
		c->pty_slave =
		    sbx_jail_pty_open(c->o->ids.uid, c->o->ids.gid, &c->o->term, c->sock, &err);
		if (c->pty_slave < 0)
			sbx_jail_die(c->sock, &err, 125);
	}
	cmd = spawn_command(c);
	if (cmd < 0) {
		sbx_err_set(&err, errno, "cannot fork the command");
		sbx_jail_die(c->sock, &err, 125);
	}
	if (c->pty_slave >= 0)
		close(c->pty_slave);
	if (c->o->out_fd >= 0)
		close(c->o->out_fd);
	if (c->o->err_fd >= 0)
		close(c->o->err_fd);
	supervise_command(c, cmd);
}
