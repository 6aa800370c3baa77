/* SPDX-License-Identifier: MIT */
/* tests/unit/test_proc.c - the /proc/PID readers of lib/util/proc.c. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc.h"

static void test_status_nums(void **unused)
{
	long last = 0;

	assert_int_equal(sbx_proc_status_nums(getpid(), "PPid", &last), 1);
	assert_int_equal(last, (long)getppid());
	/* NSpid: one number per pid namespace, the innermost last. */
	assert_true(sbx_proc_status_nums(getpid(), "NSpid", &last) >= 1);
	assert_true(last > 0);
	/* A key that is only a prefix of a real one ("Pid" of "PPid"/"NSpid"). */
	assert_int_equal(sbx_proc_status_nums(getpid(), "Pid", &last), 1);
	assert_int_equal(last, (long)getpid());
	assert_int_equal(sbx_proc_status_nums(getpid(), "NoSuchKey", &last), 0);
	assert_int_equal(last, -1);
	assert_int_equal(sbx_proc_status_nums(1 << 30, "PPid", &last), 0);
	assert_int_equal(last, -1);
}

static void test_holds_file(void **unused)
{
	char path[] = "/tmp/sbx-test-proc-XXXXXX";
	struct stat st;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_true(sbx_proc_holds_file(getpid(), &st));
	assert_false(sbx_proc_holds_file(1 << 30, &st));
	assert_false(sbx_proc_holds_file(getpid(), NULL));
	close(fd);
	assert_false(sbx_proc_holds_file(getpid(), &st));
	unlink(path);
}

/* A pid namespace's init is told from a host process of the same start
 * time: what destroy and exec check besides the recorded start. */
static void test_is_ns_init(void **unused)
{
	int go[2], ready[2];
	char c;
	pid_t mid, init = 0;

	assert_false(sbx_proc_is_ns_init(getpid()));
	assert_false(sbx_proc_is_ns_init(1 << 30));
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(ready), 0);
	mid = fork();
	assert_true(mid >= 0);
	if (mid == 0) {
		/* a user namespace too, so that it works without root */
		if (unshare(CLONE_NEWPID) < 0 && unshare(CLONE_NEWUSER | CLONE_NEWPID) < 0)
			_exit(77);
		pid_t p = fork();

		if (p == 0) {
			(void)!read(go[0], &c, 1); /* until the parent has looked */
			_exit(0);
		}
		(void)!write(ready[1], &p, sizeof(p));
		waitpid(p, NULL, 0);
		_exit(0);
	}
	close(ready[1]);
	close(go[0]);
	if (read(ready[0], &init, sizeof(init)) != (ssize_t)sizeof(init)) {
		int st;

		waitpid(mid, &st, 0);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
			skip(); /* no pid namespace here */
		fail_msg("the child in a new pid namespace did not start");
	}
	/* init is its pid in our namespace, as a host process sees it */
	assert_true(sbx_proc_is_ns_init(init));
	assert_false(sbx_proc_is_ns_init(mid));
	(void)!write(go[1], "x", 1);
	close(go[1]);
	waitpid(mid, NULL, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_status_nums),
	    cmocka_unit_test(test_holds_file),
	    cmocka_unit_test(test_is_ns_init),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
