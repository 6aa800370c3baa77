/* SPDX-License-Identifier: MIT */
/*
 * tests/escape/esc.h - shared by the attack programs of tests/escape/: they
 * run INSIDE a jail as an attacker would and print one line per attack,
 * "contained CLASS/NAME" or "ESCAPED CLASS/NAME: what happened" (the driver,
 * tests/escape/run.sh, then checks the host as well).  Static, libc only.
 */
#ifndef ESC_H
#define ESC_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static int esc_escaped;

static void __attribute__((format(printf, 3, 4)))
verdict(int contained, const char *name, const char *fmt, ...)
{
	char d[512] = "";
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d, sizeof(d), fmt, ap);
	va_end(ap);
	if (contained) {
		printf("contained %s%s%s%s\n", name, d[0] ? " (" : "", d, d[0] ? ")" : "");
	} else {
		esc_escaped++;
		printf("ESCAPED %s: %s\n", name, d);
	}
	fflush(stdout);
}

/* Read up to n-1 bytes of a file; -errno on failure. */
static inline ssize_t slurp(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	ssize_t r;

	if (fd < 0)
		return -errno;
	r = read(fd, buf, n - 1);
	if (r < 0)
		r = -errno;
	else
		buf[r] = 0;
	close(fd);
	return r;
}

/* Write a string to a file; 0 or -errno. */
static inline int spit(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	ssize_t r;

	if (fd < 0)
		return -errno;
	r = write(fd, s, strlen(s));
	r = r < 0 ? -errno : 0;
	close(fd);
	return (int)r;
}

static inline const char *err_name(int e)
{
	return e ? strerror(e < 0 ? -e : e) : "success";
}

/* Does the file at path (opened relative to dirfd) hold magic? */
static inline int holds_magic(int dirfd, const char *path, const char *magic)
{
	char buf[256];
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	ssize_t r;

	if (fd < 0)
		return 0;
	r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (r <= 0)
		return 0;
	buf[r] = 0;
	return strstr(buf, magic) != NULL;
}

#endif
