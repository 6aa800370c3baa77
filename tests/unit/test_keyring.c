/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_keyring.c - lib/util/keyring.c against the real kernel:
 * a value put is taken once, whole; a second put replaces it; of processes
 * taking at once exactly one gets it; it is possessor-only (a process that
 * only knows its serial cannot read it), and a user namespace of its own
 * (a jail's) does not find it.  Skipped where keyrings are refused (a
 * container's seccomp policy) or absent.  Each run uses descriptions of its
 * own and leaves no key.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <linux/keyctl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "keyring.h"

static char desc[64];

static long kc(int op, long a, long b, long c, long d)
{
	return syscall(SYS_keyctl, op, a, b, c, d);
}

static int setup(void **state)
{
	(void)state;
	snprintf(desc, sizeof(desc), "sbx-test-keyring-%d", (int)getpid());
	return 0;
}

/* Keyrings usable here: the user keyring's id can be had. */
static void need_keyrings(void)
{
	if (kc(KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 1, 0, 0) < 0) {
		print_message("keyrings refused here: %s\n", strerror(errno));
		skip();
	}
}

static long serial_of(const char *d)
{
	return kc(KEYCTL_SEARCH, KEY_SPEC_USER_KEYRING, (long)"user", (long)d, 0);
}

static void test_put_take_once(void **state)
{
	char *v = NULL;
	size_t len = 0;

	(void)state;
	need_keyrings();
	assert_false(sbx_keyring_has(desc));
	assert_int_equal(sbx_keyring_take(desc, &v, &len), 0);
	assert_null(v);
	assert_int_equal(sbx_keyring_put(desc, "one\0two", 7, 60), 0);
	assert_true(sbx_keyring_has(desc));
	assert_int_equal(sbx_keyring_take(desc, &v, &len), 1);
	assert_int_equal(len, 7);
	assert_memory_equal(v, "one\0two", 7);
	assert_int_equal(v[7], '\0');
	free(v);
	v = NULL;
	/* Taken: gone for every later taker. */
	assert_false(sbx_keyring_has(desc));
	assert_int_equal(sbx_keyring_take(desc, &v, &len), 0);
	assert_null(v);
}

static void test_replace_and_bad_sizes(void **state)
{
	char *v = NULL;
	size_t len = 0;
	static char big[(32 << 10) + 1];

	(void)state;
	need_keyrings();
	assert_int_equal(sbx_keyring_put(desc, "a", 1, 60), 0);
	assert_int_equal(sbx_keyring_put(desc, "bb", 2, 60), 0);
	assert_int_equal(sbx_keyring_take(desc, &v, &len), 1);
	assert_int_equal(len, 2);
	assert_memory_equal(v, "bb", 2);
	free(v);
	assert_int_equal(sbx_keyring_take(desc, &v, &len), 0);
	assert_int_equal(sbx_keyring_put(desc, "", 0, 60), -EINVAL);
	assert_int_equal(sbx_keyring_put(desc, big, sizeof(big), 60), -EINVAL);
	assert_false(sbx_keyring_has(desc));
}

/* Possessor-only: the permission mask, and a process with a session
 * keyring of its own (a jail's command) that knows the serial. */
static void test_possessor_only(void **state)
{
	char d[256], *v = NULL;
	size_t len;
	long k;
	pid_t pid;
	int st;

	(void)state;
	need_keyrings();
	assert_int_equal(sbx_keyring_put(desc, "secret", 6, 60), 0);
	k = serial_of(desc);
	assert_true(k > 0);
	assert_true(kc(KEYCTL_DESCRIBE, k, (long)d, sizeof(d), 0) > 0);
	/* type;uid;gid;perm;description */
	assert_non_null(strstr(d, ";3f000000;"));
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char b[64];

		if (kc(KEYCTL_JOIN_SESSION_KEYRING, 0, 0, 0, 0) < 0)
			_exit(2);
		_exit(kc(KEYCTL_READ, k, (long)b, sizeof(b), 0) < 0 && errno == EACCES ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	/* Still there for its owner's next process. */
	assert_int_equal(sbx_keyring_take(desc, &v, &len), 1);
	assert_memory_equal(v, "secret", 6);
	free(v);
}

/* A process in a user namespace of its own has another user keyring. */
static void test_user_namespace(void **state)
{
	char *v = NULL;
	size_t len;
	pid_t pid;
	int st;

	(void)state;
	need_keyrings();
	assert_int_equal(sbx_keyring_put(desc, "secret", 6, 60), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char *got = NULL;
		size_t n;

		if (unshare(CLONE_NEWUSER) < 0)
			_exit(3);
		if (sbx_keyring_has(desc))
			_exit(1);
		_exit(sbx_keyring_take(desc, &got, &n) == 0 ? 0 : 2);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st) == 3) {
		assert_int_equal(sbx_keyring_take(desc, &v, &len), 1);
		free(v);
		skip(); /* no user namespaces here */
	}
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(sbx_keyring_take(desc, &v, &len), 1);
	free(v);
}

/* Takers at once: exactly one gets the value, each time. */
static void test_one_taker_wins(void **state)
{
	enum { ROUNDS = 40, TAKERS = 3 };

	(void)state;
	need_keyrings();
	for (int r = 0; r < ROUNDS; r++) {
		int go[2], won = 0;
		pid_t pids[TAKERS];

		assert_int_equal(sbx_keyring_put(desc, "v", 1, 60), 0);
		assert_int_equal(pipe(go), 0);
		for (int i = 0; i < TAKERS; i++) {
			pids[i] = fork();
			assert_true(pids[i] >= 0);
			if (pids[i] == 0) {
				char c, *v = NULL;
				size_t n;

				close(go[1]);
				if (read(go[0], &c, 1) < 0)
					_exit(1);
				_exit(sbx_keyring_take(desc, &v, &n) == 1 && n == 1 && *v == 'v'
					  ? 10
					  : 0);
			}
		}
		close(go[0]);
		close(go[1]); /* all start */
		for (int i = 0; i < TAKERS; i++) {
			int st;

			assert_int_equal(waitpid(pids[i], &st, 0), pids[i]);
			assert_true(WIFEXITED(st));
			won += WEXITSTATUS(st) == 10;
		}
		assert_int_equal(won, 1);
		assert_false(sbx_keyring_has(desc));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_put_take_once),  cmocka_unit_test(test_replace_and_bad_sizes),
	    cmocka_unit_test(test_possessor_only), cmocka_unit_test(test_user_namespace),
	    cmocka_unit_test(test_one_taker_wins),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
