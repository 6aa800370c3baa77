/* SPDX-License-Identifier: MIT */
/*
 * tests/escape/seccomp_probe.c - run from INSIDE a jail (static, no
 * libseccomp): every syscall the policy blocks, called as an attacker would
 * with harmless arguments, must fail with the policy's errno; the calls it
 * allows must work; x32 and int 0x80 syscalls must kill the caller; and
 * every thread must show "Seccomp: 2" (filter mode).
 *
 *	seccomp_probe [--strict] [--no-int80]
 *	seccomp_probe --int80-works
 *
 * Some kernels take no i386 system call at all: int 0x80 is a fault
 * (SIGSEGV), with or without a filter (ia32_emulation=0, and by default in
 * AMD SEV and Intel TDX guests since Linux 6.7).  --int80-works, run on
 * the host with no filter, says whether this kernel takes them (exit 0) or
 * not (exit 1, and the signal); the harness then passes --no-int80, and
 * the int 0x80 checks are reported "skipped" with the reason: there is no
 * such system call to filter.  Without --no-int80 a SIGSEGV is an escape,
 * as any end but SIGSYS.
 *
 * One line per check: "contained WHAT" or "ESCAPED WHAT: got ..." for
 * attacks, "allowed WHAT" or "FAILED WHAT: got ..." for calls that must
 * work, then "seccomp_probe: N attacks, N contained, N escaped, N failed".
 * Exit status 0 only if nothing escaped or failed.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seccomp_table.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static int n_attacks, n_contained, n_escaped, n_failed;

static void verdict(int attack, int ok, const char *what, const char *detail)
{
	if (attack) {
		n_attacks++;
		if (ok)
			n_contained++;
		else
			n_escaped++;
		printf(ok ? "contained %s\n" : "ESCAPED %s: %s\n", what, detail);
	} else {
		if (!ok)
			n_failed++;
		printf(ok ? "allowed %s\n" : "FAILED %s: %s\n", what, detail);
	}
}

/* The table, in a child: its own session (vhangup), results over a pipe. */
static void run_table(int strict)
{
	struct {
		long ret;
		int err;
	} r[ARRAY_SIZE(st_checks)];
	int p[2], status;
	pid_t pid;

	if (pipe(p) < 0 || (pid = fork()) < 0) {
		perror("seccomp_probe: fork");
		exit(2);
	}
	if (pid == 0) {
		close(p[0]);
		setsid();
		for (size_t i = 0; i < ARRAY_SIZE(st_checks); i++) {
			errno = 0;
			r[i].ret = st_checks[i].call();
			r[i].err = r[i].ret < 0 ? errno : 0;
		}
		_exit(write(p[1], r, sizeof(r)) == (ssize_t)sizeof(r) ? 0 : 1);
	}
	close(p[1]);
	memset(r, 0, sizeof(r));
	ssize_t n = read(p[0], r, sizeof(r));
	waitpid(pid, &status, 0);
	if (n != (ssize_t)sizeof(r)) {
		verdict(0, 0, "the check table", "the child died before reporting");
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(st_checks); i++) {
		const struct st_check *c = &st_checks[i];
		enum st_want want = strict ? c->want_strict : c->want_default;
		char detail[128];

		if (r[i].ret >= 0)
			snprintf(detail, sizeof(detail), "succeeded (returned %ld), want %s",
				 r[i].ret, st_want_name(want));
		else
			snprintf(detail, sizeof(detail), "got errno %d (%s), want %s", r[i].err,
				 strerror(r[i].err), st_want_name(want));
		verdict(want != ST_ALLOWED, st_ok(want, r[i].ret, r[i].err), c->what, detail);
	}
}

#ifdef ST_HAVE_COMPAT_ABIS
static const struct st_compat *compat_cur;

static long compat_x32(void)
{
	return st_x32_call(compat_cur);
}

static long compat_int80(void)
{
	return st_int80_call(compat_cur);
}

