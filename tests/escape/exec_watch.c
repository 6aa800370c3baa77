/* SPDX-License-Identifier: MIT */
/*
 * tests/escape/exec_watch.c - the attacker of `sbx exec` (runc
 * CVE-2016-9962, CVE-2019-5736, CVE-2024-21626): the sandbox's command
 * itself, it watches /proc for every new process (what `sbx exec` forks
 * into the jail) and at once tries to ptrace it (ATTACH and SEIZE), to read
 * its memory, and to open its /proc/PID/exe, cwd, root, environ and every
 * /proc/PID/fd/N.  For everything it gets it prints a line
 *
 *   GOT <what> <pid> <comm> <dev>:<ino> <S_IFMT-octal>
 *
 * and for a directory also the dev:ino of its parents (up to 8 levels) and
 * whether a file named MARKER is in it or a parent (the host marks the
 * directory `sbx exec` runs from with it):  ESCAPE lines mean the host was
 * reached.  SAW lines list each new process with its comm; CONTROL lines
 * show the probes work on a process of its own; CMDLINE lines hold each new
 * process's /proc/PID/cmdline as first read.  Runs until STOPFILE
 * exists or SECONDS pass.
 *
 *   exec_watch SECONDS STOPFILE MARKER
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAXPID (1 << 22)
static unsigned char seen[MAXPID / 8];
static const char *marker;
static long n_got, n_new, n_denied;

static void comm_of(int pid, char *buf, size_t len)
{
	char p[64];
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "/proc/%d/comm", pid);
	buf[0] = '\0';
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

/* A directory we got: its parents, and the marker anywhere up the tree. */
static void walk_up(int fd, const char *what, int pid)
{
	int cur = dup(fd);

	for (int level = 0; cur >= 0 && level < 8; level++) {
		struct stat st;
		int up;

		if (faccessat(cur, marker, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
			printf("ESCAPE %s %d: marker '%s' found %d levels up\n", what, pid, marker,
			       level);
		if (fstat(cur, &st) == 0)
			printf("UP %s %d %d %lu:%lu\n", what, pid, level, (unsigned long)st.st_dev,
			       (unsigned long)st.st_ino);
		up = openat(cur, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		close(cur);
		cur = up;
	}
	if (cur >= 0)
		close(cur);
}

static void got(int fd, const char *what, int pid, const char *comm)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return;
	n_got++;
	printf("GOT %s %d %s %lu:%lu %o\n", what, pid, comm, (unsigned long)st.st_dev,
	       (unsigned long)st.st_ino, st.st_mode & S_IFMT);
	if (S_ISDIR(st.st_mode))
		walk_up(fd, what, pid);
}

static void try_open(int pid, const char *comm, const char *name, int flags)
{
	char p[96];
	int fd;

	snprintf(p, sizeof(p), "/proc/%d/%s", pid, name);
	fd = open(p, flags | O_CLOEXEC);
	if (fd < 0) {
		n_denied++;
		return;
	}
	got(fd, name, pid, comm);
	close(fd);
}

static void try_fds(int pid, const char *comm)
{
	char p[64];
	DIR *d;
	struct dirent *de;

	snprintf(p, sizeof(p), "/proc/%d/fd", pid);
	d = opendir(p);
	if (!d) {
		n_denied++;
		return;
	}
	while ((de = readdir(d))) {
		char name[300];

		if (de->d_name[0] == '.')
			continue;
		snprintf(name, sizeof(name), "fd/%s", de->d_name);
		try_open(pid, comm, name, O_PATH);
	}
	closedir(d);
}

/* Attached and stopped: what is its exe now (a host binary = escape)? */
static void traced(int pid, const char *how, const char *comm)
{
	char what[48];

	n_got++;
	/* Wait for the stop, but never hang on one tracee (1 s at most). */
	for (int i = 0; i < 1000 && waitpid(pid, NULL, __WALL | WNOHANG) == 0; i++)
		usleep(1000);
	snprintf(what, sizeof(what), "%s-exe", how);
	{
		char p[64];
		int fd;

		snprintf(p, sizeof(p), "/proc/%d/exe", pid);
		fd = open(p, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			got(fd, what, pid, comm);
			close(fd);
		} else {
			printf("GOT %s %d %s ?\n", how, pid, comm);
		}
	}
	ptrace(PTRACE_DETACH, pid, 0, 0);
}

static void try_ptrace(int pid, const char *comm)
{
	char buf[16];
	struct iovec l = {buf, sizeof(buf)}, r = {(void *)0x400000, sizeof(buf)};

	if (ptrace(PTRACE_ATTACH, pid, 0, 0) == 0) {
		traced(pid, "ptrace-attach", comm);
	} else if (ptrace(PTRACE_SEIZE, pid, 0, 0) == 0) {
		ptrace(PTRACE_INTERRUPT, pid, 0, 0);
		traced(pid, "ptrace-seize", comm);
	} else {
		n_denied++;
	}
	if (process_vm_readv(pid, &l, 1, &r, 1, 0) >= 0 || errno == EFAULT) {
		printf("GOT process_vm_readv %d %s\n", pid, comm);
		n_got++;
	}
}

/* Its command line, read first thing: before its execve, what sbx exec
 * was started with on the host would show here (CMDLINE lines). */
static void read_cmdline(int pid)
{
	char path[64], buf[512];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0' || buf[i] == '\n')
			buf[i] = ' ';
	buf[n] = '\0';
	printf("CMDLINE %d %s\n", pid, buf);
}

static void attack(int pid)
{
	char comm[32];

	comm_of(pid, comm, sizeof(comm));
	try_ptrace(pid, comm);
	/* after the ptrace try (before it, the try came later and more often
	 * after the execve, where a policy that allows ptrace lets it stop
	 * the command), before the opens */
	read_cmdline(pid);
	try_open(pid, comm, "exe", O_RDONLY);
	try_open(pid, comm, "cwd", O_RDONLY | O_DIRECTORY);
	try_open(pid, comm, "root", O_RDONLY | O_DIRECTORY);
	try_open(pid, comm, "environ", O_RDONLY);
	try_open(pid, comm, "mem", O_RDONLY);
	try_fds(pid, comm);
	/* What it was when we looked (the comm may change at execve). */
	printf("SAW %d %s\n", pid, comm);
}

static void scan(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int self = getpid();

	if (!d)
		return;
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 1 || pid >= MAXPID || pid == self)
			continue;
		if (seen[pid / 8] & (1 << (pid % 8)))
			continue;
		seen[pid / 8] |= (unsigned char)(1 << (pid % 8));
		n_new++;
		attack((int)pid);
	}
	closedir(d);
}

