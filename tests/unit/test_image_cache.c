/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_image_cache.c - lib/image's cache: sbx_image_prepare()
 * keys images by content, hits without hashing or unpacking, survives two
 * processes unpacking the same tarball at once (one image, no leftovers),
 * ignores and later removes the .tmp- directory of a crashed unpack, and
 * re-unpacks an image that went missing.  Runs as root and as nobody.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sys/file.h>

#include "image_fixture.h"
#include "rmtree.h"

/* ---- the cache ---- */

static char *prepare(const char *tar, struct sbx_image_stats *st)
{
	struct sbx_image_opts o = opts();
	struct sbx_err err = { 0 };
	char *dir = NULL;
	int r = sbx_image_prepare(tar, &o, &dir, st, &err);

	if (r < 0)
		print_message("prepare: %s\n", err.msg);
	assert_int_equal(r, 0);
	return dir;
}

static size_t count_tmp(void)
{
	char p[PATH_MAX];
	DIR *d;
	struct dirent *de;
	size_t n = 0;

	pathf(p, "%s/images", cache);
	d = opendir(p);
	assert_non_null(d);
	while ((de = readdir(d)))
		n += strncmp(de->d_name, ".tmp-", 5) == 0;
	closedir(d);
	return n;
}

static const struct ent small_img[] = {
	{ "./etc/", 'd', 0, NULL, 0 },
	{ "./etc/hostname", 'f', 0, "img\n", 0 },
	{ "./big", 'f', 0, NULL, 8 << 20 },
};

static void test_prepare_cache_hit(void **state)
{
	struct sbx_image_stats s1, s2, s3;
	const char *t = make_tar("img.tar.gz", small_img, SBX_ARRAY_SIZE(small_img), 'g');
	char copy[PATH_MAX], cmd[PATH_MAX * 3], sha[65];
	char *d1, *d2, *d3, *want;
	struct stat a, b;

	(void)state;
	d1 = prepare(t, &s1);
	assert_false(s1.cached);
	assert_false(s1.is_dir);
	sha256_file(t, sha);
	assert_string_equal(s1.sha256, sha);
	want = geteuid() == 0 ? sbx_xasprintf("%s/images/%s", cache, sha)
			      : sbx_xasprintf("%s/images/%s-u%u", cache, sha, (unsigned)geteuid());
	assert_string_equal(d1, want);
	assert_int_equal(stat(d1, &a), 0);
	d2 = prepare(t, &s2);
	assert_true(s2.cached);
	assert_int_equal(s2.entries, 0);	/* nothing unpacked */
	assert_true(s2.hash_ms == 0.0);		/* nor hashed */
	assert_string_equal(s2.sha256, sha);
	assert_string_equal(d1, d2);
	assert_int_equal(stat(d2, &b), 0);
	assert_int_equal(a.st_ino, b.st_ino);
	/* Same content elsewhere: hashed, found to be the same image. */
	pathf(copy, "%s/tars/copy.tar.gz", base);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", t, copy);
	assert_int_equal(system(cmd), 0);
	d3 = prepare(copy, &s3);
	assert_string_equal(d3, d1);
	assert_int_equal(stat(d3, &b), 0);
	assert_int_equal(a.st_ino, b.st_ino);
	assert_int_equal(count_tmp(), 0);
	/* A modified tarball is a different image. */
	free(d3);
	snprintf(cmd, sizeof(cmd), "printf x >> '%s'", copy);
	assert_int_equal(system(cmd), 0);
	{
		struct sbx_image_opts o = opts();
		struct sbx_err err = { 0 };

		d3 = NULL;
		if (sbx_image_prepare(copy, &o, &d3, &s3, &err) == 0) {
			assert_false(s3.cached);
			assert_string_not_equal(s3.sha256, sha);
			assert_string_not_equal(d3, d1);
		} else {
			assert_null(d3);
		}
		free(d3);
		assert_int_equal(count_tmp(), 0);
	}
	free(d1);
	free(d2);
	free(want);
}

