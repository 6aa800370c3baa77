/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_image.c - lib/image: the unpacker against hostile
 * tarballs generated here with libarchive's writer (traversal, absolute
 * paths, symlink and hardlink escapes, devices, setuid, bombs, duplicates),
 * each followed by a check that nothing outside the target directory
 * changed (a snapshot of its parent, which holds a sentinel directory);
 * and normal archives (modes, links, read-only dirs, sparse files, every
 * compression, docker-export paths, corrupt input).  The cache is in
 * test_image_cache.c.  Runs as root and as nobody.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "image_fixture.h"

/* ---- hostile archives ---- */

static void test_dotdot(void **state)
{
	const struct ent e[] = {
		{ "../x", 'f', 0, "escaped", 0 },
		{ "a/../../x", 'f', 0, "escaped", 0 },
		{ "a/b/../../../sentinel/secret", 'f', 0, "owned", 0 },
		{ "..", 'd', 0, NULL, 0 },
		{ "ok", 'f', 0, "fine", 0 },
	};
	const char *t = make_tar("dotdot.tar", e, SBX_ARRAY_SIZE(e), 0);
	struct sbx_image_stats st;
	char *c;

	(void)state;
	take_snapshot();
	assert_int_equal(unpack(t, &st), 0);
	assert_int_equal(st.skipped, 4);
	assert_int_equal(nwarn, 4);
	assert_non_null(strstr(last_warn, "'..'"));
	c = tcontent("ok");
	assert_string_equal(c, "fine");
	free(c);
	assert_int_equal(count_entries(target), 1);
	assert_false(exists_in(base, "x"));
	assert_outside_unchanged();
}

static void test_absolute(void **state)
{
	char abs1[PATH_MAX], abs2[PATH_MAX];
	struct sbx_image_stats st;

	(void)state;
	pathf(abs1, "%s/abs", sentinel);
	pathf(abs2, "%s/secret", sentinel);
	const struct ent e[] = {
		{ abs1, 'f', 0, "escaped", 0 },
		{ abs2, 'f', 0, "owned", 0 },
		{ "/", 'd', 0, NULL, 0 },
		{ "//etc//x", 'd', 0, NULL, 0 },
	};
	const char *t = make_tar("abs.tar", e, SBX_ARRAY_SIZE(e), 0);

	take_snapshot();
	assert_int_equal(unpack(t, &st), 0);
	assert_int_equal(st.skipped, 4);
	assert_non_null(strstr(last_warn, "absolute"));
	assert_int_equal(count_entries(target), 0);
	assert_outside_unchanged();
}

static void test_symlink_then_file(void **state)
{
	struct sbx_image_stats st;
	struct stat sb;

	(void)state;
	const struct ent e[] = {
		{ "l", 'l', 0, sentinel, 0 },
		{ "l/x", 'f', 0, "escaped", 0 },
		{ "l/secret", 'f', 0, "owned", 0 },
		{ "l/newdir", 'd', 0, NULL, 0 },
		{ "l/sub/deep/file", 'f', 0, "escaped", 0 },
		{ "l/s2", 'l', 0, "/etc", 0 },
		{ "r", 'l', 0, "../sentinel", 0 },
		{ "r/y", 'f', 0, "escaped", 0 },
		{ "d/", 'd', 0, NULL, 0 },
		{ "d/up", 'l', 0, "../..", 0 },
		{ "d/up/sentinel/z", 'f', 0, "escaped", 0 },
	};
	const char *t = make_tar("symfile.tar", e, SBX_ARRAY_SIZE(e), 0);

	take_snapshot();
	assert_int_equal(unpack(t, &st), 0);
	assert_int_equal(st.skipped, 7);
	sb = lst("l");
	assert_true(S_ISLNK(sb.st_mode));
	sb = lst("r");
	assert_true(S_ISLNK(sb.st_mode));
	sb = lst("d/up");
	assert_true(S_ISLNK(sb.st_mode));
	assert_outside_unchanged();
}

