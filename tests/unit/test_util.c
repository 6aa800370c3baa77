/* SPDX-License-Identifier: MIT */
/* tests/unit/test_util.c - the value parsers and small helpers of lib/util/util.c. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

static void size_is(const char *s, uint64_t want)
{
	struct sbx_err e;
	uint64_t v = 12345;

	if (sbx_parse_size(s, &v, &e) < 0)
		fail_msg("size '%s': %s", s, e.msg);
	assert_int_equal(v, want);
}

static void size_bad(const char *s)
{
	struct sbx_err e;
	uint64_t v = 12345;

	assert_int_equal(sbx_parse_size(s, &v, &e), -EINVAL);
	assert_int_equal(v, 12345);
	assert_non_null(strstr(e.msg, "bad size '"));
	assert_non_null(strstr(e.msg, s));
}

static void test_size(void **state)
{
	size_is("0", 0);
	size_is("10", 10);
	size_is("512k", 512ULL << 10);
	size_is("512K", 512ULL << 10);
	size_is("64m", 64ULL << 20);
	size_is("4G", 4ULL << 30);
	size_is("4g", 4ULL << 30);
	size_is("2t", 2ULL << 40);
	size_is("5kb", 5ULL << 10);
	size_is("5MB", 5ULL << 20);
	size_bad("");
	size_bad("k");
	size_bad("-1");
	size_bad(" 5");
	size_bad("5x");
	size_bad("5 k");
	size_bad("1.5g");
	size_bad("5kk");
	size_bad("99999999999t");	  /* overflows 64 bits */
	size_bad("99999999999999999999"); /* strtoull overflow */
}

static void dur_is(const char *s, uint64_t want_ms)
{
	struct sbx_err e;
	uint64_t v = 0;

	if (sbx_parse_duration(s, &v, &e) < 0)
		fail_msg("duration '%s': %s", s, e.msg);
	assert_int_equal(v, want_ms);
}

static void dur_bad(const char *s)
{
	struct sbx_err e;
	uint64_t v = 7;

	assert_int_equal(sbx_parse_duration(s, &v, &e), -EINVAL);
	assert_int_equal(v, 7);
	assert_non_null(strstr(e.msg, "bad duration '"));
}

static void test_duration(void **state)
{
	dur_is("500ms", 500);
	dur_is("90s", 90000);
	dur_is("90", 90000); /* plain number: seconds */
	dur_is("30m", 1800000);
	dur_is("30min", 1800000);
	dur_is("2h", 7200000);
	dur_is("1d", 86400000);
	dur_is("0s", 0);
	dur_bad("");
	dur_bad("s");
	dur_bad("5y");
	dur_bad("5 s");
	dur_bad("1.5h");
	dur_bad("-3s");
	dur_bad("99999999999999999d");
}

/* The text form parses back to the same duration: profile show writes it,
 * the run log and inspect print it. */
static void test_duration_text(void **state)
{
	static const uint64_t ms[] = {0, 1, 500, 1500, 90000, 1800000, 7200000, 86400000, 90061000};
	static const char *const want[] = {"0ms", "1ms", "500ms", "1500ms", "90s",
					   "30m", "2h",	 "1d",	  "90061s"};
	char buf[32];

	(void)state;
	for (size_t i = 0; i < SBX_ARRAY_SIZE(ms); i++) {
		assert_string_equal(sbx_duration_text(ms[i], buf, sizeof(buf)), want[i]);
		dur_is(buf, ms[i]);
	}
}

/* An empty directory has no entry; one file, a subdirectory or a dangling
 * symlink in it is one; a missing one or a symlink to one is none. */
static void test_dir_has_entry(void **state)
{
	char dir[] = "/tmp/sbx-test-util-XXXXXX";
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(mkdirat(fd, "e", 0700), 0);
	assert_int_equal(symlinkat("e", fd, "l"), 0);
	assert_false(sbx_dir_has_entry(fd, "e"));
	assert_false(sbx_dir_has_entry(fd, "l"));
	assert_false(sbx_dir_has_entry(fd, "missing"));
	assert_true(sbx_dir_has_entry(fd, "."));
	assert_int_equal(symlinkat("/nowhere", fd, "e/x"), 0);
	assert_true(sbx_dir_has_entry(fd, "e"));
	assert_int_equal(unlinkat(fd, "e/x", 0), 0);
	assert_int_equal(unlinkat(fd, "e", AT_REMOVEDIR), 0);
	assert_int_equal(unlinkat(fd, "l", 0), 0);
	assert_false(sbx_dir_has_entry(fd, "."));
	close(fd);
	assert_int_equal(rmdir(dir), 0);
}

/* Open path with sbx_open_users_file (truncating) and close it: the
 * file's owner afterwards, as "uid:gid". */
