/* SPDX-License-Identifier: MIT */
/* tests/unit/test_profile.c - INI profiles: every error path, extends,
 * expansion, values, the command-line setter, round trips, built-ins. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#define _XOPEN_SOURCE_EXTENDED 1
#include <ftw.h>
#include <string.h>
#include <linux/seccomp.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "profile.h"

/* Valgrind does not implement seccomp(2), which checking a policy file needs. */
static bool seccomp_available(void)
{
	uint32_t action = SECCOMP_RET_ALLOW;

	return syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
}

/* The policy file to name in a profile, or "default" without seccomp(2). */
static const char *policy(const char *file)
{
	return seccomp_available() ? file : "default";
}

static const struct sbx_profile_vars V = {
    .pwd = "/work/proj",
    .home = "/home/u",
    .user = "u",
    .uid = 1000,
};
static char dir[64];

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	return remove(p);
}

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/sbx-test-profile-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	return nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Write dir/name and return its path (static buffer, one at a time). */
static const char *put(const char *name, const char *text)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

/* Load a profile file; the errors joined with newlines (NULL if none). */
static char *load(struct sbx_config *c, const char *name_or_path)
{
	struct sbx_strv errs = {0};
	char *all = NULL;
	size_t len = 0;
	FILE *ms;

	sbx_config_init(c);
	if (sbx_profile_load_all(c, name_or_path, &V, &errs) == 0) {
		assert_int_equal(errs.n, 0);
		return NULL;
	}
	assert_true(errs.n > 0);
	ms = open_memstream(&all, &len);
	for (size_t i = 0; i < errs.n; i++)
		fprintf(ms, "%s\n", errs.v[i]);
	fclose(ms);
	sbx_strv_free(&errs);
	return all;
}

/* The profile text must fail with "'file:line': msg" among its errors. */
static void expect_err(const char *text, int line, const char *msg)
{
	struct sbx_config c;
	const char *path = put("p.ini", text);
	char want[1024];
	char *errs = load(&c, path);

	snprintf(want, sizeof(want), "'%s:%d': %s", path, line, msg);
	if (!errs || !strstr(errs, want))
		fail_msg("expected error '%s', got:\n%s", want, errs ? errs : "(no error)");
	free(errs);
	sbx_config_free(&c);
}

static void expect_ok(struct sbx_config *c, const char *text)
{
	char *errs = load(c, put("ok.ini", text));

	if (errs)
		fail_msg("unexpected errors:\n%s", errs);
}

/* ------------------------------------------------------------ error paths */

static void test_unknown_section(void **state)
{
	expect_err("[limit]\nmemory = 1g\n", 1, "unknown section [limit] (did you mean [limits]?)");
	expect_err("[sandbox]\n\n[bogus-stuff-here]\n", 3, "unknown section [bogus-stuff-here]");
}

static void test_unknown_key(void **state)
{
	expect_err("[limits]\npids = 5\nmemroy = 1g\n", 3,
		   "unknown key 'memroy' in [limits] (did you mean 'memory'?)");
	expect_err("[sandbox]\nmemory = 1g\n", 2,
		   "unknown key 'memory' in [sandbox] (it belongs in [limits])");
	expect_err("[network]\nzzzzzzzz = 1\n", 2, "unknown key 'zzzzzzzz' in [network]");
	expect_err("memory = 1g\n", 1, "key 'memory' is outside any section");
	expect_err("[limits]\nextends = default\n", 2,
		   "unknown key 'extends' in [limits] (it belongs in [sandbox])");
}

static void test_syntax(void **state)
{
	expect_err("[sandbox]\njust some words\n", 2,
		   "syntax error: expected 'key = value' or '[section]'");
	expect_err("[sandbox\n", 1, "syntax error: '[' without ']'");
	expect_err("[limits]\nmemory = 1g\nmemory = 2g\n", 3,
		   "'memory' in [limits] is already set at line 2");
}

/*
 * Empty lines, the first one included (inih's line buffer is then still
 * unwritten): the inline-comment cut must not look past the line's end
 * (tests/integration/memcheck.sh runs this under valgrind).
 */
static void test_empty_lines(void **state)
{
	struct sbx_config c;

	expect_ok(&c, "\n\n[sandbox]\n\nhostname = first # a comment\n\n"
		      "[limits]\n\n\npids = 64 ; another\n\n");
	assert_string_equal(c.hostname, "first");
	assert_int_equal(c.pids, 64);
	sbx_config_free(&c);
}

static void test_long_line(void **state)
{
	char text[12000];

	snprintf(text, sizeof(text), "[network]\nallow = a.example.com%*s\n", 10000, "x");
	expect_err(text, 2, "line too long");
	/* A line that grows too long by expansion could not be shown and read back. */
	strcpy(text, "[env]\nset = A=");
	for (int i = 0; i < 900; i++)
		strcat(text, "$PWD");
	strcat(text, "\n");
	expect_err(text, 2, "key 'set': value too long");
}

static void test_bad_values(void **state)
{
	expect_err("[limits]\nmemory = lots\n", 2, "key 'memory': bad size 'lots'");
	expect_err("[limits]\ndisk = 5x\n", 2, "key 'disk': bad size '5x'");
	expect_err("[limits]\ndisk = defualt\n", 2,
		   "key 'disk': bad size 'defualt' (expected a size such as 512m or 16G, "
		   "default or unlimited)");
	expect_err("[limits]\ntime = 5 parsecs\n", 2, "key 'time': bad duration '5 parsecs'");
	expect_err("[limits]\npids = many\n", 2, "key 'pids': bad number 'many'");
	expect_err("[limits]\npids = 0\n", 2, "key 'pids': bad limit '0'");
	expect_err("[limits]\ncpus = 1.2345\n", 2, "key 'cpus': bad cpu count '1.2345'");
	expect_err("[sandbox]\nuser = bob\n", 2, "key 'user': bad user 'bob'");
	expect_err("[sandbox]\nuser = 4294967295\n", 2, "key 'user': bad user '4294967295'");
	expect_err("[sandbox]\nuser = 5:x\n", 2, "key 'user': bad user '5:x'");
	expect_err("[network]\nmode = proxxy\n", 2,
		   "key 'mode': bad network mode 'proxxy' (did you mean 'proxy'?)");
	expect_err("[sandbox]\npersist = sometimes\n", 2,
		   "key 'persist': bad persist mode 'sometimes'");
	expect_err("[sandbox]\ntty = maybe\n", 2,
		   "key 'tty': bad tty mode 'maybe' (expected auto, yes, no)");
	expect_err("[env]\nclear = perhaps\n", 2, "key 'clear': bad boolean 'perhaps'");
	expect_err("[sandbox]\nhostname = -bad\n", 2, "key 'hostname': bad hostname '-bad'");
}

