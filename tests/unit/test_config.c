/* SPDX-License-Identifier: MIT */
/* tests/unit/test_config.c - sbx_config_drop_covered_overlays(): an overlay
 * that an earlier one already shows is dropped, nothing else is;
 * sbx_config_drop_hidden(): a mount a later one at the same place hides; and when
 * `sudo sbx run` acts for the user who ran sudo. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "util.h"
#include "rmtree.h"

static char base[64];

static int setup(void **unused)
{
	char p[128];

	strcpy(base, "/tmp/sbx-test-config-XXXXXX");
	if (!mkdtemp(base))
		return -1;
	snprintf(p, sizeof(p), "%s/home/proj/sub", base);
	if (sbx_mkdir_p(p, 0755) < 0)
		return -1;
	snprintf(p, sizeof(p), "%s/other", base);
	return mkdir(p, 0755);
}

static int teardown(void **unused)
{
	char p[128];

	snprintf(p, sizeof(p), "%s/home/mnt", base);
	(void)umount2(p, MNT_DETACH);
	return sbx_rm_rf_at(AT_FDCWD, base) < 0 ? -1 : 0;
}

/* Add a mount; src and dst relative to base (NULL src for tmpfs). */
static void add(struct sbx_config *c, enum sbx_mount_kind kind, const char *src, const char *dst)
{
	c->mounts = sbx_xrealloc(c->mounts, (c->n_mounts + 1) * sizeof(*c->mounts));
	c->mounts[c->n_mounts++] = (struct sbx_mount){
	    .kind = kind,
	    .src = src ? sbx_xasprintf("%s%s", base, src) : NULL,
	    .dst = sbx_xasprintf("%s%s", dst[0] == '@' ? "" : base, dst[0] == '@' ? dst + 1 : dst),
	};
}

static void check(struct sbx_config *c, size_t want_dropped, size_t want_left)
{
	assert_int_equal(sbx_config_drop_covered_overlays(c), want_dropped);
	assert_int_equal(c->n_mounts, want_left);
	sbx_config_free(c);
	sbx_config_init(c);
}

static void test_drop(void **unused)
{
	struct sbx_config c;

	sbx_config_init(&c);
	/* The default profile's case: $HOME, then $PWD inside it. */
	add(&c, SBX_MNT_OVERLAY, "/home", "/home");
	add(&c, SBX_MNT_OVERLAY, "/home/proj", "/home/proj");
	add(&c, SBX_MNT_MASK, "/home/.ssh", "/home/.ssh");
	assert_int_equal(sbx_config_drop_covered_overlays(&c), 1);
	assert_int_equal(c.n_mounts, 2);
	assert_int_equal(c.mounts[0].kind, SBX_MNT_OVERLAY);
	assert_int_equal(c.mounts[1].kind, SBX_MNT_MASK); /* the rest moved up */
	sbx_config_free(&c);
	sbx_config_init(&c);
	/* The same directory twice; a deeper one; through an overlay of '/'. */
	add(&c, SBX_MNT_OVERLAY, "/home", "/home");
	add(&c, SBX_MNT_OVERLAY, "/home", "/home");
	add(&c, SBX_MNT_OVERLAY, "/home/proj/sub", "/home/proj/sub");
	check(&c, 2, 1);
	add(&c, SBX_MNT_OVERLAY, "/home", "@/");
	add(&c, SBX_MNT_OVERLAY, "/home/proj", "@/proj");
	check(&c, 1, 1);
	sbx_config_free(&c);
}

