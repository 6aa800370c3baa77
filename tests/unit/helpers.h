/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/helpers.h - small fixtures shared by the unit tests.  Include
 * after <cmocka.h> (the helpers assert).
 */
#ifndef SBX_TEST_HELPERS_H
#define SBX_TEST_HELPERS_H

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
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

#endif
