/* SPDX-License-Identifier: MIT */
/*
 * tests/escape/cve_attack.c - the runtime CVE classes of 2019-2025 as
 * attacks on sbx's own mechanisms, from inside a jail (the cve group of
 * tests/escape/run.sh runs them; README.md there says what each one
 * follows).
 *
 *	cve_attack masks NAME [planted]
 *	    /proc's masked entries are still /dev/null or an empty directory,
 *	    its read-only ones refuse writes, and (unless "planted": the jail
 *	    replaced its own /dev/null) /dev/null is the character device 1:3.
 *	    Run in a jail whose image, or whose own command, replaced /dev/null,
 *	    /dev/console, /dev/ptmx and /dev/pts entries by symlinks to /proc
 *	    files (runc CVE-2025-31133, CVE-2025-52565).
 *	cve_attack plant DIR
 *	    A running jail replaces /dev/null, /dev/ptmx and /dev/console by
 *	    symlinks to files of DIR (created empty), for `sbx exec` to follow.
 *	cve_attack exewrite SECONDS STOPFILE
 *	    For SECONDS or until STOPFILE exists: every process the jail sees
 *	    that does not run one of the jail's own binaries (sbx exec's entering
 *	    process, sbx's helpers), open its /proc/PID/exe (O_PATH, and at
 *	    once O_WRONLY through /proc/self/fd) and write to it when that
 *	    works; held O_PATH ones are retried after the process is gone (the
 *	    ETXTBSY dodge).  Rootless, the sbx binary is owned by the jail's own
 *	    uid (runc CVE-2019-5736): the driver compares its hash.
 *	cve_attack cgroup NAME
 *	    What a jail could do to redirect sbx's cgroup writes and reads
 *	    (runc CVE-2025-52881 class): make a child cgroup and move into it,
 *	    replace /sys/fs/cgroup entries by symlinks, then leave daemons in
 *	    new sessions; the driver checks that sbx ended them all and left no
 *	    cgroup.
 *
 * Prints "contained cve/NAME" or "ESCAPED cve/NAME: ..." (see esc.h).
 */
#include "esc.h"

#include <dirent.h>
#include <signal.h>
#include <sys/sysmacros.h>
#include <time.h>

static char nbuf[256];

static const char *nm(const char *n)
{
	snprintf(nbuf, sizeof(nbuf), "cve/%s", n);
	return nbuf;
}

/* ---- masks ---- */

static const char *const masked[] = {"kcore",	   "keys",	"timer_list", "sched_debug",
				     "kallsyms",   "kpagecount", "kpageflags", "interrupts",
				     "partitions", "diskstats",	 "swaps",      "cmdline",
				     "modules",	   "iomem",	 "ioports",    "sysvipc"};
static const char *const readonly[] = {"sysrq-trigger", "sys/kernel/core_pattern",
				       "sys/kernel/hostname", "sys/vm/swappiness"};

/* A masked entry: /dev/null (1:3) or an empty directory; "" if so. */
static const char *mask_state(const char *path, char *why, size_t len)
{
	struct stat st;
	char buf[64];

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? "" : (snprintf(why, len, "%s", strerror(errno)), why);
	if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(path);
		struct dirent *de;
		int n = 0;

		while (d && (de = readdir(d)))
			n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
		if (d)
			closedir(d);
		return n ? (snprintf(why, len, "a directory with %d entries", n), why) : "";
	}
	if (!S_ISCHR(st.st_mode) || major(st.st_rdev) != 1 || minor(st.st_rdev) != 3)
		return snprintf(why, len, "not /dev/null (mode %o)", st.st_mode & S_IFMT), why;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf)) : 0;

	if (fd >= 0)
		close(fd);
	return n > 0 ? (snprintf(why, len, "%zd bytes read", n), why) : "";
}

static void masks(const char *name, int planted)
{
	char what[1024] = "", why[128], p[128];
	size_t k = 0;
	struct stat st;

	for (size_t i = 0; i < ARRAY_SIZE(masked); i++) {
		const char *w;

		snprintf(p, sizeof(p), "/proc/%s", masked[i]);
		w = mask_state(p, why, sizeof(why));
		if (*w && k < sizeof(what))
			k += (size_t)snprintf(what + k, sizeof(what) - k, "%s: %s; ", p, w);
	}
	for (size_t i = 0; i < ARRAY_SIZE(readonly); i++) {
		int fd;

		snprintf(p, sizeof(p), "/proc/%s", readonly[i]);
		fd = open(p, O_WRONLY | O_CLOEXEC);
		/* sysrq-trigger: never write to it; opening it is the escape. */
		if (fd >= 0 && k < sizeof(what))
			k += (size_t)snprintf(what + k, sizeof(what) - k, "%s opened for writing; ",
					      p);
		if (fd >= 0)
			close(fd);
	}
	if (!planted && (lstat("/dev/null", &st) < 0 || !S_ISCHR(st.st_mode) ||
			 major(st.st_rdev) != 1 || minor(st.st_rdev) != 3) &&
	    k < sizeof(what))
		k += (size_t)snprintf(what + k, sizeof(what) - k, "/dev/null is not 1:3; ");
	if (!planted && lstat("/dev/console", &st) == 0 && S_ISLNK(st.st_mode) && k < sizeof(what))
		snprintf(what + k, sizeof(what) - k, "/dev/console is the image's symlink; ");
	verdict(!what[0], nm(name), "%s",
		what[0] ? what
			: planted ? "every /proc mask and read-only entry holds (the jail replaced its own /dev links)"
				  : "every /proc mask and read-only entry holds, /dev/null is 1:3");
}

/* ---- plant ---- */