static void test_keep(void **unused)
{
	struct sbx_config c;

	sbx_config_init(&c);
	/* Outside the first one. */
	add(&c, SBX_MNT_OVERLAY, "/home", "/home");
	add(&c, SBX_MNT_OVERLAY, "/other", "/other");
	check(&c, 0, 2);
	/* Inside it on the host, elsewhere in the jail. */
	add(&c, SBX_MNT_OVERLAY, "/home", "/home");
	add(&c, SBX_MNT_OVERLAY, "/home/proj", "/work");
	check(&c, 0, 2);
	/* The inner one first: it is what the outer one covers, not shows. */
	add(&c, SBX_MNT_OVERLAY, "/home/proj", "/home/proj");
	add(&c, SBX_MNT_OVERLAY, "/home", "/home");
	check(&c, 0, 2);
	/* A mount in between, in that tree: the later overlay is on top of it. */
	add(&c, SBX_MNT_OVERLAY, "/home", "/home");
	add(&c, SBX_MNT_TMPFS, NULL, "/home/proj/sub");
	add(&c, SBX_MNT_OVERLAY, "/home/proj", "/home/proj");
	check(&c, 0, 3);
	/* A read-write bind is not an overlay: nothing covers it. */
	add(&c, SBX_MNT_OVERLAY, "/home", "/home");
	add(&c, SBX_MNT_BIND, "/home/proj", "/home/proj");
	check(&c, 0, 2);
	/* A missing source (an optional mount) is left to the jail. */
	add(&c, SBX_MNT_OVERLAY, "/home", "/home");
	add(&c, SBX_MNT_OVERLAY, "/home/nope", "/home/nope");
	check(&c, 0, 2);
	/* A prefix that is not a parent directory. */
	add(&c, SBX_MNT_OVERLAY, "/home/proj", "/home/proj");
	add(&c, SBX_MNT_OVERLAY, "/home/projx", "/home/projx");
	check(&c, 0, 2);
	sbx_config_free(&c);
}

/* A mount point between them: the overlay of the outer one does not show
 * what is mounted inside it (root only: it mounts a tmpfs). */
static void test_mount_between(void **unused)
{
	struct sbx_config c;
	char p[128];

	if (geteuid() != 0)
		skip();
	snprintf(p, sizeof(p), "%s/home/mnt", base);
	assert_int_equal(mkdir(p, 0755), 0);
	if (mount("sbx-test", p, "tmpfs", 0, "size=64k") < 0)
		skip();
	snprintf(p, sizeof(p), "%s/home/mnt/in", base);
	assert_int_equal(mkdir(p, 0755), 0);
	sbx_config_init(&c);
	add(&c, SBX_MNT_OVERLAY, "/home", "/home");
	add(&c, SBX_MNT_OVERLAY, "/home/mnt/in", "/home/mnt/in");
	check(&c, 0, 2);
	sbx_config_free(&c);
}

/* A directory on the way that is not ours: copying it up could fail, so
 * the inner overlay stays (root only: it chowns). */
static void test_not_ours(void **unused)
{
	struct sbx_config c;
	char p[128];

	if (geteuid() != 0)
		skip();
	snprintf(p, sizeof(p), "%s/home/proj", base);
	assert_int_equal(chown(p, 12345, 12345), 0);
	sbx_config_init(&c);
	add(&c, SBX_MNT_OVERLAY, "/home", "/home");
	add(&c, SBX_MNT_OVERLAY, "/home/proj/sub", "/home/proj/sub");
	check(&c, 0, 2);
	add(&c, SBX_MNT_OVERLAY, "/home/proj", "/home/proj");
	add(&c, SBX_MNT_OVERLAY, "/home/proj/sub", "/home/proj/sub");
	check(&c, 1, 1); /* proj is that layer's root: not copied up */
	sbx_config_free(&c);
}

static size_t hidden(struct sbx_config *c, size_t want_left)
{
	size_t n = sbx_config_drop_hidden(c);

	assert_int_equal(c->n_mounts, want_left);
	return n;
}

/* A later mount at the same place hides an earlier one: only the later one
 * is said and made (`--overlay .` over a profile's read-write bind). */