static void test_bad_paths(void **state)
{
	expect_err("[filesystem]\nbind = relative/dir\n", 2,
		   "key 'bind': source 'relative/dir' is not an absolute path");
	expect_err("[filesystem]\nro-bind = /a:b\n", 2,
		   "key 'ro-bind': destination 'b' is not an absolute path");
	expect_err("[filesystem]\nbind = /a:/x/../etc\n", 2,
		   "key 'bind': destination '/x/../etc' has a '..' component");
	expect_err("[filesystem]\ntmpfs = /a/../b\n", 2,
		   "key 'tmpfs': destination '/a/../b' has a '..' component");
	expect_err("[filesystem]\ntmpfs = /t:huge\n", 2, "key 'tmpfs': bad size 'huge'");
	expect_err("[filesystem]\nmask = /\n", 2, "key 'mask': cannot mount over '/'");
	expect_err("[filesystem]\nbind = /a:\n", 2, "key 'bind': bad mount '/a:'");
	expect_err("[filesystem]\nwatch = rel/x\n", 2,
		   "key 'watch': watch path 'rel/x' is not an absolute path");
	expect_err("[filesystem]\nwatch = /a/../b\n", 2,
		   "key 'watch': watch path '/a/../b' has a '..' component");
	expect_err("[sandbox]\nworkdir = src\n", 2,
		   "key 'workdir': workdir 'src' is not an absolute path");
	expect_err("[sandbox]\nrootfs = missing.tar\n", 2, "key 'rootfs': '");
	expect_err("[limits]\nmemory = 512k\n", 2,
		   "key 'memory': memory limit '512k' is too small");
	expect_err("[security]\nseccomp = nope.policy\n", 2, "key 'seccomp': seccomp policy '");
	put("bad.policy", "base default\ndeny not_a_syscall\n");
	char want[512];
	snprintf(want, sizeof(want),
		 "key 'seccomp': seccomp policy '%s/bad.policy': line 2: unknown syscall "
		 "'not_a_syscall'",
		 dir);
	expect_err("[security]\nseccomp = bad.policy\n", 2, want);
}

static void test_bad_allow(void **state)
{
	expect_err("[network]\nallow = bad_host!\n", 2, "key 'allow': bad allow entry 'bad_host!'");
	expect_err("[network]\nallow = ok.com, example.com:0\n", 2,
		   "key 'allow': bad allow entry 'example.com:0' (port must be 1..65535)");
	expect_err("[network]\nallow = example.com:70000\n", 2,
		   "key 'allow': bad allow entry 'example.com:70000' (port must be 1..65535)");
	expect_err("[network]\nallow = *\n", 2, "key 'allow': bad allow entry '*'");
	expect_err("[network]\nallow = -x.com\n", 2, "key 'allow': bad allow entry '-x.com'");
	expect_err("[network]\nallow = [::zz]:443\n", 2,
		   "key 'allow': bad allow entry '[::zz]:443'");
}

static void test_bad_caps(void **state)
{
	expect_err("[security]\ncapabilities = CAP_FLY\n", 2,
		   "key 'capabilities': unknown capability 'CAP_FLY'");
	expect_err("[security]\ncapabilities = 12\n", 2,
		   "key 'capabilities': unknown capability '12'");
	expect_err("[security]\ncapabilities = chown none\n", 2,
		   "key 'capabilities': 'none' cannot be combined");
	expect_err("[security]\nno-new-privs = no\n", 2,
		   "'no-new-privs = no' is refused unless capabilities are kept");
}

static void test_bad_secrets(void **state)
{
	expect_err("[secrets]\n1BAD = env:X\n", 2, "bad secret name '1BAD'");
	expect_err("[secrets]\nTOKEN = vault:x\n", 2, "secret 'TOKEN': bad value 'vault:x'");
	expect_err("[secrets]\nTOKEN = env:X as pipe\n", 2, "secret 'TOKEN': bad value");
	expect_err("[secrets]\nTOKEN = env:MY-VAR\n", 2,
		   "secret 'TOKEN': bad variable name 'MY-VAR'");
	expect_err("[secrets]\nTOKEN = file:rel/path\n", 2,
		   "secret 'TOKEN': secret file 'rel/path' is not an absolute path");
	expect_err("[secrets]\nA = env:X\nA = env:Y\n", 3,
		   "'A' in [secrets] is already set at line 2");
	expect_err("[secrets]\nK = env:K inject\n", 2, "secret 'K': 'inject' needs HOST[,HOST...]");
	expect_err(
	    "[secrets]\nK = env:K inject 10.0.0.1\n", 2,
	    "secret 'K': bad inject host '10.0.0.1' (expected a DNS name or *.domain, no port");
	expect_err("[secrets]\nK = env:K inject api.x.com:443\n", 2, "secret 'K': bad inject host");
	expect_err("[secrets]\nK = env:K inject a.com as env\n", 2, "secret 'K': bad value");
	expect_err("[secrets]\nK = env:K inject a.com inject b.com\n", 2, "secret 'K': bad value");
	/* a blank in a file's path is the path's; the words "as" and
	 * "inject" only at the end */
	expect_err("[secrets]\nK = file:/a as b/c\n", 2, "secret 'K': bad value");
	expect_err("[secrets]\nK = file:/a inject b/c as env\n", 2, "secret 'K': bad value");
	expect_err("[secrets]\nK = env:K J\n", 2, "secret 'K': bad variable name 'K J'");
	expect_err("[network]\nupstream-ca = rel.pem\n", 2,
		   "key 'upstream-ca': upstream-ca 'rel.pem' is not an absolute path");
}

static void round_trip(struct sbx_config *c);

/* "inject HOST,...": hosts normalised, kept in order, written back. */
static void test_secret_inject(void **state)
{
	struct sbx_config c;
	struct sbx_err e;
	char *text = NULL;
	size_t len = 0;
	FILE *ms;

	sbx_config_init(&c);
	assert_int_equal(
	    sbx_profile_set(&c, "secrets", "K", "env:K? as file inject API.x.com.,*.y.org", &e), 0);
	assert_int_equal(c.secrets[0].inject, SBX_SECRET_AS_FILE);
	assert_true(c.secrets[0].optional);
	assert_int_equal(c.secrets[0].inject_hosts.n, 2);
	assert_string_equal(c.secrets[0].inject_hosts.v[0], "api.x.com");
	assert_string_equal(c.secrets[0].inject_hosts.v[1], "*.y.org");
	assert_int_equal(sbx_profile_set(&c, "secrets", "P", "env:P", &e), 0);
	assert_int_equal(c.secrets[1].inject_hosts.n, 0);
	/* a path with blanks (file:~/My Keys/t, a home with a space) */
	assert_int_equal(
	    sbx_profile_set(&c, "secrets", "F", "file:/h/My Keys/t  as file inject a.com", &e), 0);
	assert_string_equal(c.secrets[2].ref, "/h/My Keys/t");
	assert_int_equal(c.secrets[2].inject, SBX_SECRET_AS_FILE);
	assert_int_equal(c.secrets[2].inject_hosts.n, 1);
	assert_int_equal(sbx_profile_set(&c, "secrets", "G", "file:/h/a  b/t?", &e), 0);
	assert_string_equal(c.secrets[3].ref, "/h/a  b/t");
	assert_true(c.secrets[3].optional);
	round_trip(&c);
	assert_int_equal(sbx_profile_set(&c, "network", "upstream-ca", "/etc/ca.pem", &e), 0);
	assert_true(c.capture);
	assert_int_equal(sbx_profile_set(&c, "network", "capture", "no", &e), 0);
	assert_false(c.capture);
	ms = open_memstream(&text, &len);
	assert_int_equal(sbx_profile_write(&c, ms), 0);
	fclose(ms);
	assert_non_null(strstr(text, "K = env:K? as file inject api.x.com,*.y.org\n"));
	assert_non_null(strstr(text, "F = file:/h/My Keys/t as file inject a.com\n"));
	assert_non_null(strstr(text, "G = file:/h/a  b/t? as env\n"));
	assert_non_null(strstr(text, "P = env:P as env\n"));
	assert_non_null(strstr(text, "upstream-ca = /etc/ca.pem\n"));
	assert_non_null(strstr(text, "capture = no\n"));
	free(text);
	sbx_config_free(&c);
}