static const char *opened_owner(const char *path)
{
	static char buf[64];
	struct stat st;
	int fd = sbx_open_users_file(path, O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(stat(path, &st), 0);
	snprintf(buf, sizeof(buf), "%u:%u", (unsigned)st.st_uid, (unsigned)st.st_gid);
	return buf;
}

/* A file made where $SUDO_UID's user owns the directory is theirs (as
 * root); one that was there, or in another's directory, keeps its owner;
 * a symlink at the path is written through, never given away. */
static void test_open_users_file(void **state)
{
	char dir[] = "/tmp/sbx-test-util-XXXXXX", p[256], q[256], t[256], me[64];
	struct stat st;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/new.txt", dir);
	snprintf(q, sizeof(q), "%s/link.txt", dir);
	snprintf(t, sizeof(t), "%s/target.txt", dir);
	snprintf(me, sizeof(me), "%u:%u", (unsigned)getuid(), (unsigned)getgid());
	/* no sudo: the caller's, created, then truncated */
	unsetenv("SUDO_UID");
	fd = sbx_open_users_file(p, O_WRONLY | O_TRUNC | O_CLOEXEC, 0640);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "abc", 3), 3);
	close(fd);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0640 & ~umask(022));
	assert_string_equal(opened_owner(p), me);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_size, 0);
	assert_int_equal(sbx_open_users_file("/nonexistent-dir/x", O_WRONLY, 0644), -ENOENT);
	if (getuid() == 0) {
		setenv("SUDO_UID", "4242", 1);
		setenv("SUDO_GID", "4343", 1);
		/* the directory is root's: stays root's */
		assert_int_equal(unlink(p), 0);
		assert_string_equal(opened_owner(p), "0:0");
		/* the user's directory: a new file is theirs, an old one not */
		assert_int_equal(chown(dir, 4242, 4343), 0);
		assert_string_equal(opened_owner(p), "0:0");
		assert_int_equal(unlink(p), 0);
		assert_string_equal(opened_owner(p), "4242:4343");
		/* a symlink the user left there: written through, not given away */
		assert_string_equal(opened_owner(t), "4242:4343");
		assert_int_equal(chown(t, 0, 0), 0);
		assert_int_equal(symlink(t, q), 0);
		assert_string_equal(opened_owner(q), "0:0");
		assert_int_equal(unlink(q), 0);
		assert_int_equal(unlink(t), 0);
		unsetenv("SUDO_UID");
		unsetenv("SUDO_GID");
	}
	assert_int_equal(unlink(p), 0);
	assert_int_equal(rmdir(dir), 0);
}

/* $SUDO_UID and $SUDO_GID: decimal ids below (id_t)-1 only. */
static void test_env_id(void **state)
{
	(void)state;
	setenv("SBX_TEST_ID", "1000", 1);
	assert_int_equal(sbx_env_id("SBX_TEST_ID"), 1000);
	setenv("SBX_TEST_ID", "0", 1);
	assert_int_equal(sbx_env_id("SBX_TEST_ID"), 0);
	for (const char *const *b = (const char *const[]){"", "-1", "1000x", " 1", "4294967295",
							  "99999999999999999999", NULL};
	     *b; b++) {
		setenv("SBX_TEST_ID", *b, 1);
		assert_int_equal(sbx_env_id("SBX_TEST_ID"), -1);
	}
	unsetenv("SBX_TEST_ID");
	assert_int_equal(sbx_env_id("SBX_TEST_ID"), -1);
}

/* Users and groups from a passwd and a group file, without NSS. */
static void test_user_group_in(void **state)
{
	char pf[] = "/tmp/sbx-test-passwd.XXXXXX", gf[] = "/tmp/sbx-test-group.XXXXXX";
	int pfd = mkstemp(pf), gfd = mkstemp(gf);
	const char *pw_text = "root:x:0:0:root:/root:/bin/bash\n"
			      "a line that is no entry, skipped\n"
			      "dev:x:1000:1000:Dev:/home/dev:/bin/sh\n";
	const char *gr_text = "root:x:0:\nstaff:x:50:dev,ops\n";
	struct passwd *pw;
	struct group *gr;

	(void)state;
	assert_true(pfd >= 0 && gfd >= 0);
	assert_int_equal(write(pfd, pw_text, strlen(pw_text)), (ssize_t)strlen(pw_text));
	assert_int_equal(write(gfd, gr_text, strlen(gr_text)), (ssize_t)strlen(gr_text));
	close(pfd);
	close(gfd);
	pw = sbx_user_in(pf, 1000);
	assert_non_null(pw);
	assert_string_equal(pw->pw_name, "dev");
	assert_string_equal(pw->pw_dir, "/home/dev");
	assert_int_equal(pw->pw_gid, 1000);
	assert_null(sbx_user_in(pf, 4321));
	gr = sbx_group_in(gf, 50);
	assert_non_null(gr);
	assert_string_equal(gr->gr_name, "staff");
	assert_null(sbx_group_in(gf, 4321));
	assert_null(sbx_user_in("/nonexistent/passwd", 0));
	/* the process's own lookups: root is listed everywhere */
	pw = sbx_user(0);
	assert_non_null(pw);
	assert_string_equal(pw->pw_name, "root");
	unlink(pf);
	unlink(gf);
}

