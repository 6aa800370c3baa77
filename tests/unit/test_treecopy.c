/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_treecopy.c - sbx_tree_copy() (lib/util/treecopy.c), which
 * keeps the in-memory writable layer of an unprivileged [limits] disk:
 * every kind of entry an overlay upper holds comes across with its mode,
 * times and user.* xattrs; symlinks are never followed; holes stay holes;
 * unreadable entries are still copied; any depth with few descriptors;
 * owners kept where the copier may set them, never a setuid-root file.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "util.h"
#include "rmtree.h"
#include "treecopy.h"

struct dirs {
	char top[64];
	int src, dst;
};

static int setup(void **state)
{
	struct dirs *d = calloc(1, sizeof(*d));
	char p[96];

	snprintf(d->top, sizeof(d->top), "/tmp/sbx-treecopy-XXXXXX");
	assert_non_null(mkdtemp(d->top));
	snprintf(p, sizeof(p), "%s/src", d->top);
	assert_int_equal(mkdir(p, 0755), 0);
	d->src = open(p, O_RDONLY | O_DIRECTORY);
	snprintf(p, sizeof(p), "%s/dst", d->top);
	assert_int_equal(mkdir(p, 0755), 0);
	d->dst = open(p, O_RDONLY | O_DIRECTORY);
	assert_true(d->src >= 0 && d->dst >= 0);
	*state = d;
	return 0;
}

static int teardown(void **state)
{
	struct dirs *d = *state;
	char top[64];
	int fd;

	close(d->src);
	close(d->dst);
	snprintf(top, sizeof(top), "%s", d->top);
	fd = open("/tmp", O_RDONLY | O_DIRECTORY);
	assert_int_equal(sbx_rm_rf_at(fd, top + strlen("/tmp/")), 0);
	close(fd);
	free(d);
	return 0;
}

static void write_at(int dirfd, const char *name, const char *data, mode_t mode)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, strlen(data)), (ssize_t)strlen(data));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static void content_is(int dirfd, const char *name, const char *want)
{
	char buf[256] = {0};
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW);

	assert_true(fd >= 0);
	assert_true(read(fd, buf, sizeof(buf) - 1) >= 0);
	close(fd);
	assert_string_equal(buf, want);
}

static struct stat lstat_at(int dirfd, const char *name)
{
	struct stat st;

	assert_int_equal(fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW), 0);
	return st;
}

/* Every kind of entry of an overlay upper, with its metadata. */
static void test_kinds(void **state)
{
	struct dirs *d = *state;
	struct sbx_tree_copy_stats st;
	struct sbx_err e = {0};
	struct timespec old[2] = {{.tv_sec = 1000000000}, {.tv_sec = 1000000000}};
	char buf[64] = {0};
	struct stat s;
	int sub;

	write_at(d->src, "file", "hello\n", 0640);
	assert_int_equal(utimensat(d->src, "file", old, 0), 0);
	write_at(d->src, "exec", "#!/bin/sh\n", 04755);
	assert_int_equal(symlinkat("/etc/passwd", d->src, "abs-link"), 0);
	assert_int_equal(symlinkat("file", d->src, "rel-link"), 0);
	assert_int_equal(mkfifoat(d->src, "fifo", 0600), 0);
	/* a whiteout: an overlay's deleted file; needs no privilege to make */
	assert_int_equal(mknodat(d->src, "gone", S_IFCHR | 0, makedev(0, 0)), 0);
	assert_int_equal(mkdirat(d->src, "dir", 0750), 0);
	sub = openat(d->src, "dir", O_RDONLY | O_DIRECTORY);
	assert_true(sub >= 0);
	write_at(sub, "inner", "in\n", 0600);
	/* an opaque directory (userxattr overlays), if this fs has user xattrs */
	bool xattrs = fsetxattr(sub, "user.overlay.opaque", "y", 1, 0) == 0;
	close(sub);
	assert_int_equal(utimensat(d->src, "dir", old, AT_SYMLINK_NOFOLLOW), 0);

	assert_int_equal(sbx_tree_copy(d->src, d->dst, &st, &e), 0);
	assert_int_equal(st.failed, 0);
	assert_int_equal(st.files, 3);
	assert_int_equal(st.dirs, 1);

	content_is(d->dst, "file", "hello\n");
	s = lstat_at(d->dst, "file");
	assert_int_equal(s.st_mode & 07777, 0640);
	assert_int_equal(s.st_mtim.tv_sec, 1000000000);
	assert_int_equal(lstat_at(d->dst, "exec").st_mode & 0777, 0755);
	assert_true(S_ISLNK(lstat_at(d->dst, "abs-link").st_mode));
	assert_int_equal(readlinkat(d->dst, "abs-link", buf, sizeof(buf) - 1), 11);
	assert_string_equal(buf, "/etc/passwd");
	assert_true(S_ISLNK(lstat_at(d->dst, "rel-link").st_mode));
	assert_true(S_ISFIFO(lstat_at(d->dst, "fifo").st_mode));
	s = lstat_at(d->dst, "gone");
	assert_true(S_ISCHR(s.st_mode));
	assert_int_equal(s.st_rdev, makedev(0, 0));
	s = lstat_at(d->dst, "dir");
	assert_true(S_ISDIR(s.st_mode));
	assert_int_equal(s.st_mode & 07777, 0750);
	assert_int_equal(s.st_mtim.tv_sec, 1000000000);
	sub = openat(d->dst, "dir", O_RDONLY | O_DIRECTORY);
	assert_true(sub >= 0);
	content_is(sub, "inner", "in\n");
	if (xattrs) {
		memset(buf, 0, sizeof(buf));
		assert_int_equal(fgetxattr(sub, "user.overlay.opaque", buf, sizeof(buf)), 1);
		assert_string_equal(buf, "y");
	}
	close(sub);
}