static void test_every_error_reported(void **state)
{
	struct sbx_config c;
	char *errs = load(&c, put("many.ini", "[limits]\nmemroy = 1\npids = x\n"
					      "[nope]\n[network]\nmode = up\n"));
	int n = 0;

	assert_non_null(errs);
	for (char *p = errs; (p = strchr(p, '\n')); p++)
		n++;
	assert_int_equal(n, 4);
	assert_non_null(strstr(errs, "many.ini:2': unknown key 'memroy'"));
	assert_non_null(strstr(errs, "many.ini:3': key 'pids'"));
	assert_non_null(strstr(errs, "many.ini:4': unknown section [nope]"));
	assert_non_null(strstr(errs, "many.ini:6': key 'mode'"));
	free(errs);
	sbx_config_free(&c);
}

static void test_missing_file(void **state)
{
	struct sbx_config c;
	struct sbx_err e;
	char *errs = load(&c, "/nonexistent/sbx/x.ini");

	assert_non_null(errs);
	assert_string_equal(
	    errs, "cannot read profile '/nonexistent/sbx/x.ini': No such file or directory\n");
	free(errs);
	sbx_config_free(&c);
	/* sbx_profile_load: the same, as one sbx_err without errno text added. */
	sbx_config_init(&c);
	assert_int_equal(sbx_profile_load(&c, "/nonexistent/sbx/x.ini", &V, &e), -EINVAL);
	char buf[2048];
	assert_string_equal(
	    sbx_err_str(&e, buf, sizeof(buf)),
	    "cannot read profile '/nonexistent/sbx/x.ini': No such file or directory");
	sbx_config_free(&c);
	errs = load(&c, "defualt");
	assert_non_null(errs);
	assert_string_equal(errs, "unknown profile 'defualt' (did you mean 'default'?)\n");
	free(errs);
	sbx_config_free(&c);
}

static void test_extends_errors(void **state)
{
	char want[512], *errs;
	struct sbx_config c;
	const char *a;

	expect_err("[sandbox]\nextends = defualt\n", 2,
		   "extends: unknown built-in profile 'defualt' (did you mean 'default'?)");
	expect_err("[sandbox]\nextends = gone.ini\n", 2, "extends: cannot read profile '");
	expect_err("[sandbox]\nextends = default\nextends = ci\n", 3,
		   "'extends' is already set at line 2");
	/* a -> b -> a */
	put("b.ini", "[sandbox]\nhostname = b\nextends = a.ini\n");
	a = put("a.ini", "# a\n[sandbox]\nextends = b.ini\n");
	errs = load(&c, a);
	snprintf(want, sizeof(want),
		 "'%s/b.ini:3': extends cycle: %s/a.ini -> %s/b.ini -> %s/a.ini", dir, dir, dir,
		 dir);
	if (!errs || !strstr(errs, want))
		fail_msg("want '%s', got '%s'", want, errs ? errs : "");
	free(errs);
	sbx_config_free(&c);
	/* A file that extends itself. */
	expect_err("[sandbox]\nextends = ./p.ini\n", 2, "extends cycle: ");
	/* Built-in text cannot reach files. */
	struct sbx_err e;
	sbx_config_init(&c);
	assert_true(sbx_profile_load_string(&c, "[sandbox]\nextends = /etc/x.ini\n", "builtin:t",
					    &V, &e) < 0);
	assert_non_null(strstr(e.msg, "can only extend built-in profiles"));
	sbx_config_free(&c);
}

/* ------------------------------------------------------------ inheritance */

static void test_inheritance(void **state)
{
	struct sbx_config c;
	char *errs;

	char sub[256];
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	put("sub/base.ini", "[sandbox]\nextends = ci\nhostname = base\n"
			    "[filesystem]\nbind = /srv/a\n[network]\nmode = proxy\nallow = a.com\n"
			    "[limits]\nmemory = 1g\npids = 10\n[env]\nset = A=1\n");
	/* extends written after other keys is still applied first. */
	errs = load(&c, put("child.ini",
			    "[filesystem]\nbind = /srv/b\n[sandbox]\nhostname = kid\n"
			    "extends = sub/base.ini\n[network]\nallow = b.com:8443\n"
			    "[limits]\nmemory = 2g\ntime = unlimited\n[env]\nset = A=2\n"));
	if (errs)
		fail_msg("%s", errs);
	assert_string_equal(c.hostname, "kid"); /* child overrides */
	assert_int_equal(c.memory, 2ULL << 30);
	assert_int_equal(c.pids, 10);		/* from base */
	assert_int_equal(c.time_ms, SBX_UNSET); /* ci's 30m removed */
	assert_int_equal(c.nofile, 4096);	/* from ci */
	assert_int_equal(c.net, SBX_NET_PROXY);
	assert_int_equal(c.allow.n, 2); /* accumulated, parent first */
	assert_string_equal(c.allow.v[0], "a.com");
	assert_string_equal(c.allow.v[1], "b.com:8443");
	assert_int_equal(c.env_set.n, 1);
	assert_string_equal(c.env_set.v[0], "A=2");
	/* default's mounts, then base's bind, then the child's. */
	assert_true(c.n_mounts > 3);
	assert_string_equal(c.mounts[c.n_mounts - 2].src, "/srv/a");
	assert_string_equal(c.mounts[c.n_mounts - 1].src, "/srv/b");
	assert_int_equal(c.mounts[0].kind, SBX_MNT_TMPFS);
	assert_int_equal(c.sources.n, 4);
	assert_string_equal(c.sources.v[0], "builtin:default");
	assert_string_equal(c.sources.v[1], "builtin:ci");
	assert_non_null(strstr(c.sources.v[2], "sub/base.ini"));
	assert_non_null(strstr(c.sources.v[3], "child.ini"));
	sbx_config_free(&c);
}

/* ------------------------------------------------------------ expansion */

static void expand_is(const char *in, const char *want)
{
	struct sbx_err e;
	char *out = NULL;

	if (sbx_profile_expand(in, &V, &out, &e) < 0)
		fail_msg("expanding '%s': %s", in, e.msg);
	assert_string_equal(out, want);
	free(out);
}

static void expand_fails(const char *in, const char *msg)
{
	struct sbx_err e;
	char *out = NULL;

	assert_int_equal(sbx_profile_expand(in, &V, &out, &e), -EINVAL);
	assert_null(out);
	if (!strstr(e.msg, msg))
		fail_msg("expanding '%s': want '%s', got '%s'", in, msg, e.msg);
}

static void test_expansion(void **state)
{
	expand_is("$PWD", "/work/proj");
	expand_is("${PWD}/x", "/work/proj/x");
	expand_is("$HOME/.cache", "/home/u/.cache");
	expand_is("/home/$USER-$UID", "/home/u-1000");
	expand_is("${USER}x", "ux");
	expand_is("cost $$5 and $$HOME", "cost $5 and $HOME");
	expand_is("~/x", "/home/u/x");
	expand_is("~", "/home/u");
	expand_is("-~/.gitconfig", "-/home/u/.gitconfig");
	expand_is("/src:~/dst", "/src:/home/u/dst");
	expand_is("a~/b", "a~/b");
	expand_is("a ~/b", "a ~/b");
	expand_is("PATH=/bin:~/bin", "PATH=/bin:/home/u/bin");
	expand_is("~user/x", "~user/x");
	expand_fails("$FOO", "unknown variable '$FOO' (only $PWD, $HOME, $USER and $UID");
	expand_fails("${PATH}", "unknown variable '$PATH'");
	expand_fails("$PWDX", "unknown variable '$PWDX'");
	expand_fails("a$", "stray '$'");
	expand_fails("${PWD", "stray '$'");
	expand_fails("$1", "stray '$'");
	/* In a file, the error names the line and key. */
	expect_err("[env]\nset = A=$SECRET\n", 2, "key 'set': unknown variable '$SECRET'");
	struct sbx_config c;
	expect_ok(&c, "[filesystem]\nbind = $PWD/out:/out\nro-bind = -~/.gitconfig\n"
		      "[env]\nset = PRICE=$$5\n");
	assert_string_equal(c.mounts[0].src, "/work/proj/out");
	assert_string_equal(c.mounts[0].dst, "/out");
	assert_false(c.mounts[0].optional);
	assert_int_equal(c.mounts[1].kind, SBX_MNT_RO_BIND);
	assert_string_equal(c.mounts[1].src, "/home/u/.gitconfig");
	assert_string_equal(c.mounts[1].dst, "/home/u/.gitconfig");
	assert_true(c.mounts[1].optional);
	assert_string_equal(c.env_set.v[0], "PRICE=$5");
	sbx_config_free(&c);
}