static void test_bool(void **state)
{
	static const char *const yes[] = {"yes", "true", "1", "on", "YES", "True", "ON"};
	static const char *const no[] = {"no", "false", "0", "off", "No", "FALSE"};
	static const char *const bad[] = {"", "maybe", "y", "n", "2", "yess"};
	struct sbx_err e;
	bool b;

	for (size_t i = 0; i < SBX_ARRAY_SIZE(yes); i++) {
		b = false;
		assert_int_equal(sbx_parse_bool(yes[i], &b, &e), 0);
		assert_true(b);
	}
	for (size_t i = 0; i < SBX_ARRAY_SIZE(no); i++) {
		b = true;
		assert_int_equal(sbx_parse_bool(no[i], &b, &e), 0);
		assert_false(b);
	}
	for (size_t i = 0; i < SBX_ARRAY_SIZE(bad); i++) {
		assert_int_equal(sbx_parse_bool(bad[i], &b, &e), -EINVAL);
		assert_non_null(strstr(e.msg, "bad boolean"));
	}
}

static void test_u64(void **state)
{
	struct sbx_err e;
	uint64_t v = 0;

	assert_int_equal(sbx_parse_u64("18446744073709551615", &v, &e), 0);
	assert_int_equal(v, UINT64_MAX);
	assert_int_equal(sbx_parse_u64("42", &v, &e), 0);
	assert_int_equal(v, 42);
	assert_int_equal(sbx_parse_u64("18446744073709551616", &v, &e), -EINVAL);
	assert_int_equal(sbx_parse_u64("", &v, &e), -EINVAL);
	assert_int_equal(sbx_parse_u64("-1", &v, &e), -EINVAL);
	assert_int_equal(sbx_parse_u64("4k", &v, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "'4k' is not a number"));
}

static void test_edit_distance(void **state)
{
	static const char *const keys[] = {"memory", "pids", "cpus", "time", "nofile"};
	static const char *const cmds[] = {"destroy", "exec", "export", "inspect"};

	assert_int_equal(sbx_edit_distance("kitten", "sitting"), 3);
	assert_int_equal(sbx_edit_distance("", "abc"), 3);
	assert_int_equal(sbx_edit_distance("abc", ""), 3);
	assert_int_equal(sbx_edit_distance("same", "same"), 0);
	assert_int_equal(sbx_edit_distance("MEMORY", "memory"), 0); /* case-insensitive */
	assert_int_equal(sbx_edit_distance("memroy", "memory"), 2);
	assert_string_equal(sbx_closest("memroy", keys, 5), "memory");
	assert_string_equal(sbx_closest("pid", keys, 5), "pids");
	assert_string_equal(sbx_closest("nofiles", keys, 5), "nofile");
	assert_null(sbx_closest("xyzzyplugh", keys, 5));
	assert_string_equal(sbx_closest("insp", cmds, 4), "inspect"); /* a prefix */
	assert_null(sbx_closest("anything", keys, 0));
}

static void escaped_is(const char *in, const char *want)
{
	char *out = sbx_escape_display(in);

	assert_string_equal(out, want);
	free(out);
}

static void test_escape(void **state)
{
	escaped_is("plain text", "plain text");
	escaped_is("a\nb\tc\rd", "a\\nb\\tc\\rd");
	escaped_is("back\\slash", "back\\\\slash");
	escaped_is("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m");
	escaped_is("bell\a del\x7f", "bell\\x07 del\\x7f");
	escaped_is("caf\xc3\xa9 \xe2\x9c\x93", "caf\xc3\xa9 \xe2\x9c\x93"); /* valid UTF-8 kept */
	escaped_is("\xc2\x9b"
		   "c1",
		   "\\xc2\\x9bc1"); /* C1 control (CSI) escaped */
	escaped_is("bad \xff\xfe", "bad \\xff\\xfe");
	escaped_is("trunc \xe2\x9c", "trunc \\xe2\\x9c");
	escaped_is("overlong \xc0\xaf", "overlong \\xc0\\xaf");
	escaped_is("", "");
	/* sbx's stderr lines: controls escaped, a backslash kept as it is */
	char *c = sbx_escape_controls("a\\n\nb \x1b[2J \xff");

	assert_string_equal(c, "a\\n\\nb \\x1b[2J \\xff");
	free(c);
}