/* A symlink to a directory is copied as a link, never walked. */
static void test_no_follow(void **state)
{
	struct dirs *d = *state;
	struct sbx_tree_copy_stats st;
	struct sbx_err e = {0};
	char target[96];

	snprintf(target, sizeof(target), "%s/outside", d->top);
	assert_int_equal(mkdir(target, 0755), 0);
	assert_int_equal(symlinkat(target, d->src, "escape"), 0);
	{
		int o = open(target, O_RDONLY | O_DIRECTORY);

		write_at(o, "secret", "no\n", 0600);
		close(o);
	}
	assert_int_equal(sbx_tree_copy(d->src, d->dst, &st, &e), 0);
	assert_true(S_ISLNK(lstat_at(d->dst, "escape").st_mode));
	assert_int_equal(st.files, 0);
}

/* A 1 TiB file that is one byte of data stays one block on disk. */
static void test_sparse(void **state)
{
	struct dirs *d = *state;
	struct sbx_tree_copy_stats st;
	struct sbx_err e = {0};
	const off_t size = (off_t)1 << 40;
	struct stat s;
	char c = 0;
	int fd = openat(d->src, "sparse", O_WRONLY | O_CREAT, 0644);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "x", 1, size - 1), 1);
	assert_int_equal(pwrite(fd, "y", 1, 4096 * 16), 1);
	close(fd);
	assert_int_equal(sbx_tree_copy(d->src, d->dst, &st, &e), 0);
	s = lstat_at(d->dst, "sparse");
	assert_int_equal(s.st_size, size);
	assert_true(s.st_blocks * 512 < 1 << 20);
	assert_true(st.bytes < 1 << 20);
	fd = openat(d->dst, "sparse", O_RDONLY);
	assert_int_equal(pread(fd, &c, 1, size - 1), 1);
	assert_int_equal(c, 'x');
	assert_int_equal(pread(fd, &c, 1, 4096 * 16), 1);
	assert_int_equal(c, 'y');
	assert_int_equal(pread(fd, &c, 1, 4096), 1);
	assert_int_equal(c, 0);
	close(fd);
}

/* Mode-000 files and directories (ours) are copied with their mode. */
static void test_unreadable(void **state)
{
	struct dirs *d = *state;
	struct sbx_tree_copy_stats st;
	struct sbx_err e = {0};
	int sub;

	if (geteuid() == 0)
		skip(); /* root reads everything: nothing to show */
	write_at(d->src, "locked", "secret\n", 0);
	assert_int_equal(mkdirat(d->src, "closed", 0700), 0);
	sub = openat(d->src, "closed", O_RDONLY | O_DIRECTORY);
	write_at(sub, "f", "in\n", 0644);
	close(sub);
	assert_int_equal(fchmodat(d->src, "closed", 0, 0), 0);
	write_at(d->src, "after", "later\n", 0644);
	assert_int_equal(sbx_tree_copy(d->src, d->dst, &st, &e), 0);
	assert_int_equal(st.failed, 0);
	assert_int_equal(lstat_at(d->dst, "locked").st_mode & 07777, 0);
	assert_int_equal(lstat_at(d->dst, "closed").st_mode & 07777, 0);
	content_is(d->dst, "after", "later\n");
	assert_int_equal(fchmodat(d->dst, "locked", 0600, 0), 0);
	content_is(d->dst, "locked", "secret\n");
	assert_int_equal(fchmodat(d->dst, "closed", 0700, 0), 0);
	sub = openat(d->dst, "closed", O_RDONLY | O_DIRECTORY);
	content_is(sub, "f", "in\n");
	close(sub);
}