/* ------------------------------------------------------------ values */

static void test_values(void **state)
{
	struct sbx_config c;

	put("pol.json", "# a policy\nbase default\ndeny ptrace\n");
	char text[2048];

	snprintf(text, sizeof(text),
		 "[sandbox]\nrootfs = .\nuser = 1000:100\nworkdir = /w//x/./y/\n"
		 "persist = always\ntty = yes\nwritable = no\nhostname = box-1\n"
		 "[filesystem]\ntmpfs = /tmp:64m\noverlay = /srv//data/:/data\nmask = /etc/shadow\n"
		 "[env]\nclear = no\npass = LC_*, TERM LANG\n"
		 "[secrets]\nTOKEN = env:GH_TOKEN?\nKEY = file:/etc/k as file\n"
		 "[network]\nmode = loopback\nallow = Example.COM *.npmjs.org:443,[::1]:8080\n"
		 "[limits]\nmemory = 6144k\ncpus = 1.5\ntime = 90s\nnofile = 64\nfsize = 4G\n"
		 "image-size = 1t\nimage-entries = 100\n"
		 "[security]\nseccomp = %s\ncapabilities = CAP_NET_BIND_SERVICE chown\n"
		 "no-new-privs = no\n",
		 policy("pol.json"));
	expect_ok(&c, text);
	assert_string_equal(c.rootfs, dir);
	assert_false(c.rootfs_required);
	assert_true(c.user_set);
	assert_false(c.user_root);
	assert_int_equal(c.uid, 1000);
	assert_int_equal(c.gid, 100);
	assert_string_equal(c.workdir, "/w/x/y");
	assert_int_equal(c.persist, SBX_PERSIST_ALWAYS);
	assert_int_equal(c.tty_mode, SBX_TTY_YES);
	assert_false(c.rootfs_writable);
	assert_string_equal(c.hostname, "box-1");
	assert_int_equal(c.n_mounts, 3);
	assert_int_equal(c.mounts[0].kind, SBX_MNT_TMPFS);
	assert_null(c.mounts[0].src);
	assert_int_equal(c.mounts[0].size, 64 << 20);
	assert_string_equal(c.mounts[1].src, "/srv/data");
	assert_string_equal(c.mounts[1].dst, "/data");
	assert_int_equal(c.mounts[2].kind, SBX_MNT_MASK);
	assert_false(c.env_clear);
	assert_int_equal(c.env_pass.n, 3);
	assert_string_equal(c.env_pass.v[0], "LC_*");
	assert_int_equal(c.n_secrets, 2);
	assert_string_equal(c.secrets[0].name, "TOKEN");
	assert_int_equal(c.secrets[0].source, SBX_SECRET_FROM_ENV);
	assert_string_equal(c.secrets[0].ref, "GH_TOKEN");
	assert_true(c.secrets[0].optional);
	assert_int_equal(c.secrets[0].inject, SBX_SECRET_AS_ENV);
	assert_int_equal(c.secrets[1].source, SBX_SECRET_FROM_FILE);
	assert_int_equal(c.secrets[1].inject, SBX_SECRET_AS_FILE);
	assert_false(c.secrets[1].optional);
	assert_int_equal(c.net, SBX_NET_LOOPBACK);
	assert_int_equal(c.allow.n, 3);
	assert_string_equal(c.allow.v[0], "example.com");
	assert_string_equal(c.allow.v[1], "*.npmjs.org:443");
	assert_string_equal(c.allow.v[2], "[::1]:8080");
	assert_int_equal(c.memory, 6144 << 10);
	assert_int_equal(c.cpus_milli, 1500);
	assert_int_equal(c.time_ms, 90000);
	assert_int_equal(c.nofile, 64);
	assert_int_equal(c.fsize, 4ULL << 30);
	assert_int_equal(c.image_size, 1ULL << 40);
	assert_int_equal(c.image_entries, 100);
	assert_int_equal(c.pids, SBX_UNSET);
	if (seccomp_available()) {
		assert_non_null(strstr(c.seccomp, "/pol.json"));
		assert_int_equal(c.seccomp[0], '/');
	}
	assert_int_equal(c.caps_keep, (1ULL << 10) | (1ULL << 0));
	assert_false(c.no_new_privs);
	sbx_config_free(&c);

	expect_ok(&c,
		  "[sandbox]\nuser = root\nrootfs = required\n[limits]\ntime = 2h\ncpus = 0.25\n");
	assert_true(c.user_set && c.user_root);
	assert_null(c.rootfs);
	assert_true(c.rootfs_required);
	assert_int_equal(c.time_ms, 7200000);
	assert_int_equal(c.cpus_milli, 250);
	sbx_config_free(&c);
}

/* ------------------------------------------------------------ the CLI setter */

/* `overlay = $PWD` from /, /proc, /dev or /sys (or below) adds nothing:
 * the jail has its own there; elsewhere, or onto another place, it stays. */
static void test_overlay_jail_own(void **state)
{
	struct sbx_config c;

	(void)state;
	expect_ok(&c, "[filesystem]\noverlay = /\noverlay = /proc\noverlay = /proc/self/fd\n"
		      "overlay = /dev\noverlay = /dev/shm\noverlay = /sys/kernel\n"
		      "overlay = /procx\noverlay = /devices\noverlay = /proc:/hostproc\n");
	assert_int_equal(c.n_mounts, 3);
	assert_string_equal(c.mounts[0].src, "/procx");
	assert_string_equal(c.mounts[1].src, "/devices");
	assert_string_equal(c.mounts[2].dst, "/hostproc");
	sbx_config_free(&c);
}