static void test_hidden(void **unused)
{
	struct sbx_config c;

	sbx_config_init(&c);
	/* the agent profile's bind, then --overlay . */
	add(&c, SBX_MNT_TMPFS, NULL, "/tmp");
	add(&c, SBX_MNT_BIND, "/home/proj", "/home/proj");
	add(&c, SBX_MNT_MASK, NULL, "/home/proj/.env");
	add(&c, SBX_MNT_OVERLAY, "/home/proj", "/home/proj");
	assert_int_equal(hidden(&c, 3), 1);
	assert_int_equal(c.mounts[0].kind, SBX_MNT_TMPFS);
	assert_int_equal(c.mounts[1].kind, SBX_MNT_MASK); /* masks go on last */
	assert_int_equal(c.mounts[2].kind, SBX_MNT_OVERLAY);
	sbx_config_free(&c);
	sbx_config_init(&c);
	/* the default profile's overlay, then --bind . or --ro-bind .; twice */
	add(&c, SBX_MNT_OVERLAY, "/home/proj", "/home/proj");
	add(&c, SBX_MNT_BIND, "/home/proj", "/home/proj");
	add(&c, SBX_MNT_RO_BIND, "/home/proj", "/home/proj");
	assert_int_equal(hidden(&c, 1), 2);
	assert_int_equal(c.mounts[0].kind, SBX_MNT_RO_BIND);
	sbx_config_free(&c);
	sbx_config_init(&c);
	/* a tmpfs over a bind; a bind elsewhere onto the same place */
	add(&c, SBX_MNT_BIND, "/home/proj", "/data");
	add(&c, SBX_MNT_BIND, "/other", "/data");
	add(&c, SBX_MNT_TMPFS, NULL, "/data");
	assert_int_equal(hidden(&c, 1), 2);
	assert_int_equal(c.mounts[0].kind, SBX_MNT_TMPFS);
	sbx_config_free(&c);
	sbx_config_init(&c);
	/* kept: a later optional mount whose source is missing (not made) */
	add(&c, SBX_MNT_BIND, "/home/proj", "/home/proj");
	add(&c, SBX_MNT_OVERLAY, "/home/nope", "/home/proj");
	c.mounts[1].optional = true;
	assert_int_equal(hidden(&c, 2), 0);
	/* kept: a mount below, or above, is not the same place */
	add(&c, SBX_MNT_BIND, "/home/proj/sub", "/home/proj/sub");
	add(&c, SBX_MNT_OVERLAY, "/home", "/home");
	assert_int_equal(hidden(&c, 4), 0);
	sbx_config_free(&c);
	sbx_config_init(&c);
	/* kept: a mount between them on a parent may change where the path
	 * leads (a symlink on the way) */
	add(&c, SBX_MNT_BIND, "/home/proj", "/home/proj");
	add(&c, SBX_MNT_OVERLAY, "/home", "/home");
	add(&c, SBX_MNT_OVERLAY, "/home/proj", "/home/proj");
	assert_int_equal(hidden(&c, 3), 0);
	/* kept: masks, which go on after every other mount */
	sbx_config_free(&c);
	sbx_config_init(&c);
	add(&c, SBX_MNT_MASK, NULL, "/home/proj");
	add(&c, SBX_MNT_BIND, "/home/proj", "/home/proj");
	assert_int_equal(hidden(&c, 2), 0);
	sbx_config_free(&c);
}

/* A user of the password database with ids in the jail's range, not root. */
static struct passwd *some_user(void)
{
	struct passwd *pw;

	setpwent();
	while ((pw = getpwent()))
		if (pw->pw_uid > 0 && pw->pw_uid < 65536 && pw->pw_gid > 0 && pw->pw_gid < 65536 &&
		    pw->pw_dir && pw->pw_dir[0] == '/' && pw->pw_dir[1])
			break;
	endpwent();
	return pw;
}

/* Does a run in pwd act for the caller that $SUDO_UID names? */
static bool acts_for(struct sbx_config *c, const char *pwd, struct sbx_sudo_caller *who)
{
	bool acts;

	free(sbx_config_sudo_caller_check(c, pwd, who, &acts));
	return acts;
}

