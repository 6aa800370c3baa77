/* SPDX-License-Identifier: MIT */
/* tests/unit/test_proc.c - the /proc/PID readers of lib/util/proc.c. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"
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
	pid_t mid, init;
	int status;

	assert_false(sbx_proc_is_ns_init(getpid()));
	assert_false(sbx_proc_is_ns_init(1 << 30));
	init = test_fork_ns_init(&mid);
	if (init <= 0) {
		waitpid(mid, &status, 0);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
			skip(); /* no pid namespace here */
		fail_msg("the child in a new pid namespace did not start");
	}
	/* init is its pid in our namespace, as a host process sees it */
	assert_true(sbx_proc_is_ns_init(init));
	assert_false(sbx_proc_is_ns_init(mid));
	kill(init, SIGKILL);
	assert_int_equal(waitpid(mid, &status, 0), mid);
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