static void test_cli_set(void **state)
{
	struct sbx_config c;
	struct sbx_err e;
	char cwd[512];

	sbx_config_init(&c);
	assert_int_equal(sbx_profile_load(&c, "ci", &V, &e), 0);
	size_t n = c.n_mounts;
	assert_int_equal(sbx_profile_set(&c, "limits", "memory", "8g", &e), 0);
	assert_int_equal(c.memory, 8ULL << 30);
	assert_int_equal(sbx_profile_set(&c, "filesystem", "bind", "rel:/r", &e), 0);
	assert_int_equal(c.n_mounts, n + 1);
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_string_equal(c.mounts[n].src, strcmp(cwd, "/") ? strcat(cwd, "/rel") : "/rel");
	assert_int_equal(sbx_profile_set(&c, "limits", "memory", "lots", &e), -EINVAL);
	assert_int_equal(e.errnum, 0);
	assert_non_null(strstr(e.msg, "key 'memory': bad size 'lots'"));
	assert_int_equal(sbx_profile_set(&c, "limits", "memroy", "1g", &e), -EINVAL);
	assert_string_equal(e.msg, "unknown key 'memroy' in [limits] (did you mean 'memory'?)");
	assert_int_equal(sbx_profile_set(&c, "limit", "memory", "1g", &e), -EINVAL);
	assert_string_equal(e.msg, "unknown section [limit] (did you mean [limits]?)");
	assert_int_equal(sbx_profile_set(&c, "sandbox", "extends", "ci", &e), -EINVAL);
	assert_int_equal(sbx_profile_set(&c, "network", "allow", "x.org", &e), 0);
	assert_int_equal(sbx_profile_set(&c, "secrets", "T", "env:T as file", &e), 0);
	assert_int_equal(c.secrets[c.n_secrets - 1].inject, SBX_SECRET_AS_FILE);
	assert_int_equal(sbx_profile_finish(&c, &e), 0);
	sbx_config_free(&c);
}

static void test_finish(void **state)
{
	struct sbx_config c;
	struct sbx_err e;

	sbx_config_init(&c);
	assert_int_equal(sbx_profile_load(&c, "strict", &V, &e), 0);
	assert_true(c.rootfs_required);
	assert_int_equal(sbx_profile_finish(&c, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "profile 'strict' needs a rootfs image"));
	assert_non_null(strstr(e.msg, "--rootfs"));
	assert_int_equal(sbx_profile_set(&c, "sandbox", "rootfs", "host", &e), 0);
	assert_int_equal(sbx_profile_finish(&c, &e), 0); /* host given on purpose */
	assert_int_equal(sbx_profile_set(&c, "sandbox", "rootfs", "required", &e), 0);
	assert_int_equal(sbx_profile_set(&c, "sandbox", "rootfs", dir, &e), 0);
	assert_string_equal(c.rootfs, dir);
	assert_false(c.rootfs_required);
	assert_int_equal(sbx_profile_finish(&c, &e), 0);
	assert_int_equal(sbx_profile_set(&c, "security", "no-new-privs", "no", &e), 0);
	assert_int_equal(sbx_profile_finish(&c, &e), -EINVAL);
	assert_int_equal(sbx_profile_set(&c, "security", "capabilities", "net_raw", &e), 0);
	assert_int_equal(sbx_profile_finish(&c, &e), 0);
	sbx_config_free(&c);
}

/* ------------------------------------------------------------ round trip */

static char *show(const struct sbx_config *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *ms = open_memstream(&buf, &len);

	assert_int_equal(sbx_profile_write(c, ms), 0);
	fclose(ms);
	return buf;
}

static void round_trip(struct sbx_config *c)
{
	struct sbx_config again;
	struct sbx_err e;
	char *one = show(c), *two;

	sbx_config_init(&again);
	if (sbx_profile_load_written(&again, one, "shown", &V, &e) < 0)
		fail_msg("re-reading:\n%s\nfailed: %s", one, e.msg);
	two = show(&again);
	assert_string_equal(one, two);
	assert_int_equal(again.n_mounts, c->n_mounts);
	assert_int_equal(again.n_secrets, c->n_secrets);
	assert_int_equal(again.caps_keep, c->caps_keep);
	assert_int_equal(again.uid, c->uid);
	assert_int_equal(again.gid, c->gid);
	assert_int_equal(again.user_set, c->user_set);
	assert_int_equal(again.user_root, c->user_root);
	assert_int_equal(again.memory, c->memory);
	assert_int_equal(again.cpus_milli, c->cpus_milli);
	assert_int_equal(again.time_ms, c->time_ms);
	assert_int_equal(again.net, c->net);
	assert_int_equal(again.rootfs_required, c->rootfs_required);
	assert_int_equal(again.no_new_privs, c->no_new_privs);
	assert_int_equal(again.allow.n, c->allow.n);
	assert_int_equal(again.env_set.n, c->env_set.n);
	for (size_t i = 0; i < c->n_mounts; i++) {
		assert_int_equal(again.mounts[i].kind, c->mounts[i].kind);
		assert_int_equal(again.mounts[i].optional, c->mounts[i].optional);
		assert_int_equal(again.mounts[i].size, c->mounts[i].size);
		assert_string_equal(again.mounts[i].dst, c->mounts[i].dst);
	}
	free(one);
	free(two);
	sbx_config_free(&again);
}

/* tty = auto (the default) | yes | no, and booleans for yes and no */
static void test_tty_modes(void **state)
{
	static const struct {
		const char *text;
		enum sbx_tty mode;
		const char *shown;
	} cases[] = {
	    {"[sandbox]\n", SBX_TTY_AUTO, "tty = auto"},
	    {"[sandbox]\ntty = auto\n", SBX_TTY_AUTO, "tty = auto"},
	    {"[sandbox]\ntty = yes\n", SBX_TTY_YES, "tty = yes"},
	    {"[sandbox]\ntty = true\n", SBX_TTY_YES, "tty = yes"},
	    {"[sandbox]\ntty = off\n", SBX_TTY_NO, "tty = no"},
	};

	for (size_t i = 0; i < SBX_ARRAY_SIZE(cases); i++) {
		struct sbx_config c;
		char *text;

		expect_ok(&c, cases[i].text);
		assert_int_equal(c.tty_mode, cases[i].mode);
		text = show(&c);
		assert_non_null(strstr(text, cases[i].shown));
		free(text);
		round_trip(&c);
		sbx_config_free(&c);
	}
}

static void test_round_trip(void **state)
{
	struct sbx_config c;
	char text[2048];

	put("pol2.json", "base strict\n");
	expect_ok(&c, "[sandbox]\nuser = 0:5\n");
	round_trip(&c);
	sbx_config_free(&c);
	snprintf(
	    text, sizeof(text),
	    "[sandbox]\nhostname = h\nuser = 7\nworkdir = /w\n"
	    "[filesystem]\ntmpfs = /t:1m\nbind = -/a$$b:/c\nmask = /m\n"
	    "watch = /w//x/\nwatch = /w/x\nwatch = /w/y\n"
	    "[env]\nset = X=$$HOME and ~/x\npass = A*\n"
	    "[secrets]\nS = file:/s? as file\n"
	    "[network]\nmode = host\nallow = x.y:1\n"
	    "[limits]\ncpus = 0.5\ntime = 1500ms\nmemory = 4194305\n"
	    "[security]\nseccomp = %s\ncapabilities = sys_admin NET_ADMIN\nno-new-privs = no\n",
	    policy("pol2.json"));
	expect_ok(&c, text);
	assert_string_equal(c.mounts[1].src, "/a$b");
	assert_string_equal(c.env_set.v[0], "X=$HOME and ~/x");
	round_trip(&c);
	char *shown = show(&c);
	assert_non_null(strstr(shown, "bind = -/a$$b:/c\n"));
	assert_non_null(strstr(shown, "tmpfs = /t:1m\n"));
	/* normalised, each once, in order */
	assert_non_null(strstr(shown, "watch = /w/x\nwatch = /w/y\n"));
	assert_int_equal(c.watch.n, 2);
	assert_non_null(strstr(shown, "cpus = 0.500\n"));
	assert_non_null(strstr(shown, "time = 1500ms\n"));
	assert_non_null(strstr(shown, "S = file:/s? as file\n"));
	assert_non_null(strstr(shown, "capabilities = CAP_NET_ADMIN CAP_SYS_ADMIN\n"));
	free(shown);
	sbx_config_free(&c);
}

