/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_changes.c - the change set of an overlay upper dir
 * (A/C/D, whiteout forms, opaque dirs, symlinks never followed, fifos
 * never opened, odd names, deep trees) and the export tarball built from
 * it.  Runs as root and as nobody (root-only forms are skipped there).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

#include "changes.h"
#include "export.h"
#include "helpers.h"
#include "rmtree.h"

static char base[256];
static int upper_fd = -1, lower_fd = -1;

#define at(...) test_path(base, __VA_ARGS__)

static void put(const char *rel, const char *text)
{
	test_write_file(at("%s", rel), text, 0644);
}

static void mkd(const char *rel)
{
	assert_int_equal(sbx_mkdir_p(at("%s", rel), 0755), 0);
}

static int setup(void **state)
{
	snprintf(base, sizeof(base), "/tmp/sbx-test-changes.XXXXXX");
	if (!mkdtemp(base))
		return -1;
	mkd("lower/etc");
	mkd("lower/old/sub");
	mkd("lower/usr/lib");
	put("lower/etc/passwd", "root\n");
	put("lower/etc/hosts", "127.0.0.1\n");
	put("lower/etc/gone-x", "x");
	put("lower/old/sub/f", "old");
	put("lower/old/keep", "old");
	(void)!symlink("usr/lib", at("lower/lib"));
	(void)!symlink("/etc", at("lower/hostetc"));	/* points at the HOST's /etc */
	mkd("upper/etc");
	mkd("upper/new");
	mkd("upper/old");
	mkd("upper/lib");
	mkd("upper/hostetc");
	put("upper/etc/passwd", "root\nagent\n");	/* C */
	put("upper/etc/added", "new");			/* A */
	put("upper/lib/foo", "x");			/* A: lower lib is a symlink */
	put("upper/hostetc/passwd", "x");		/* A: never looked up on the host */
	put("upper/old/newf", "n");			/* A under an opaque dir */
	put("upper/new/nl\nname", "y");
	put("upper/new/bad\xff\x01", "z");
	(void)!symlink("/etc/passwd", at("upper/x"));	/* A symlink, never followed */
	(void)!symlink("/etc", at("upper/y"));
	assert_int_equal(mkfifo(at("upper/fifo"), 0644), 0);
	upper_fd = open(at("upper"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	lower_fd = open(at("lower"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return upper_fd >= 0 && lower_fd >= 0 ? 0 : -1;
}

static int teardown(void **state)
{
	int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	close(upper_fd);
	close(lower_fd);
	sbx_rm_rf_at(fd, base + 1);
	close(fd);
	return 0;
}

/* Whiteouts and opaque markers in the forms this user can make. */
static bool root_forms;

static void mark_overlay(void)
{
	const char *ns = geteuid() == 0 ? "trusted" : "user";
	char name[64];

	root_forms = geteuid() == 0;
	if (root_forms) {
		assert_int_equal(mknod(at("upper/etc/hosts"), S_IFCHR | 0, makedev(0, 0)), 0);
	} else {
		put("upper/etc/hosts", "");
		assert_int_equal(setxattr(at("upper/etc/hosts"), "user.overlay.whiteout", "", 0, 0),
				 0);
	}
	/* the xattr whiteout form in any case */
	put("upper/etc/gone-x", "");
	snprintf(name, sizeof(name), "%s.overlay.whiteout", ns);
	assert_int_equal(setxattr(at("upper/etc/gone-x"), name, "", 0, 0), 0);
	snprintf(name, sizeof(name), "%s.overlay.opaque", ns);
	assert_int_equal(setxattr(at("upper/old"), name, "y", 1, 0), 0);
}

struct seen {
	char lines[64][300];
	size_t n;
};

static int collect(const struct sbx_change *c, void *data)
{
	struct seen *s = data;
	char *e = sbx_escape_display(c->path);

	assert_true(s->n < 64);
	snprintf(s->lines[s->n++], sizeof(s->lines[0]), "%c %s%s", c->kind, e,
		 c->opaque ? " opaque" : "");
	free(e);
	return 0;
}

static bool has(const struct seen *s, const char *line)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->lines[i], line) == 0)
			return true;
	return false;
}

static bool has_prefix(const struct seen *s, const char *p)
{
	for (size_t i = 0; i < s->n; i++)
		if (strncmp(s->lines[i], p, strlen(p)) == 0)
			return true;
	return false;
}

static void test_kinds(void **state)
{
	struct seen s = { 0 };
	struct sbx_err e = { 0 };
	size_t n_err = 0;
	static const char *const want[] = {
		"C /etc", "A /etc/added", "D /etc/gone-x", "D /etc/hosts", "C /etc/passwd",
		"A /fifo", "C /hostetc", "A /hostetc/passwd", "C /lib", "A /lib/foo", "A /new",
		"A /new/bad\\xff\\x01", "A /new/nl\\nname", "C /old opaque", "A /old/newf",
		"A /x", "A /y",
	};

	mark_overlay();
	alarm(30);	/* a fifo must never block the walk */
	assert_int_equal(sbx_changes_walk(upper_fd, lower_fd, "/", collect, &s, &n_err, &e), 0);
	alarm(0);
	assert_int_equal(n_err, 0);
	for (size_t i = 0; i < SBX_ARRAY_SIZE(want); i++)
		if (!has(&s, want[i]))
			fail_msg("missing '%s'", want[i]);
	assert_int_equal(s.n, SBX_ARRAY_SIZE(want));
	/* symlinks never followed: nothing from the host's /etc */
	assert_false(has_prefix(&s, "A /y/"));
	assert_false(has_prefix(&s, "C /y/"));
	assert_false(has_prefix(&s, "A /x/"));
	/* sorted, parents first */
	assert_string_equal(s.lines[0], "C /etc");
}

static void test_no_lower_and_prefix(void **state)
{
	struct seen s = { 0 };
	struct sbx_err e = { 0 };

	assert_int_equal(sbx_changes_walk(upper_fd, -1, "/work", collect, &s, NULL, &e), 0);
	assert_true(has(&s, "A /work/etc/passwd"));
	assert_true(has(&s, "A /work/etc"));
	assert_false(has_prefix(&s, "C "));
}

struct jctx {
	json_t *arr;
};

static int to_json(const struct sbx_change *c, void *data)
{
	json_array_append_new(data, sbx_change_json(c));
	return 0;
}

static void test_json_odd_names(void **state)
{
	json_t *arr = json_array();
	struct sbx_err e = { 0 };
	size_t i;
	json_t *v;
	bool saw_bad = false, saw_nl = false;

	assert_int_equal(sbx_changes_walk(upper_fd, lower_fd, "", to_json, arr, NULL, &e), 0);
	/* the whole array serialises (jansson refuses invalid UTF-8) */
	char *text = json_dumps(arr, JSON_COMPACT);
	assert_non_null(text);
	free(text);
	json_array_foreach(arr, i, v) {
		const char *p = json_string_value(json_object_get(v, "path"));

		assert_true(sbx_utf8_valid(p, strlen(p)));
		if (strncmp(p, "/new/bad", 8) == 0) {
			char *b = sbx_base64((const unsigned char *)"/new/bad\xff\x01", 10);

			assert_string_equal(json_string_value(json_object_get(v, "path_b64")), b);
			free(b);
			saw_bad = true;
		}
		if (strcmp(p, "/new/nl\nname") == 0) {
			assert_null(json_object_get(v, "path_b64"));
			assert_string_equal(json_string_value(json_object_get(v, "type")), "file");
			assert_int_equal(json_integer_value(json_object_get(v, "size")), 1);
			saw_nl = true;
		}
		if (strcmp(p, "/fifo") == 0)
			assert_string_equal(json_string_value(json_object_get(v, "type")), "fifo");
	}
	assert_true(saw_bad);
	assert_true(saw_nl);
	json_decref(arr);
	char *b = sbx_base64((const unsigned char *)"ab", 2);
	assert_string_equal(b, "YWI=");
	free(b);
}

static int counter(const struct sbx_change *c, void *data)
{
	(*(size_t *)data)++;
	return 0;
}

static void test_deep_tree_few_fds(void **state)
{
	struct sbx_err e = { 0 };
	struct rlimit old, low = { 32, 32 };
	size_t count = 0;
	int fd = openat(upper_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	assert_int_equal(mkdirat(fd, "deep", 0755), 0);
	for (int i = 0; i < 2000; i++) {
		int n;

		assert_int_equal(mkdirat(fd, i ? "d" : "deep/d", 0755), 0);
		n = openat(fd, i ? "d" : "deep/d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		close(fd);
		fd = n;
	}
	close(fd);
	getrlimit(RLIMIT_NOFILE, &old);
	low.rlim_max = old.rlim_max;
	setrlimit(RLIMIT_NOFILE, &low);
	int r = sbx_changes_walk(upper_fd, lower_fd, "/", counter, &count, NULL, &e);
	setrlimit(RLIMIT_NOFILE, &old);
	assert_int_equal(r, 0);
	assert_true(count >= 2001);
}

/* A sandbox dir whose record names the layers; export and read back. */
static void make_sandbox(struct sbx_sandbox *sb)
{
	char rec[2048];

	memset(sb, 0, sizeof(*sb));
	sb->lockfd = -1;
	memcpy(sb->id, "0123456789ab", 13);
	sb->dirfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	sb->dir = sbx_xstrdup(base);
	snprintf(rec, sizeof(rec),
		 "{\"policy\":{\"filesystem\":{\"layers\":[{\"target\":\"/\",\"upper\":\"upper\","
		 "\"lower\":\"%s/lower\"},{\"target\":\"/work\",\"upper\":\"missing\",\"lower\":null},"
		 "{\"target\":\"/evil\",\"upper\":\"../..\",\"lower\":null}]}}}",
		 base);
	sb->record = json_loads(rec, 0, NULL);
	assert_non_null(sb->record);
	assert_int_equal(sbx_sandbox_parse_record(sb, NULL), 0);
}

struct entry {
	char name[300];
	char type;
	char link[300];
	char data[64];
	size_t len;
	long long uid, gid;
	mode_t mode;
};

static int read_tar(const char *file, struct entry *ents, int max)
{
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	int n = 0;

	archive_read_support_filter_all(a);
	archive_read_support_format_all(a);
	assert_int_equal(archive_read_open_filename(a, file, 10240), ARCHIVE_OK);
	while (archive_read_next_header(a, &e) == ARCHIVE_OK && n < max) {
		struct entry *x = &ents[n++];
		mode_t t = archive_entry_filetype(e);
		ssize_t got;

		memset(x, 0, sizeof(*x));
		snprintf(x->name, sizeof(x->name), "%s", archive_entry_pathname(e));
		x->type = t == AE_IFDIR ? 'd' : t == AE_IFLNK ? 'l' : t == AE_IFREG ? 'f' : '?';
		if (archive_entry_symlink(e))
			snprintf(x->link, sizeof(x->link), "%s", archive_entry_symlink(e));
		x->uid = archive_entry_uid(e);
		x->gid = archive_entry_gid(e);
		x->mode = archive_entry_perm(e);
		got = archive_read_data(a, x->data, sizeof(x->data) - 1);
		if (got > 0) {
			x->data[got] = '\0';
			x->len = (size_t)got;
		}
	}
	archive_read_free(a);
	return n;
}

static const struct entry *find(const struct entry *ents, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(ents[i].name, name) == 0 ||
		    (strlen(ents[i].name) == strlen(name) + 1 &&
		     strncmp(ents[i].name, name, strlen(name)) == 0 &&
		     ents[i].name[strlen(name)] == '/'))
			return &ents[i];
	return NULL;
}

static void test_export_round_trip(void **state)
{
	static const char *const exts[] = { "tar", "tar.gz", "tgz", "tar.xz", "tar.zst", "tar.bz2" };
	struct sbx_sandbox sb;
	struct sbx_export_stats st;
	struct sbx_export_opts o = { .oci = true };
	struct sbx_err e = { 0 };
	struct entry ents[64];

	mark_overlay();
	make_sandbox(&sb);
	for (size_t k = 0; k < SBX_ARRAY_SIZE(exts); k++) {
		char *file = sbx_xasprintf("%s/out.%s", base, exts[k]);
		int n;

		alarm(30);
		if (sbx_export_write(&sb, file, &o, &st, &e) < 0)
			fail_msg("export %s: %s", exts[k], e.msg);
		alarm(0);
		assert_int_equal(st.whiteouts, 2);
		assert_int_equal(st.opaque, 1);
		assert_int_equal(st.skipped.n, 1);	/* the fifo */
		assert_non_null(strstr(st.skipped.v[0], "/fifo"));
		n = read_tar(file, ents, 64);
		assert_non_null(find(ents, n, "etc"));
		assert_string_equal(find(ents, n, "etc/passwd")->data, "root\nagent\n");
		assert_string_equal(find(ents, n, "etc/added")->data, "new");
		assert_non_null(find(ents, n, "etc/.wh.hosts"));
		assert_non_null(find(ents, n, "etc/.wh.gone-x"));
		assert_non_null(find(ents, n, "old/.wh..wh..opq"));
		assert_int_equal(find(ents, n, "x")->type, 'l');
		assert_string_equal(find(ents, n, "x")->link, "/etc/passwd");
		assert_int_equal(find(ents, n, "y")->type, 'l');
		assert_null(find(ents, n, "fifo"));
		assert_null(find(ents, n, "y/passwd"));
		assert_non_null(find(ents, n, "new/nl\nname"));
		assert_string_equal(find(ents, n, "new/bad\xff\x01")->data, "z");
		for (int i = 0; i < n; i++)	/* nothing escaped the layer */
			assert_true(ents[i].name[0] != '/' && strncmp(ents[i].name, "evil", 4) != 0);
		sbx_strv_free(&st.skipped);
		free(file);
	}
	/* an unknown extension is refused before anything is written */
	assert_int_equal(sbx_export_write(&sb, at("out.zip"), &o, &st, &e), -EINVAL);
	assert_int_equal(access(at("out.zip"), F_OK), -1);
	sbx_sandbox_close(&sb);
}

/* The default: for use without sbx.  Every entry the caller's, no set-ID
 * bit, no .wh. entry, the deletions in the NUL-separated manifest. */
static void test_export_default(void **state)
{
	struct sbx_sandbox sb;
	struct sbx_export_stats st;
	struct sbx_export_opts o = { .uid = 4321, .gid = 4322 };
	struct sbx_err e = { 0 };
	struct entry ents[64];
	const struct entry *m;
	char *file = sbx_xasprintf("%s/plain.tar", base);
	int n;

	mark_overlay();
	make_sandbox(&sb);
	assert_int_equal(chmod(at("upper/etc/added"), 04755), 0);
	if (sbx_export_write(&sb, file, &o, &st, &e) < 0)
		fail_msg("export: %s", e.msg);
	assert_int_equal(st.setid_dropped, 1);
	n = read_tar(file, ents, 64);
	for (int i = 0; i < n; i++) {
		assert_int_equal(ents[i].uid, 4321);
		assert_int_equal(ents[i].gid, 4322);
		assert_null(strstr(ents[i].name, ".wh."));
	}
	assert_int_equal(find(ents, n, "etc/added")->mode, 0755);
	assert_string_equal(find(ents, n, "etc/added")->data, "new");
	m = &ents[n - 1]; /* last */
	assert_string_equal(m->name, SBX_EXPORT_DELETED);
	/* etc/gone-x, etc/hosts, old (opaque: emptied, then its new contents) */
	assert_int_equal(m->len, strlen("etc/gone-x") + 1 + strlen("etc/hosts") + 1 + strlen("old") + 1);
	assert_non_null(memmem(m->data, m->len, "etc/hosts\0", 10));
	assert_non_null(memmem(m->data, m->len, "etc/gone-x\0", 11));
	assert_non_null(memmem(m->data, m->len, "old\0", 4));
	assert_int_equal(chmod(at("upper/etc/added"), 0644), 0);
	sbx_strv_free(&st.skipped);
	sbx_sandbox_close(&sb);
	free(file);
}

static void test_layers_from_record(void **state)
{
	struct sbx_sandbox sb;
	struct sbx_layer *ls = NULL;
	struct sbx_err e = { 0 };
	size_t n = 0;

	make_sandbox(&sb);
	assert_int_equal(sbx_changes_layers(&sb, &ls, &n, &e), 0);
	/* "missing" does not exist; "../.." is refused (RESOLVE_BENEATH) */
	assert_int_equal(n, 1);
	assert_string_equal(ls[0].target, "/");
	assert_true(ls[0].lower_fd >= 0);
	sbx_changes_layers_free(ls, n);
	/* an upper planted as a symlink is not followed */
	json_object_set_new(sb.record, "policy", json_loads("{\"filesystem\":{\"layers\":[{\"target\":\"/\",\"upper\":\"up-link\"}]}}", 0, NULL));
	assert_int_equal(sbx_sandbox_parse_record(&sb, NULL), 0);
	assert_int_equal(symlinkat("upper", sb.dirfd, "up-link"), 0);
	assert_int_equal(sbx_changes_layers(&sb, &ls, &n, &e), 0);
	assert_int_equal(n, 0);
	sbx_changes_layers_free(ls, n);
	sbx_sandbox_close(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_kinds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_lower_and_prefix, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_odd_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deep_tree_few_fds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_export_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_export_default, setup, teardown),
		cmocka_unit_test_setup_teardown(test_layers_from_record, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