/* The probes work: on a child of our own, ptrace and /proc succeed (ptrace
 * only where the seccomp policy allows it). */
static void control(void)
{
	pid_t c = fork();
	char comm[32] = "control";
	long before = n_got;
	bool traced_ok;

	if (c == 0) {
		pause();
		_exit(0);
	}
	usleep(10000);
	traced_ok = ptrace(PTRACE_ATTACH, c, 0, 0) == 0;
	if (traced_ok) {
		waitpid(c, NULL, __WALL);
		ptrace(PTRACE_DETACH, c, 0, 0);
	}
	try_open(c, comm, "exe", O_RDONLY);
	try_open(c, comm, "cwd", O_RDONLY | O_DIRECTORY);
	printf("CONTROL ptrace=%s opens=%ld\n", traced_ok ? "yes" : "no", n_got - before);
	n_got = before;
	kill(c, SIGKILL);
	waitpid(c, NULL, 0);
}

int main(int argc, char **argv)
{
	time_t end;

	if (argc != 4) {
		fprintf(stderr, "usage: exec_watch SECONDS STOPFILE MARKER\n");
		return 2;
	}
	marker = argv[3];
	setvbuf(stdout, NULL, _IOLBF, 0);
	control();
	/* Everything that exists now is the jail's own. */
	scan();
	printf("READY\n");
	end = time(NULL) + atoi(argv[1]);
	while (time(NULL) < end && access(argv[2], F_OK) != 0)
		scan();
	printf("DONE new=%ld got=%ld denied=%ld\n", n_new, n_got, n_denied);
	return 0;
}
