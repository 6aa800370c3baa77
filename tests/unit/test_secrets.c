/* SPDX-License-Identifier: MIT */
/* tests/unit/test_secrets.c - secret resolution, injection, redaction. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "secrets.h"
#include "tls.h"

static void add_secret(struct sbx_config *c, const char *name, enum sbx_secret_source src,
		       const char *ref, enum sbx_secret_inject inj, bool optional)
{
	c->secrets = sbx_xrealloc(c->secrets, (c->n_secrets + 1) * sizeof(*c->secrets));
	c->secrets[c->n_secrets++] = (struct sbx_secret){
		.name = sbx_xstrdup(name), .source = src, .ref = sbx_xstrdup(ref),
		.inject = inj, .optional = optional,
	};
}

static char *write_tmp(const char *content, size_t len)
{
	char *path = sbx_xstrdup("/tmp/sbx-test-secret-XXXXXX");
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(sbx_write_all(fd, content, len), 0);
	close(fd);
	return path;
}

static void test_resolve_env_and_file(void **state)
{
	struct sbx_config c;
	struct sbx_secrets s;
	struct sbx_err err = { 0 };
	struct sbx_strv env = { 0 };
	_cleanup_free_ char *path = write_tmp("file-secret-1\n", 14);

	sbx_config_init(&c);
	setenv("SBX_TEST_TOKEN", "env-secret-value", 1);
	add_secret(&c, "TOKEN", SBX_SECRET_FROM_ENV, "SBX_TEST_TOKEN", SBX_SECRET_AS_ENV, false);
	add_secret(&c, "KEY", SBX_SECRET_FROM_FILE, path, SBX_SECRET_AS_FILE, false);
	add_secret(&c, "OPT", SBX_SECRET_FROM_ENV, "SBX_TEST_UNSET_VAR", SBX_SECRET_AS_ENV, true);
	unsetenv("SBX_TEST_UNSET_VAR");
	assert_int_equal(sbx_secrets_resolve(&s, &c, &err), 0);
	assert_int_equal(s.n, 2);	/* the optional missing one is skipped */
	assert_string_equal(s.v[0].value, "env-secret-value");
	assert_string_equal(s.v[1].value, "file-secret-1");	/* newline stripped */
	assert_int_equal(s.v[1].len, 13);
	assert_true(sbx_secrets_has_files(&s));
	sbx_secrets_env(&s, &env);
	assert_int_equal(env.n, 1);	/* only the env-injected one */
	assert_string_equal(env.v[0], "TOKEN=env-secret-value");
	sbx_secrets_wipe_strv(&env);

	/* The description names everything but never holds a value. */
	json_t *d = sbx_secrets_describe(&c, &s);
	char *text = json_dumps(d, JSON_COMPACT);

	assert_non_null(strstr(text, "\"name\":\"TOKEN\",\"source\":\"env\",\"ref\":\"SBX_TEST_TOKEN\","
				     "\"inject\":\"env\""));
	assert_non_null(strstr(text, "\"path\":\"/run/secrets/KEY\""));
	assert_non_null(strstr(text, "\"name\":\"OPT\""));
	assert_non_null(strstr(text, "\"present\":false"));
	assert_null(strstr(text, "env-secret-value"));
	assert_null(strstr(text, "file-secret-1"));
	free(text);
	json_decref(d);
	sbx_secrets_free(&s);
	assert_null(s.v);
	unlink(path);
	sbx_config_free(&c);
}

/* Resolve a single secret that must fail; the message must not leak. */
static void expect_error(enum sbx_secret_source src, const char *ref, enum sbx_secret_inject inj,
			 const char *want, const char *value)
{
	struct sbx_config c;
	struct sbx_secrets s;
	struct sbx_err err = { 0 };

	sbx_config_init(&c);
	add_secret(&c, "API_KEY", src, ref, inj, false);
	assert_true(sbx_secrets_resolve(&s, &c, &err) < 0);
	assert_int_equal(s.n, 0);
	assert_null(s.v);
	assert_non_null(strstr(err.msg, "secret 'API_KEY'"));
	if (!strstr(err.msg, want))
		fail_msg("message '%s' lacks '%s'", err.msg, want);
	if (value && value[0])
		assert_null(strstr(err.msg, value));
	sbx_config_free(&c);
}

