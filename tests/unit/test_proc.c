/* SPDX-License-Identifier: MIT */
/* tests/unit/test_proc.c - the /proc/PID readers of lib/util/proc.c. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdlib.h>
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status_nums),
		cmocka_unit_test(test_holds_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