static void test_symlink_then_hardlink(void **state)
{
	struct sbx_image_stats st;
	char abs[PATH_MAX];

	(void)state;
	pathf(abs, "%s/secret", sentinel);
	const struct ent e[] = {
		{ "f", 'f', 0, "inside", 0 },
		{ "l", 'l', 0, sentinel, 0 },
		{ "l/h", 'h', 0, "f", 0 },	/* link created through the symlink */
		{ "h2", 'h', 0, "l/secret", 0 }, /* link target through the symlink */
		{ "s", 'l', 0, abs, 0 },
		{ "h3", 'h', 0, "s", 0 },	/* hardlink to a symlink pointing out */
	};
	const char *t = make_tar("symhard.tar", e, SBX_ARRAY_SIZE(e), 0);

	take_snapshot();
	assert_int_equal(unpack(t, &st), 0);
	assert_int_equal(st.skipped, 3);
	assert_false(exists_in(target, "h2"));
	assert_false(exists_in(target, "h3"));
	assert_int_equal(lst("f").st_nlink, 1);
	assert_outside_unchanged();
}

static void test_hardlink_outside(void **state)
{
	struct sbx_image_stats st;
	char abs[PATH_MAX];

	(void)state;
	pathf(abs, "%s/secret", sentinel);
	const struct ent e[] = {
		{ "h1", 'h', 0, "/etc/passwd", 0 },
		{ "h2", 'h', 0, "../sentinel/secret", 0 },
		{ "h3", 'h', 0, abs, 0 },
		{ "h4", 'h', 0, "a/../../sentinel/secret", 0 },
		{ "h5", 'h', 0, "missing", 0 },
	};
	const char *t = make_tar("hardout.tar", e, SBX_ARRAY_SIZE(e), 0);

	take_snapshot();
	assert_int_equal(unpack(t, &st), 0);
	assert_int_equal(st.skipped, 5);
	assert_int_equal(count_entries(target), 0);
	assert_outside_unchanged();
}

static void test_devices(void **state)
{
	struct sbx_image_stats st;
	const struct ent e[] = {
		{ "dev/null", 'c', 0666, NULL, 0 },
		{ "dev/sda", 'b', 0660, NULL, 0 },
		{ "fifo", 'p', 0644, NULL, 0 },
		{ "keep", 'f', 0, "k", 0 },
	};
	const char *t = make_tar("dev.tar", e, SBX_ARRAY_SIZE(e), 0);

	(void)state;
	take_snapshot();
	assert_int_equal(unpack(t, &st), 0);
	assert_int_equal(st.skipped, 3);
	assert_int_equal(nwarn, 3);
	assert_false(exists_in(target, "dev/null"));
	assert_false(exists_in(target, "dev/sda"));
	assert_false(exists_in(target, "fifo"));
	assert_true(exists_in(target, "keep"));
	assert_outside_unchanged();
}

static void test_setuid(void **state)
{
	struct sbx_image_stats st;
	const struct ent e[] = {
		{ "su", 'f', 04755, "x", 0 },
		{ "sg", 'f', 02711, "x", 0 },
		{ "tmp", 'd', 01777, NULL, 0 },
		{ "sgdir", 'd', 03775, NULL, 0 },
		{ "sticky-file", 'f', 01644, "x", 0 },
	};
	const char *t = make_tar("suid.tar", e, SBX_ARRAY_SIZE(e), 0);

	(void)state;
	take_snapshot();
	assert_int_equal(unpack(t, &st), 0);
	assert_int_equal(st.cleared, 3);
	assert_int_equal(lst("su").st_mode & 07777, 0755);
	assert_int_equal(lst("sg").st_mode & 07777, 0711);
	assert_int_equal(lst("tmp").st_mode & 07777, 01777);
	assert_int_equal(lst("sgdir").st_mode & 07777, 01775);
	assert_int_equal(lst("sticky-file").st_mode & 07777, 0644);
	assert_outside_unchanged();
}

