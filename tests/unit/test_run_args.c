/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_run_args.c - `sbx run` option parsing without forking:
 * the option table, the payload command left alone after the first
 * non-option, errors, and the options applied through sbx_profile_set()
 * after the profile (one code path with the profile; command line wins).
 * cmd/run*.c are compiled in here (cmd/ is not part of libsbx.a).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <linux/seccomp.h>
#include <sys/syscall.h>

#include "../../cmd/common.c"
#include "../../cmd/image_ui.c"
#include "../../cmd/run.c"
#include "../../cmd/run_args.c"
#include "../../cmd/run_human.c"
#include "jail.h"

static void ctx_init(struct run_ctx *c)
{
	memset(c, 0, sizeof(*c));
	sbx_config_init(&c->cfg);
}

/* argv stays valid after the call (a.argv points into it), until the next. */
static int parse(struct run_args *a, struct sbx_err *err, ...)
{
	static char *argv[32];
	int argc = 0;
	va_list ap;

	va_start(ap, err);
	for (char *s; (s = va_arg(ap, char *)) && argc < 31;)
		argv[argc++] = s;
	va_end(ap);
	argv[argc] = NULL;
	return run_parse_args(argc, argv, a, err);
}

static void test_table_and_payload(void **state)
{
	struct run_args a;
	struct sbx_err err = {0};

	assert_int_equal(parse(&a, &err, "run", "-q", "--memory", "64m", "--net", "loopback", "-e",
			       "FOO=bar", "-e", "BAR", "-n", "box", "--log-json", "/tmp/x.jsonl",
			       "--", "cmd", "-x", "--rm", NULL),
			 0);
	assert_true(a.quiet);
	assert_false(a.rm);
	assert_string_equal(a.name, "box");
	assert_string_equal(a.log_json, "/tmp/x.jsonl");
	assert_int_equal(a.n_sets, 4);
	assert_string_equal(a.sets[0].section, "limits");
	assert_string_equal(a.sets[0].key, "memory");
	assert_string_equal(a.sets[0].value, "64m");
	assert_string_equal(a.sets[1].key, "mode");
	assert_string_equal(a.sets[2].key, "set");
	assert_string_equal(a.sets[2].value, "FOO=bar");
	assert_string_equal(a.sets[3].key, "pass");
	assert_string_equal(a.sets[3].value, "BAR");
	assert_string_equal(a.argv[0], "cmd");
	assert_string_equal(a.argv[1], "-x");
	assert_string_equal(a.argv[2], "--rm");
	assert_null(a.argv[3]);
	run_args_free(&a);
}

static void test_stops_at_command(void **state)
{
	struct run_args a;
	struct sbx_err err = {0};

	/* No "--": the first non-option is the command, its options are its own. */
	assert_int_equal(parse(&a, &err, "run", "-t", "ls", "-l", "--keep", NULL), 0);
	assert_false(a.keep);
	assert_int_equal(a.n_sets, 1);
	assert_string_equal(a.sets[0].key, "tty");
	assert_string_equal(a.argv[0], "ls");
	assert_string_equal(a.argv[2], "--keep");
	run_args_free(&a);
}

/* -T and --no-tty set tty = no: pipes even at a terminal. */
static void test_no_tty(void **state)
{
	struct run_args a;
	struct sbx_err err = {0};

	assert_int_equal(parse(&a, &err, "run", "-T", "--no-tty", "--", "ls", NULL), 0);
	assert_int_equal(a.n_sets, 2);
	for (size_t i = 0; i < a.n_sets; i++) {
		assert_string_equal(a.sets[i].section, "sandbox");
		assert_string_equal(a.sets[i].key, "tty");
		assert_string_equal(a.sets[i].value, "no");
	}
	run_args_free(&a);
}

/* With sbx's own argv strings as init's title (contiguous from argv[0], as
 * the kernel lays them out), the command's argv is a copy outside them:
 * init overwrites the title before the command's execve reads its argv. */
