/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_record.c - lib/state/record.c: struct sbx_record to
 * record.json and back without loss, the reader's refusals (wrong types,
 * another version), a new sandbox's first record, and every key the writer
 * makes documented in lib/state/RECORD.md.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "record.h"

static char *sdup(const char *s)
{
	return sbx_xstrdup(s);
}

/* A record with every part set, as a finished, kept run writes it. */
static void full_record(struct sbx_record *r)
{
	struct sbx_record_policy *p = &r->policy;
	struct sbx_record_filesystem *fs = &p->filesystem;

	sbx_record_init(r);
	r->id = sdup("0123456789ab");
	r->name = sdup("job-1");
	r->state = sdup("exited");
	r->created = sdup("2026-12-01T10:00:00.000Z");
	r->ended = sdup("2026-12-01T10:00:01.500Z");
	r->supervisor_pid = 4242;
	r->supervisor_start = 123456;
	r->init_pid = 4250;
	r->init_start = 123460;
	r->has_command = true;
	sbx_strv_push(&r->command, "sh");
	sbx_strv_push(&r->command, "-c");
	sbx_strv_push(&r->command, "echo 'quoted' \"both\"; exit 3");
	r->workdir = sdup("/work");
	r->profile.set = true;
	r->profile.name = sdup("ci");
	sbx_strv_push(&r->profile.sources, "builtin:default");
	sbx_strv_push(&r->profile.sources, "builtin:ci");
	r->profile.ini = sdup("[sandbox]\nrootfs = host\n");
	r->rootfs.set = true;
	r->rootfs.spec = sdup("/srv/busybox.tar.gz");
	r->rootfs.dir = sdup("/var/cache/sbx/images/ab/rootfs");
	r->rootfs.sha256 = sdup("ab12");
	r->rootfs.cached = true;
	p->set = true;
	p->user =
	    (struct sbx_record_user){.uid = 0,
				     .gid = 0,
				     .host_uid = 100000,
				     .host_gid = 100000,
				     .root_inside = true,
				     .mapping = sdup("range"),
				     .mapping_summary = sdup("ids 0-65535 are host 100000-165535"),
				     .summary = sdup("root inside, uid 100000 on the host"),
				     .sudo_user = sdup("alice")};
	p->network.mode = sdup("proxy");
	sbx_strv_push(&p->network.allow, "api.example.com:443");
	p->network.summary = sdup("proxy (only the allowlist proxy)");
	p->secrets =
	    json_pack("[{s:s, s:s, s:s}]", "name", "API_KEY", "source", "env", "inject", "env");
	p->secrets_summary = sdup("API_KEY (env var)");
	fs->writable_layer = sdup("private");
	fs->upper = sdup("disk/upper");
	sbx_strv_push(&fs->shared, "/home/me/project (bind rw)");
	fs->n_mounts = 3;
	fs->mounts = sbx_xcalloc(3, sizeof(*fs->mounts));
	fs->mounts[0] = (struct sbx_record_mount){.kind = sdup("bind"),
						  .src = sdup("/home/me/project"),
						  .dst = sdup("/work"),
						  .written_as = 1000,
						  .git_ro = true};
	sbx_strv_push(&fs->mounts[0].git_named, ".husky/_");
	fs->mounts[1] =
	    (struct sbx_record_mount){.kind = sdup("tmpfs"), .dst = sdup("/tmp"), .written_as = -1};
	fs->mounts[2] = (struct sbx_record_mount){
	    .kind = sdup("bind"),
	    .src = sdup("/srv/caf\xe9"), /* not UTF-8: kept whole */
	    .dst = sdup("/srv/g0"),
	    .read_only = sdup("its group is root, and its owner uid 4242 has no group of its own"),
	    .written_as = -1};
	fs->summary = sdup("image busybox, writable layer private to this sandbox");
	fs->has_layers = true;
	fs->n_layers = 1;
	fs->layers = sbx_xcalloc(1, sizeof(*fs->layers));
	fs->layers[0] = (struct sbx_record_layer){
	    .target = sdup("/"), .upper = sdup("disk/upper"), .lower = sdup("/var/cache/x")};
	fs->sysfs = sdup("own");
	p->persist = sdup("on-failure");
	p->limits = json_pack("{s:{s:I, s:s, s:s}}", "disk", "value", (json_int_t)1 << 30,
			      "enforced", "loop-ext4", "how", "an ext4 image");
	p->seccomp = sdup("default");
	p->capabilities = (1ULL << 0) | (1ULL << 21);
	p->no_new_privs = true;
	r->timings = (struct sbx_record_timings){.set = true,
						 .image = 1.5,
						 .disk = 8,
						 .namespaces = 0.75,
						 .mounts = 2,
						 .seccomp = 0.25,
						 .exec = 0.5,
						 .total = 13};
	r->exit = (struct sbx_record_exit){
	    .set = true, .status = 3, .reason = sdup("exited"), .code = 3, .exec_error = NULL};
	sbx_strv_push(&r->exit.git_changed, "/home/alice/proj/vendored/.git");
	sbx_strv_push(&r->exit.watch_changed, "/home/alice/.claude/settings.json");
	r->resources = (struct sbx_record_resources){.set = true,
						     .wall_ms = 12.5,
						     .cpu_ms = 3.25,
						     .mem_peak = 1048576,
						     .pids_peak = 2,
						     .output_bytes = 6,
						     .disk = {.set = true,
							      .size = 20299776,
							      .used = 18878464,
							      .inodes = 2560,
							      .inodes_used = 25,
							      .full = true}};
	r->kept_set = r->kept = true;
	r->keep_reason = sdup("persist = on-failure and the command failed");
	r->cgroup = json_pack("{s:i, s:[], s:n, s:n}", "version", 2, "paths", "why", "note");
	r->network_events =
	    json_pack("[{s:s, s:s, s:i}]", "event", "net", "host", "x", "port", 443);
	r->seccomp_events = json_array();
	r->proxy_stats = (struct sbx_record_proxy){.set = true,
						   .connections = 4,
						   .allowed = 2,
						   .denied = 1,
						   .refused = 1,
						   .max_connections = 256};
	r->applied.set = true;
	r->applied.at = sdup("2026-12-01T10:05:00.000Z");
	sbx_strv_push(&r->applied.paths, "src/main.c");
}