/*
 * A $PWD or $HOME with a ':' in it (a directory named for a time, "a:b")
 * stays one path: the expansion escapes it, the mount keys split SRC:DST
 * and DST:SIZE at an unescaped ':' only, a literal one is written "\:",
 * and the written profile reads back the same, " #" and " ;" in a path
 * included (sbx exec of a kept sandbox reads it from the record).
 */
static void test_colon_paths(void **state)
{
	static const struct sbx_profile_vars W = {
	    .pwd = "/w/b:1 #x ;y", .home = "/h/u:2", .user = "u", .uid = 1000};
	static const char *const want[][2] = {
	    {"/w/b:1 #x ;y", "/w/b:1 #x ;y"}, {"/h/u:2/.npm", "/n"}, {"/h/u:2/c", "/h/u:2/d"},
	    {NULL, "/w/b:1 #x ;y/t"},	      {"/l:x", "/y\\z:w"},   {"/a\\b", "/a\\b"}};
	struct sbx_config c, again;
	struct sbx_err e;
	char *one, *two;

	(void)state;
	sbx_config_init(&c);
	if (sbx_profile_load_string(&c,
				    "[filesystem]\noverlay = $PWD\nbind = -$HOME/.npm:/n\n"
				    "ro-bind = ~/c:~/d\ntmpfs = $PWD/t:1m\n"
				    "bind = /l\\:x:/y\\\\z\\:w\nbind = /a\\b\n",
				    "t", &W, &e) < 0)
		fail_msg("%s", e.msg);
	assert_int_equal(c.n_mounts, SBX_ARRAY_SIZE(want));
	for (size_t i = 0; i < c.n_mounts; i++) {
		if (want[i][0])
			assert_string_equal(c.mounts[i].src, want[i][0]);
		assert_string_equal(c.mounts[i].dst, want[i][1]);
	}
	assert_true(c.mounts[1].optional);
	assert_int_equal(c.mounts[3].size, 1 << 20);
	one = show(&c);
	assert_non_null(strstr(one, "overlay = /w/b\\:1 #x ;y\n"));
	assert_non_null(strstr(one, "bind = /l\\:x:/y\\\\z\\:w\n"));
	assert_non_null(strstr(one, "tmpfs = /w/b\\:1 #x ;y/t:1m\n"));
	sbx_config_init(&again);
	if (sbx_profile_load_written(&again, one, "shown", &W, &e) < 0)
		fail_msg("re-reading:\n%s\nfailed: %s", one, e.msg);
	two = show(&again);
	assert_string_equal(one, two);
	for (size_t i = 0; i < again.n_mounts; i++) {
		if (want[i][0])
			assert_string_equal(again.mounts[i].src, want[i][0]);
		assert_string_equal(again.mounts[i].dst, want[i][1]);
	}
	free(one);
	free(two);
	sbx_config_free(&again);
	sbx_config_free(&c);
}

/* Write c, read it back as the record's profile is read; the second config. */
static void reread(const struct sbx_config *c, const struct sbx_profile_vars *v,
		   struct sbx_config *again, char **shown)
{
	struct sbx_err e;
	char *two;

	*shown = show(c);
	sbx_config_init(again);
	if (sbx_profile_load_written(again, *shown, "shown", v, &e) < 0)
		fail_msg("re-reading:\n%s\nfailed: %s", *shown, e.msg);
	two = show(again);
	assert_string_equal(*shown, two);
	free(two);
}

/*
 * A value the writer cannot put on a line as it is: a directory whose name
 * holds a newline and then "bind = ..." was written so into the record's
 * profile, and `sbx exec` of the kept sandbox read a read-write bind of
 * that path from it; a name ending in a blank was refused (the reader
 * strips it); one ending in " when host" was taken for the suffix (the
 * mount of another directory).  Now the writer quotes such a value,
 * $'...', and the suffix is read from the profile's text only.
 */
static void test_quoted_values(void **state)
{
	static const struct sbx_profile_vars W = {.pwd =
						      "/w/x\nbind = /etc\n[network]\nmode = host",
						  .home = "/h/u when host",
						  .user = "u",
						  .uid = 1000};
	static const struct sbx_profile_vars B = {
	    .pwd = "/w/trailing \t", .home = "/h/ lead", .user = "u", .uid = 1000};
	static const struct sbx_profile_vars L = {
	    .pwd = "/w/caf\xe9 \xc3\xa9", .home = "/h/u", .user = "u", .uid = 1000};
	struct sbx_config c, again;
	struct sbx_err e;
	char *shown;

	(void)state;
	/* $'...' in a profile */
	expect_ok(&c, "[env]\nset = $'A=x\\ny\\t\\\\ \\'q\\x01\\x23 \\x3b' and $$ \n");
	assert_string_equal(c.env_set.v[0], "A=x\ny\t\\ 'q\x01# ; and $");
	sbx_config_free(&c);
	expect_err("[env]\nset = $'A=x\n", 2,
		   "key 'set': $'...' without its closing quote in '$'A=x'");
	expect_err("[env]\nset = $'A=\\q'\n", 2, "key 'set': bad escape in $'...'");
	expect_err("[env]\nset = $'A=\\x00'\n", 2, "key 'set': bad \\x in $'...'");
	expect_err("[env]\nset = $'A=\\x4'\n", 2, "key 'set': bad \\x in $'...'");

	/* the project's name: one path, in the record as well */
	sbx_config_init(&c);
	if (sbx_profile_load_string(&c,
				    "[filesystem]\noverlay = $PWD\nbind = $HOME\n"
				    "overlay = -$HOME/c when host\n",
				    "t", &W, &e) < 0)
		fail_msg("%s", e.msg);
	assert_int_equal(c.n_mounts, 3);
	assert_string_equal(c.mounts[0].src, W.pwd);
	assert_string_equal(c.mounts[1].src, "/h/u when host");
	assert_false(c.mounts[1].host_only);
	assert_string_equal(c.mounts[2].src, "/h/u when host/c");
	assert_true(c.mounts[2].host_only);
	assert_int_equal(c.net, SBX_NET_NONE);
	reread(&c, &W, &again, &shown);
	assert_null(strstr(shown, "\nbind = /etc"));
	assert_null(strstr(shown, "\nmode = host"));
	assert_non_null(
	    strstr(shown, "overlay = $'/w/x\\nbind = /etc\\n[network]\\nmode = host'\n"));
	assert_non_null(strstr(shown, "bind = $'/h/u when host'\n"));
	assert_non_null(strstr(shown, "overlay = -/h/u when host/c when host\n"));
	assert_int_equal(again.n_mounts, 3);
	for (size_t i = 0; i < 3; i++) {
		assert_string_equal(again.mounts[i].src, c.mounts[i].src);
		assert_int_equal(again.mounts[i].host_only, c.mounts[i].host_only);
	}
	assert_int_equal(again.net, SBX_NET_NONE);
	free(shown);
	sbx_config_free(&again);
	sbx_config_free(&c);

	/* blanks at either end; the command line's -e and --bind */
	sbx_config_init(&c);
	if (sbx_profile_load_string(&c, "[filesystem]\noverlay = $PWD\ntmpfs = $HOME:1m\n", "t", &B,
				    &e) < 0)
		fail_msg("%s", e.msg);
	assert_int_equal(sbx_profile_set(&c, "env", "set", "K=-----BEGIN\nline\n-----END\n", &e),
			 0);
	assert_int_equal(sbx_profile_set(&c, "env", "set", "S= two ends ", &e), 0);
	assert_int_equal(sbx_profile_set(&c, "env", "set", "P=/bin:~/bin:~", &e), 0);
	assert_int_equal(sbx_profile_set(&c, "filesystem", "bind", "/x when host", &e), 0);
	assert_string_equal(c.mounts[0].src, "/w/trailing \t");
	assert_string_equal(c.mounts[1].dst, "/h/ lead");
	assert_string_equal(c.mounts[2].src, "/x when host");
	assert_false(c.mounts[2].host_only);
	reread(&c, &B, &again, &shown);
	assert_int_equal(again.n_mounts, 3);
	assert_string_equal(again.mounts[0].src, "/w/trailing \t");
	assert_string_equal(again.mounts[1].dst, "/h/ lead");
	assert_string_equal(again.mounts[2].src, "/x when host");
	assert_false(again.mounts[2].host_only);
	assert_int_equal(again.env_set.n, 3);
	assert_string_equal(again.env_set.v[0], "K=-----BEGIN\nline\n-----END\n");
	assert_string_equal(again.env_set.v[1], "S= two ends ");
	/* a literal '~' where the reader expands one stays a '~' */
	assert_string_equal(again.env_set.v[2], "P=/bin:~/bin:~");
	free(shown);
	sbx_config_free(&again);
	sbx_config_free(&c);

	/* a long value from the command line (a certificate in -e): the
	 * written profile holds it on one long line */
	char *big = sbx_xmalloc(100004);

	memcpy(big, "C=", 2);
	for (size_t i = 2; i < 100002; i++)
		big[i] = i % 64 ? 'a' + (char)(i % 26) : '\n';
	big[100002] = '\0';
	sbx_config_init(&c);
	assert_int_equal(sbx_profile_set(&c, "env", "set", big, &e), 0);
	reread(&c, &V, &again, &shown);
	assert_string_equal(again.env_set.v[0], big);
	free(big);
	free(shown);
	sbx_config_free(&again);
	sbx_config_free(&c);

	/* a name that is not UTF-8 (the record is JSON: text only); a valid
	 * character beside it stays as it is */
	sbx_config_init(&c);
	if (sbx_profile_load_string(&c, "[filesystem]\noverlay = $PWD\n", "t", &L, &e) < 0)
		fail_msg("%s", e.msg);
	reread(&c, &L, &again, &shown);
	assert_non_null(strstr(shown, "overlay = $'/w/caf\\xe9 \xc3\xa9'\n"));
	assert_true(sbx_utf8_valid(shown, strlen(shown)));
	assert_string_equal(again.mounts[0].src, L.pwd);
	free(shown);
	sbx_config_free(&again);
	sbx_config_free(&c);
}