static bool for_caller(struct sbx_config *c, const char *uid, const char *gid,
		       struct sbx_sudo_caller *who)
{
	setenv("SUDO_UID", uid, 1);
	if (gid)
		setenv("SUDO_GID", gid, 1);
	else
		unsetenv("SUDO_GID");
	return acts_for(c, base, who);
}

/* A read-write bind's .git (a directory, or a worktree's file) is marked
 * read-only, unless a read-write bind of its own names it; a ro-bind, an
 * overlay, a symlink and a directory with no .git are not marked. */
static void test_protect_git(void **unused)
{
	struct sbx_config c;
	char p[160], q[160];

	snprintf(p, sizeof(p), "%s/home/proj/.git", base);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/other/.git", base);
	{
		FILE *f = fopen(p, "w");

		assert_non_null(f);
		fputs("gitdir: /x\n", f);
		assert_int_equal(fclose(f), 0);
	}
	sbx_config_init(&c);
	add(&c, SBX_MNT_BIND, "/home/proj", "/home/proj");
	add(&c, SBX_MNT_BIND, "/other", "@/work");
	add(&c, SBX_MNT_RO_BIND, "/home/proj", "@/ro");
	add(&c, SBX_MNT_OVERLAY, "/home/proj", "@/cow");
	add(&c, SBX_MNT_BIND, "/home/proj/sub", "@/sub");
	assert_int_equal(sbx_config_protect_git(&c, NULL), 2);
	assert_true(c.mounts[0].git_ro);
	assert_true(c.mounts[1].git_ro);
	for (size_t i = 2; i < 5; i++)
		assert_false(c.mounts[i].git_ro);
	/* asked for: --bind PROJECT/.git */
	add(&c, SBX_MNT_BIND, "/home/proj/.git", "/home/proj/.git");
	assert_int_equal(sbx_config_protect_git(&c, NULL), 1);
	assert_false(c.mounts[0].git_ro);
	assert_true(c.mounts[1].git_ro);
	/* a symlink is never taken for the repository */
	snprintf(q, sizeof(q), "%s/home/proj/sub/.git", base);
	assert_int_equal(symlink(p, q), 0);
	assert_int_equal(sbx_config_protect_git(&c, NULL), 1);
	assert_false(c.mounts[4].git_ro);
	sbx_config_free(&c);
}

/* Write text to base/rel. */
static void put_file(const char *rel, const char *text)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void mkdirs(const char *rel)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	assert_int_equal(sbx_mkdir_p(p, 0755), 0);
}

/* What the repository's git config names below the bind goes with its
 * .git (git_named): a core.hooksPath directory, relative to the work tree
 * or absolute; a file include.path or includeIf.*.path names, relative to
 * the file that includes it, and what that file names in turn; a global
 * config's relative core.hooksPath (the home given, "~/" expanded with
 * it); a path reached through a symlink, where it leads (link/_ is
 * real/_).  Not: one that is not there, one out of the bind, one in .git
 * (read-only with it), the bind itself. */