static void test_round_trip(void **state)
{
	struct sbx_record r, back;
	struct sbx_err err = {0};
	json_t *j, *j2;

	full_record(&r);
	j = sbx_record_to_json(&r);
	assert_int_equal(sbx_record_from_json(j, &back, &err), 0);
	j2 = sbx_record_to_json(&back);
	assert_true(json_equal(j, j2));
	/* the typed fields came back, not only the JSON */
	assert_string_equal(back.command.v[2], "echo 'quoted' \"both\"; exit 3");
	assert_int_equal(back.init_start, 123460);
	assert_int_equal(back.policy.user.host_uid, 100000);
	assert_string_equal(back.policy.user.sudo_user, "alice");
	assert_true(back.policy.has_user);
	assert_int_equal(back.policy.filesystem.mounts[0].written_as, 1000);
	assert_int_equal(back.policy.filesystem.mounts[1].written_as, -1);
	assert_null(back.policy.filesystem.mounts[0].read_only);
	assert_string_equal(back.policy.filesystem.mounts[2].src, "/srv/caf\xe9");
	assert_string_equal(back.policy.filesystem.mounts[2].dst, "/srv/g0");
	assert_string_equal(back.policy.filesystem.mounts[2].read_only,
			    "its group is root, and its owner uid 4242 has no group of its own");
	assert_null(back.policy.filesystem.mounts[1].src);
	assert_string_equal(back.policy.filesystem.layers[0].upper, "disk/upper");
	assert_int_equal(back.policy.disk, 1 << 30);
	assert_int_equal(back.policy.capabilities, (1ULL << 0) | (1ULL << 21));
	assert_int_equal(back.exit.code, 3);
	assert_int_equal(back.exit.signal, 0);
	assert_true(back.policy.filesystem.mounts[0].git_ro);
	assert_false(back.policy.filesystem.mounts[1].git_ro);
	assert_int_equal(back.policy.filesystem.mounts[0].git_named.n, 1);
	assert_string_equal(back.policy.filesystem.mounts[0].git_named.v[0], ".husky/_");
	assert_int_equal(back.policy.filesystem.mounts[1].git_named.n, 0);
	assert_int_equal(back.exit.git_changed.n, 1);
	assert_string_equal(back.exit.git_changed.v[0], "/home/alice/proj/vendored/.git");
	assert_string_equal(back.exit.watch_changed.v[0], "/home/alice/.claude/settings.json");
	assert_true(back.resources.wall_ms == 12.5);
	assert_true(back.resources.disk.set && back.resources.disk.full);
	assert_int_equal(back.resources.disk.used, 18878464);
	assert_int_equal(back.resources.disk.inodes_used, 25);
	assert_int_equal(back.proxy_stats.refused, 1);
	json_decref(j);
	json_decref(j2);
	sbx_record_free(&back);
	sbx_record_free(&r);
}

