/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_gitconfig.c - lib/util/gitconfig.c reads a config file
 * as git does: indented variables (which inih took for continuations),
 * a variable on its header's line, names in any case, subsections old and
 * new, quotes, escapes, comments, continuation lines, CRLF; where git
 * refuses the file, reading stops.  Each expectation is what `git config
 * --file F --list` (git 2.39) lists for the same text.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gitconfig.h"
#include "rmtree.h"
#include "util.h"

/* Each variable as "section[.subsection].name=value" ("name" alone: no
 * value), one per line, as `git config --list` prints them. */
static int collect(void *user, const char *section, const char *sub, const char *name,
		   const char *value)
{
	struct sbx_strv *out = user;

	sbx_strv_push_take(out, sbx_xasprintf("%s%s%s%s%s%s%s", section, sub ? "." : "",
					      sub ? sub : "", *section ? "." : "", name,
					      value ? "=" : "", value ? value : ""));
	return 1;
}

static char *list(const char *text)
{
	struct sbx_strv v = {0};
	char *s;

	(void)sbx_gitconfig_parse(text, strlen(text), collect, &v);
	s = sbx_strv_join(&v, "\n");
	sbx_strv_free(&v);
	return s;
}

static void expect(const char *text, const char *want)
{
	char *got = list(text);

	assert_string_equal(got, want);
	free(got);
}

static void test_layout(void **unused)
{
	(void)unused;
	/* git's own layout: every variable indented by a tab */
	expect("[core]\n\trepositoryformatversion = 0\n\thooksPath = .husky/_\n",
	       "core.repositoryformatversion=0\ncore.hookspath=.husky/_");
	/* a variable on the header's line; names in any case */
	expect("[Core] HooksPath=x\n[INCLUDE]PATH = y", "core.hookspath=x\ninclude.path=y");
	/* subsections: case kept in the new form, lowered in the old */
	expect("[includeIf \"gitdir:~/Work/\"]\n\tpath = w\n[submodule.Sub]\npath = s\n",
	       "includeif.gitdir:~/Work/.path=w\nsubmodule.sub.path=s");
	expect("[a \"x\\\"y\\\\z\"]\nk = v", "a.x\"y\\z.k=v");
	expect("[s.bMod \"Sub\"]\npath = x\n[a.b.C]\nk = v\n", "s.bmod.Sub.path=x\na.b.c.k=v");
	/* a name alone is true; blank lines and comments anywhere */
	expect("# c\n\n[s]\n; c\n  flag\n  k = v ; c\n", "s.flag\ns.k=v");
	/* CRLF, a byte-order mark */
	expect("\xef\xbb\xbf[s]\r\n\tk = v\r\n", "s.k=v");
}

static void test_values(void **unused)
{
	(void)unused;
	/* quotes keep blanks and comment characters; the quotes go */
	expect("[s]\nk = \" a # b ; c \"  # comment\n", "s.k= a # b ; c ");
	expect("[s]\nk = a\"b\"c\n", "s.k=abc");
	/* inner blanks kept, outer trimmed */
	expect("[s]\nk =   a  b   \n", "s.k=a  b");
	/* escapes, and a backslash at the end of a line continues it */
	expect("[s]\nk = a\\tb\\nc\\\\d\\\"e\n", "s.k=a\tb\nc\\d\"e");
	expect("[s]\nk = one \\\n  two\nj = x\n", "s.k=one   two\ns.j=x");
	expect("[s]\nk =\n", "s.k=");
}

static void test_refused(void **unused)
{
	(void)unused;
	/* a name before any header: git reads it, and what follows */
	expect("k = v\n[s]\nj = w\n", "k=v\ns.j=w");
	/* a backslash at the very end continues into nothing */
	expect("[s]\na = 1 \\", "s.a=1 ");
	/* git refuses each of these files (exit 128), once it has listed
	 * what came before the error: reading stops at the same place */
	expect("[s]\na = 1\nb = \"open\nc = 2\n", "s.a=1"); /* open quote */
	expect("[s]\na = 1\nb = x\\q\nc = 2\n", "s.a=1");   /* unknown escape */
	expect("[s\na = 1\n", "");			    /* unclosed header */
	expect("[s \"x\" ]\na = 1\n", "");		    /* blank before ']' */
	expect("[s]\na = 1\n1b = 2\nc = 3\n", "s.a=1");	    /* name not a letter */
	expect("[s]\na b = 1\nc = 2\n", "");		    /* blank in a name */
}