/* ------------------------------------------------------------ built-ins */

/*
 * watch = [KEY ...] PATH: the keys before the path, from the profile's
 * text (a $PWD that starts with '[' is a path); keys of one path merged
 * across lines, each once; written back one key a line, the path quoted
 * as any; a key with an empty member, a blank or a bracket, no ']', or
 * nothing between the brackets, refused with its line.
 */
static void test_watch_keys(void **state)
{
	static const struct sbx_profile_vars Q = {
	    .pwd = "/w/[x] y\nz", .home = "/h/u", .user = "u", .uid = 1000};
	struct sbx_config c, again;
	char *shown;

	(void)state;
	expect_ok(&c, "[filesystem]\n"
		      "watch = [mcpServers projects.*.allowedTools] ~/.claude.json\n"
		      "watch = [mcpServers, projects.*.mcpServers] ~/.claude.json\n"
		      "watch = /etc/plain\n"
		      "watch = [a.b] /etc/other.json\n");
	assert_int_equal(c.watch.n, 1);
	assert_string_equal(c.watch.v[0], "/etc/plain");
	assert_int_equal(c.n_watch_keys, 2);
	assert_string_equal(c.watch_keys[0].path, "/home/u/.claude.json");
	assert_int_equal(c.watch_keys[0].keys.n, 3);
	assert_string_equal(c.watch_keys[0].keys.v[0], "mcpServers");
	assert_string_equal(c.watch_keys[0].keys.v[1], "projects.*.allowedTools");
	assert_string_equal(c.watch_keys[0].keys.v[2], "projects.*.mcpServers");
	assert_string_equal(c.watch_keys[1].path, "/etc/other.json");
	round_trip(&c);
	shown = show(&c);
	assert_non_null(strstr(shown, "watch = [projects.*.mcpServers] /home/u/.claude.json\n"));
	free(shown);
	sbx_config_free(&c);

	/* a path that starts with '[' or holds a newline, from a variable */
	sbx_config_init(&c);
	{
		struct sbx_err e;
		const char *text = "[filesystem]\nwatch = [k] $PWD/s.json\nwatch = $PWD/t\n";

		if (sbx_profile_load_written(&c, text, "w", &Q, &e) < 0)
			fail_msg("%s", e.msg);
	}
	assert_int_equal(c.n_watch_keys, 1);
	assert_string_equal(c.watch_keys[0].path, "/w/[x] y\nz/s.json");
	assert_string_equal(c.watch.v[0], "/w/[x] y\nz/t");
	reread(&c, &Q, &again, &shown);
	assert_int_equal(again.n_watch_keys, 1);
	assert_string_equal(again.watch_keys[0].path, c.watch_keys[0].path);
	assert_string_equal(again.watch_keys[0].keys.v[0], "k");
	assert_string_equal(again.watch.v[0], c.watch.v[0]);
	free(shown);
	sbx_config_free(&again);
	sbx_config_free(&c);

	expect_err("[filesystem]\nwatch = [a..b] /x\n", 2,
		   "key 'watch': '[a..b]': a key is members");
	expect_err("[filesystem]\nwatch = [.a] /x\n", 2, "key 'watch': '[.a]': a key is members");
	expect_err("[filesystem]\nwatch = [a.] /x\n", 2, "key 'watch': '[a.]': a key is members");
	expect_err("[filesystem]\nwatch = [a\"b] /x\n", 2,
		   "key 'watch': '[a\"b]': a key is members");
	expect_err("[filesystem]\nwatch = [a /x\n", 2, "key 'watch': '[' with no ']'");
	expect_err("[filesystem]\nwatch = [ ] /x\n", 2, "key 'watch': no key between '[' and ']'");
	expect_err("[filesystem]\nwatch = [a] x.json\n", 2,
		   "key 'watch': watch path 'x.json' is not an absolute path");
}

static void test_builtins(void **state)
{
	static const char *const need[] = {"default", "agent", "ci",	 "strict", "build",
					   "claude",  "codex", "gemini", "goose"};
	char buf[256];

	for (size_t i = 0; i < SBX_ARRAY_SIZE(need); i++)
		assert_non_null(sbx_profile_builtin(need[i]));
	for (size_t i = 0; i < sbx_n_builtin_profiles; i++) {
		struct sbx_config c;
		char *errs = load(&c, sbx_builtin_profiles[i].name);

		if (errs)
			fail_msg("built-in '%s': %s", sbx_builtin_profiles[i].name, errs);
		assert_true(strlen(sbx_profile_summary(sbx_builtin_profiles[i].text, buf,
						       sizeof(buf))) > 10);
		round_trip(&c);
		sbx_config_free(&c);
	}
	assert_null(sbx_profile_builtin("nonesuch"));
}

static bool has_mount(const struct sbx_config *c, enum sbx_mount_kind k, const char *dst)
{
	for (size_t i = 0; i < c->n_mounts; i++)
		if (c->mounts[i].kind == k && strcmp(c->mounts[i].dst, dst) == 0)
			return true;
	return false;
}