static void test_title_copies_command(void **state)
{
	static char buf[] = "sbx\0run\0-q\0--\0cat\0/proc/1/cmdline";
	char *argv[8];
	struct run_args a;
	struct sbx_err err = {0};
	int argc = 0;

	for (char *p = buf; p < buf + sizeof(buf); p += strlen(p) + 1)
		argv[argc++] = p;
	argv[argc] = NULL;
	sbx_proc_title_init(argc, argv); /* as sbx's main does */
	/* which hands run its arguments from "run" on */
	assert_int_equal(run_parse_args(argc - 1, argv + 1, &a, &err), 0);
	assert_ptr_equal(a.title, buf);
	assert_int_equal(a.title_len, sizeof(buf));
	assert_string_equal(a.argv[0], "cat");
	assert_string_equal(a.argv[1], "/proc/1/cmdline");
	assert_null(a.argv[2]);
	for (int i = 0; i < 2; i++)
		assert_true(a.argv[i] < buf || a.argv[i] >= buf + sizeof(buf));
	memset(a.title, 0, a.title_len); /* what init does */
	assert_string_equal(a.argv[0], "cat");
	assert_string_equal(a.argv[1], "/proc/1/cmdline");
	run_args_free(&a);
	assert_null(a.argv_owned);
}

static void test_errors(void **state)
{
	struct run_args a;
	struct sbx_err err = {0};

	assert_int_equal(parse(&a, &err, "run", "-q", NULL), -EINVAL);
	assert_non_null(strstr(err.msg, "no command"));
	run_args_free(&a);
	assert_int_equal(parse(&a, &err, "run", "--keep", "--rm", "true", NULL), -EINVAL);
	assert_non_null(strstr(err.msg, "contradict"));
	run_args_free(&a);
	assert_int_equal(parse(&a, &err, "run", "--memroy", "1g", "true", NULL), -EINVAL);
	assert_non_null(strstr(err.msg, "unknown option"));
	run_args_free(&a);
	assert_int_equal(parse(&a, &err, "run", "true", "--memory", NULL), 0);
	run_args_free(&a);
	assert_int_equal(parse(&a, &err, "run", "--memory", NULL), -EINVAL);
	assert_non_null(strstr(err.msg, "option '--memory' needs a value"));
	run_args_free(&a);
	assert_int_equal(parse(&a, &err, "run", "-p", NULL), -EINVAL);
	assert_non_null(strstr(err.msg, "option '-p' needs a value"));
	run_args_free(&a);
	/* not a file named '-', nor the command's stdout */
	assert_int_equal(parse(&a, &err, "run", "--log-json", "-", "true", NULL), -EINVAL);
	assert_non_null(strstr(err.msg, "--log-json -: "));
	assert_non_null(strstr(err.msg, "/dev/stderr"));
	run_args_free(&a);
}

/* Valgrind does not implement seccomp(2), which the run's policy check needs. */
static bool seccomp_available(void)
{
	uint32_t action = SECCOMP_RET_ALLOW;

	return syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
}

/* The options go through the profile's setter, after the profile. */
static void test_applied_after_profile(void **state)
{
	struct run_ctx c;
	struct sbx_jail_ids ids;
	struct sbx_err err = {0};

	if (!seccomp_available())
		skip();
	ctx_init(&c);
	assert_int_equal(parse(&c.args, &err, "run", "--memory", "64m", "--net", "loopback",
			       "--time", "90s", "-e", "FOO=bar", "--hostname", "h1", "--tmpfs",
			       "/scratch:1m", "-u", "root", "true", NULL),
			 0);
	assert_int_equal(load_config(&c, &err), 0);
	assert_int_equal(c.cfg.memory, 64ULL << 20);
	assert_int_equal(c.cfg.net, SBX_NET_LOOPBACK);
	assert_int_equal(c.cfg.time_ms, 90000);
	assert_string_equal(c.cfg.hostname, "h1");
	assert_true(sbx_strv_contains(&c.cfg.env_set, "FOO=bar"));
	assert_true(c.cfg.user_set && c.cfg.user_root);
	assert_int_equal(sbx_jail_ids_resolve(&c.cfg, &ids, &err), 0);
	assert_int_equal(ids.uid, 0);
	assert_true(c.cfg.n_mounts > 0);
	assert_int_equal(c.cfg.mounts[c.cfg.n_mounts - 1].kind, SBX_MNT_TMPFS);
	assert_int_equal(c.cfg.mounts[c.cfg.n_mounts - 1].size, 1ULL << 20);
	sbx_config_free(&c.cfg);
	run_args_free(&c.args);

	/* A bad value names the option's key. */
	ctx_init(&c);
	assert_int_equal(parse(&c.args, &err, "run", "--memory", "lots", "true", NULL), 0);
	assert_true(load_config(&c, &err) < 0);
	assert_non_null(strstr(err.msg, "memory"));
	sbx_config_free(&c.cfg);
	run_args_free(&c.args);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_table_and_payload),
	    cmocka_unit_test(test_stops_at_command),
	    cmocka_unit_test(test_no_tty),
	    cmocka_unit_test(test_title_copies_command),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_applied_after_profile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