static void plant(const char *dir)
{
	static const char *const devs[] = {"null", "ptmx", "console", "tty"};
	char target[256], link[64];
	int bad = 0;

	for (size_t i = 0; i < ARRAY_SIZE(devs); i++) {
		int fd;

		snprintf(target, sizeof(target), "%s/planted-%s", dir, devs[i]);
		snprintf(link, sizeof(link), "/dev/%s", devs[i]);
		fd = open(target, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0666);
		if (fd >= 0)
			close(fd);
		(void)unlink(link);
		if (symlink(target, link) < 0)
			bad++;
	}
	printf("plant: %d of %zu /dev entries replaced by symlinks into %s\n",
	       (int)ARRAY_SIZE(devs) - bad, ARRAY_SIZE(devs), dir);
}

/* ---- exewrite ---- */

#define HELD_MAX 256

static int own_binary(const struct stat *st)
{
	static const char *const own[] = {"/bin/busybox", "/proc/self/exe", "/bin/sh"};
	struct stat o;

	for (size_t i = 0; i < ARRAY_SIZE(own); i++)
		if (stat(own[i], &o) == 0 && o.st_dev == st->st_dev && o.st_ino == st->st_ino)
			return 1;
	return 0;
}

/* O_WRONLY through the O_PATH fd; on success write a marker: 1. */
static int try_write(int pfd)
{
	static const char pwn[] = "#!/bin/sh\necho sbx-exe-overwritten\n";
	char p[64];
	int fd;

	snprintf(p, sizeof(p), "/proc/self/fd/%d", pfd);
	fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	(void)!pwrite(fd, pwn, sizeof(pwn) - 1, 0);
	close(fd);
	return 1;
}

static void exewrite(int seconds, const char *stopfile)
{
	int held[HELD_MAX], n_held = 0, opened = 0, written = 0, seen = 0;
	pid_t self = getpid();
	time_t end = time(NULL) + seconds;
	struct stat st;

	while (time(NULL) < end && access(stopfile, F_OK) != 0) {
		DIR *d = opendir("/proc");
		struct dirent *de;

		while (d && (de = readdir(d))) {
			pid_t pid = atoi(de->d_name);
			char p[64];
			int fd;

			if (pid <= 1 || pid == self)
				continue;
			snprintf(p, sizeof(p), "/proc/%d/exe", pid);
			fd = open(p, O_PATH | O_CLOEXEC);
			if (fd < 0)
				continue;
			if (fstat(fd, &st) < 0 || own_binary(&st)) {
				close(fd);
				continue;
			}
			seen++;
			opened++;
			written += try_write(fd);
			if (n_held < HELD_MAX)
				held[n_held++] = fd;
			else
				close(fd);
		}
		if (d)
			closedir(d);
		for (int i = 0; i < n_held; i++)
			written += try_write(held[i]);
		usleep(2000);
	}
	verdict(opened == 0 && written == 0, nm("exe-overwrite"),
		"%d /proc/PID/exe of processes not running the jail's binaries opened, %d written "
		"(%d seen)",
		opened, written, seen);
}

/* ---- cgroup ---- */

static void cgroup(const char *name)
{
	char what[512] = "";
	size_t k = 0;
	int mk = mkdir("/sys/fs/cgroup/sbx-escape-child", 0755);
	int fd = open("/sys/fs/cgroup/sbx-escape-child/cgroup.procs", O_WRONLY | O_CLOEXEC);

	if (mk == 0)
		k += (size_t)snprintf(what + k, sizeof(what) - k, "made a child cgroup; ");
	if (fd >= 0) {
		char pid[16];
		int n = snprintf(pid, sizeof(pid), "%d\n", getpid());

		if (write(fd, pid, (size_t)n) == n)
			k += (size_t)snprintf(what + k, sizeof(what) - k, "moved into it; ");
		close(fd);
	}
	/* Replace what sbx reads or writes in the jail's cgroup by symlinks. */
	static const char *const files[] = {"cgroup.procs", "cgroup.kill", "memory.peak",
					    "memory.events", "pids.max", "memory.max"};
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		char p[128];

		snprintf(p, sizeof(p), "/sys/fs/cgroup/%s", files[i]);
		if ((unlink(p) == 0 || errno == ENOENT) && symlink("/proc/self/status", p) == 0 &&
		    k < sizeof(what))
			k += (size_t)snprintf(what + k, sizeof(what) - k, "%s replaced; ", files[i]);
	}
	/* Daemons in sessions of their own, ignoring TERM and HUP. */
	for (int i = 0; i < 3; i++)
		if (fork() == 0) {
			setsid();
			signal(SIGTERM, SIG_IGN);
			signal(SIGHUP, SIG_IGN);
			for (int f = 0; f < 3; f++)
				close(f);
			execl("/bin/sleep", "sleep", "300", (char *)NULL);
			_exit(0);
		}
	/* The jail changing its own view is no escape: the verdict is the
	 * driver's (no process, no cgroup left; the host's cgroups as they were). */
	printf("cgroup %s: in the jail: %s\n", name, what[0] ? what : "nothing changed");
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 3 && !strcmp(argv[1], "masks"))
		masks(argv[2], argc >= 4 && !strcmp(argv[3], "planted"));
	else if (argc == 3 && !strcmp(argv[1], "plant"))
		plant(argv[2]);
	else if (argc == 4 && !strcmp(argv[1], "exewrite"))
		exewrite(atoi(argv[2]), argv[3]);
	else if (argc == 3 && !strcmp(argv[1], "cgroup"))
		cgroup(argv[2]);
	else {
		fprintf(stderr, "cve_attack: bad usage\n");
		return 2;
	}
	return 0;
}