static void test_protect_git_named(void **unused)
{
	struct sbx_config c;
	char text[512], home[128], link[256];
	const char *want[] = {".husky/_",    ".gitconfig",   ".githooks",
			      "tools/hooks", "etc/included", "real/_"};
	char *saved = getenv("HOME") ? sbx_xstrdup(getenv("HOME")) : NULL;

	(void)unused;
	mkdirs("home/proj/.git/hooks");
	mkdirs("home/proj/.husky/_");
	mkdirs("home/proj/.githooks");
	mkdirs("home/proj/tools/hooks");
	mkdirs("home/proj/etc");
	mkdirs("home/proj/real/_");
	mkdirs("h");
	snprintf(link, sizeof(link), "%s/home/proj/link", base);
	assert_int_equal(symlink("real", link), 0);
	put_file("home/proj/etc/included", "[alias]\n\tx = y\n");
	put_file("home/proj/.git/config",
		 "[core]\n\trepositoryformatversion = 0\n\thooksPath = .husky/_\n"
		 "[include]\n\tpath = ../.gitconfig\n"
		 "[includeIf \"gitdir:/elsewhere/\"]\n\tpath = ../missing\n"
		 "[core]\n\thooksPath = link/_\n\thooksPath = .git/hooks\n\thooksPath = .\n"
		 "\thooksPath = ../../outside\n");
	snprintf(text, sizeof(text),
		 "[core]\n\thooksPath = %s/home/proj/.githooks # absolute\n"
		 "[include]\n\tpath = \"etc/included\"\n\tpath = ~/not-in-the-bind\n",
		 base);
	put_file("home/proj/.gitconfig", text);
	put_file("h/.gitconfig", "[core] hooksPath = tools/hooks\n");
	snprintf(home, sizeof(home), "%s/h", base);
	setenv("HOME", home, 1);
	sbx_config_init(&c);
	add(&c, SBX_MNT_BIND, "/home/proj", "/home/proj");
	add(&c, SBX_MNT_BIND, "/other", "@/work");
	assert_int_equal(sbx_config_protect_git(&c, home), 1);
	assert_true(c.mounts[0].git_ro);
	assert_int_equal(c.mounts[0].git_named.n, SBX_ARRAY_SIZE(want));
	for (size_t i = 0; i < SBX_ARRAY_SIZE(want); i++)
		assert_true(sbx_strv_contains(&c.mounts[0].git_named, want[i]));
	assert_int_equal(c.mounts[1].git_named.n, 0);
	/* asked for (--bind PROJECT/.git): nothing named either */
	add(&c, SBX_MNT_BIND, "/home/proj/.git", "/home/proj/.git");
	assert_int_equal(sbx_config_protect_git(&c, home), 0);
	assert_int_equal(c.mounts[0].git_named.n, 0);
	sbx_config_free(&c);
	if (saved)
		setenv("HOME", saved, 1);
	free(saved);
}

/* What git reaches through a symlink in the repository goes with its .git:
 * where .git/hooks, a hook and .git/config lead below the bind, and where
 * .git itself leads (git_link, named first).  Not: a link out of the
 * bind, nor one to what is in .git already; a .git that leads out of the
 * bind leaves the bind unmarked. */
