/* SPDX-License-Identifier: MIT */
/*
 * tests/escape/proc_attack.c - process attacks from inside a jail.
 *
 *	proc_attack trace            ptrace, process_vm_readv/writev, /proc/PID/mem,
 *	                             pidfd_getfd, setns of pid 1 and of every other
 *	                             visible process (sbx init, helpers)
 *	proc_attack hostpid PID...   signal / pidfd_open host pids (ESRCH here)
 *	proc_attack killall          kill(-1, SIGKILL) (the driver checks the host)
 *
 * Prints "contained proc/NAME" or "ESCAPED proc/NAME: ..." (see esc.h).
 */
#include "esc.h"

#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>

static pid_t ppid_of(pid_t p)
{
	char path[64], buf[4096], *s;

	snprintf(path, sizeof(path), "/proc/%d/status", p);
	if (slurp(path, buf, sizeof(buf)) <= 0 || !(s = strstr(buf, "PPid:")))
		return 0;
	return atoi(s + 5);
}

/* Is p the attacker's own: itself or one of its ancestors below pid 1? */
static int own(pid_t p)
{
	for (pid_t a = getpid(); a > 1; a = ppid_of(a))
		if (a == p)
			return 1;
	return 0;
}

/* Visible pids that are not the attacker's own: sbx's init, helpers. */
static int others(pid_t *pids, int max)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int n = 0;

	while (d && (de = readdir(d)) && n < max) {
		pid_t p = atoi(de->d_name);
		if (p > 0 && !own(p))
			pids[n++] = p;
	}
	if (d)
		closedir(d);
	return n;
}

