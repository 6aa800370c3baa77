/* SPDX-License-Identifier: MIT */
/*
 * tests/escape/res_attack.c - resource attacks from inside a jail.  Each
 * stops itself well past its limit so an unenforced limit shows up as an
 * ESCAPED line rather than a host brought down.
 *
 *	res_attack forkbomb MAX HOLD     fork until refused (or MAX), hold HOLD s
 *	res_attack memhog LIMIT_MB       allocate and touch until killed (or 4x)
 *	res_attack fill NAME PATH LIMIT_MB  write PATH until ENOSPC (or 4x)
 *	res_attack fds                   open until EMFILE
 *	res_attack spin                  burn cpu forever
 *	res_attack orphans TAG           double-forked daemons ignoring TERM/HUP,
 *	                                 plus zombies, then exit at once
 *	res_attack ipc HOSTKEY HOSTID    the host's SysV shm, then exhaust the
 *	                                 jail's shm, msg, sem and mqueue limits
 *	res_attack sysflood SECS         blocked syscalls in a tight loop (the
 *	                                 seccomp audit must stay bounded)
 *
 * Prints "contained res/NAME" or "ESCAPED res/NAME: ..." (see esc.h).
 */
#include "esc.h"

#include <mqueue.h>
#include <signal.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <time.h>

static void forkbomb(long max, int hold)
{
	long n = 0;
	int e = 0;

	while (n < max) {
		pid_t p = fork();
		if (p == 0) {
			/* Each child tries to fork again, as a real bomb does. */
			if (fork() == 0)
				pause();
			pause();
			_exit(0);
		}
		if (p < 0) {
			e = errno;
			break;
		}
		n++;
	}
	verdict(n < max, "res/fork-bomb", "fork refused after %ld children: %s", n, err_name(e));
	sleep((unsigned)hold);
	kill(0, SIGKILL);
}

static void memhog(long limit_mb)
{
	long mb = 0;

	for (; mb < 4 * limit_mb; mb++) {
		char *p = malloc(1 << 20);
		if (!p)
			break;
		memset(p, 0x5a, 1 << 20);
	}
	verdict(mb < 4 * limit_mb, "res/memory-hog", "allocated and touched %ld MiB (limit %ld)",
		mb, limit_mb);
}

static void fill(const char *name, const char *path, long limit_mb)
{
	static char buf[1 << 20];
	char full[128];
	long mb = 0, max = 4 * limit_mb + 8;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644), e = 0;

	snprintf(full, sizeof(full), "res/%s", name);
	if (fd < 0) {
		verdict(0, full, "cannot even create %s: %s (attack not run)", path,
			strerror(errno));
		return;
	}
	memset(buf, 'x', sizeof(buf));
	for (; mb < max; mb++) {
		ssize_t w = write(fd, buf, sizeof(buf));
		if (w != (ssize_t)sizeof(buf)) {
			e = w < 0 ? errno : ENOSPC;
			break;
		}
	}
	if (!e && fsync(fd) < 0)
		e = errno;
	close(fd);
	unlink(path);
	/* Allow a little slack for metadata and rounding. */
	verdict(mb <= limit_mb + limit_mb / 8 + 1, full, "wrote %ld MiB of %s (limit %ld MiB): %s",
		mb, path, limit_mb, e ? strerror(e) : "never refused");
}

static void fds(void)
{
	struct rlimit rl;
	long n = 0;
	int e = 0;

	getrlimit(RLIMIT_NOFILE, &rl);
	while (n < (1L << 21)) {
		if (open("/dev/null", O_RDONLY | O_CLOEXEC) < 0) {
			e = errno;
			break;
		}
		n++;
	}
	verdict(e == EMFILE && n < (1L << 21), "res/fd-exhaustion",
		"%ld fds opened before %s (RLIMIT_NOFILE %llu)", n, err_name(e),
		(unsigned long long)rl.rlim_cur);
}

