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
#define LLVMFuzzerInitialize   fuzz_image_init
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
#define LLVMFuzzerTestOneInput fuzz_capture_one
#include "../fuzz/fuzz_capture.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_gitconfig_one
#include "../fuzz/fuzz_gitconfig.c"
#undef LLVMFuzzerTestOneInput

typedef int (*one_fn)(const uint8_t *data, size_t size);

static const char *fuzz_dir(void)
{
	const char *d = getenv("SBX_FUZZ_DIR");

	return d && *d ? d : "tests/fuzz";
}

/* Feed every regular file of DIR/SUB/HARNESS to fn; returns how many. */
/*
 * The regular file at path, read into a buffer of exactly its size (a
 * harness reading past it is then the sanitizers' to see); NULL for
 * anything else.
 */
static uint8_t *read_input(const char *path, size_t *len)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat sb;
	uint8_t *buf;

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &sb), 0);
	if (!S_ISREG(sb.st_mode))
		return NULL;
	buf = sbx_xmalloc((size_t)sb.st_size);
	assert_int_equal(sbx_read_all(fd, buf, (size_t)sb.st_size), sb.st_size);
	*len = (size_t)sb.st_size;
	return buf;
}

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
		size_t len = 0;
		uint8_t *buf;

		if (de->d_name[0] == '.' || !(buf = read_input(path, &len)))
			continue;
		print_message("replay %s\n", path);
		assert_int_equal(fn(buf, len), 0);
		free(buf);
		n++;
	}
	closedir(d);
	return n;
}

/*
 * SBX_FUZZ_ONLY=profile,capture replays only those harnesses' inputs
 * (tests/integration/memcheck.sh: valgrind does not know the seccomp()
 * system call, so the seccomp harness cannot run under it).
 */
static bool wanted(const char *harness)
{
	const char *only = getenv("SBX_FUZZ_ONLY");
	size_t n = strlen(harness);

	if (!only || !*only)
		return true;
	for (const char *p = only; (p = strstr(p, harness)); p += n)
		if ((p == only || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
			return true;
	return false;
}

/* A harness's past crashes and seeds, replayed: at least one of them. */
static void replay_all(const char *harness, one_fn fn)
{
	size_t n;

	if (!wanted(harness))
		skip();
	n = replay_dir("regress", harness, fn);
	n += replay_dir("corpus", harness, fn);
	assert_true(n > 0);
}

static void test_profile(void **state)
{
	(void)state;
	replay_all("profile", fuzz_profile_one);
}

/* The image harness unpacks into $TMPDIR/sbx-fuzz-image-*: a private one. */
static void test_image(void **state)
{
	char tmp[] = "/tmp/sbx-fuzz-regress-XXXXXX";
	size_t regress, n;

	(void)state;
	if (!wanted("image"))
		skip();
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
	(void)state;
	replay_all("seccomp", fuzz_seccomp_one);
}

static void test_proxy(void **state)
{
	(void)state;
	replay_all("proxy", fuzz_proxy_one);
}

static void test_capture(void **state)
{
	(void)state;
	replay_all("capture", fuzz_capture_one);
}

static void test_gitconfig(void **state)
{
	(void)state;
	replay_all("gitconfig", fuzz_gitconfig_one);
}

/* The first seed of corpus/capture whose name starts with prefix, read. */
static uint8_t *seed(const char *prefix, size_t *len)
{
	_cleanup_free_ char *dir = sbx_xasprintf("%s/corpus/capture", fuzz_dir());
	DIR *d = opendir(dir);
	struct dirent *de;
	uint8_t *buf = NULL;

	assert_non_null(d);
	while (!buf && (de = readdir(d))) {
		_cleanup_free_ char *path = sbx_xasprintf("%s/%s", dir, de->d_name);

		if (strncmp(de->d_name, prefix, strlen(prefix)) == 0)
			buf = read_input(path, len);
	}
	closedir(d);
	assert_non_null(buf);
	return buf;
}

/* What the capture side reads from real clients' first bytes. */
static void test_capture_seeds(void **state)
{
	size_t len;
	uint8_t *b = seed("hello-openssl-", &len);
	char *name = sbx_proxy_client_hello_sni(b, len);

	(void)state;
	assert_string_equal(name, "registry.npmjs.org");
	free(name);
	/* the record's last byte missing, or not even a record header */
	assert_null(sbx_proxy_client_hello_sni(b, len - 1));
	assert_null(sbx_proxy_client_hello_sni(b, 4));
	assert_null(sbx_proxy_client_hello_sni(b, 0));
	free(b);
	b = seed("hello-curl12-", &len);
	name = sbx_proxy_client_hello_sni(b, len);
	assert_string_equal(name, "api.sbx.test");
	free(name);
	free(b);
	b = seed("hello-nosni-", &len);
	assert_null(sbx_proxy_client_hello_sni(b, len));
	free(b);

	struct sbx_dns_query q = {0};
	struct sbx_dns_answer a = {.n = 2};

	b = seed("dns-aaaa-", &len);
	memcpy(q.buf, b, len);
	q.len = len;
	free(b);
	assert_true(sbx_proxy_dns_question(&q));
	assert_string_equal(q.name, "registry.npmjs.org");
	assert_int_equal(q.qtype, 28);
	assert_int_equal(sbx_proxy_dns_reply(&q, 0, &a), len + 2 * (12 + 16));
	assert_int_equal(q.buf[7], 2); /* ANCOUNT */
	/* a compression pointer in a query's question is refused */
	b = seed("dns-pointer-", &len);
	memcpy(q.buf, b, len);
	q.len = len;
	free(b);
	assert_false(sbx_proxy_dns_question(&q));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_profile),	  cmocka_unit_test(test_image),
	    cmocka_unit_test(test_seccomp),	  cmocka_unit_test(test_proxy),
	    cmocka_unit_test(test_capture),	  cmocka_unit_test(test_gitconfig),
	    cmocka_unit_test(test_capture_seeds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