static void compat_abi(const char *what, long (*call)(void))
{
	char detail[128];
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		long r = call();

		printf("  (%s returned %ld)\n", what, r);
		fflush(stdout);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid) {
		verdict(1, 0, what, "cannot fork");
		return;
	}
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS) {
		verdict(1, 1, what, "");
		return;
	}
	snprintf(detail, sizeof(detail), "the caller survived (status 0x%x), want SIGSYS", status);
	verdict(1, 0, what, detail);
}
#endif

#ifdef ST_HAVE_COMPAT_ABIS
/* --int80-works: does this kernel run an i386 getpid through int 0x80? */
static int int80_works(void)
{
	int status;
	pid_t pid = fork();

	if (pid == 0)
		_exit(st_int80_getpid() == getpid() ? 0 : 2);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 2;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		printf("int 0x80 works\n");
		return 0;
	}
	printf("int 0x80 refused: %s\n",
	       WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "a wrong result");
	return 1;
}
#endif

static void *idle_thread(void *arg)
{
	pause();
	return arg;
}

/* "Seccomp: 2" in every thread of this process (a second thread exists). */
static void seccomp_status(void)
{
	pthread_t t;
	DIR *d;
	struct dirent *e;
	int threads = 0, filtered = 0;
	char detail[128];

	if (pthread_create(&t, NULL, idle_thread, NULL) != 0) {
		verdict(0, 0, "a second thread", "pthread_create failed");
		return;
	}
	d = opendir("/proc/self/task");
	if (!d) {
		verdict(0, 0, "/proc/self/task", strerror(errno));
		return;
	}
	while ((e = readdir(d))) {
		char path[300], buf[4096];
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		threads++;
		while (fgets(buf, sizeof(buf), f))
			if (strcmp(buf, "Seccomp:\t2\n") == 0)
				filtered++;
		fclose(f);
	}
	closedir(d);
	snprintf(detail, sizeof(detail), "%d of %d threads show Seccomp: 2", filtered, threads);
	verdict(1, threads >= 2 && filtered == threads,
		"unfiltered thread (Seccomp: 2 in every thread)", detail);
}

int main(int argc, char **argv)
{
	int strict = 0, int80 = 1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--strict") == 0) {
			strict = 1;
		} else if (strcmp(argv[i], "--no-int80") == 0) {
			int80 = 0;
#ifdef ST_HAVE_COMPAT_ABIS
		} else if (strcmp(argv[i], "--int80-works") == 0 && argc == 2) {
			return int80_works();
#endif
		} else {
			fprintf(stderr,
				"usage: seccomp_probe [--strict] [--no-int80] | --int80-works\n");
			return 2;
		}
	}
	run_table(strict);
#ifdef ST_HAVE_COMPAT_ABIS
	compat_abi("x32 syscall (getpid | 0x40000000)", st_x32_getpid);
	if (int80)
		compat_abi("int 0x80 syscall (i386 getpid)", st_int80_getpid);
	else
		printf("skipped int 0x80 syscall (i386 getpid): this kernel takes no i386 "
		       "system call (--no-int80)\n");
	for (size_t i = 0; i < ARRAY_SIZE(st_compat_checks); i++) {
		char what[160];

		compat_cur = &st_compat_checks[i];
		snprintf(what, sizeof(what), "x32 %s", compat_cur->what);
		compat_abi(what, compat_x32);
		snprintf(what, sizeof(what), "int 0x80 %s", compat_cur->what);
		if (int80)
			compat_abi(what, compat_int80);
		else
			printf("skipped %s: this kernel takes no i386 system call\n", what);
	}
#endif
	seccomp_status();
	printf("seccomp_probe: %d attacks, %d contained, %d escaped, %d failed\n", n_attacks,
	       n_contained, n_escaped, n_failed);
	return n_escaped || n_failed ? 1 : 0;
}
