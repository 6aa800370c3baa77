/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_fault.c - lib/util/fault.c: SBX_FAULT names the points that
 * SIGKILL the process (NAME, a comma list, NAME@N for the Nth hit); other
 * points and an unset variable leave it alone.  Each case runs in a fresh
 * child, since the variable is read once per process.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fault.h"

/*
 * In a child with SBX_FAULT=spec (NULL: unset), reach the points of the
 * NULL-terminated list in order, then exit 0.  Returns the index of the
 * point that killed it with SIGKILL, or -1 when it exited normally.
 */
static int run_points(const char *spec, const char *const *points)
{
	int pfd[2], status, idx = -1;
	unsigned char last = 0xff;
	pid_t pid;

	assert_int_equal(pipe(pfd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(pfd[0]);
		if (spec)
			setenv("SBX_FAULT", spec, 1);
		else
			unsetenv("SBX_FAULT");
		for (unsigned char i = 0; points[i]; i++) {
			/* Report the point about to be reached. */
			if (write(pfd[1], &i, 1) != 1)
				_exit(3);
			sbx_fault_point(points[i]);
		}
		_exit(0);
	}
	close(pfd[1]);
	while (read(pfd[0], &last, 1) == 1)
		;
	close(pfd[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status)) {
		assert_int_equal(WTERMSIG(status), SIGKILL);
		idx = last;
	} else {
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	return idx;
}

static const char *const pts[] = {"after-clone", "during-mounts", "before-exec",
				  "during-run", NULL};
static const char *const loop[] = {"during-unpack", "during-unpack", "during-unpack",
				   "during-unpack", "during-unpack", NULL};

static void test_unset_and_empty(void **state)
{
	(void)state;
	assert_int_equal(run_points(NULL, pts), -1);
	assert_int_equal(run_points("", pts), -1);
	/* Unset in this process too: a point is a no-op. */
	unsetenv("SBX_FAULT");
}

static void test_single(void **state)
{
	(void)state;
	assert_int_equal(run_points("after-clone", pts), 0);
	assert_int_equal(run_points("before-exec", pts), 2);
	assert_int_equal(run_points("during-run", pts), 3);
}

static void test_not_listed(void **state)
{
	(void)state;
	assert_int_equal(run_points("after-record", pts), -1);
	/* A prefix or a longer name is not the point. */
	assert_int_equal(run_points("after", pts), -1);
	assert_int_equal(run_points("after-clones", pts), -1);
	assert_int_equal(run_points("during-mounts-x,before", pts), -1);
}

static void test_list(void **state)
{
	(void)state;
	assert_int_equal(run_points("nothing,before-exec,during-run", pts), 2);
	assert_int_equal(run_points("during-run,during-mounts", pts), 1);
	assert_int_equal(run_points(",,during-mounts,", pts), 1);
}

static void test_nth_hit(void **state)
{
	(void)state;
	assert_int_equal(run_points("during-unpack@3", loop), 2);
	assert_int_equal(run_points("during-unpack@1", loop), 0);
	assert_int_equal(run_points("during-unpack@0", loop), 0);
	assert_int_equal(run_points("during-unpack@9", loop), -1);
	assert_int_equal(run_points("x,during-unpack@5", loop), 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unset_and_empty),
		cmocka_unit_test(test_single),
		cmocka_unit_test(test_not_listed),
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_nth_hit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