/* A new sandbox's first record: only what sbx_sandbox_create knows. */
static void test_first_record(void **state)
{
	struct sbx_record r;
	json_t *j, *want;

	sbx_record_init(&r);
	r.id = sdup("0123456789ab");
	r.state = sdup("created");
	r.created = sdup("2026-12-01T10:00:00.000Z");
	j = sbx_record_to_json(&r);
	want = json_pack("{s:i, s:s, s:n, s:s, s:s}", "version", 1, "id", "0123456789ab", "name",
			 "state", "created", "created", "2026-12-01T10:00:00.000Z");
	assert_true(json_equal(j, want));
	json_decref(j);
	json_decref(want);
	sbx_record_free(&r);
}

/* Bytes that are not UTF-8 (a command line can hold anything) are written
 * as U+FFFD, never dropped and never an invalid record. */
static void test_lossy_strings(void **state)
{
	struct sbx_record r, back;
	struct sbx_err err = {0};
	json_t *j;

	sbx_record_init(&r);
	r.id = sdup("0123456789ab");
	r.has_command = true;
	sbx_strv_push(&r.command, "printf");
	sbx_strv_push(&r.command, "a\xff"
				  "b");
	j = sbx_record_to_json(&r);
	assert_int_equal(sbx_record_from_json(j, &back, &err), 0);
	assert_int_equal(back.command.n, 2);
	assert_string_equal(back.command.v[1], "a\xef\xbf\xbd"
					       "b");
	json_decref(j);
	sbx_record_free(&back);
	sbx_record_free(&r);
}

static int read_text(const char *text, struct sbx_err *err)
{
	struct sbx_record r;
	json_t *j = json_loads(text, 0, NULL);
	int rc;

	assert_non_null(j);
	rc = sbx_record_from_json(j, &r, err);
	sbx_record_free(&r);
	json_decref(j);
	return rc;
}

static void test_reader_refuses(void **state)
{
	struct sbx_err err = {0};

	assert_int_equal(read_text("{\"version\": 2, \"id\": \"x\"}", &err), -EINVAL);
	assert_non_null(strstr(err.msg, "version 1"));
	assert_int_equal(read_text("[1, 2]", &err), -EINVAL);
	assert_int_equal(read_text("{\"version\": 1, \"exit\": {\"status\": \"3\"}}", &err),
			 -EINVAL);
	assert_non_null(strstr(err.msg, "exit.status"));
	assert_int_equal(read_text("{\"init_pid\": \"1\"}", &err), -EINVAL);
	assert_non_null(strstr(err.msg, "init_pid"));
	assert_int_equal(
	    read_text("{\"policy\": {\"filesystem\": {\"shared\": [\"/a\", 3]}}}", &err), -EINVAL);
	assert_non_null(strstr(err.msg, "policy.filesystem.shared[1]"));
	/* absent and null are not errors: the part is unset */
	assert_int_equal(read_text("{\"id\": \"x\", \"ended\": null, \"exit\": null}", &err), 0);
}

/* Every key the writer makes is in RECORD.md, the schema's prose. */
static bool documented(const char *doc, const char *key)
{
	char q[128];

	snprintf(q, sizeof(q), "\"%s\"", key);
	return strstr(doc, q) != NULL;
}