static void test_bomb_size(void **state)
{
	struct sbx_image_opts o = opts();
	struct sbx_image_stats st;
	struct sbx_err err = { 0 };
	const struct ent e[] = {
		{ "small", 'f', 0, "s", 0 },
		{ "zeros", 'f', 0, NULL, 64ULL << 20 },
	};
	const char *t = make_tar("bomb.tar.gz", e, SBX_ARRAY_SIZE(e), 'g');
	struct stat sb;

	(void)state;
	assert_int_equal(stat(t, &sb), 0);
	assert_true(sb.st_size < (1 << 20)); /* a real bomb: tiny compressed */
	take_snapshot();
	o.max_bytes = 1 << 20;
	assert_int_equal(unpack_o(t, &o, &st, &err), -EFBIG);
	assert_non_null(strstr(err.msg, "image-size"));
	assert_non_null(strstr(err.msg, "zeros"));
	assert_int_equal(count_entries(target), 0); /* partial image removed */
	assert_outside_unchanged();
	/* The default cap is generous: the same archive unpacks. */
	o.max_bytes = 0;
	assert_int_equal(unpack_o(t, &o, &st, &err), 0);
	assert_int_equal(lst("zeros").st_size, 64 << 20);
}

static void test_bomb_entries(void **state)
{
	struct sbx_image_opts o = opts();
	struct sbx_image_stats st;
	struct sbx_err err = { 0 };
	struct ent e[50];
	char names[50][16];
	const char *t;

	(void)state;
	for (int i = 0; i < 50; i++) {
		snprintf(names[i], sizeof(names[i]), "d/f%d", i);
		e[i] = (struct ent){ names[i], 'f', 0, "x", 0 };
	}
	t = make_tar("many.tar", e, 50, 'z');
	take_snapshot();
	o.max_entries = 10;
	assert_int_equal(unpack_o(t, &o, &st, &err), -E2BIG);
	assert_non_null(strstr(err.msg, "image-entries"));
	assert_int_equal(count_entries(target), 0);
	assert_outside_unchanged();
	o.max_entries = 50;
	assert_int_equal(unpack_o(t, &o, &st, &err), 0);
	assert_int_equal(st.entries, 50);
}

static void test_duplicates(void **state)
{
	struct sbx_image_stats st;
	char abs[PATH_MAX];
	char *c;

	(void)state;
	pathf(abs, "%s/secret", sentinel);
	const struct ent e[] = {
		{ "l", 'l', 0, abs, 0 },
		{ "l", 'f', 0600, "replaced", 0 },	/* must not write through l */
		{ "d", 'l', 0, sentinel, 0 },
		{ "d", 'd', 0755, NULL, 0 },		/* a real dir replaces the link */
		{ "d/x", 'f', 0, "in d", 0 },
		{ "f", 'f', 0, "first", 0 },
		{ "f", 'f', 0, "second", 0 },
		{ "f2", 'f', 0, "file", 0 },
		{ "f2", 'l', 0, abs, 0 },		/* a symlink replaces a file */
		{ "e", 'd', 0, NULL, 0 },
		{ "e", 'f', 0, "file over empty dir", 0 },
		{ "n", 'd', 0, NULL, 0 },
		{ "n/child", 'f', 0, "c", 0 },
		{ "n", 'l', 0, sentinel, 0 },		/* non-empty dir: refused */
	};
	const char *t = make_tar("dup.tar", e, SBX_ARRAY_SIZE(e), 0);

	take_snapshot();
	assert_int_equal(unpack(t, &st), 0);
	assert_int_equal(st.skipped, 1);
	assert_true(S_ISREG(lst("l").st_mode));
	c = tcontent("l");
	assert_string_equal(c, "replaced");
	free(c);
	assert_true(S_ISDIR(lst("d").st_mode));
	assert_true(S_ISREG(lst("d/x").st_mode));
	c = tcontent("f");
	assert_string_equal(c, "second");
	free(c);
	assert_true(S_ISLNK(lst("f2").st_mode));
	assert_true(S_ISREG(lst("e").st_mode));
	assert_true(S_ISDIR(lst("n").st_mode));
	assert_outside_unchanged();
}

/* ---- normal archives ---- */

