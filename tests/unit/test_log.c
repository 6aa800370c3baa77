/* SPDX-License-Identifier: MIT */
/* tests/unit/test_log.c - the run log: JSON lines, escaping, sinks, concurrency. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <string.h>
#include <sys/wait.h>

#include "log.h"

static void test_line_is_one_valid_ascii_json_line(void **state)
{
	json_t *ev = json_pack("{s:s, s:s, s:o}", "event", "start", "cmd",
			       "a\nb\r\"c\"\\ \x1b[2J \xc3\xa9 \xe2\x82\xac", "n", json_integer(42));
	char *line = sbx_log_line(ev);
	size_t n = strlen(line);

	assert_true(n > 2);
	assert_int_equal(line[n - 1], '\n');
	assert_null(memchr(line, '\n', n - 1));	/* one line */
	for (size_t i = 0; i < n; i++)		/* ASCII only, no raw control chars */
		assert_true((unsigned char)line[i] < 0x80 &&
			    ((unsigned char)line[i] >= 0x20 || line[i] == '\n'));
	json_t *back = json_loads(line, 0, NULL);
	assert_non_null(back);
	assert_true(json_equal(back, ev));
	json_decref(back);
	json_decref(ev);
	free(line);
}

static void test_lossy_strings(void **state)
{
	json_t *j = sbx_json_string_lossy("ok \xc3\xa9", 5);

	assert_string_equal(json_string_value(j), "ok \xc3\xa9");
	json_decref(j);
	j = sbx_json_string_lossy("a\xff" "b\xc3", 4);
	assert_non_null(j);
	assert_string_equal(json_string_value(j), "a\xef\xbf\xbd" "b\xef\xbf\xbd");
	json_decref(j);
	j = sbx_json_string_lossy("a\0b", 3);
	assert_int_equal(json_string_length(j), 5);
	assert_memory_equal(json_string_value(j), "a\xef\xbf\xbd" "b", 5);
	json_decref(j);
	/* overlong encodings and surrogates are invalid too */
	j = sbx_json_string_lossy("\xc0\xaf\xed\xa0\x80", 5);
	assert_true(sbx_utf8_valid(json_string_value(j), json_string_length(j)));
	assert_null(strchr(json_string_value(j), '/'));
	json_decref(j);
	j = sbx_json_string_lossy(NULL, 0);
	assert_true(json_is_null(j));
	json_decref(j);
}

struct seen {
	int n;
	char last[32];
};

static void human(const json_t *ev, void *data)
{
	struct seen *s = data;

	s->n++;
	snprintf(s->last, sizeof(s->last), "%s", json_string_value(json_object_get(ev, "event")));
}

static void test_sinks(void **state)
{
	struct sbx_log l;
	struct seen s = { 0 };
	int p[2];
	char buf[4096];
	ssize_t n;

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	sbx_log_init(&l);
	sbx_log_add_fd(&l, p[1]);
	l.human = human;
	l.human_data = &s;
	sbx_log_event(&l, "phase", json_pack("{s:s, s:f}", "name", "mounts", "ms", 1.5));
	/* fields cannot override ts and event */
	sbx_log_event(&l, "exit", json_pack("{s:s, s:s, s:i}", "event", "forged", "ts", "x",
					    "code", 3));
	sbx_log_event(&l, "kept", NULL);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.last, "kept");
	assert_int_equal(json_array_size(l.events), 3);
	close(p[1]);
	n = read(p[0], buf, sizeof(buf) - 1);
	assert_true(n > 0);
	buf[n] = '\0';
	close(p[0]);
	char *save = NULL;
	int lines = 0;
	for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		json_t *ev = json_loads(line, 0, NULL);

		assert_non_null(ev);
		assert_non_null(json_string_value(json_object_get(ev, "ts")));
		assert_string_not_equal(json_string_value(json_object_get(ev, "ts")), "x");
		if (lines == 0)
			assert_string_equal(json_string_value(json_object_get(ev, "name")), "mounts");
		if (lines == 1) {
			assert_string_equal(json_string_value(json_object_get(ev, "event")), "exit");
			assert_int_equal(json_integer_value(json_object_get(ev, "code")), 3);
		}
		json_decref(ev);
		lines++;
	}
	assert_int_equal(lines, 3);
	/* ts is RFC 3339 UTC with milliseconds */
	const char *ts = json_string_value(json_object_get(json_array_get(l.events, 0), "ts"));
	assert_int_equal(strlen(ts), 24);
	assert_int_equal(ts[10], 'T');
	assert_int_equal(ts[23], 'Z');
	sbx_log_free(&l);
}

/* Ten processes log to one O_APPEND file: every line stays whole. */
static void test_concurrent_appends(void **state)
{
	char path[] = "/tmp/sbx-test-log.XXXXXX";
	int fd = mkstemp(path);
	FILE *f;
	char *line = NULL;
	size_t cap = 0;
	int lines = 0;

	assert_true(fd >= 0);
	close(fd);
	for (int i = 0; i < 10; i++) {
		if (fork() == 0) {
			struct sbx_log l;
			int afd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
			char pad[3000];

			memset(pad, 'a' + i, sizeof(pad) - 1);
			pad[sizeof(pad) - 1] = '\0';
			sbx_log_init(&l);
			sbx_log_add_fd(&l, afd);
			for (int k = 0; k < 100; k++)
				sbx_log_event(&l, "net", json_pack("{s:i, s:i, s:s}", "proc", i, "k",
								   k, "pad", pad));
			sbx_log_free(&l);
			_exit(0);
		}
	}
	for (int i = 0; i < 10; i++)
		wait(NULL);
	f = fopen(path, "re");
	while (getline(&line, &cap, f) > 0) {
		json_t *ev = json_loads(line, 0, NULL);

		assert_non_null(ev);
		assert_int_equal(strlen(json_string_value(json_object_get(ev, "pad"))), 2999);
		json_decref(ev);
		lines++;
	}
	free(line);
	fclose(f);
	unlink(path);
	assert_int_equal(lines, 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_line_is_one_valid_ascii_json_line),
		cmocka_unit_test(test_lossy_strings),
		cmocka_unit_test(test_sinks),
		cmocka_unit_test(test_concurrent_appends),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