static void trace(void)
{
	pid_t pids[256];
	int n = others(pids, 256);
	char what[1024];
	int k;

	/* ptrace: attach, seize, and through a forked child's TRACEME. */
	k = 0;
	what[0] = 0;
	for (int i = 0; i < n; i++) {
		if (ptrace(PTRACE_ATTACH, pids[i], 0, 0) == 0) {
			k += snprintf(what + k, sizeof(what) - k, "attached to %d; ", pids[i]);
			ptrace(PTRACE_DETACH, pids[i], 0, 0);
		}
		if (ptrace(PTRACE_SEIZE, pids[i], 0, 0) == 0) {
			k += snprintf(what + k, sizeof(what) - k, "seized %d; ", pids[i]);
			ptrace(PTRACE_DETACH, pids[i], 0, 0);
		}
	}
	verdict(k == 0, "proc/ptrace-pid1-and-helpers", "%s%d processes tried", what, n);

	k = 0;
	what[0] = 0;
	for (int i = 0; i < n; i++) {
		char buf[64];
		struct iovec l = {buf, sizeof(buf)}, r = {(void *)0x400000, sizeof(buf)};
		/* Any address: EFAULT/EIO would mean the access check passed. */
		errno = 0;
		ssize_t got = process_vm_readv(pids[i], &l, 1, &r, 1, 0);
		if (got >= 0 || (errno != EPERM && errno != ESRCH && errno != ENOSYS))
			k += snprintf(what + k, sizeof(what) - k, "readv %d: %s; ", pids[i],
				      got >= 0 ? "read" : strerror(errno));
		errno = 0;
		got = process_vm_writev(pids[i], &l, 1, &r, 1, 0);
		if (got >= 0 || (errno != EPERM && errno != ESRCH && errno != ENOSYS))
			k += snprintf(what + k, sizeof(what) - k, "writev %d: %s; ", pids[i],
				      got >= 0 ? "wrote" : strerror(errno));
	}
	verdict(k == 0, "proc/process-vm-rw-pid1-and-helpers", "%s%d processes tried", what, n);

	k = 0;
	what[0] = 0;
	for (int i = 0; i < n; i++) {
		char p[64], buf[16];
		snprintf(p, sizeof(p), "/proc/%d/mem", pids[i]);
		int fd = open(p, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			fd = open(p, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			k += snprintf(what + k, sizeof(what) - k, "opened %s; ", p);
			(void)!pread(fd, buf, sizeof(buf), 0x400000);
			close(fd);
		}
	}
	verdict(k == 0, "proc/proc-pid-mem", "%s%d processes tried", what, n);

	k = 0;
	what[0] = 0;
	for (int i = 0; i < n; i++) {
		int pfd = (int)syscall(SYS_pidfd_open, pids[i], 0);
		if (pfd < 0)
			continue;
		for (int fd = 0; fd < 64; fd++) {
			int got = (int)syscall(SYS_pidfd_getfd, pfd, fd, 0);
			if (got >= 0) {
				char l[80], t[256] = "";
				snprintf(l, sizeof(l), "/proc/self/fd/%d", got);
				(void)!readlink(l, t, sizeof(t) - 1);
				k += snprintf(what + k, sizeof(what) - k,
					      "stole fd %d of %d (%s); ", fd, pids[i], t);
				close(got);
			}
		}
		close(pfd);
	}
	verdict(k == 0, "proc/pidfd-getfd", "%s%d processes tried", what, n);

	k = 0;
	what[0] = 0;
	const char *ns[] = {"mnt", "pid", "user", "net", "ipc", "uts", "cgroup"};
	for (int i = 0; i < n; i++)
		for (size_t j = 0; j < ARRAY_SIZE(ns); j++) {
			char p[64];
			snprintf(p, sizeof(p), "/proc/%d/ns/%s", pids[i], ns[j]);
			int fd = open(p, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			if (setns(fd, 0) == 0)
				k += snprintf(what + k, sizeof(what) - k, "setns %s; ", p);
			close(fd);
		}
	verdict(k == 0, "proc/setns-pid1-and-helpers", "%s%d processes tried", what, n);

	/* CVE-2019-5736: the binary behind sbx's own processes. */
	k = 0;
	what[0] = 0;
	for (int i = 0; i < n; i++) {
		char p[64];
		snprintf(p, sizeof(p), "/proc/%d/exe", pids[i]);
		int fd = open(p, O_WRONLY | O_CLOEXEC);
		if (fd < 0 && errno == ETXTBSY)
			k += snprintf(what + k, sizeof(what) - k, "%s reachable (ETXTBSY); ", p);
		if (fd >= 0) {
			k += snprintf(what + k, sizeof(what) - k, "opened %s for writing; ", p);
			close(fd);
		}
		fd = open(p, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			k += snprintf(what + k, sizeof(what) - k, "opened %s; ", p);
			close(fd);
		}
	}
	verdict(k == 0, "proc/pid-exe", "%s%d processes tried", what, n);

	/* Only stdio may be inherited from sbx. */
	k = 0;
	what[0] = 0;
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	while (d && (de = readdir(d))) {
		int fd = atoi(de->d_name);
		if (de->d_name[0] == '.' || fd <= 2 || fd == dirfd(d))
			continue;
		char l[64], t[256] = "";
		snprintf(l, sizeof(l), "/proc/self/fd/%d", fd);
		(void)!readlink(l, t, sizeof(t) - 1);
		k += snprintf(what + k, sizeof(what) - k, "fd %d -> %s; ", fd, t);
	}
	if (d)
		closedir(d);
	verdict(k == 0, "proc/inherited-fds", "%s", k ? what : "only stdio");
}

static void hostpid(int n, char **pids)
{
	char what[512] = "";
	int k = 0;

	for (int i = 0; i < n; i++) {
		pid_t p = atoi(pids[i]);
		/* Signal 0 first: a success here means the pid is visible. */
		if (kill(p, 0) == 0) {
			char c[64], b[128] = "";
			snprintf(c, sizeof(c), "/proc/%d/cmdline", p);
			slurp(c, b, sizeof(b));
			/* Visible only as one of our own jail's processes is fine. */
			if (strstr(b, "sbxsentinel"))
				k += snprintf(what + k, sizeof(what) - k, "host pid %d visible; ",
					      p);
			if (strstr(b, "sbxsentinel") && kill(p, SIGKILL) == 0)
				k += snprintf(what + k, sizeof(what) - k, "killed %d; ", p);
		}
		int pfd = (int)syscall(SYS_pidfd_open, p, 0);
		if (pfd >= 0) {
			char c[64], b[128] = "";
			snprintf(c, sizeof(c), "/proc/%d/cmdline", p);
			slurp(c, b, sizeof(b));
			if (strstr(b, "sbxsentinel"))
				k += snprintf(what + k, sizeof(what) - k, "pidfd of %d; ", p);
			close(pfd);
		}
	}
	/* Nothing visible looks like the host sentinel. */
	DIR *d = opendir("/proc");
	struct dirent *de;
	while (d && (de = readdir(d))) {
		char c[300], b[256] = "";
		if (atoi(de->d_name) <= 0)
			continue;
		snprintf(c, sizeof(c), "/proc/%s/cmdline", de->d_name);
		if (slurp(c, b, sizeof(b)) > 0 && strstr(b, "sbxsentinel"))
			k += snprintf(what + k, sizeof(what) - k, "sentinel at /proc/%s; ",
				      de->d_name);
	}
	if (d)
		closedir(d);
	verdict(k == 0, "proc/signal-host-pids", "%s",
		k ? what : "host pids not reachable (ESRCH)");
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 2 && !strcmp(argv[1], "trace"))
		trace();
	else if (argc >= 3 && !strcmp(argv[1], "hostpid"))
		hostpid(argc - 2, argv + 2);
	else if (argc >= 2 && !strcmp(argv[1], "killall")) {
		signal(SIGTERM, SIG_IGN);
		int r = kill(-1, SIGKILL);
		kill(-1, SIGTERM);
		/* The verdict is the host's: its sentinel must still be alive. */
		printf("proc_attack: kill(-1, SIGKILL) returned %d (%s)\n", r,
		       err_name(r ? errno : 0));
	} else {
		fprintf(stderr, "proc_attack: bad usage\n");
		return 2;
	}
	return 0;
}