static void test_builtin_contents(void **state)
{
	struct sbx_config c;

	assert_null(load(&c, "default"));
	assert_null(c.rootfs);
	assert_false(c.user_set);
	assert_int_equal(c.persist, SBX_PERSIST_ON_FAILURE);
	assert_int_equal(c.net, SBX_NET_NONE);
	assert_true(has_mount(&c, SBX_MNT_OVERLAY, "/work/proj"));
	assert_true(has_mount(&c, SBX_MNT_TMPFS, "/tmp"));
	assert_true(has_mount(&c, SBX_MNT_MASK, "/home/u/.ssh"));
	assert_true(has_mount(&c, SBX_MNT_MASK, "/home/u/.aws"));
	assert_true(has_mount(&c, SBX_MNT_MASK, "/home/u/.git-credentials"));
	assert_true(has_mount(&c, SBX_MNT_TMPFS, "/run")); /* host sockets hidden */
	assert_true(has_mount(&c, SBX_MNT_RO_BIND, "/run/systemd/resolve"));
	sbx_config_free(&c);

	assert_null(load(&c, "claude"));
	assert_int_equal(c.net, SBX_NET_PROXY);
	assert_true(has_mount(&c, SBX_MNT_BIND, "/work/proj"));
	assert_true(has_mount(&c, SBX_MNT_BIND, "/home/u/.claude"));
	assert_true(has_mount(&c, SBX_MNT_OVERLAY, "/home/u")); /* copy-on-write home */
	assert_true(has_mount(&c, SBX_MNT_MASK, "/home/u/.ssh"));
	assert_true(has_mount(&c, SBX_MNT_TMPFS, "/run"));
	assert_true(sbx_strv_contains(&c.allow, "api.anthropic.com"));
	assert_true(sbx_strv_contains(&c.allow, "registry.npmjs.org"));
	assert_true(sbx_strv_contains(&c.watch, "/home/u/.claude/settings.json"));
	assert_true(sbx_strv_contains(&c.watch, "/work/proj/.claude/settings.json"));
	assert_int_equal(c.n_secrets, 1);
	assert_string_equal(c.secrets[0].name, "ANTHROPIC_API_KEY");
	assert_true(c.secrets[0].optional);
	sbx_config_free(&c);

	assert_null(load(&c, "ci"));
	assert_true(c.memory != SBX_UNSET && c.pids != SBX_UNSET && c.time_ms != SBX_UNSET);
	assert_true(has_mount(&c, SBX_MNT_OVERLAY, "/work/proj"));
	sbx_config_free(&c);

	assert_null(load(&c, "strict"));
	assert_true(c.rootfs_required);
	assert_string_equal(c.seccomp, "strict");
	for (size_t i = 0; i < c.n_mounts; i++)
		assert_null(c.mounts[i].src); /* no host paths */
	sbx_config_free(&c);
}

static void test_comments(void **state)
{
	struct sbx_config c;

	expect_ok(&c, "\xEF\xBB\xBF# BOM and comments\n; semicolon\n[limits]\n"
		      "memory = 4G   # plenty\n  pids = 9 ; indented, with a comment\n"
		      "[network]\nallow = a.com\tb.com # two\n[env]\nset = URL=http://x/#frag\n");
	assert_int_equal(c.memory, 4ULL << 30);
	assert_int_equal(c.pids, 9);
	assert_int_equal(c.allow.n, 2);
	assert_string_equal(c.env_set.v[0], "URL=http://x/#frag"); /* no blank before '#' */
	sbx_config_free(&c);
}

static void test_relative_profile_path(void **state)
{
	struct sbx_config c;
	char cwd[512], want[512], *errs;

	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir("/tmp"), 0);
	put("img.tar", "not really a tarball\n");
	snprintf(want, sizeof(want), "[sandbox]\nrootfs = img.tar\n[security]\nseccomp = %s\n",
		 policy("./rel.policy"));
	put("rel.ini", want);
	put("rel.policy", "base default\n");
	errs = load(&c, dir + 5); /* a directory is not a profile */
	assert_non_null(errs);
	assert_non_null(strstr(errs, "Is a directory"));
	free(errs);
	sbx_config_free(&c);
	snprintf(want, sizeof(want), "%s/rel.ini", dir + 5);
	errs = load(&c, want);
	if (errs)
		fail_msg("%s", errs);
	snprintf(want, sizeof(want), "%s/img.tar", dir);
	assert_string_equal(c.rootfs, want);
	snprintf(want, sizeof(want), "%s/rel.policy", dir);
	if (seccomp_available())
		assert_string_equal(c.seccomp, want);
	sbx_config_free(&c);
	assert_int_equal(chdir(cwd), 0);
}

/* Mutated built-ins must give errors or configs, never crash or leak. */
static void test_mutations(void **state)
{
	static const char alphabet[] = "[]=:$${}~-#;\n /.*?abcAZ09_\t\\\"";
	unsigned seed = 12345;

	for (int iter = 0; iter < 3000; iter++) {
		const char *src = sbx_builtin_profiles[iter % sbx_n_builtin_profiles].text;
		char *t = sbx_xstrdup(src);
		size_t len = strlen(t);
		struct sbx_config c;
		struct sbx_err e;

		for (int k = 0; k < 1 + iter % 8; k++) {
			seed = seed * 1103515245 + 12345;
			t[(seed >> 8) % len] = alphabet[(seed >> 20) % (sizeof(alphabet) - 1)];
		}
		sbx_config_init(&c);
		if (sbx_profile_load_string(&c, t, "mutant", &V, &e) == 0) {
			char *out = show(&c);

			assert_non_null(out);
			free(out);
		} else {
			assert_true(e.msg[0] != '\0');
		}
		sbx_config_free(&c);
		free(t);
	}
}

static void test_summary(void **state)
{
	char buf[64];

	assert_string_equal(sbx_profile_summary("# x: the summary\n[sandbox]\n", buf, sizeof(buf)),
			    "the summary");
	assert_string_equal(sbx_profile_summary("#  plain words: here\n", buf, sizeof(buf)),
			    "plain words: here");
	assert_string_equal(sbx_profile_summary("[sandbox]\n", buf, sizeof(buf)), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_unknown_section),
	    cmocka_unit_test(test_watch_keys),
	    cmocka_unit_test(test_unknown_key),
	    cmocka_unit_test(test_syntax),
	    cmocka_unit_test(test_empty_lines),
	    cmocka_unit_test(test_long_line),
	    cmocka_unit_test(test_bad_values),
	    cmocka_unit_test(test_bad_paths),
	    cmocka_unit_test(test_bad_allow),
	    cmocka_unit_test(test_bad_caps),
	    cmocka_unit_test(test_bad_secrets),
	    cmocka_unit_test(test_secret_inject),
	    cmocka_unit_test(test_every_error_reported),
	    cmocka_unit_test(test_missing_file),
	    cmocka_unit_test(test_extends_errors),
	    cmocka_unit_test(test_inheritance),
	    cmocka_unit_test(test_expansion),
	    cmocka_unit_test(test_values),
	    cmocka_unit_test(test_cli_set),
	    cmocka_unit_test(test_finish),
	    cmocka_unit_test(test_tty_modes),
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_quoted_values),
	    cmocka_unit_test(test_colon_paths),
	    cmocka_unit_test(test_builtins),
	    cmocka_unit_test(test_builtin_contents),
	    cmocka_unit_test(test_comments),
	    cmocka_unit_test(test_overlay_jail_own),
	    cmocka_unit_test(test_relative_profile_path),
	    cmocka_unit_test(test_mutations),
	    cmocka_unit_test(test_summary),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
