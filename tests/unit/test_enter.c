/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_enter.c - lib/jail/enter.c without a jail: the command's ids
 * and their cross-check with the record, and the refusal of records whose
 * init_pid does not name a jail's init (pid reuse, forged or incomplete
 * records).  The real entering is tested end to end by
 * tests/integration/exec_basic.sh and exec_attack.sh.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "enter.h"
#include "proc.h"
#include "state.h"

static void cfg_user(struct sbx_config *c, uid_t uid, gid_t gid)
{
	sbx_config_init(c);
	c->user_set = true;
	c->uid = uid;
	c->gid = gid;
}

/* The record's JSON as sbx exec hands it to lib/jail/enter.c. */
static const struct sbx_enter_record *er(const json_t *j)
{
	static struct sbx_enter_record e[4];
	static int i;
	struct sbx_enter_record *p = &e[i++ % 4];
	struct sbx_record r;
	struct sbx_err err = {0};

	assert_int_equal(sbx_record_from_json(j, &r, &err), 0);
	sbx_record_enter(&r, p);
	sbx_record_free(&r);
	return p;
}

static json_t *record_user(json_int_t uid, json_int_t host_uid)
{
	return json_pack("{s:{s:{s:I, s:I, s:I, s:I}}}", "policy", "user", "uid", uid, "gid", uid,
			 "host_uid", host_uid, "host_gid", host_uid);
}

static void test_ids_follow_the_profile(void **state)
{
	struct sbx_config c;
	struct sbx_jail_ids ids;
	struct sbx_err err = {0};
	json_t *rec = json_object();

	cfg_user(&c, 5, 6);
	assert_int_equal(sbx_enter_ids(&c, er(rec), -1, &ids, &err), 0);
	assert_int_equal(ids.uid, 5);
	assert_int_equal(ids.gid, 6);
	assert_int_equal(ids.range, geteuid() == 0);
	json_decref(rec);
	sbx_config_free(&c);
}

static void test_ids_checked_against_the_record(void **state)
{
	struct sbx_config c;
	struct sbx_jail_ids ids;
	struct sbx_err err = {0};
	json_int_t host = geteuid() == 0 ? sbx_jail_host_base() + 5 : (json_int_t)geteuid();
	json_t *good = record_user(5, host);
	json_t *other_uid = record_user(7, host);
	json_t *other_host = record_user(5, host + 1);

	cfg_user(&c, 5, 5);
	assert_int_equal(sbx_enter_ids(&c, er(good), -1, &ids, &err), 0);
	assert_int_equal(sbx_enter_ids(&c, er(other_uid), -1, &ids, &err), -EPERM);
	assert_non_null(strstr(err.msg, "another user"));
	assert_int_equal(sbx_enter_ids(&c, er(other_host), -1, &ids, &err), -EPERM);
	json_decref(good);
	json_decref(other_uid);
	json_decref(other_host);
	sbx_config_free(&c);
}

static int find(json_t *rec, struct sbx_err *err)
{
	struct sbx_config c;
	struct sbx_enter_target t;
	int r;

	sbx_config_init(&c);
	sbx_enter_target_init(&t);
	r = sbx_enter_find_init(er(rec), -1, &c, &t, err);
	assert_int_equal(t.pidfd, r == 0 ? t.pidfd : -1);
	sbx_enter_target_free(&t);
	sbx_config_free(&c);
	json_decref(rec);
	return r;
}

static void test_no_init_pid(void **state)
{
	struct sbx_err err = {0};

	assert_true(find(json_pack("{s:s}", "state", "running"), &err) < 0);
	assert_non_null(strstr(err.msg, "no jail init"));
	assert_true(find(json_pack("{s:i}", "init_pid", 1), &err) < 0);
	assert_true(find(json_pack("{s:i}", "init_pid", -5), &err) < 0);
}

/* A live process that is no pid namespace's init: refused with or
 * without a recorded start time (a wrong one, or its own).  (Under valgrind, which
 * does not know pidfd_open, the refusal comes earlier: any error will do.) */
static void test_other_process_refused(void **state)
{
	struct sbx_err e1 = {0}, e2 = {0}, e3 = {0}, e4 = {0};
	pid_t child = fork();
	uint64_t start = 0;
	int r1, r2, r3, r4, rs;
	bool pidfds = syscall(SYS_pidfd_open, getpid(), 0) >= 0 || errno != ENOSYS;

	if (child == 0) {
		pause();
		_exit(0);
	}
	assert_true(child > 0);
	rs = sbx_proc_starttime(child, &start);
	r1 = find(json_pack("{s:i, s:i}", "init_pid", (int)child, "supervisor_pid", (int)getpid()),
		  &e1);
	r2 = find(
	    json_pack("{s:i, s:I}", "init_pid", (int)child, "init_start", (json_int_t)start + 1),
	    &e2);
	/* its own start time, as a pid reused within one 10 ms tick: still
	 * no pid namespace's init */
	r4 = find(json_pack("{s:i, s:I}", "init_pid", (int)child, "init_start", (json_int_t)start),
		  &e4);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	/* Gone: the pid names nothing (or something else) now. */
	r3 = find(json_pack("{s:i, s:I}", "init_pid", (int)child, "init_start", (json_int_t)start),
		  &e3);
	assert_int_equal(rs, 0);
	assert_true(r1 < 0 && r2 < 0 && r3 < 0 && r4 < 0);
	if (pidfds) {
		assert_non_null(strstr(e1.msg, "not the jail's init"));
		assert_non_null(strstr(e2.msg, "not the jail's init"));
		assert_non_null(strstr(e4.msg, "not the jail's init"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ids_follow_the_profile),
	    cmocka_unit_test(test_ids_checked_against_the_record),
	    cmocka_unit_test(test_no_init_pid),
	    cmocka_unit_test(test_other_process_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
