/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_state.c - the state directory: ids, prefixes, names,
 * atomic records, locks, lost detection, removal of hostile trees,
 * leftovers, teardown helpers.  Runs as root and as nobody.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "helpers.h"
#include "proc.h"
#include "state.h"
#include "rmtree.h"

static char base[256];

static int setup(void **state)
{
	snprintf(base, sizeof(base), "%s/sbx-test-state.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(base))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	int fd = open("/", O_RDONLY | O_DIRECTORY);
	int r = sbx_rm_rf_at(fd, base + 1);

	close(fd);
	return r;
}

#define path(...) test_path(base, __VA_ARGS__)

static void open_state(struct sbx_state *st)
{
	struct sbx_err e = { 0 };

	if (sbx_state_open(st, path("state"), path("cache"), true, &e) < 0)
		fail_msg("state open: %s", e.msg);
}

#ifndef FS_IOC_GETFLAGS
#define FS_IOC_GETFLAGS _IOR('f', 1, long)
#endif
#ifndef FS_TOPDIR_FL
#define FS_TOPDIR_FL 0x00020000
#endif

/* STATE/sandboxes carries ext4's top-directory flag (see spread_sandboxes
 * in lib/state/state.c) wherever the filesystem has such flags. */
static void test_sandboxes_topdir(void **state)
{
	struct sbx_state st;
	int flags = 0, fd;

	open_state(&st);
	fd = open(path("state/sandboxes"), O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	if (ioctl(fd, FS_IOC_GETFLAGS, &flags) < 0) {
		close(fd);
		sbx_state_close(&st);
		skip(); /* tmpfs and others: no inode flags */
	}
	close(fd);
	sbx_state_close(&st);
	assert_true(flags & FS_TOPDIR_FL);
}

static void write_text(const char *p, const char *text)
{
	test_write_file(p, text, 0600);
}

/* A hand-made sandbox with a record. */
static void fixture(const char *id, const char *record_json)
{
	assert_int_equal(sbx_mkdir_p(path("state/sandboxes/%s", id), 0700), 0);
	write_text(path("state/sandboxes/%s/record.json", id), record_json);
}

static void test_open_creates_private_dirs(void **state)
{
	struct sbx_state st;
	struct sbx_err e = { 0 };
	struct stat s;

	open_state(&st);
	assert_int_equal(stat(path("state"), &s), 0);
	assert_int_equal(s.st_mode & 0777, 0700);
	assert_int_equal(stat(path("state/sandboxes"), &s), 0);
	assert_int_equal(s.st_mode & 0777, 0700);
	assert_int_equal(stat(path("cache"), &s), 0);
	assert_int_equal(s.st_mode & 0777, 0700);
	sbx_state_close(&st);

	/* Not creating a missing dir: success, nothing there. */
	assert_int_equal(sbx_state_open(&st, path("nope"), path("nope2"), false, &e), 0);
	assert_int_equal(st.sandboxes_fd, -1);
	struct sbx_strv ids = { 0 };
	assert_int_equal(sbx_sandbox_list(&st, &ids, &e), 0);
	assert_int_equal(ids.n, 0);
	char id[SBX_ID_LEN + 1];
	assert_int_equal(sbx_sandbox_find(&st, "abc", id, &e), -ENOENT);
	sbx_state_close(&st);
	assert_int_equal(stat(path("nope"), &s), -1);
}

static void test_dir_resolution(void **state)
{
	struct sbx_state st;
	struct sbx_err e = { 0 };

	setenv("SBX_STATE_DIR", "/x/state", 1);
	setenv("SBX_CACHE_DIR", "/x/cache", 1);
	assert_int_equal(sbx_state_open(&st, NULL, NULL, false, &e), 0);
	assert_string_equal(st.state_dir, "/x/state");
	assert_string_equal(st.cache_dir, "/x/cache");
	sbx_state_close(&st);
	/* explicit arguments win */
	assert_int_equal(sbx_state_open(&st, "/y/s", "/y/c", false, &e), 0);
	assert_string_equal(st.state_dir, "/y/s");
	sbx_state_close(&st);
	unsetenv("SBX_STATE_DIR");
	unsetenv("SBX_CACHE_DIR");
	setenv("XDG_STATE_HOME", "/xdg/state", 1);
	setenv("XDG_CACHE_HOME", "/xdg/cache", 1);
	assert_int_equal(sbx_state_open(&st, NULL, NULL, false, &e), 0);
	if (geteuid() == 0) {
		assert_string_equal(st.state_dir, "/var/lib/sbx");
		assert_string_equal(st.cache_dir, "/var/cache/sbx");
	} else {
		assert_string_equal(st.state_dir, "/xdg/state/sbx");
		assert_string_equal(st.cache_dir, "/xdg/cache/sbx");
	}
	sbx_state_close(&st);
	unsetenv("XDG_STATE_HOME");
	unsetenv("XDG_CACHE_HOME");
	setenv("HOME", "/home/u", 1);
	assert_int_equal(sbx_state_open(&st, NULL, NULL, false, &e), 0);
	if (geteuid() != 0) {
		assert_string_equal(st.state_dir, "/home/u/.local/state/sbx");
		assert_string_equal(st.cache_dir, "/home/u/.cache/sbx");
	}
	sbx_state_close(&st);
}

static void test_create_ids_and_record(void **state)
{
	struct sbx_state st;
	struct sbx_sandbox a, b;
	struct sbx_err e = { 0 };
	struct stat s;

	open_state(&st);
	assert_int_equal(sbx_sandbox_create(&st, NULL, &a, &e), 0);
	assert_int_equal(sbx_sandbox_create(&st, NULL, &b, &e), 0);
	assert_true(sbx_state_valid_id(a.id));
	assert_true(sbx_state_valid_id(b.id));
	assert_string_not_equal(a.id, b.id);
	assert_int_equal(stat(a.dir, &s), 0);
	assert_true(S_ISDIR(s.st_mode));
	assert_int_equal(s.st_mode & 0777, 0700);
	assert_true(a.lockfd >= 0);
	assert_int_equal(fcntl(a.lockfd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	assert_int_equal(fcntl(a.dirfd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	/* the first record is on disk and valid */
	json_t *r = json_load_file(path("state/sandboxes/%s/record.json", a.id), 0, NULL);
	assert_non_null(r);
	assert_int_equal(json_integer_value(json_object_get(r, "version")), 1);
	assert_string_equal(json_string_value(json_object_get(r, "id")), a.id);
	assert_non_null(json_string_value(json_object_get(r, "created")));
	json_decref(r);
	/* held lock = running; released = not */
	assert_true(sbx_sandbox_is_running(&st, a.id));
	sbx_sandbox_close(&a);
	assert_true(sbx_sandbox_is_running(&st, b.id));
	sbx_sandbox_close(&b);
	assert_false(sbx_sandbox_is_running(&st, b.id));
	/* no .new-* left behind */
	assert_int_equal(stat(path("state/sandboxes/.new-%s", b.id), &s), -1);
	sbx_state_close(&st);
}

static void test_id_validity(void **state)
{
	assert_true(sbx_state_valid_id("0123456789ab"));
	assert_false(sbx_state_valid_id("0123456789aB"));
	assert_false(sbx_state_valid_id("0123456789a"));
	assert_false(sbx_state_valid_id("0123456789abc"));
	assert_false(sbx_state_valid_id("../../etc/pa"));
	assert_false(sbx_state_valid_id(""));
}

static void test_names(void **state)
{
	static const char *const bad[] = { "", "-x", ".x", "a b", "a/b", "a\nb", "abc123",
					   "deadbeef", "x\xff", "0123456789ab" };
	struct sbx_err e = { 0 };
	struct sbx_state st;
	struct sbx_sandbox a, b;
	char id[SBX_ID_LEN + 1];
	char longname[80];

	for (size_t i = 0; i < SBX_ARRAY_SIZE(bad); i++)
		if (sbx_state_check_name(bad[i], &e) != -EINVAL)
			fail_msg("name '%s' accepted", bad[i]);
	memset(longname, 'a', 65);
	longname[0] = 'z';
	longname[65] = '\0';
	assert_int_equal(sbx_state_check_name(longname, &e), -EINVAL);
	assert_int_equal(sbx_state_check_name("agent-1.run_2", &e), 0);
	assert_int_equal(sbx_state_check_name("x", &e), 0);

	open_state(&st);
	assert_int_equal(sbx_sandbox_create(&st, "web", &a, &e), 0);
	assert_string_equal(a.name, "web");
	assert_int_equal(sbx_sandbox_create(&st, "web", &b, &e), -EEXIST);
	assert_non_null(strstr(e.msg, "'web'"));
	assert_int_equal(sbx_sandbox_find(&st, "web", id, &e), 0);
	assert_string_equal(id, a.id);
	/* the record carries the name */
	json_t *r = json_load_file(path("state/sandboxes/%s/record.json", a.id), 0, NULL);
	assert_string_equal(json_string_value(json_object_get(r, "name")), "web");
	json_decref(r);
	/* removed: the name is free again */
	assert_int_equal(sbx_sandbox_remove(&st, &a, &e), 0);
	sbx_sandbox_close(&a);
	assert_int_equal(sbx_sandbox_find(&st, "web", id, &e), -ENOENT);
	assert_int_equal(sbx_sandbox_create(&st, "web", &b, &e), 0);
	sbx_sandbox_close(&b);
	sbx_state_close(&st);
}

static void test_find_prefix(void **state)
{
	struct sbx_state st;
	struct sbx_err e = { 0 };
	char id[SBX_ID_LEN + 1];

	fixture("abcabc000001", "{\"version\":1,\"state\":\"exited\"}");
	fixture("abcabc000002", "{\"version\":1,\"state\":\"exited\"}");
	fixture("fedcba000003", "{\"version\":1,\"state\":\"exited\",\"name\":\"named\"}");
	open_state(&st);
	assert_int_equal(sbx_sandbox_find(&st, "abcabc000001", id, &e), 0);
	assert_string_equal(id, "abcabc000001");
	assert_int_equal(sbx_sandbox_find(&st, "abcabc0000", id, &e), -ENOTUNIQ);
	assert_non_null(strstr(e.msg, "ambiguous"));
	assert_non_null(strstr(e.msg, "abcabc000001"));
	assert_non_null(strstr(e.msg, "abcabc000002"));
	assert_int_equal(sbx_sandbox_find(&st, "abcabc0000", id, &e), -ENOTUNIQ);
	assert_int_equal(sbx_sandbox_find(&st, "abcabc000002", id, &e), 0);
	assert_int_equal(sbx_sandbox_find(&st, "f", id, &e), 0);
	assert_string_equal(id, "fedcba000003");
	assert_int_equal(sbx_sandbox_find(&st, "0", id, &e), -ENOENT);
	assert_non_null(strstr(e.msg, "no such sandbox '0'"));
	assert_int_equal(sbx_sandbox_find(&st, "", id, &e), -ENOENT);
	/* a name only in the record (names/ lost) is still found */
	assert_int_equal(sbx_sandbox_find(&st, "named", id, &e), 0);
	assert_string_equal(id, "fedcba000003");
	/* escaped in messages */
	assert_int_equal(sbx_sandbox_find(&st, "x\n\x1b[2J", id, &e), -ENOENT);
	assert_null(strchr(e.msg, '\n'));
	assert_null(strchr(e.msg, '\x1b'));
	sbx_state_close(&st);
}

static void test_list_sorted(void **state)
{
	struct sbx_state st;
	struct sbx_err e = { 0 };
	struct sbx_strv ids = { 0 };
	char first[SBX_ID_LEN + 1];
	struct sbx_sandbox sb;

	open_state(&st);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(sbx_sandbox_create(&st, NULL, &sb, &e), 0);
		if (i == 0)
			memcpy(first, sb.id, sizeof(first));
		sbx_sandbox_close(&sb);
		usleep(20000);
	}
	assert_int_equal(sbx_mkdir_p(path("state/sandboxes/not-an-id"), 0700), 0);
	assert_int_equal(sbx_sandbox_list(&st, &ids, &e), 0);
	assert_int_equal(ids.n, 5);
	assert_string_equal(ids.v[0], first);
	sbx_strv_free(&ids);
	sbx_state_close(&st);
}

static void test_save_atomic_no_follow(void **state)
{
	struct sbx_state st;
	struct sbx_sandbox sb, again;
	struct sbx_err e = { 0 };
	struct stat s;
	char buf[64] = "";

	open_state(&st);
	assert_int_equal(sbx_sandbox_create(&st, NULL, &sb, &e), 0);
	/* a planted symlink record.json -> outside file is replaced, not followed */
	write_text(path("outside"), "precious");
	assert_int_equal(unlinkat(sb.dirfd, "record.json", 0), 0);
	assert_int_equal(symlinkat(path("outside"), sb.dirfd, "record.json"), 0);
	json_object_set_new(sb.record, "state", json_string("exited"));
	json_object_set_new(sb.record, "odd", json_string("line\nbreak \"quoted\" \xc3\xa9"));
	assert_int_equal(sbx_sandbox_save(&sb, &e), 0);
	int fd = open(path("outside"), O_RDONLY);
	assert_int_equal(read(fd, buf, sizeof(buf) - 1), 8);
	close(fd);
	assert_string_equal(buf, "precious");
	assert_int_equal(fstatat(sb.dirfd, "record.json", &s, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(S_ISREG(s.st_mode));
	/* no temporary file left */
	DIR *d = opendir(sb.dir);
	struct dirent *de;
	while ((de = readdir(d)))
		assert_null(strstr(de->d_name, "tmp"));
	closedir(d);
	/* round trip */
	assert_int_equal(sbx_sandbox_open(&st, sb.id, false, &again, &e), 0);
	assert_non_null(again.record);
	assert_string_equal(json_string_value(json_object_get(again.record, "odd")),
			    "line\nbreak \"quoted\" \xc3\xa9");
	sbx_sandbox_close(&again);
	/* open never follows a record.json symlink */
	assert_int_equal(unlinkat(sb.dirfd, "record.json", 0), 0);
	assert_int_equal(symlinkat(path("outside"), sb.dirfd, "record.json"), 0);
	assert_int_equal(sbx_sandbox_open(&st, sb.id, false, &again, &e), 0);
	assert_null(again.record);
	assert_non_null(again.record_error);
	sbx_sandbox_close(&again);
	sbx_sandbox_close(&sb);
	sbx_state_close(&st);
}

static void test_lock_and_lost(void **state)
{
	struct sbx_state st;
	struct sbx_sandbox sb, other;
	struct sbx_err e = { 0 };
	int code = -1;

	open_state(&st);
	assert_int_equal(sbx_sandbox_create(&st, NULL, &sb, &e), 0);
	json_object_set_new(sb.record, "state", json_string("running"));
	assert_int_equal(sbx_sandbox_save(&sb, &e), 0);
	assert_int_equal(sbx_sandbox_open(&st, sb.id, false, &other, &e), 0);
	assert_string_equal(sbx_sandbox_state(&other, &code), "running");
	assert_true(sbx_sandbox_lock_held(&other));
	assert_int_equal(sbx_sandbox_lock(&other, false, &e), -EWOULDBLOCK);
	/* the holder goes away (as a SIGKILLed supervisor would) */
	sbx_sandbox_close(&sb);
	assert_string_equal(sbx_sandbox_state(&other, &code), "lost");
	assert_false(sbx_sandbox_is_running(&st, other.id));
	assert_int_equal(sbx_sandbox_lock(&other, false, &e), 0);
	/* now we hold it: our own view says running */
	assert_string_equal(sbx_sandbox_state(&other, &code), "running");
	json_object_set_new(other.record, "state", json_string("exited"));
	json_object_set_new(other.record, "exit",
			    json_pack("{s:s, s:i, s:i}", "reason", "exited", "code", 3, "status", 3));
	sbx_sandbox_parse_record(&other, &e);
	assert_string_equal(sbx_sandbox_state(&other, &code), "exited");
	assert_int_equal(code, 3);
	json_object_set_new(other.record, "exit",
			    json_pack("{s:s, s:i}", "reason", "signaled", "signal", 9));
	sbx_sandbox_parse_record(&other, &e);
	assert_string_equal(sbx_sandbox_state(&other, &code), "killed");
	assert_int_equal(code, 9);
	json_object_set_new(other.record, "exit", json_pack("{s:s}", "reason", "oom"));
	sbx_sandbox_parse_record(&other, &e);
	assert_string_equal(sbx_sandbox_state(&other, &code), "oom");
	json_object_set_new(other.record, "exit", json_pack("{s:s}", "reason", "timeout"));
	sbx_sandbox_parse_record(&other, &e);
	assert_string_equal(sbx_sandbox_state(&other, &code), "timeout");
	sbx_sandbox_close(&other);
	sbx_state_close(&st);
}

/* Twenty processes claim the same name at once: exactly one wins. */
static void test_concurrent_creates(void **state)
{
	struct sbx_state st;
	struct sbx_strv ids = { 0 };
	struct sbx_err e = { 0 };
	int won = 0;

	open_state(&st);
	for (int i = 0; i < 20; i++) {
		if (fork() == 0) {
			struct sbx_sandbox sb, sb2;
			int r = sbx_sandbox_create(&st, "shared", &sb, NULL);
			int r2 = sbx_sandbox_create(&st, NULL, &sb2, NULL);

			_exit((r == 0 ? 1 : 0) | (r2 == 0 ? 2 : 0));
		}
	}
	for (int i = 0; i < 20; i++) {
		int status;

		assert_true(wait(&status) > 0);
		assert_true(WIFEXITED(status));
		assert_true(WEXITSTATUS(status) & 2);
		won += WEXITSTATUS(status) & 1;
	}
	assert_int_equal(won, 1);
	assert_int_equal(sbx_sandbox_list(&st, &ids, &e), 0);
	assert_int_equal(ids.n, 21);
	for (size_t i = 0; i < ids.n; i++) {
		json_t *r = json_load_file(path("state/sandboxes/%s/record.json", ids.v[i]), 0, NULL);

		assert_non_null(r);
		assert_string_equal(json_string_value(json_object_get(r, "id")), ids.v[i]);
		json_decref(r);
	}
	sbx_strv_free(&ids);
	sbx_state_close(&st);
}

/* A hostile tree: symlinks out, a fifo, mode-000 dirs, odd names, deep. */
static void hostile_tree(const char *root_arg, int depth)
{
	char p[1300], root[1200];
	int fd;

	snprintf(root, sizeof(root), "%s", root_arg);	/* path() buffers rotate */

	assert_int_equal(sbx_mkdir_p(root, 0755), 0);
	write_text(path("victim"), "keep me");
	assert_int_equal(sbx_mkdir_p(path("victimdir/sub"), 0755), 0);
	write_text(path("victimdir/sub/f"), "keep me too");
	snprintf(p, sizeof(p), "%s/x", root);
	assert_int_equal(symlink(path("victim"), p), 0);
	snprintf(p, sizeof(p), "%s/d", root);
	assert_int_equal(symlink(path("victimdir"), p), 0);
	snprintf(p, sizeof(p), "%s/fifo", root);
	assert_int_equal(mkfifo(p, 0644), 0);
	snprintf(p, sizeof(p), "%s/new\nline \xff\x01", root);
	write_text(p, "odd");
	snprintf(p, sizeof(p), "%s/locked/inner", root);
	assert_int_equal(sbx_mkdir_p(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/locked/inner/f", root);
	write_text(p, "x");
	snprintf(p, sizeof(p), "%s/locked/inner", root);
	chmod(p, 0);
	snprintf(p, sizeof(p), "%s/locked", root);
	chmod(p, 0500);
	/* deep: deeper than the fd limit allows with one fd per level */
	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (int i = 0; i < depth; i++) {
		assert_int_equal(mkdirat(fd, "d", 0755) == 0 || errno == EEXIST, 1);
		int n = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (n < 0) {	/* "d" is the symlink at the top: use another name */
			assert_int_equal(mkdirat(fd, "deep", 0755), 0);
			n = openat(fd, "deep", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		}
		assert_true(n >= 0);
		close(fd);
		fd = n;
	}
	close(fd);
}

static void test_remove_hostile(void **state)
{
	struct sbx_state st;
	struct sbx_sandbox sb;
	struct sbx_err e = { 0 };
	struct rlimit old, low = { 64, 64 };
	struct stat s;
	char buf[32] = "";

	open_state(&st);
	assert_int_equal(sbx_sandbox_create(&st, "hostile", &sb, &e), 0);
	hostile_tree(path("state/sandboxes/%s/upper", sb.id), 1500);
	getrlimit(RLIMIT_NOFILE, &old);
	low.rlim_max = old.rlim_max;
	setrlimit(RLIMIT_NOFILE, &low);
	alarm(60);	/* never hang (fifo) */
	assert_int_equal(sbx_sandbox_remove(&st, &sb, &e), 0);
	alarm(0);
	setrlimit(RLIMIT_NOFILE, &old);
	assert_int_equal(stat(sb.dir, &s), -1);
	assert_int_equal(errno, ENOENT);
	int fd = open(path("victim"), O_RDONLY);
	assert_int_equal(read(fd, buf, sizeof(buf)), 7);
	close(fd);
	assert_int_equal(stat(path("victimdir/sub/f"), &s), 0);
	/* idempotent */
	assert_int_equal(sbx_sandbox_remove(&st, &sb, &e), 0);
	sbx_sandbox_close(&sb);
	sbx_state_close(&st);
}

static void test_rm_rf_mount_point(void **state)
{
	struct stat s;
	int fd;

	if (geteuid() != 0) {
		skip();	/* mounting needs root; the unprivileged pass covers the rest */
		return;
	}
	assert_int_equal(sbx_mkdir_p(path("tree/a/m"), 0755), 0);
	assert_int_equal(mount("tmpfs", path("tree/a/m"), "tmpfs", 0, "size=1m"), 0);
	write_text(path("tree/a/m/inside"), "x");
	fd = open(base, O_RDONLY | O_DIRECTORY);
	assert_int_equal(sbx_rm_rf_at(fd, "tree"), -EBUSY);
	assert_int_equal(stat(path("tree/a/m/inside"), &s), 0);	/* not crossed */
	assert_int_equal(umount2(path("tree/a/m"), MNT_DETACH), 0);
	assert_int_equal(sbx_rm_rf_at(fd, "tree"), 0);
	assert_int_equal(stat(path("tree"), &s), -1);
	close(fd);
}

static bool mounted_under(const char *dir)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	bool hit = false;

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, dir))
			hit = true;
	if (f)
		fclose(f);
	return hit;
}

static void test_unmount_all(void **state)
{
	struct sbx_state st;
	struct sbx_sandbox sb;
	struct sbx_err e = { 0 };
	size_t n = 0;

	if (geteuid() != 0) {
		skip();
		return;
	}
	open_state(&st);
	assert_int_equal(sbx_sandbox_create(&st, NULL, &sb, &e), 0);
	assert_int_equal(sbx_mkdir_p(path("state/sandboxes/%s/upper/with space", sb.id), 0755), 0);
	assert_int_equal(mount("tmpfs", path("state/sandboxes/%s/upper/with space", sb.id), "tmpfs",
			       0, NULL), 0);
	assert_int_equal(sbx_mkdir_p(path("state/sandboxes/%s/upper/with space/m2", sb.id), 0755),
			 0);
	assert_int_equal(mount("tmpfs", path("state/sandboxes/%s/upper/with space/m2", sb.id),
			       "tmpfs", 0, NULL), 0);
	assert_int_equal(mount("tmpfs", path("state/sandboxes/%s/upper/with space/m2", sb.id),
			       "tmpfs", 0, NULL), 0);	/* stacked */
	assert_true(mounted_under(sb.id));
	assert_int_equal(sbx_sandbox_unmount_all(&sb, &n, &e), 0);
	assert_int_equal(n, 3);
	assert_false(mounted_under(sb.id));
	assert_int_equal(sbx_sandbox_remove(&st, &sb, &e), 0);
	sbx_sandbox_close(&sb);
	sbx_state_close(&st);
}

static void test_gc(void **state)
{
	struct sbx_state st;
	struct sbx_err e = { 0 };
	struct sbx_strv removed = { 0 };
	struct sbx_sandbox sb;
	struct stat s;
	int held;

	open_state(&st);
	assert_int_equal(sbx_mkdir_p(path("state/sandboxes/.new-0123456789ab/upper"), 0700), 0);
	assert_int_equal(sbx_mkdir_p(path("state/sandboxes/.new-222222222222"), 0700), 0);
	/* an abandoned one is old; a fresh one may not have its lock yet: kept */
	struct timespec old[2] = { { 1000, 0 }, { 1000, 0 } };
	assert_int_equal(utimensat(AT_FDCWD, path("state/sandboxes/.new-0123456789ab"), old, 0), 0);
	assert_int_equal(sbx_mkdir_p(path("state/sandboxes/.new-111111111111"), 0700), 0);
	held = open(path("state/sandboxes/.new-111111111111/lock"), O_RDWR | O_CREAT | O_CLOEXEC,
		    0600);
	assert_int_equal(flock(held, LOCK_EX), 0);	/* being created: keep */
	write_text(path("state/names/dangling"), "aaaaaaaaaaaa\n");
	assert_int_equal(sbx_sandbox_create(&st, "alive", &sb, &e), 0);
	assert_int_equal(sbx_state_gc(&st, &removed, &e), 0);
	assert_int_equal(removed.n, 2);
	assert_int_equal(stat(path("state/sandboxes/.new-0123456789ab"), &s), -1);
	assert_int_equal(stat(path("state/sandboxes/.new-111111111111"), &s), 0);
	assert_int_equal(stat(path("state/sandboxes/.new-222222222222"), &s), 0);
	assert_int_equal(stat(path("state/names/dangling"), &s), -1);
	assert_int_equal(stat(path("state/names/alive"), &s), 0);
	close(held);
	sbx_strv_free(&removed);
	sbx_sandbox_close(&sb);
	sbx_state_close(&st);
}

static void test_starttime(void **state)
{
	uint64_t a = 0, b = 0;

	assert_int_equal(sbx_proc_starttime(getpid(), &a), 0);
	assert_int_equal(sbx_proc_starttime(getpid(), &b), 0);
	assert_true(a > 0);
	assert_int_equal(a, b);
	assert_true(sbx_proc_starttime(0, &a) < 0);
	assert_true(sbx_proc_starttime(1 << 30, &a) < 0);
}

/* destroy kills a recorded pid only while its start time matches. */
static void destroy_with_init(struct sbx_state *st, pid_t child, uint64_t start,
			      struct sbx_teardown *t)
{
	struct sbx_sandbox sb;
	struct sbx_err e = { 0 };
	char id[SBX_ID_LEN + 1];
	struct stat s;

	assert_int_equal(sbx_sandbox_create(st, NULL, &sb, &e), 0);
	memcpy(id, sb.id, sizeof(id));
	json_object_set_new(sb.record, "state", json_string("running"));
	json_object_set_new(sb.record, "init_pid", json_integer(child));
	json_object_set_new(sb.record, "init_start", json_integer((json_int_t)start));
	assert_int_equal(sbx_sandbox_save(&sb, &e), 0);
	sbx_sandbox_close(&sb);	/* the "supervisor" is gone: lost */
	assert_int_equal(sbx_sandbox_open(st, id, false, &sb, &e), 0);
	if (sbx_sandbox_destroy(st, &sb, t, &e) < 0)
		fail_msg("destroy: %s", e.msg);
	assert_int_equal(stat(sb.dir, &s), -1);
	sbx_sandbox_close(&sb);
}

static void test_destroy_verifies_pid(void **state)
{
	struct sbx_state st;
	struct sbx_teardown t;
	uint64_t start;
	pid_t child, mid, init;
	int status;

	open_state(&st);
	child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	assert_int_equal(sbx_proc_starttime(child, &start), 0);
	/* a different start time: a reused pid, never signalled */
	destroy_with_init(&st, child, start + 1, &t);
	assert_false(t.killed_init);
	assert_int_equal(waitpid(child, &status, WNOHANG), 0); /* still alive */
	/* the same start time (a pid reused within one tick), but not a pid
	 * namespace's init: never signalled either */
	destroy_with_init(&st, child, start, &t);
	assert_false(t.killed_init);
	assert_int_equal(waitpid(child, &status, WNOHANG), 0);
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	/* the right one: a pid namespace's init of that start time, killed */
	init = test_fork_ns_init(&mid);
	if (init <= 0) {
		waitpid(mid, &status, 0);
		sbx_state_close(&st);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
			skip(); /* no pid namespace here */
		fail_msg("no pid namespace init started");
	}
	assert_int_equal(sbx_proc_starttime(init, &start), 0);
	destroy_with_init(&st, init, start, &t);
	assert_true(t.killed_init);
	assert_int_equal(waitpid(mid, &status, 0), mid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 128 + SIGKILL);
	sbx_state_close(&st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_open_creates_private_dirs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sandboxes_topdir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dir_resolution, setup, teardown),
		cmocka_unit_test_setup_teardown(test_create_ids_and_record, setup, teardown),
		cmocka_unit_test(test_id_validity),
		cmocka_unit_test_setup_teardown(test_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_find_prefix, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_sorted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_save_atomic_no_follow, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_and_lost, setup, teardown),
		cmocka_unit_test_setup_teardown(test_concurrent_creates, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remove_hostile, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rm_rf_mount_point, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unmount_all, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gc, setup, teardown),
		cmocka_unit_test(test_starttime),
		cmocka_unit_test_setup_teardown(test_destroy_verifies_pid, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
