/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_changes_noopenat2.c - lib/state/changes.c without openat2(2)
 * (valgrind does not know the syscall; kernels < 5.6 lack it): the layers
 * of a sandbox and the change walk give the same answers through the
 * component-by-component fallback, which still refuses a symlink or ".."
 * anywhere in a recorded upper path.  Each case runs twice: with openat2,
 * and in a child where a seccomp filter makes openat2 fail with ENOSYS (or,
 * under valgrind, where it already does).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "changes.h"
#include "rmtree.h"

static char base[] = "/tmp/sbx-test-noopenat2-XXXXXX";

static void put(const char *rel, const char *text)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void dir(const char *rel)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	assert_int_equal(mkdir(p, 0755), 0);
}

/*
 * sandbox/ with layers: upper (fine), overlays/1/upper (fine, nested),
 * evil/upper (evil -> ../outside: a symlink), ../outside/upper (".."), and
 * lower/ next to it.  upper/d/f changes lower/d/f; upper/n is new.
 */
static int setup(void **state)
{
	char p[512];

	(void)state;
	assert_non_null(mkdtemp(base));
	dir("sandbox");
	dir("sandbox/upper");
	dir("sandbox/upper/d");
	put("sandbox/upper/d/f", "new\n");
	put("sandbox/upper/n", "added\n");
	dir("sandbox/overlays");
	dir("sandbox/overlays/1");
	dir("sandbox/overlays/1/upper");
	dir("outside");
	dir("outside/upper");
	snprintf(p, sizeof(p), "%s/sandbox/evil", base);
	assert_int_equal(symlink("../outside", p), 0);
	dir("lower");
	dir("lower/d");
	put("lower/d/f", "old\n");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return sbx_rm_rf_at(AT_FDCWD, base) == 0 ? 0 : -1;
}

static bool have_openat2(void)
{
	struct open_how how = {.flags = O_RDONLY | O_CLOEXEC};
	long fd = syscall(SYS_openat2, AT_FDCWD, "/", &how, sizeof(how));

	if (fd >= 0)
		close((int)fd);
	return !(fd < 0 && errno == ENOSYS);
}

/* In this (child) process, openat2 fails with ENOSYS from now on. */
static void block_openat2(void)
{
	scmp_filter_ctx ctx;

	if (!have_openat2())
		return; /* valgrind: already so */
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx || seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(openat2), 0) < 0 ||
	    seccomp_load(ctx) < 0)
		_exit(3);
	seccomp_release(ctx);
	if (have_openat2())
		_exit(4);
}

static int count_kind(const struct sbx_change *c, void *data)
{
	char *out = data;

	if (strcmp(c->rel, "d/f") == 0)
		out[0] = c->kind;
	else if (strcmp(c->rel, "n") == 0)
		out[1] = c->kind;
	return 0;
}

/* The checks; returns a bit per failed one (0: all good). */
static int checks(void)
{
	struct sbx_sandbox sb = {.id = "aaaaaaaaaaaa", .lockfd = -1};
	struct sbx_layer *ls = NULL;
	struct sbx_err err = {0};
	size_t n = 0, nerr = 0;
	char lower[600], kinds[3] = "..";
	int fails = 0;

	snprintf(lower, sizeof(lower), "%s/lower", base);
	{
		char p[512];

		snprintf(p, sizeof(p), "%s/sandbox", base);
		sb.dirfd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	sb.record = json_pack(
	    "{s:{s:{s:[{s:s,s:s,s:s},{s:s,s:s},{s:s,s:s},{s:s,s:s},{s:s,s:s}]}}}", "policy",
	    "filesystem", "layers", "target", "/", "upper", "upper", "lower", lower, "target",
	    "/ov", "upper", "overlays/1/upper", "target", "/evil", "upper", "evil/upper",
	    "target", "/up", "upper", "../outside/upper", "target", "/abs", "upper",
	    "/tmp");
	if (sb.dirfd < 0 || !sb.record || sbx_sandbox_parse_record(&sb, NULL) < 0)
		return 1;
	if (sbx_changes_layers(&sb, &ls, &n, &err) < 0)
		fails |= 2;
	/* Only the two plain layers: no symlink, "..", or absolute path. */
	if (n != 2 || strcmp(ls[0].target, "/") || strcmp(ls[1].target, "/ov"))
		fails |= 4;
	if (n >= 1 && sbx_changes_walk(ls[0].upper_fd, ls[0].lower_fd, "/", count_kind, kinds,
				       &nerr, &err) < 0)
		fails |= 8;
	/* d/f changed (its lower dir opened through the fallback), n added. */
	if (strcmp(kinds, "CA") != 0)
		fails |= 16;
	sbx_changes_layers_free(ls, n);
	json_decref(sb.record);
	sbx_record_free(&sb.rec);
	close(sb.dirfd);
	return fails;
}

static void test_with_openat2(void **state)
{
	(void)state;
	if (!have_openat2())
		skip();
	assert_int_equal(checks(), 0);
}

static void test_without_openat2(void **state)
{
	int status;
	pid_t pid;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		block_openat2();
		_exit(checks());
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_with_openat2),
		cmocka_unit_test(test_without_openat2),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