static void test_prepare_concurrent(void **state)
{
	const struct ent e[] = {
		{ "a/", 'd', 0, NULL, 0 },
		{ "a/one", 'f', 0, NULL, 24 << 20 },
		{ "a/two", 'f', 0, NULL, 24 << 20 },
	};
	const char *t = make_tar("conc.tar", e, SBX_ARRAY_SIZE(e), 0);
	char p[PATH_MAX];
	int go[2];
	pid_t pids[2];
	struct sbx_image_stats st;
	char *d;

	(void)state;
	assert_int_equal(pipe(go), 0);
	for (int i = 0; i < 2; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0) {
			struct sbx_image_opts o = opts();
			struct sbx_err err = { 0 };
			char c, *dir = NULL;

			close(go[1]);
			(void)!read(go[0], &c, 1); /* start together */
			_exit(sbx_image_prepare(t, &o, &dir, NULL, &err) == 0 && dir ? 0 : 1);
		}
	}
	close(go[0]);
	close(go[1]);
	for (int i = 0; i < 2; i++) {
		int ws;

		assert_int_equal(waitpid(pids[i], &ws, 0), pids[i]);
		assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
	}
	pathf(p, "%s/images", cache);
	assert_int_equal(count_entries(p), 3); /* by-stat, one image, its summary */
	assert_int_equal(count_tmp(), 0);
	d = prepare(t, &st);
	assert_true(st.cached);
	pathf(p, "%s/a/two", d);
	{
		struct stat sb;

		assert_int_equal(stat(p, &sb), 0);
		assert_int_equal(sb.st_size, 24 << 20);
	}
	free(d);
}