/* 2000 levels with 64 descriptors allowed: O(1) fds whatever the depth. */
static void test_deep(void **state)
{
	struct dirs *d = *state;
	struct sbx_tree_copy_stats st;
	struct sbx_err e = {0};
	struct rlimit old, low = {64, 64};
	int fd = dup(d->src);
	const int depth = 2000;

	for (int i = 0; i < depth; i++) {
		int n;

		assert_int_equal(mkdirat(fd, "d", 0755), 0);
		n = openat(fd, "d", O_RDONLY | O_DIRECTORY);
		assert_true(n >= 0);
		close(fd);
		fd = n;
	}
	write_at(fd, "bottom", "deep\n", 0644);
	close(fd);
	write_at(d->src, "top", "after the deep tree\n", 0644);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	low.rlim_max = old.rlim_max;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	int r = sbx_tree_copy(d->src, d->dst, &st, &e);

	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	if (r < 0)
		fail_msg("%s", e.msg);
	assert_int_equal(st.dirs, depth);
	content_is(d->dst, "top", "after the deep tree\n");
	fd = dup(d->dst);
	for (int i = 0; i < depth; i++) {
		int n = openat(fd, "d", O_RDONLY | O_DIRECTORY);

		assert_true(n >= 0);
		close(fd);
		fd = n;
	}
	content_is(fd, "bottom", "deep\n");
	close(fd);
}

/* An entry that cannot be made is counted and named; the rest comes. */
static void test_failure_named(void **state)
{
	struct dirs *d = *state;
	struct sbx_tree_copy_stats st;
	struct sbx_err e = {0};

	write_at(d->src, "clash", "new\n", 0644);
	write_at(d->src, "fine", "ok\n", 0644);
	write_at(d->dst, "clash", "already here\n", 0644);
	assert_int_equal(sbx_tree_copy(d->src, d->dst, &st, &e), -EEXIST);
	assert_int_equal(st.failed, 1);
	assert_non_null(strstr(e.msg, "'clash'"));
	content_is(d->dst, "fine", "ok\n");
	content_is(d->dst, "clash", "already here\n");
}

/*
 * Owners come across where the copier may set them (root, or the jail's
 * root over its ids): a file the jail's root made setuid stays that id's,
 * never becoming a setuid-root file of the host's.  As an ordinary user
 * every entry is the user's own, as before.
 */
static void test_owners(void **state)
{
	struct dirs *d = *state;
	struct sbx_tree_copy_stats st;
	struct sbx_err e = {0};
	struct stat s;

	write_at(d->src, "suid", "x", 04755);
	assert_int_equal(mkdirat(d->src, "dir", 0750), 0);
	write_at(d->src, "dir/f", "y", 0644);
	assert_int_equal(symlinkat("suid", d->src, "link"), 0);
	if (geteuid() == 0) {
		assert_int_equal(fchownat(d->src, "suid", 100000, 100000, 0), 0);
		assert_int_equal(fchmodat(d->src, "suid", 04755, 0), 0);
		assert_int_equal(fchownat(d->src, "dir", 101000, 101000, 0), 0);
		assert_int_equal(fchownat(d->src, "dir/f", 101000, 101001, 0), 0);
		assert_int_equal(fchownat(d->src, "link", 100005, 100005, AT_SYMLINK_NOFOLLOW), 0);
	}
	assert_int_equal(sbx_tree_copy(d->src, d->dst, &st, &e), 0);
	s = lstat_at(d->dst, "suid");
	assert_int_equal(s.st_mode & 07777, 04755);
	assert_int_equal(s.st_uid, geteuid() == 0 ? 100000 : geteuid());
	assert_int_equal(s.st_gid, geteuid() == 0 ? 100000 : getegid());
	s = lstat_at(d->dst, "dir");
	assert_int_equal(s.st_mode & 07777, 0750);
	assert_int_equal(s.st_uid, geteuid() == 0 ? 101000 : geteuid());
	s = lstat_at(d->dst, "dir/f");
	assert_int_equal(s.st_uid, geteuid() == 0 ? 101000 : geteuid());
	assert_int_equal(s.st_gid, geteuid() == 0 ? 101001 : getegid());
	s = lstat_at(d->dst, "link");
	assert_int_equal(s.st_uid, geteuid() == 0 ? 100005 : geteuid());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_kinds, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_no_follow, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sparse, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_unreadable, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_deep, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_failure_named, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_owners, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