static void test_resolve_errors(void **state)
{
	unsetenv("SBX_TEST_MISSING");
	expect_error(SBX_SECRET_FROM_ENV, "SBX_TEST_MISSING", SBX_SECRET_AS_ENV,
		     "env:SBX_TEST_MISSING is not set", NULL);
	expect_error(SBX_SECRET_FROM_FILE, "/nonexistent/sbx/secret", SBX_SECRET_AS_FILE,
		     "file:/nonexistent/sbx/secret", NULL);
	setenv("SBX_TEST_SHORT", "abc", 1);
	expect_error(SBX_SECRET_FROM_ENV, "SBX_TEST_SHORT", SBX_SECRET_AS_ENV, "too short", "abc");
	setenv("SBX_TEST_EMPTY", "", 1);
	expect_error(SBX_SECRET_FROM_ENV, "SBX_TEST_EMPTY", SBX_SECRET_AS_ENV, "empty", NULL);
	expect_error(SBX_SECRET_FROM_FILE, "/tmp", SBX_SECRET_AS_FILE, "not a regular file", NULL);

	_cleanup_free_ char *nul = write_tmp("ab\0cdefgh", 9);

	expect_error(SBX_SECRET_FROM_FILE, nul, SBX_SECRET_AS_ENV, "NUL byte", NULL);
	unlink(nul);
}

/* ---- redaction ---- */

struct out {
	char *buf;
	size_t len;
};

static int collect(void *ctx, const void *buf, size_t len)
{
	struct out *o = ctx;

	o->buf = sbx_xrealloc(o->buf, o->len + len + 1);
	memcpy(o->buf + o->len, buf, len);
	o->len += len;
	o->buf[o->len] = '\0';
	return 0;
}

static struct sbx_secrets make_secrets(const char *const *names, const char *const *vals,
				       size_t n)
{
	struct sbx_secrets s = { .v = sbx_xcalloc(n, sizeof(*s.v)), .n = n };

	for (size_t i = 0; i < n; i++) {
		s.v[i].name = sbx_xstrdup(names[i]);
		s.v[i].value = sbx_xstrdup(vals[i]);
		s.v[i].len = strlen(vals[i]);
	}
	return s;
}

/* Redact `in` fed in chunks of `chunk` bytes (0: all at once). */
static char *redact(const struct sbx_secrets *s, const char *in, size_t chunk)
{
	struct sbx_redact r;
	struct out o = { sbx_xstrdup(""), 0 };
	size_t len = strlen(in);

	sbx_redact_init(&r, s);
	for (size_t i = 0; i < len;) {
		size_t k = chunk ? chunk : len;

		if (k > len - i)
			k = len - i;
		assert_int_equal(sbx_redact_feed(&r, in + i, k, collect, &o), 0);
		i += k;
	}
	assert_int_equal(sbx_redact_flush(&r, collect, &o), 0);
	sbx_redact_free(&r);
	return o.buf;
}