static void test_prepare_crash_leftovers(void **state)
{
	char t[PATH_MAX], p[PATH_MAX], q[PATH_MAX];
	struct sbx_image_stats st;
	struct timespec old[2] = { { time(NULL) - 3600, 0 }, { time(NULL) - 3600, 0 } };
	char *d;

	(void)state;
	pathf(t, "%s", make_tar("crash.tar", small_img, SBX_ARRAY_SIZE(small_img), 0));
	/* A crashed unpack of this very tarball left a half image behind. */
	pathf(p, "%s/images/by-stat", cache);
	assert_int_equal(sbx_mkdir_p(p, 0700), 0);
	pathf(p, "%s/images/.tmp-crashed", cache);
	assert_int_equal(mkdir(p, 0700), 0);
	pathf(q, "%s/half", p);
	put(q, "half");
	d = prepare(t, &st);
	assert_false(st.cached);
	assert_null(strstr(d, ".tmp-"));
	pathf(q, "%s/etc/hostname", d);
	assert_true(access(q, F_OK) == 0);
	pathf(q, "%s/half", d);
	assert_false(access(q, F_OK) == 0);
	/* Fresh: left alone (it could be an unpack in progress). */
	assert_int_equal(count_tmp(), 1);
	/* Old and unlocked: removed by the next unpack.  Old but locked (an
	 * unpack still running): kept. */
	assert_int_equal(utimensat(AT_FDCWD, p, old, 0), 0);
	pathf(q, "%s/images/.tmp-busy", cache);
	assert_int_equal(mkdir(q, 0700), 0);
	assert_int_equal(utimensat(AT_FDCWD, q, old, 0), 0);
	{
		int busy = open(q, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		const struct ent e2[] = { { "other", 'f', 0, "o", 0 } };
		const char *t2 = make_tar("other.tar", e2, 1, 0);

		assert_true(busy >= 0);
		assert_int_equal(flock(busy, LOCK_EX), 0);
		free(d);
		d = prepare(t2, &st);
		assert_false(st.cached);
		assert_int_equal(count_tmp(), 1);
		assert_int_equal(access(q, F_OK), 0);
		close(busy);
		assert_int_equal(rmdir(q), 0);
	}
	assert_int_equal(count_tmp(), 0);
	free(d);
	/* The index points at an image that was removed: unpacked again. */
	d = prepare(t, &st);
	assert_true(st.cached);
	assert_int_equal(sbx_rm_rf_at(AT_FDCWD, d), 0);
	free(d);
	d = prepare(t, &st);
	assert_false(st.cached);
	pathf(q, "%s/etc/hostname", d);
	assert_true(access(q, F_OK) == 0);
	free(d);
}

/* A cached image that lost or changed files is an error, not a broken jail. */
static void test_prepare_damaged(void **state)
{
	/* Shell command: damage[i][0] 'IMAGE'damage[i][1] */
	static const char *const damage[][2] = {
		{ "rm -f", "/etc/hostname" }, { ": >", "/big" },
		{ "mkdir", "/extra" }, { "rm -f", "/../.sum-*" },
	};
	const char *t = make_tar("dmg.tar.gz", small_img, SBX_ARRAY_SIZE(small_img), 'g');
	struct sbx_image_opts o = opts();
	struct sbx_image_stats st;

	(void)state;
	for (size_t i = 0; i < SBX_ARRAY_SIZE(damage); i++) {
		struct sbx_err err = { 0 };
		char *d = prepare(t, &st), *cmd, *d2 = NULL;

		assert_false(st.cached);
		free(prepare(t, &st));
		assert_true(st.cached); /* intact: fine */
		assert_int_equal(sbx_image_verify(o.cache_dir, d, &err), 0);
		cmd = sbx_xasprintf("%s '%s'%s", damage[i][0], d, damage[i][1]);
		assert_int_equal(system(cmd), 0);
		/* what sbx run asks after a failed command */
		assert_int_equal(sbx_image_verify(o.cache_dir, d, &err), -EUCLEAN);
		assert_non_null(strstr(err.msg, d));
		assert_int_equal(sbx_image_prepare(t, &o, &d2, &st, &err), -EUCLEAN);
		assert_null(d2);
		o.no_verify = true; /* the caller's choice: used as it is */
		assert_int_equal(sbx_image_prepare(t, &o, &d2, &st, &err), 0);
		assert_true(st.cached);
		assert_string_equal(d2, d);
		free(d2);
		d2 = NULL;
		o.no_verify = false;
		assert_non_null(strstr(err.msg, "remove"));
		print_message("%s\n", err.msg);
		/* Removing the image, as the message says, repairs it. */
		assert_int_equal(sbx_rm_rf_at(AT_FDCWD, d), 0);
		free(prepare(t, &st));
		assert_false(st.cached);
		assert_int_equal(sbx_rm_rf_at(AT_FDCWD, d), 0);
		free(cmd);
		free(d);
	}
}

static void test_prepare_dir_and_errors(void **state)
{
	struct sbx_image_opts o = opts();
	struct sbx_image_stats st;
	struct sbx_err err = { 0 };
	char p[PATH_MAX];
	char *d = NULL;

	(void)state;
	d = prepare(sentinel, &st);
	assert_true(st.is_dir);
	assert_string_equal(d, sentinel);
	free(d);
	d = NULL;
	pathf(p, "%s/nope.tar", base);
	assert_int_equal(sbx_image_prepare(p, &o, &d, &st, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "nope.tar"));
	pathf(p, "%s/secret", sentinel);
	assert_true(sbx_image_prepare(p, &o, &d, &st, &err) < 0);
	assert_non_null(strstr(err.msg, "secret"));
	assert_null(d);
	assert_int_equal(count_tmp(), 0);
	pathf(p, "%s/images", cache);
	assert_int_equal(count_entries(p), 1); /* by-stat only */
	/* sbx_image_verify() checks only images of that cache */
	assert_int_equal(sbx_image_verify(o.cache_dir, sentinel, &err), -EINVAL);
	pathf(p, "%s/images/%064d", cache, 0);
	assert_int_equal(sbx_image_verify(o.cache_dir, p, &err), -EUCLEAN);
	assert_int_equal(sbx_image_verify(o.cache_dir, "", &err), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_prepare_cache_hit),
		T(test_prepare_concurrent),
		T(test_prepare_crash_leftovers),
		T(test_prepare_damaged),
		T(test_prepare_dir_and_errors),
#undef T
	};

	umask(022);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
