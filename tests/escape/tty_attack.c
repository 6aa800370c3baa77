/* SPDX-License-Identifier: MIT */
/*
 * tests/escape/tty_attack.c - terminal attacks from inside a jail, run by
 * the driver with the caller's terminal on stdin/stdout (a pty).
 *
 *	tty_attack tiocsti TEXT      push TEXT into every terminal fd it has
 *	tty_attack tioclinux         TIOCLINUX paste/selection/console subcodes
 *	tty_attack ctty DEV          steal the controlling terminal: setsid +
 *	                             TIOCSCTTY on inherited fds, open /dev/tty,
 *	                             open every /dev/pts/N; DEV = the caller's
 *	                             tty as MAJOR:MINOR:FSDEV (st_rdev, and
 *	                             st_dev: pty numbers repeat in every devpts)
 *
 * Prints "contained tty/NAME" or "ESCAPED tty/NAME: ..." (see esc.h).
 */
#include "esc.h"

#include <sys/ioctl.h>
#include <dirent.h>
#include <sys/sysmacros.h>
#include <termios.h>

static unsigned cmaj, cmin;
static unsigned long long cdev;

/* Is this open file the caller's terminal (same devpts instance too)? */
static int is_caller_tty(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == cmaj &&
	       minor(st.st_rdev) == cmin && (unsigned long long)st.st_dev == cdev;
}

static void parse_dev(const char *dev)
{
	sscanf(dev, "%u:%u:%llu", &cmaj, &cmin, &cdev);
}

static void tiocsti(const char *text)
{
	int fds[4] = {0, 1, 2, open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)};
	char what[256] = "";
	int k = 0;

	for (int i = 0; i < 4; i++) {
		if (fds[i] < 0 || !isatty(fds[i]))
			continue;
		int pushed = 0;
		for (const char *c = text; *c; c++)
			if (ioctl(fds[i], TIOCSTI, c) == 0)
				pushed++;
		if (pushed)
			k += snprintf(what + k, sizeof(what) - k, "fd %d took %d chars; ", i,
				      pushed);
	}
	verdict(k == 0, "tty/tiocsti", "%s", k ? what : "TIOCSTI refused on every terminal fd");
}

static void tioclinux(void)
{
	char what[256] = "";
	int k = 0;

	for (int fd = 0; fd < 3; fd++) {
		char sub[] = {3, 6, 7, 11, 12, 2};
		for (size_t i = 0; i < sizeof(sub); i++) {
			char arg[8] = {sub[i]};
			if (ioctl(fd, TIOCLINUX, arg) == 0)
				k += snprintf(what + k, sizeof(what) - k, "fd %d subcode %d; ", fd,
					      sub[i]);
		}
	}
	verdict(k == 0, "tty/tioclinux", "%s", k ? what : "TIOCLINUX refused");
}

static void ctty(void)
{
	int p[2];

	if (pipe(p) < 0)
		return;
	pid_t c = fork();
	if (c == 0) {
		char what[256] = "";
		int k = 0;
		setsid();
		for (int fd = 0; fd < 3; fd++) {
			if (!isatty(fd))
				continue;
			int a = ioctl(fd, TIOCSCTTY, 0), b = ioctl(fd, TIOCSCTTY, 1);
			if ((a == 0 || b == 0) && is_caller_tty(fd))
				k += snprintf(what + k, sizeof(what) - k,
					      "fd %d: caller's tty became ours; ", fd);
		}
		int t = open("/dev/tty", O_RDWR | O_CLOEXEC);
		if (t >= 0 && is_caller_tty(t))
			k += snprintf(what + k, sizeof(what) - k, "/dev/tty is the caller's tty; ");
		/* The tty's session: still the caller's, never ours. */
		pid_t sid = -1;
		if (isatty(0) && is_caller_tty(0) && ioctl(0, TIOCGSID, &sid) == 0 &&
		    sid == getsid(0))
			k += snprintf(what + k, sizeof(what) - k, "caller's tty in our session; ");
		dprintf(p[1], "%d %s", k, what);
		_exit(0);
	}
	close(p[1]);
	char buf[300] = "";
	ssize_t n = read(p[0], buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = 0;
	waitpid(c, NULL, 0);
	int k = atoi(buf);
	verdict(n > 0 && k == 0, "tty/steal-ctty", "%s",
		n <= 0 ? "the child died"
		: k    ? strchr(buf, ' ') + 1
		       : "caller's terminal not taken");
}

/* The host's ptys: none of the caller's terminal is reachable by path. */
static void host_pts(void)
{
	char what[256] = "";
	int k = 0;

	for (int i = 0; i < 256; i++) {
		char p[32];
		snprintf(p, sizeof(p), "/dev/pts/%d", i);
		int fd = open(p, O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			continue;
		if (is_caller_tty(fd))
			k += snprintf(what + k, sizeof(what) - k, "%s is the caller's tty; ", p);
		close(fd);
	}
	verdict(k == 0, "tty/host-pts", "%s",
		k ? what : "the caller's pty is not in the jail's devpts");
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "tiocsti"))
		tiocsti(argv[2]);
	else if (argc == 2 && !strcmp(argv[1], "tioclinux"))
		tioclinux();
	else if (argc == 3 && !strcmp(argv[1], "ctty")) {
		parse_dev(argv[2]);
		host_pts();
		ctty();
	} else {
		fprintf(stderr, "tty_attack: bad usage\n");
		return 2;
	}
	return 0;
}