static void test_redact_basic_and_boundaries(void **state)
{
	static const char *const names[] = { "TOKEN", "PW" };
	static const char *const vals[] = { "tok-123456", "hunter22" };
	struct sbx_secrets s = make_secrets(names, vals, 2);
	const char *in = "a tok-123456 b hunter22hunter22 tok-12345 end tok-123456";
	const char *want = "a [secret TOKEN] b [secret PW][secret PW] tok-12345 end [secret TOKEN]";

	for (size_t chunk = 0; chunk <= strlen(in); chunk++) {
		char *got = redact(&s, in, chunk);

		if (strcmp(got, want) != 0)
			fail_msg("chunk %zu: got '%s'", chunk, got);
		free(got);
	}
	/* every split point of a two-chunk feed */
	for (size_t cut = 0; cut <= strlen(in); cut++) {
		struct sbx_redact r;
		struct out o = { sbx_xstrdup(""), 0 };

		sbx_redact_init(&r, &s);
		assert_int_equal(sbx_redact_feed(&r, in, cut, collect, &o), 0);
		assert_int_equal(sbx_redact_feed(&r, in + cut, strlen(in) - cut, collect, &o), 0);
		assert_int_equal(sbx_redact_flush(&r, collect, &o), 0);
		assert_int_equal(r.replaced, 4);
		assert_string_equal(o.buf, want);
		sbx_redact_free(&r);
		free(o.buf);
	}
	sbx_secrets_free(&s);
}

static void test_redact_overlaps(void **state)
{
	static const char *const names[] = { "SHORT", "LONG", "TAIL" };
	static const char *const vals[] = { "value", "secretvalue", "lue99" };
	struct sbx_secrets s = make_secrets(names, vals, 3);

	for (size_t chunk = 0; chunk < 8; chunk++) {
		/* longest at the same position; leftmost first; a partial prefix stays */
		char *got = redact(&s, "xsecretvalue99 value99 secretval", chunk);

		assert_string_equal(got, "x[secret LONG]99 [secret SHORT]99 secretval");
		free(got);
		got = redact(&s, "valu lue99", chunk);
		assert_string_equal(got, "valu [secret TAIL]");
		free(got);
	}
	sbx_secrets_free(&s);
}

static void test_redact_nothing(void **state)
{
	struct sbx_secrets none = { 0 };
	char *got = redact(&none, "no secrets here", 3);

	assert_string_equal(got, "no secrets here");
	free(got);
}

/* Random text with planted values: streamed output equals one-shot output. */
static void test_redact_random_streams(void **state)
{
	static const char *const names[] = { "A", "B", "C" };
	static const char *const vals[] = { "abab", "ababab", "babba" };
	struct sbx_secrets s = make_secrets(names, vals, 3);
	char in[600];

	srand(42);
	for (int round = 0; round < 200; round++) {
		for (size_t i = 0; i < sizeof(in) - 1; i++)
			in[i] = "abx"[rand() % 3];
		in[sizeof(in) - 1] = '\0';
		char *one = redact(&s, in, 0);

		for (size_t chunk = 1; chunk < 9; chunk++) {
			char *got = redact(&s, in, chunk);

			assert_string_equal(got, one);
			free(got);
		}
		assert_null(strstr(one, "abab"));
		assert_null(strstr(one, "babba"));
		free(one);
	}
	sbx_secrets_free(&s);
}

/* A run's CA that served no TLS connection is freed without OpenSSL: the
 * libraries are loaded by the first use, never by the supervisor's exit. */
static void test_unused_ca_loads_no_openssl(void **state)
{
	struct sbx_tls_ca *ca = NULL;
	struct sbx_err err = {0};
	size_t len;

	(void)state;
	assert_null(dlopen("libcrypto.so.3", RTLD_NOW | RTLD_NOLOAD));
	assert_int_equal(sbx_tls_ca_from_pem(&ca, "CERT", "KEY", "/nonexistent", &err), 0);
	assert_string_equal(sbx_tls_ca_pem(ca, &len), "CERT");
	assert_int_equal(len, 4);
	sbx_tls_ca_free(ca);
	assert_null(dlopen("libcrypto.so.3", RTLD_NOW | RTLD_NOLOAD));
	assert_null(dlopen("libssl.so.3", RTLD_NOW | RTLD_NOLOAD));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resolve_env_and_file),
		cmocka_unit_test(test_resolve_errors),
		cmocka_unit_test(test_redact_basic_and_boundaries),
		cmocka_unit_test(test_redact_overlaps),
		cmocka_unit_test(test_redact_nothing),
		cmocka_unit_test(test_redact_random_streams),
		cmocka_unit_test(test_unused_ca_loads_no_openssl),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