static void keys_of(const json_t *o, const char *doc, int depth, char *missing, size_t len)
{
	static const char *const theirs[] = {"secrets", "limits", "cgroup", "network_events",
					     "seccomp_events"};
	const char *k;
	const json_t *v;

	json_object_foreach((json_t *)o, k, v)
	{
		bool pass = false;

		if (!documented(doc, k) && strlen(missing) + strlen(k) + 2 < len) {
			strcat(missing, " ");
			strcat(missing, k);
		}
		/* the parts other modules make are theirs to document */
		for (size_t i = 0; i < sizeof(theirs) / sizeof(*theirs); i++)
			pass |= strcmp(k, theirs[i]) == 0;
		if (pass)
			continue;
		if (json_is_object(v))
			keys_of(v, doc, depth + 1, missing, len);
		if (json_is_array(v) && json_is_object(json_array_get(v, 0)))
			keys_of(json_array_get(v, 0), doc, depth + 1, missing, len);
	}
}

static void test_schema_documented(void **state)
{
	FILE *f = fopen("lib/state/RECORD.md", "r");
	char doc[65536], missing[1024] = "";
	size_t n;
	struct sbx_record r;
	json_t *j;

	assert_non_null(f);
	n = fread(doc, 1, sizeof(doc) - 1, f);
	fclose(f);
	doc[n] = '\0';
	full_record(&r);
	j = sbx_record_to_json(&r);
	keys_of(j, doc, 0, missing, sizeof(missing));
	if (missing[0])
		fail_msg("lib/state/RECORD.md does not name:%s", missing);
	json_decref(j);
	sbx_record_free(&r);
}

/* The purger's sweep reads a record's state from its first bytes. */
static void test_state_peek(void **state)
{
	struct sbx_record r;
	char st[16], *dump;
	const char *text;
	json_t *j;

	(void)state;
	sbx_record_init(&r);
	r.version = 1;
	r.id = strdup("0123456789ab");
	r.name = strdup("a \"state\": \"running\" {name}");
	r.state = strdup("exited");
	r.created = strdup("2026-12-05T00:00:00.000Z");
	r.cgroup = json_pack("{s:s}", "state", "running");
	j = sbx_record_to_json(&r);
	/* as sbx_sandbox_save writes it */
	dump = json_dumps(j, JSON_INDENT(2) | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(9));
	assert_non_null(dump);
	assert_true(
	    sbx_record_state_peek(dump, strlen(dump) < 512 ? strlen(dump) : 512, st, sizeof(st)));
	assert_string_equal(st, "exited");
	free(dump);
	json_decref(j);
	sbx_record_free(&r);

	/* a nested "state" and one inside a string come first: not taken */
	text = "{\"a\": {\"state\": \"exited\"}, \"b\": [\"state\", {\"state\": \"x\"}],"
	       " \"name\": \"x\\\"state\\\": \\\"exited\\\"\", \"state\" : \"running\"}";
	assert_true(sbx_record_state_peek(text, strlen(text), st, sizeof(st)));
	assert_string_equal(st, "running");
	/* the prefix ends before the value ends, or it is not a string, or
	 * too long, escaped, missing: false (the caller parses the record) */
	static const char *const refused[] = {
	    "{\"version\": 1, \"state\": \"exi",
	    "{\"version\": 1, \"sta",
	    "{\"state\": 3}",
	    "{\"state\": \"exited-and-then-some-more\"}",
	    "{\"state\": \"ex\\u0069ted\"}",
	    "{\"id\": \"a\"} {\"state\": \"exited\"}",
	    "[\"state\", \"exited\"]",
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		if (sbx_record_state_peek(refused[i], strlen(refused[i]), st, sizeof(st)))
			fail_msg("took state '%s' from %s", st, refused[i]);
	assert_false(sbx_record_state_peek("", 0, st, sizeof(st)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip),	      cmocka_unit_test(test_first_record),
	    cmocka_unit_test(test_lossy_strings),     cmocka_unit_test(test_reader_refuses),
	    cmocka_unit_test(test_schema_documented), cmocka_unit_test(test_state_peek),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
