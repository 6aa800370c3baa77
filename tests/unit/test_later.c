/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_later.c - lib/run/run_watch.c: watch = [KEY ...] PATH,
 * what a JSON file's keys hold before and after a command.  Counters
 * and other members change nothing; a member whose value changed is
 * named with its path ("*" as ["key"]); a missing member is an empty
 * one; a file that is no longer JSON is named as a whole; one absent
 * before and after, or not changed since the start, is not read.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "run.h"
#include "util.h"

static char dir[64];
static char path[128];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/sbx-test-later-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/c.json", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	return rmdir(dir);
}

static void put(const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* A config watching path's keys */
static void watching(struct sbx_config *c, const char *const *keys, size_t n)
{
	sbx_config_init(c);
	c->watch_keys = sbx_xcalloc(1, sizeof(*c->watch_keys));
	c->n_watch_keys = 1;
	c->watch_keys[0].path = sbx_xstrdup(path);
	for (size_t i = 0; i < n; i++)
		sbx_strv_push(&c->watch_keys[0].keys, keys[i]);
}

/* begin with before (NULL: no file), then write after (NULL: remove it),
 * and the one line said, or "" */
static char *changed(const struct sbx_config *c, const char *before, const char *after)
{
	struct sbx_later l = {0};
	struct sbx_strv out = {0};
	char *line;

	unlink(path);
	if (before)
		put(before);
	sbx_later_begin(&l, c);
	/* file times come from a coarse clock: a tick after the start */
	usleep(20000);
	if (after)
		put(after);
	else
		unlink(path);
	sbx_later_watch_changed(&l, c, &out);
	assert_true(out.n <= 1);
	line = sbx_xstrdup(out.n ? out.v[0] : "");
	sbx_strv_free(&out);
	sbx_later_free(&l);
	return line;
}

static void expect(const struct sbx_config *c, const char *before, const char *after,
		   const char *want_members)
{
	_cleanup_free_ char *got = changed(c, before, after);
	_cleanup_free_ char *want =
	    *want_members ? sbx_xasprintf("%s%s", path, want_members) : sbx_xstrdup("");

	assert_string_equal(got, want);
}

static void test_keys(void **state)
{
	static const char *const keys[] = {"mcpServers", "projects.*.allowedTools"};
	struct sbx_config c;

	(void)state;
	watching(&c, keys, 2);
	/* other members, and the order of the watched ones' members */
	expect(&c, "{\"n\": 1, \"mcpServers\": {\"a\": 1, \"b\": 2}}",
	       "{\"n\": 2, \"mcpServers\": {\"b\": 2, \"a\": 1}, \"tips\": [1]}", "");
	expect(&c, "{\"mcpServers\": {\"a\": 1}}", "{\"mcpServers\": {\"a\": 2}}", ": mcpServers");
	/* a project's, named with its key; a new project with empty lists
	 * is no change; a key is shown as it is */
	expect(&c, "{\"projects\": {\"/p\": {\"allowedTools\": []}}}",
	       "{\"projects\": {\"/p\": {\"allowedTools\": [\"Bash\"]}, \"/q\": "
	       "{\"allowedTools\": []}, \"/r\\\"\": {\"allowedTools\": [1]}}}",
	       ": projects[\"/p\"].allowedTools, projects[\"/r\"\"].allowedTools");
	/* removed: a member that held something is named */
	expect(&c, "{\"mcpServers\": {\"a\": 1}, \"projects\": {\"/p\": {\"allowedTools\": [1]}}}",
	       "{}", ": mcpServers, projects[\"/p\"].allowedTools");
	/* made, and removed, as a whole */
	expect(&c, NULL, "{\"mcpServers\": {\"x\": 1}}", ": mcpServers");
	expect(&c, "{\"mcpServers\": {\"x\": 1}}", NULL, ": mcpServers");
	expect(&c, NULL, NULL, "");
	expect(&c, NULL, "{\"n\": 1}", "");
	/* not JSON: after the run, named as a whole; before, taken as empty */
	expect(&c, "{\"mcpServers\": {}}", "{\"mcpServers\": ", " (not JSON after the run)");
	expect(&c, "{\"mcpServers\": ", "{\"mcpServers\": {\"y\": 1}}", ": mcpServers");
	/* a document that is not an object, a member that is not one */
	expect(&c, "[1]", "{\"projects\": 3}", "");
	sbx_config_free(&c);
}

/* More than eight members named: the rest counted */
static void test_many(void **state)
{
	static const char *const keys[] = {"projects.*.allowedTools"};
	struct sbx_config c;
	char after[1024] = "{\"projects\": {";
	_cleanup_free_ char *got = NULL;

	(void)state;
	for (int i = 0; i < 11; i++)
		snprintf(after + strlen(after), sizeof(after) - strlen(after),
			 "%s\"/p%d\": {\"allowedTools\": [1]}", i ? ", " : "", i);
	strcat(after, "}}");
	watching(&c, keys, 1);
	got = changed(&c, "{}", after);
	assert_non_null(strstr(got, "projects[\"/p7\"].allowedTools and 3 more"));
	assert_null(strstr(got, "/p8"));
	sbx_config_free(&c);
}

/* Not changed since the start (its time): not read again, not named,
 * even when its bytes would say otherwise (nothing wrote it) */
static void test_untouched(void **state)
{
	static const char *const keys[] = {"mcpServers"};
	struct sbx_config c;
	struct sbx_later l = {0};
	struct sbx_strv out = {0};

	(void)state;
	watching(&c, keys, 1);
	put("{\"mcpServers\": {\"a\": 1}}");
	usleep(20000);
	sbx_later_begin(&l, &c);
	sbx_later_watch_changed(&l, &c, &out);
	assert_int_equal(out.n, 0);
	sbx_later_free(&l);
	/* never begun: nothing said */
	sbx_later_watch_changed(&l, &c, &out);
	assert_int_equal(out.n, 0);
	sbx_config_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_keys, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_many, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_untouched, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
