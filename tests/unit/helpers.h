/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/helpers.h - small fixtures shared by the unit tests.  Include
 * after <cmocka.h> (the helpers assert).
 */
#ifndef SBX_TEST_HELPERS_H
#define SBX_TEST_HELPERS_H

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * "BASE/REL", REL printf-formatted.  The result is a static buffer of four
 * in turn: it stays valid for the next three calls.
 */
static inline __attribute__((format(printf, 2, 3))) char *
test_path(const char *base, const char *fmt, ...)
{
	static char buf[4][1400];
	static int i;
	char rel[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", base, rel);
	return buf[i];
}

/* Create (or truncate) the file p holding text, with mode (before umask). */
static inline void test_write_file(const char *p, const char *text, mode_t mode)
{
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/*
 * A pid namespace's init, as a jail's is, seen from here: returns its pid
 * in our namespace (it pause()s until killed), 0 if none could be made.
 * *mid made the namespace: it exits with 128 + the signal that ended
 * init, or 77 when this host gives no pid namespace.
 */
static inline pid_t test_fork_ns_init(pid_t *mid)
{
	int p[2];
	pid_t init = 0;

	assert_int_equal(pipe(p), 0);
	*mid = fork();
	assert_true(*mid >= 0);
	if (*mid == 0) {
		int status;

		close(p[0]);
		/* a user namespace too, so that it works without root */
		if (unshare(CLONE_NEWPID) < 0 && unshare(CLONE_NEWUSER | CLONE_NEWPID) < 0)
			_exit(77);
		pid_t c = fork();

		if (c == 0) {
			pause();
			_exit(0);
		}
		(void)!write(p[1], &c, sizeof(c));
		waitpid(c, &status, 0);
		_exit(WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 0);
	}
	close(p[1]);
	if (read(p[0], &init, sizeof(init)) != (ssize_t)sizeof(init))
		init = 0;
	close(p[0]);
	return init;
}

#endif