static void test_normal_tree(void **state)
{
	struct sbx_image_stats st;
	struct stat a, b;
	char lnk[64] = "";
	char p[PATH_MAX];

	(void)state;
	const struct ent e[] = {
		{ "a/", 'd', 0750, NULL, 0 },
		{ "a/b/", 'd', 0755, NULL, 0 },
		{ "a/b/c/", 'd', 0700, NULL, 0 },
		{ "a/b/f", 'f', 0640, "data", 0 },
		{ "a/b/c/x", 'f', 0755, "#!/bin/sh\n", 0 },
		{ "a/ro-file", 'f', 0400, "ro", 0 },
		{ "a/l", 'l', 0, "b/c", 0 },
		{ "a/abs", 'l', 0, "/etc/passwd", 0 },
		{ "a/h", 'h', 0, "a/b/f", 0 },
		{ "ro/", 'd', 0555, NULL, 0 },
		{ "ro/x", 'f', 0444, "x", 0 },
		{ "ro/sub/", 'd', 0500, NULL, 0 },
		{ "ro/sub/y", 'f', 0600, "y", 0 },
		{ "none/", 'd', MODE_0, NULL, 0 },
		{ "none/z", 'f', 0644, "z", 0 },
		{ "implicit/parents/file", 'f', 0644, "i", 0 },
		{ "empty", 'f', 0644, "", 0 },
	};
	const char *t = make_tar("tree.tar", e, SBX_ARRAY_SIZE(e), 0);

	take_snapshot();
	assert_int_equal(unpack(t, &st), 0);
	assert_int_equal(st.skipped, 0);
	assert_int_equal(st.entries, SBX_ARRAY_SIZE(e));
	assert_int_equal(lst("a").st_mode & 07777, 0750);
	assert_int_equal(lst("a/b/c").st_mode & 07777, 0700);
	assert_int_equal(lst("a/b/f").st_mode & 07777, 0640);
	assert_int_equal(lst("a/b/c/x").st_mode & 07777, 0755);
	assert_int_equal(lst("a/ro-file").st_mode & 07777, 0400);
	assert_int_equal(lst("ro").st_mode & 07777, 0555);
	assert_int_equal(lst("ro/sub").st_mode & 07777, 0500);
	assert_int_equal(lst("none").st_mode & 07777, 0);
	assert_int_equal(lst("a/b/f").st_mtim.tv_sec, 1500000000);
	assert_int_equal(lst("a/b").st_mtim.tv_sec, 1500000000);
	assert_int_equal(lst("a/l").st_mtim.tv_sec, 1500000000);
	assert_int_equal(lst("implicit/parents").st_mode & 0700, 0700);
	assert_int_equal(lst("empty").st_size, 0);
	assert_int_equal(lst("").st_mode & 07777, 0755); /* the image root */
	pathf(p, "%s/a/l", target);
	assert_true(readlink(p, lnk, sizeof(lnk) - 1) > 0);
	assert_string_equal(lnk, "b/c");
	a = lst("a/h");
	b = lst("a/b/f");
	assert_int_equal(a.st_ino, b.st_ino);
	assert_int_equal(a.st_nlink, 2);
	if (geteuid() == 0) {
		assert_int_equal(b.st_uid, 1234);
		assert_int_equal(b.st_gid, 2345);
		assert_int_equal(lst("a").st_uid, 1234);
		assert_int_equal(lst("a/l").st_uid, 1234);
	} else {
		assert_int_equal(b.st_uid, geteuid());
	}
	assert_outside_unchanged();
	/* The read-only directories' children are there. */
	assert_true(exists_in(target, "ro/sub/y"));
	pathf(p, "%s/none", target);
	assert_int_equal(chmod(p, 0700), 0); /* mode 000: not even we may look */
	assert_true(exists_in(target, "none/z"));
}

/* Modes are the archive's whatever the umask of the caller. */
static void test_umask(void **state)
{
	const struct ent e[] = {
		{ "d/", 'd', 0755, NULL, 0 },
		{ "d/f", 'f', 0644, "f", 0 },
		{ "x", 'f', 0775, "x", 0 },
	};
	const char *t = make_tar("umask.tar", e, SBX_ARRAY_SIZE(e), 0);
	struct sbx_image_stats st;
	mode_t old = umask(077);

	(void)state;
	assert_int_equal(unpack(t, &st), 0);
	umask(old);
	assert_int_equal(lst("d").st_mode & 07777, 0755);
	assert_int_equal(lst("d/f").st_mode & 07777, 0644);
	assert_int_equal(lst("x").st_mode & 07777, 0775);
	assert_int_equal(lst("").st_mode & 07777, 0755);
}