static void orphans(const char *tag)
{
	for (int i = 0; i < 5; i++) {
		pid_t p = fork();
		if (p == 0) {
			setsid();
			if (fork() == 0) {
				signal(SIGTERM, SIG_IGN);
				signal(SIGHUP, SIG_IGN);
				signal(SIGINT, SIG_IGN);
				prctl(PR_SET_NAME, tag, 0, 0, 0);
				/* Some zombies of its own that it never reaps. */
				for (int z = 0; z < 10; z++)
					if (fork() == 0)
						_exit(0);
				for (;;)
					pause();
			}
			_exit(0);
		}
		if (p > 0)
			waitpid(p, NULL, 0);
	}
	/* And zombies of the command itself. */
	for (int z = 0; z < 20; z++)
		if (fork() == 0)
			_exit(0);
	printf("res_attack: 5 daemons named %s and 70 zombies left behind\n", tag);
}

static void ipc(key_t hostkey, int hostid)
{
	int a = shmget(hostkey, 0, 0), ea = errno;
	void *m = shmat(hostid, NULL, SHM_RDONLY);
	int eb = errno;
	verdict(a < 0 && m == (void *)-1, "res/ipc-host-shm",
		"shmget(host key): %s; shmat(host id): %s", a < 0 ? strerror(ea) : "found",
		m == (void *)-1 ? strerror(eb) : "attached");

	long shm = 0, msg = 0, sem = 0, mq = 0;
	while (shm < 40000 && shmget(IPC_PRIVATE, 1 << 20, IPC_CREAT | 0600) >= 0)
		shm++;
	while (msg < 40000 && msgget(IPC_PRIVATE, IPC_CREAT | 0600) >= 0)
		msg++;
	while (sem < 40000 && semget(IPC_PRIVATE, 1, IPC_CREAT | 0600) >= 0)
		sem++;
	for (; mq < 4096; mq++) {
		char n[32];
		struct mq_attr at = {.mq_maxmsg = 1, .mq_msgsize = 64};
		snprintf(n, sizeof(n), "/pwn%ld", mq);
		if (syscall(SYS_mq_open, n + 1, O_CREAT | O_RDWR | O_CLOEXEC, 0600, &at) < 0)
			break;
	}
	/* Whatever the jail exhausts is its own ipc namespace's; the host
	 * half of the check (ipcs unchanged) is the driver's. */
	verdict(1, "res/ipc-exhaustion", "own ipc ns: %ld shm, %ld msg, %ld sem, %ld mqueues made",
		shm, msg, sem, mq);
}

static void sysflood(int secs)
{
	time_t end = time(NULL) + secs;
	long n = 0;

	/* Several blocked syscalls, in threads of its own children too. */
	for (int c = 0; c < 3; c++)
		if (fork() == 0)
			break;
	while (time(NULL) < end) {
		for (int i = 0; i < 1000; i++, n++) {
			syscall(SYS_ptrace, 0x4206, 1, 0, 0);
			syscall(SYS_mount, "none", "/tmp", "tmpfs", 0, NULL);
			syscall(SYS_bpf, 0, NULL, 0);
		}
	}
	printf("res_attack: %ld rounds of 3 blocked syscalls\n", n);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && !strcmp(argv[1], "forkbomb"))
		forkbomb(atol(argv[2]), atoi(argv[3]));
	else if (argc == 3 && !strcmp(argv[1], "memhog"))
		memhog(atol(argv[2]));
	else if (argc == 5 && !strcmp(argv[1], "fill"))
		fill(argv[2], argv[3], atol(argv[4]));
	else if (argc == 2 && !strcmp(argv[1], "fds"))
		fds();
	else if (argc == 2 && !strcmp(argv[1], "spin"))
		for (volatile unsigned long i = 0;; i++)
			;
	else if (argc == 3 && !strcmp(argv[1], "orphans"))
		orphans(argv[2]);
	else if (argc == 3 && !strcmp(argv[1], "sysflood"))
		sysflood(atoi(argv[2]));
	else if (argc == 4 && !strcmp(argv[1], "ipc"))
		ipc((key_t)atol(argv[2]), atoi(argv[3]));
	else {
		fprintf(stderr, "res_attack: bad usage\n");
		return 2;
	}
	return 0;
}