static void test_protect_git_links(void **unused)
{
	struct sbx_config c;
	char p[256], q[256];

	(void)unused;
	mkdirs("links/a/.git/hooks");
	mkdirs("links/a/githooks");
	mkdirs("links/a/scripts");
	mkdirs("links/out");
	put_file("links/a/scripts/pre-commit.sh", "#!/bin/sh\n");
	put_file("links/a/repo-config", "[core]\n");
	put_file("links/out/hook", "#!/bin/sh\n");
	snprintf(p, sizeof(p), "%s/links/a/.git/hooks", base);
	assert_int_equal(rmdir(p), 0);
	assert_int_equal(symlink("../githooks", p), 0);
	snprintf(p, sizeof(p), "%s/links/a/githooks/pre-commit", base);
	assert_int_equal(symlink("../scripts/pre-commit.sh", p), 0);
	snprintf(p, sizeof(p), "%s/links/a/githooks/post-checkout", base);
	snprintf(q, sizeof(q), "%s/links/out/hook", base);
	assert_int_equal(symlink(q, p), 0);
	snprintf(p, sizeof(p), "%s/links/a/githooks/pre-push", base);
	assert_int_equal(symlink("pre-commit", p), 0);
	snprintf(p, sizeof(p), "%s/links/a/.git/config", base);
	assert_int_equal(symlink("../repo-config", p), 0);
	sbx_config_init(&c);
	add(&c, SBX_MNT_BIND, "/links/a", "/links/a");
	assert_int_equal(sbx_config_protect_git(&c, NULL), 1);
	assert_true(c.mounts[0].git_ro);
	assert_false(c.mounts[0].git_link);
	/* githooks, the config, and the script two of its hooks lead to
	 * (once); not the hook that leads out of the bind */
	assert_int_equal(c.mounts[0].git_named.n, 3);
	assert_string_equal(c.mounts[0].git_named.v[0], "githooks");
	assert_string_equal(c.mounts[0].git_named.v[1], "repo-config");
	assert_string_equal(c.mounts[0].git_named.v[2], "scripts/pre-commit.sh");
	sbx_config_free(&c);

	/* .git a symlink to a directory of the bind, whose hooks lead to a
	 * script of it */
	mkdirs("links/b/.repo-git/hooks");
	mkdirs("links/b/scripts");
	put_file("links/b/scripts/h.sh", "#!/bin/sh\n");
	snprintf(p, sizeof(p), "%s/links/b/.git", base);
	assert_int_equal(symlink(".repo-git", p), 0);
	snprintf(p, sizeof(p), "%s/links/b/.repo-git/hooks/pre-commit", base);
	assert_int_equal(symlink("../../scripts/h.sh", p), 0);
	sbx_config_init(&c);
	add(&c, SBX_MNT_BIND, "/links/b", "/links/b");
	assert_int_equal(sbx_config_protect_git(&c, NULL), 1);
	assert_true(c.mounts[0].git_ro);
	assert_true(c.mounts[0].git_link);
	assert_int_equal(c.mounts[0].git_named.n, 2);
	assert_string_equal(c.mounts[0].git_named.v[0], ".repo-git");
	assert_string_equal(c.mounts[0].git_named.v[1], "scripts/h.sh");
	/* asked for: nothing marked, nothing named */
	add(&c, SBX_MNT_BIND, "/links/b/.git", "/links/b/.git");
	assert_int_equal(sbx_config_protect_git(&c, NULL), 0);
	assert_false(c.mounts[0].git_link);
	assert_int_equal(c.mounts[0].git_named.n, 0);
	sbx_config_free(&c);

	/* .git a symlink out of the bind: not the bind's to protect */
	mkdirs("links/c");
	mkdirs("links/out/repo.git");
	snprintf(p, sizeof(p), "%s/links/c/.git", base);
	snprintf(q, sizeof(q), "%s/links/out/repo.git", base);
	assert_int_equal(symlink(q, p), 0);
	sbx_config_init(&c);
	add(&c, SBX_MNT_BIND, "/links/c", "/links/c");
	assert_int_equal(sbx_config_protect_git(&c, NULL), 0);
	assert_false(c.mounts[0].git_ro);
	assert_false(c.mounts[0].git_link);
	assert_int_equal(c.mounts[0].git_named.n, 0);
	sbx_config_free(&c);
}

/* Why a run stays root's with this caller: the run log's clause, or "" */
static char *declined(struct sbx_config *c, const char *uid, const char *gid, const char *pwd)
{
	struct sbx_sudo_caller who;
	bool acts;
	char *why;

	setenv("SUDO_UID", uid, 1);
	setenv("SUDO_GID", gid, 1);
	why = sbx_config_sudo_caller_check(c, pwd, &who, &acts);
	assert_true(!why || !acts);
	return why ? why : sbx_xstrdup("");
}