static void test_sparse(void **state)
{
	struct archive *a = archive_write_new();
	struct archive_entry *e = archive_entry_new();
	const size_t size = 4 << 20;
	char *buf = sbx_xcalloc(1, size);
	char path[PATH_MAX], *c;
	struct sbx_image_stats st;
	struct stat sb;

	(void)state;
	memset(buf, 'A', 4096);
	memset(buf + (2 << 20), 'B', 4096);
	pathf(path, "%s/tars/sparse.tar", base);
	archive_write_set_format_pax(a);
	assert_int_equal(archive_write_open_filename(a, path), ARCHIVE_OK);
	archive_entry_set_pathname(e, "sparse");
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	archive_entry_set_size(e, (la_int64_t)size);
	archive_entry_sparse_add_entry(e, 0, 4096);
	archive_entry_sparse_add_entry(e, 2 << 20, 4096);
	assert_int_equal(archive_write_header(a, e), ARCHIVE_OK);
	assert_int_equal(archive_write_data(a, buf, size), (la_ssize_t)size);
	archive_write_close(a);
	archive_write_free(a);
	archive_entry_free(e);
	assert_int_equal(stat(path, &sb), 0);
	assert_true(sb.st_size < (1 << 20)); /* the writer stored it sparse */

	assert_int_equal(unpack(path, &st), 0);
	sb = lst("sparse");
	assert_int_equal(sb.st_size, size);
	assert_true((uint64_t)sb.st_blocks * 512 < (1 << 20)); /* holes stayed holes */
	pathf(path, "%s/sparse", target);
	c = slurp(path);
	assert_non_null(c);
	/* slurp stops at the first NUL as a string; compare the raw bytes. */
	free(c);
	{
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		char *got = sbx_xmalloc(size);

		assert_int_equal(sbx_read_all(fd, got, size), (ssize_t)size);
		assert_memory_equal(got, buf, size);
		free(got);
		close(fd);
	}
	free(buf);
}