static int stop_at_first(void *user, const char *section, const char *sub, const char *name,
			 const char *value)
{
	(void)section, (void)sub, (void)name, (void)value;
	++*(int *)user;
	return 0;
}

static void test_fd(void **unused)
{
	char path[] = "/tmp/sbx-gitconfig-XXXXXX";
	int fd = mkstemp(path), calls = 0;
	struct sbx_strv v = {0};

	(void)unused;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "[a]\nb = 1\nc = 2\n", 16), 16);
	assert_int_equal(close(fd), 0);
	assert_int_equal(sbx_gitconfig_parse_fd(open(path, O_RDONLY), collect, &v), 0);
	assert_int_equal(v.n, 2);
	/* fn returning 0 stops the reading */
	assert_int_equal(sbx_gitconfig_parse_fd(open(path, O_RDONLY), stop_at_first, &calls), 0);
	assert_int_equal(calls, 1);
	/* not a regular file; no file */
	assert_true(sbx_gitconfig_parse_fd(open("/tmp", O_RDONLY | O_DIRECTORY), collect, &v) < 0);
	assert_true(sbx_gitconfig_parse_fd(-1, collect, &v) < 0);
	assert_int_equal(v.n, 2);
	sbx_strv_free(&v);
	unlink(path);
}

/* A linked worktree's .git file: the common directory's config (through
 * commondir, relative to the gitdir) and the worktree's own config. */
static void test_file_configs(void **unused)
{
	char top[] = "/tmp/sbx-gitfile-XXXXXX", p[128];
	struct sbx_strv v = {0};
	FILE *f;

	(void)unused;
	assert_non_null(mkdtemp(top));
	snprintf(p, sizeof(p), "%s/main/.git/worktrees/w", top);
	assert_int_equal(sbx_mkdir_p(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/w", top);
	assert_int_equal(mkdir(p, 0755), 0);
	/* no .git file; a .git file naming no gitdir */
	assert_true(sbx_git_file_configs(p, &v) < 0);
	snprintf(p, sizeof(p), "%s/w/.git", top);
	assert_non_null(f = fopen(p, "w"));
	fputs("not a gitdir\n", f);
	assert_int_equal(fclose(f), 0);
	snprintf(p, sizeof(p), "%s/w", top);
	assert_int_equal(sbx_git_file_configs(p, &v), -EINVAL);
	assert_int_equal(v.n, 0);
	/* relative gitdir, commondir relative to it */
	snprintf(p, sizeof(p), "%s/w/.git", top);
	assert_non_null(f = fopen(p, "w"));
	fputs("gitdir: ../main/.git/worktrees/w\r\n", f);
	assert_int_equal(fclose(f), 0);
	snprintf(p, sizeof(p), "%s/main/.git/worktrees/w/commondir", top);
	assert_non_null(f = fopen(p, "w"));
	fputs("../..\n", f);
	assert_int_equal(fclose(f), 0);
	snprintf(p, sizeof(p), "%s/w", top);
	assert_int_equal(sbx_git_file_configs(p, &v), 0);
	assert_int_equal(v.n, 2);
	snprintf(p, sizeof(p), "%s/w/../main/.git/worktrees/w/../../config", top);
	assert_string_equal(v.v[0], p);
	snprintf(p, sizeof(p), "%s/w/../main/.git/worktrees/w/config.worktree", top);
	assert_string_equal(v.v[1], p);
	sbx_strv_free(&v);
	assert_int_equal(sbx_rm_rf_at(AT_FDCWD, top), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_layout),	 cmocka_unit_test(test_values),
	    cmocka_unit_test(test_refused),	 cmocka_unit_test(test_fd),
	    cmocka_unit_test(test_file_configs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