static void test_hex(void **state)
{
	unsigned char back[4];
	char hex[9];

	sbx_hex_encode("\x00\xe9\x7f\xff", 4, hex);
	assert_string_equal(hex, "00e97fff");
	assert_int_equal(sbx_hex_decode("00E97fff", back), 0);
	assert_memory_equal(back, "\x00\xe9\x7f\xff", 4);
	assert_int_equal(sbx_hex_decode("abc", back), -1);
	assert_int_equal(sbx_hex_decode("zz", back), -1);
}

static void test_utf8(void **state)
{
	assert_true(sbx_utf8_valid("abc", 3));
	assert_true(sbx_utf8_valid("\xc3\xa9", 2));
	assert_true(sbx_utf8_valid("\xf0\x9f\x98\x80", 4));
	assert_false(sbx_utf8_valid("\xc3", 1));
	assert_false(sbx_utf8_valid("\xc0\xaf", 2));	     /* overlong */
	assert_false(sbx_utf8_valid("\xed\xa0\x80", 3));     /* surrogate */
	assert_false(sbx_utf8_valid("\xf4\x90\x80\x80", 4)); /* > U+10FFFF */
	assert_false(sbx_utf8_valid("\xff", 1));
}

static void test_errors(void **state)
{
	struct sbx_err e;
	char buf[256];

	assert_int_equal(sbx_err_set(&e, ENOENT, "cannot open '%s'", "x"), -ENOENT);
	assert_string_equal(sbx_err_str(&e, buf, sizeof(buf)),
			    "cannot open 'x': No such file or directory");
	assert_int_equal(sbx_err_wrap(&e, "profile '%s'", "p"), -ENOENT);
	assert_string_equal(e.msg, "profile 'p': cannot open 'x'");
	assert_int_equal(sbx_err_set(&e, 0, "plain"), -EINVAL);
	assert_string_equal(sbx_err_str(&e, buf, sizeof(buf)), "plain");
	sbx_err_set(&e, EPERM, "x: %s", strerror(EPERM)); /* not repeated */
	assert_string_equal(sbx_err_str(&e, buf, sizeof(buf)), "x: Operation not permitted");
	sbx_err_clear(&e);
	assert_int_equal(e.errnum, 0);
	assert_string_equal(e.msg, "");
	assert_int_equal(sbx_err_set(NULL, EIO, "ignored"), -EIO);
}

static void test_strv(void **state)
{
	struct sbx_strv s = {0};

	sbx_strv_push(&s, "a");
	sbx_strv_push_take(&s, sbx_xstrdup("b"));
	assert_int_equal(s.n, 2);
	assert_null(s.v[2]);
	assert_true(sbx_strv_contains(&s, "b"));
	assert_false(sbx_strv_contains(&s, "c"));
	sbx_strv_free(&s);
	assert_int_equal(s.n, 0);
	assert_null(s.v);
}

/* sbx_path_clean: "//", "." and a trailing "/" go; ".." kept, taken back
 * with the component before it (never above "/"), or refused. */
static void test_path_clean(void **state)
{
	static const struct {
		const char *in, *keep, *collapse;
	} t[] = {
	    {"/", "/", "/"},
	    {"//a//./b/", "/a/b", "/a/b"},
	    {"/a/b/../c", "/a/b/../c", "/a/c"},
	    {"/a/../../b", "/a/../../b", "/b"},
	    {"/..", "/..", "/"},
	    {"/a/.git/../.gitconfig", "/a/.git/../.gitconfig", "/a/.gitconfig"},
	};
	char *s;

	(void)state;
	for (size_t i = 0; i < SBX_ARRAY_SIZE(t); i++) {
		s = sbx_path_clean(t[i].in, SBX_DOTDOT_KEEP);
		assert_string_equal(s, t[i].keep);
		free(s);
		s = sbx_path_clean(t[i].in, SBX_DOTDOT_COLLAPSE);
		assert_string_equal(s, t[i].collapse);
		free(s);
	}
	assert_null(sbx_path_clean("/a/../b", SBX_DOTDOT_REFUSE));
	s = sbx_path_clean("/a/./b", SBX_DOTDOT_REFUSE);
	assert_string_equal(s, "/a/b");
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_size),
	    cmocka_unit_test(test_duration),
	    cmocka_unit_test(test_duration_text),
	    cmocka_unit_test(test_dir_has_entry),
	    cmocka_unit_test(test_open_users_file),
	    cmocka_unit_test(test_env_id),
	    cmocka_unit_test(test_user_group_in),
	    cmocka_unit_test(test_bool),
	    cmocka_unit_test(test_u64),
	    cmocka_unit_test(test_edit_distance),
	    cmocka_unit_test(test_escape),
	    cmocka_unit_test(test_hex),
	    cmocka_unit_test(test_path_clean),
	    cmocka_unit_test(test_utf8),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_strv),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
