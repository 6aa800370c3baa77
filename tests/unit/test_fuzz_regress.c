/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_fuzz_regress.c - replay every input that once crashed a
 * fuzz harness (tests/fuzz/regress/<harness>/) and the seed corpus
 * (tests/fuzz/corpus/<harness>/) through the harnesses' own code, built
 * here without libFuzzer (and without sanitizers unless the tree is built
 * with SANITIZE=...).  A harness aborts on a failed check (a profile that
 * does not survive its round trip, an archive that wrote outside its
 * scratch directory, a parsed seccomp policy that does not compile, a
 * proxy request rewritten into two), so a regression fails this test even when no
 * sanitizer watches.  Run from the top of the tree; SBX_FUZZ_DIR overrides
 * tests/fuzz.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/* The harnesses themselves, under names of their own. */
#define LLVMFuzzerTestOneInput fuzz_profile_one
#include "../fuzz/fuzz_profile.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_image_one
#define LLVMFuzzerInitialize fuzz_image_init
#include "../fuzz/fuzz_image.c"
#undef LLVMFuzzerTestOneInput
#undef LLVMFuzzerInitialize
#define LLVMFuzzerTestOneInput fuzz_seccomp_one
#include "../fuzz/fuzz_seccomp.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_proxy_one
#include "../fuzz/fuzz_proxy.c"
#include "rmtree.h"
#undef LLVMFuzzerTestOneInput

typedef int (*one_fn)(const uint8_t *data, size_t size);

static const char *fuzz_dir(void)
{
	const char *d = getenv("SBX_FUZZ_DIR");

	return d && *d ? d : "tests/fuzz";
}

/* Feed every regular file of DIR/SUB/HARNESS to fn; returns how many. */
static size_t replay_dir(const char *sub, const char *harness, one_fn fn)
{
	_cleanup_free_ char *dir = sbx_xasprintf("%s/%s/%s", fuzz_dir(), sub, harness);
	struct dirent *de;
	size_t n = 0;
	DIR *d = opendir(dir);

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		_cleanup_free_ char *path = sbx_xasprintf("%s/%s", dir, de->d_name);
		_cleanup_close_ int fd = -1;
		struct stat sb;
		uint8_t *buf;

		if (de->d_name[0] == '.')
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		assert_true(fd >= 0);
		assert_int_equal(fstat(fd, &sb), 0);
		if (!S_ISREG(sb.st_mode))
			continue;
		buf = malloc((size_t)sb.st_size + 1);
		assert_non_null(buf);
		assert_int_equal(sbx_read_all(fd, buf, (size_t)sb.st_size), sb.st_size);
		print_message("replay %s\n", path);
		assert_int_equal(fn(buf, (size_t)sb.st_size), 0);
		free(buf);
		n++;
	}
	closedir(d);
	return n;
}

static void test_profile(void **state)
{
	size_t n;

	(void)state;
	n = replay_dir("regress", "profile", fuzz_profile_one);
	n += replay_dir("corpus", "profile", fuzz_profile_one);
	assert_true(n > 0);
}

/* The image harness unpacks into $TMPDIR/sbx-fuzz-image-*: a private one. */
static void test_image(void **state)
{
	char tmp[] = "/tmp/sbx-fuzz-regress-XXXXXX";
	size_t regress, n;

	(void)state;
	assert_non_null(mkdtemp(tmp));
	assert_int_equal(setenv("TMPDIR", tmp, 1), 0);
	fuzz_image_init(NULL, NULL);
	regress = replay_dir("regress", "image", fuzz_image_one);
	n = regress + replay_dir("corpus", "image", fuzz_image_one);
	assert_int_equal(sbx_rm_rf_at(AT_FDCWD, tmp), 0);
	assert_true(regress > 0);
	assert_true(n > regress);
}

static void test_seccomp(void **state)
{
	size_t n;

	(void)state;
	n = replay_dir("regress", "seccomp", fuzz_seccomp_one);
	n += replay_dir("corpus", "seccomp", fuzz_seccomp_one);
	assert_true(n > 0);
}

static void test_proxy(void **state)
{
	size_t n;

	(void)state;
	n = replay_dir("regress", "proxy", fuzz_proxy_one);
	n += replay_dir("corpus", "proxy", fuzz_proxy_one);
	assert_true(n > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profile),
		cmocka_unit_test(test_image),
		cmocka_unit_test(test_seccomp),
		cmocka_unit_test(test_proxy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