static void test_sudo_caller(void **unused)
{
	struct sbx_sudo_caller who;
	struct sbx_config c;
	struct passwd *pw;
	char uid[16], gid[16], sub[128];
	uid_t u;
	gid_t g;

	if (getuid() != 0 || !(pw = some_user()))
		skip();
	u = pw->pw_uid;
	g = pw->pw_gid;
	snprintf(uid, sizeof(uid), "%u", (unsigned)u);
	snprintf(gid, sizeof(gid), "%u", (unsigned)g);
	sbx_config_init(&c);
	/* The working directory is the caller's: the run is the caller's. */
	assert_int_equal(chown(base, u, g), 0);
	assert_true(for_caller(&c, uid, NULL, &who));
	assert_int_equal(who.uid, u);
	assert_int_equal(who.gid, g);
	assert_true(for_caller(&c, uid, gid, &who));
	assert_int_equal(who.gid, g);
	c.rootfs = sbx_xstrdup("host");
	assert_true(for_caller(&c, uid, gid, &who));
	/* Not the caller's: root's group, a bad id, root, an image, -u. */
	assert_false(for_caller(&c, uid, "0", &who));
	assert_false(for_caller(&c, "0", NULL, &who));
	assert_false(for_caller(&c, "+1", NULL, &who));
	assert_false(for_caller(&c, "-1", NULL, &who));
	assert_false(for_caller(&c, "", NULL, &who));
	free(c.rootfs);
	c.rootfs = sbx_xstrdup("/tmp/img.tar");
	assert_false(for_caller(&c, uid, gid, &who));
	free(c.rootfs);
	c.rootfs = NULL;
	c.user_set = true;
	assert_false(for_caller(&c, uid, gid, &who));
	c.user_set = false;
	/* Each refusal for a caller who is there says why; -u, an image and
	 * acting for them say nothing. */
	{
		char *why[6], want[256];

		why[0] = declined(&c, uid, "0", base);
		why[1] = declined(&c, uid, "70000", base);
		why[2] = declined(&c, uid, gid, "/");
		why[3] = declined(&c, uid, gid, base);
		c.user_set = true;
		why[4] = declined(&c, uid, "0", "/");
		c.user_set = false;
		c.rootfs = sbx_xstrdup("/tmp/img.tar");
		why[5] = declined(&c, uid, "0", "/");
		free(c.rootfs);
		c.rootfs = NULL;
		snprintf(want, sizeof(want), "not as %s, who ran sudo: their group is root",
			 pw->pw_name);
		assert_string_equal(why[0], want);
		snprintf(want, sizeof(want),
			 "not as %s, who ran sudo: their gid 70000 is above the jail's ids 0-65535",
			 pw->pw_name);
		assert_string_equal(why[1], want);
		snprintf(want, sizeof(want),
			 "not as %s, who ran sudo: / is not theirs (-u %s:%s for their ids)",
			 pw->pw_name, uid, gid);
		assert_string_equal(why[2], want);
		for (int i = 3; i < 6; i++)
			assert_string_equal(why[i], "");
		for (int i = 0; i < 6; i++)
			free(why[i]);
	}
	/* A directory of someone else's (root's own: sudo -i in /root). */
	assert_int_equal(chown(base, 0, 0), 0);
	assert_false(for_caller(&c, uid, gid, &who));
	/* The caller's own, in a directory the caller cannot enter. */
	snprintf(sub, sizeof(sub), "%s/other", base);
	assert_int_equal(chmod(base, 0700), 0);
	assert_int_equal(chown(sub, u, g), 0);
	setenv("SUDO_UID", uid, 1);
	assert_false(acts_for(&c, sub, &who));
	assert_int_equal(chmod(base, 0711), 0);
	assert_true(acts_for(&c, sub, &who));
	/* Acting for the caller: its ids, HOME, USER and LOGNAME. */
	assert_int_equal(chown(base, u, g), 0);
	assert_true(for_caller(&c, uid, gid, &who));
	sbx_config_act_for(&c, &who);
	assert_true(c.user_set);
	assert_false(c.user_root);
	assert_int_equal(c.uid, u);
	assert_int_equal(c.gid, g);
	assert_string_equal(c.sudo_user, pw->pw_name);
	assert_int_equal(c.env_set.n, 3);
	assert_int_equal(strncmp(c.env_set.v[0], "HOME=/", 6), 0);
	assert_int_equal(strncmp(c.env_set.v[1], "USER=", 5), 0);
	assert_string_equal(c.env_set.v[1] + 5, pw->pw_name);
	assert_string_equal(c.env_set.v[2] + 8, pw->pw_name);
	unsetenv("SUDO_UID");
	unsetenv("SUDO_GID");
	sbx_config_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_drop, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_keep, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_mount_between, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_not_ours, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_hidden, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sudo_caller, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_protect_git, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_protect_git_named, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_protect_git_links, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