static void test_filters(void **state)
{
	static const char filters[] = { 0, 'g', 'x', 'z', 'b' };
	const struct ent e[] = {
		{ "dir/", 'd', 0, NULL, 0 },
		{ "dir/file", 'f', 0, "compressed content", 0 },
		{ "dir/big", 'f', 0, NULL, 3 << 20 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(filters); i++) {
		char name[32], sha[65];
		struct sbx_image_stats st;
		const char *t;
		char *c;

		snprintf(name, sizeof(name), "f%zu.tar", i);
		t = make_tar(name, e, SBX_ARRAY_SIZE(e), filters[i]);
		assert_int_equal(unpack(t, &st), 0);
		c = tcontent("dir/file");
		assert_string_equal(c, "compressed content");
		free(c);
		assert_int_equal(lst("dir/big").st_size, 3 << 20);
		assert_int_equal(st.bytes, 18 + (3 << 20));
		sha256_file(t, sha);
		assert_string_equal(st.sha256, sha); /* the key is the file's hash */
		{
			char *cmd = sbx_xasprintf("rm -rf '%s' && mkdir '%s'", target, target);

			assert_int_equal(system(cmd), 0);
			free(cmd);
		}
	}
}

/* A gzip stream whose tar ends long before it does: the rest is hashed
 * (the key covers the whole file) but need not be inflated. */
static void test_trailing_data(void **state)
{
	const struct ent e[] = { { "f", 'f', 0, "data", 0 } };
	const char *t = make_tar("inner.tar", e, 1, 0);
	char *inner = slurp(t), path[PATH_MAX], sha[65], *c;
	size_t tl = 4 * 512, total = tl + (64 << 20);
	char *buf = sbx_xcalloc(1, total);
	struct archive *a = archive_write_new();
	struct archive_entry *ae = archive_entry_new();
	struct sbx_image_stats st;

	(void)state;
	memcpy(buf, inner, tl); /* header, data block, part of the end marker */
	pathf(path, "%s/tars/trailing.tar.gz", base);
	archive_write_set_format_raw(a);
	archive_write_add_filter_gzip(a);
	assert_int_equal(archive_write_open_filename(a, path), ARCHIVE_OK);
	archive_entry_set_filetype(ae, AE_IFREG);
	archive_entry_set_pathname(ae, "raw");
	archive_entry_set_size(ae, (la_int64_t)total);
	assert_int_equal(archive_write_header(a, ae), ARCHIVE_OK);
	assert_int_equal(archive_write_data(a, buf, total), (la_ssize_t)total);
	archive_write_close(a);
	archive_write_free(a);
	archive_entry_free(ae);
	assert_int_equal(unpack(path, &st), 0);
	c = tcontent("f");
	assert_string_equal(c, "data");
	sha256_file(path, sha);
	assert_string_equal(st.sha256, sha);
	free(c);
	free(buf);
	free(inner);
}

static void test_docker_export(void **state)
{
	struct sbx_image_stats st;
	const struct ent e[] = {
		{ "./", 'd', 0700, NULL, 0 },
		{ "./etc/", 'd', 0755, NULL, 0 },
		{ "./etc/passwd", 'f', 0644, "root:x:0:0::/root:/bin/sh\n", 0 },
		{ "./bin/", 'd', 0755, NULL, 0 },
		{ "./bin/busybox", 'f', 0755, "ELF", 0 },
		{ "./bin/sh", 'l', 0, "busybox", 0 },
		{ ".//usr/./lib/", 'd', 0755, NULL, 0 },
	};
	const char *t = make_tar("docker.tar", e, SBX_ARRAY_SIZE(e), 0);
	char *c;

	(void)state;
	assert_int_equal(unpack(t, &st), 0);
	assert_int_equal(st.skipped, 0);
	c = tcontent("etc/passwd");
	assert_string_equal(c, "root:x:0:0::/root:/bin/sh\n");
	free(c);
	assert_true(S_ISLNK(lst("bin/sh").st_mode));
	assert_true(S_ISDIR(lst("usr/lib").st_mode));
	assert_int_equal(lst("").st_mode & 07777, 0755); /* root stays usable */
	assert_int_equal(lst("").st_mtim.tv_sec, 1500000000);
}

static void test_corrupt(void **state)
{
	struct sbx_image_stats st;
	struct sbx_err err = { 0 };
	struct sbx_image_opts o = opts();
	const struct ent e[] = {
		{ "a", 'f', 0, "aaaa", 0 },
		{ "b", 'f', 0, NULL, 2 << 20 },
	};
	const char *t = make_tar("trunc.tar.gz", e, SBX_ARRAY_SIZE(e), 'x');
	char p[PATH_MAX];
	struct stat sb;

	(void)state;
	assert_int_equal(stat(t, &sb), 0);
	assert_int_equal(truncate(t, sb.st_size - 40), 0);
	assert_true(unpack_o(t, &o, &st, &err) < 0);
	assert_true(err.msg[0] != '\0');
	assert_int_equal(count_entries(target), 0);
	/* Not an archive at all. */
	pathf(p, "%s/tars/text", base);
	put(p, "just some text\n");
	assert_true(unpack_o(p, &o, &st, &err) < 0);
	assert_non_null(strstr(err.msg, "cannot read archive"));
}

static void test_mem(void **state)
{
	const struct ent e[] = { { "m", 'f', 0, "memory", 0 } };
	const char *t = make_tar("mem.tar", e, 1, 'g');
	char *buf = slurp(t), *c;
	struct stat sb;
	struct sbx_image_stats st;
	int dfd = open(target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	(void)state;
	assert_int_equal(stat(t, &sb), 0);
	assert_int_equal(sbx_image_unpack_mem(buf, (size_t)sb.st_size, dfd, NULL, &st, NULL), 0);
	c = tcontent("m");
	assert_string_equal(c, "memory");
	free(c);
	free(buf);
	close(dfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_dotdot),
		T(test_absolute),
		T(test_symlink_then_file),
		T(test_symlink_then_hardlink),
		T(test_hardlink_outside),
		T(test_devices),
		T(test_setuid),
		T(test_bomb_size),
		T(test_bomb_entries),
		T(test_duplicates),
		T(test_normal_tree),
		T(test_umask),
		T(test_sparse),
		T(test_filters),
		T(test_trailing_data),
		T(test_docker_export),
		T(test_corrupt),
		T(test_mem),
#undef T
	};

	umask(022);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
