/* SPDX-License-Identifier: MIT */
/*
 * cmd/inspect_text.c - the human report of `sbx inspect`: the questions
 * the run log answers (README.md "What a run looks like": root or not,
 * what it could reach, secrets, private layer, persistence, timings) and
 * how the run ended.  Every string from the record is escaped for the
 * terminal.
 */
#include <signal.h>
#include <string.h>

#include "lifecycle.h"
#include "record_text.h"

#define KEYW 18

static void section(FILE *o, const char *title)
{
	fprintf(o, "\n%s\n", title);
}

/* "  key               value" with value escaped (takes value). */
static void kv_take(FILE *o, const char *key, char *value)
{
	fprintf(o, "  %-*s %s\n", KEYW, key, value ? value : "-");
	free(value);
}

static void kv_json(FILE *o, const char *key, const json_t *v)
{
	kv_take(o, key, lc_text(v));
}

static void print_summary(FILE *o, const struct sbx_sandbox *sb)
{
	const json_t *r = sb->record;
	char state[64];

	fprintf(o, "Sandbox %s\n", sb->id);
	if (sb->name)
		kv_take(o, "name", sbx_escape_display(sb->name));
	kv_take(o, "state", sbx_xstrdup(lc_state_label(sb, state, sizeof(state))));
	kv_json(o, "created", json_object_get(r, "created"));
	kv_json(o, "ended", json_object_get(r, "ended"));
	kv_take(o, "command", lc_command_display(json_object_get(r, "command")));
	kv_json(o, "workdir", json_object_get(r, "workdir"));
	kv_json(o, "profile", lc_get(r, "profile.name"));
	kv_json(o, "profile sources", lc_get(r, "profile.sources"));
	kv_json(o, "rootfs", lc_get(r, "rootfs.spec"));
	if (json_is_string(lc_get(r, "rootfs.dir")))
		kv_json(o, "image dir", lc_get(r, "rootfs.dir"));
	if (json_is_string(lc_get(r, "rootfs.sha256")))
		kv_json(o, "image sha256", lc_get(r, "rootfs.sha256"));
	kv_take(o, "state dir", sbx_escape_display(sb->dir));
}

static void print_user(FILE *o, const json_t *u)
{
	const json_t *ri = json_object_get(u, "root_inside"),
		     *rh = json_object_get(u, "root_on_host");

	section(o, "Root or not?");
	if (!u) {
		fprintf(o, "  (not recorded)\n");
		return;
	}
	kv_take(o, "inside",
		sbx_xasprintf("uid %lld gid %lld%s",
			      (long long)json_integer_value(json_object_get(u, "uid")),
			      (long long)json_integer_value(json_object_get(u, "gid")),
			      json_is_true(ri) ? " (root in the jail)" : ""));
	kv_take(o, "on the host",
		sbx_xasprintf("uid %lld gid %lld%s",
			      (long long)json_integer_value(json_object_get(u, "host_uid")),
			      (long long)json_integer_value(json_object_get(u, "host_gid")),
			      json_is_true(rh) ? " (ROOT ON THE HOST)" : " (not root)"));
}

static void print_net_event(FILE *o, const json_t *e)
{
	_cleanup_free_ char *host = lc_text(json_object_get(e, "host"));
	_cleanup_free_ char *addr = lc_text(json_object_get(e, "address"));
	_cleanup_free_ char *why = lc_text(json_object_get(e, "reason"));
	bool allowed = json_is_true(json_object_get(e, "allowed"));
	const char *res = json_string_value(json_object_get(e, "result"));
	bool failed = allowed && res && !strcmp(res, "failed");

	fprintf(o, "    %-6s %s:%lld",
		!allowed ? "DENY"
		: failed ? "FAILED"
			 : "ALLOW",
		host, (long long)json_integer_value(json_object_get(e, "port")));
	if (strcmp(addr, "-") != 0)
		fprintf(o, " (%s)", addr);
	if (allowed)
		fprintf(o, " up %lld B, down %lld B",
			(long long)json_integer_value(json_object_get(e, "bytes_up")),
			(long long)json_integer_value(json_object_get(e, "bytes_down")));
	if (strcmp(why, "-") != 0)
		fprintf(o, " - %s", why);
	fputc('\n', o);
}

/* The proxy's counts of what was no request or not served (no events). */
static void print_unserved(FILE *o, const json_t *st)
{
	json_int_t idle = json_integer_value(json_object_get(st, "idle")),
		   evicted = json_integer_value(json_object_get(st, "evicted")),
		   refused = json_integer_value(json_object_get(st, "refused"));

	if (idle || evicted || refused)
		kv_take(o, "not served",
			sbx_xasprintf(
			    "%lld without a request (closed idle), %lld closed to make "
			    "room, %lld refused (503, all %lld busy)",
			    (long long)idle, (long long)evicted, (long long)refused,
			    (long long)json_integer_value(json_object_get(st, "max_connections"))));
}

static void print_network(FILE *o, const struct sbx_sandbox *sb, const json_t *events)
{
	const json_t *n = lc_get(sb->record, "policy.network");
	json_t *conns = lc_events_of(sb, events, "network_events", "net");
	size_t i, allowed = 0, failed = 0, denied = 0;
	const json_t *e;

	section(o, "Network");
	kv_json(o, "mode", json_object_get(n, "mode"));
	if (json_array_size(json_object_get(n, "allow")))
		kv_json(o, "allow", json_object_get(n, "allow"));
	if (json_object_get(n, "proxy") && !json_is_null(json_object_get(n, "proxy")))
		kv_json(o, "proxy", json_object_get(n, "proxy"));
	if (json_array_size(conns))
		fprintf(o, "  connections\n");
	json_array_foreach(conns, i, e)
	{
		const char *res = json_string_value(json_object_get(e, "result"));

		print_net_event(o, e);
		if (!json_is_true(json_object_get(e, "allowed")))
			denied++;
		else if (res && !strcmp(res, "failed"))
			failed++;
		else
			allowed++;
	}
	kv_take(o, "connections total",
		sbx_xasprintf("%zu allowed, %zu failed, %zu denied", allowed, failed, denied));
	print_unserved(o, json_object_get(sb->record, "proxy_stats"));
	json_decref(conns);
}

/* A prose line from lib/state/record_text.c, escaped for the terminal. */
static void kv_prose(FILE *o, const char *key, char *text)
{
	kv_take(o, key, text ? sbx_escape_display(text) : NULL);
	free(text);
}

static void print_secrets(FILE *o, const json_t *r)
{
	const json_t *secrets = lc_get(r, "policy.secrets");
	size_t i;
	const json_t *s;

	section(o, "Secrets (names only)");
	if (!json_array_size(secrets))
		fprintf(o, "  none\n");
	json_array_foreach(secrets, i, s)
	{
		_cleanup_free_ char *name = lc_text(json_object_get(s, "name"));

		if (json_is_false(json_object_get(s, "present")))
			kv_take(
			    o, name,
			    sbx_xasprintf("absent (optional, its %s source was not there)",
					  json_string_value(json_object_get(s, "source")) ?: "?"));
		else
			kv_take(
			    o, name,
			    sbx_xasprintf("from %s, injected as %s",
					  json_string_value(json_object_get(s, "source")) ?: "?",
					  json_string_value(json_object_get(s, "inject")) ?: "?"));
	}
}

/* Each [filesystem] entry on a line: what it is, where; masks together. */
static void print_mounts(FILE *o, const json_t *mounts)
{
	const json_t *m;
	size_t i, masks = 0;
	_cleanup_free_ char *hidden = NULL;

	json_array_foreach(mounts, i, m)
	{
		const char *kind = NULL;
		_cleanup_free_ char *t = sbx_rec_mount_text(m, &kind);

		if (!strcmp(kind, "hidden")) {
			char *h =
			    sbx_xasprintf("%s%s%s", hidden ? hidden : "", hidden ? ", " : "", t);

			free(hidden);
			hidden = h;
			masks++;
			continue;
		}
		kv_prose(o, kind, steal_pointer(&t));
	}
	if (masks)
		kv_prose(o, "hidden",
			 sbx_xasprintf("%zu path%s: %s", masks, masks == 1 ? "" : "s", hidden));
}

static void print_fs(FILE *o, const json_t *r)
{
	const json_t *fs = lc_get(r, "policy.filesystem");

	section(o, "Filesystem");
	kv_prose(o, "root", sbx_rec_root_text(r));
	if (json_is_true(json_object_get(fs, "layers_in_memory")))
		kv_take(o, "layer kept in",
			sbx_xstrdup("memory while it runs ([limits] disk, unprivileged), "
				    "then disk/ if the sandbox is kept"));
	if (json_array_size(json_object_get(fs, "shared")))
		kv_json(o, "shared with host", json_object_get(fs, "shared"));
	else
		kv_take(o, "shared with host", sbx_xstrdup("nothing read-write"));
	print_mounts(o, json_object_get(fs, "mounts"));
	if (json_is_string(json_object_get(fs, "sysfs")))
		kv_take(
		    o, "/sys",
		    sbx_xstrdup(strcmp(json_string_value(json_object_get(fs, "sysfs")), "none") == 0
				    ? "none (an empty directory)"
				    : "its own: cpus, its network devices and cgroup; "
				      "no host devices"));
	section(o, "Persistence");
	kv_json(o, "persist", lc_get(r, "policy.persist"));
	kv_json(o, "kept", json_object_get(r, "kept"));
	if (json_object_get(r, "keep_reason"))
		kv_json(o, "why", json_object_get(r, "keep_reason"));
}

static void print_object_rows(FILE *o, const char *title, const json_t *obj, const char *unit)
{
	const char *k;
	const json_t *v;

	section(o, title);
	if (!json_is_object(obj) || !json_object_size(obj)) {
		fprintf(o, "  (not recorded)\n");
		return;
	}
	json_object_foreach((json_t *)obj, k, v)
	{
		_cleanup_free_ char *key = sbx_escape_display(k);

		if (json_is_number(v) && unit) {
			kv_take(o, key, sbx_xasprintf("%.1f %s", json_number_value(v), unit));
		} else if (json_is_object(v) && json_object_get(v, "value")) {
			const json_t *jv = json_object_get(v, "value");
			char sz[32];
			_cleanup_free_ char *val =
			    json_is_integer(jv) && (!strcmp(k, "memory") || !strcmp(k, "disk"))
				? sbx_xstrdup(
				      lc_size((double)json_integer_value(jv), sz, sizeof(sz)))
				: lc_text(jv);
			_cleanup_free_ char *enf = lc_text(json_object_get(v, "enforced"));

			kv_take(o, key, sbx_xasprintf("%s (enforced: %s)", val, enf));
		} else {
			kv_json(o, key, v);
		}
	}
}

static void print_security(FILE *o, const struct sbx_sandbox *sb, const json_t *events)
{
	const json_t *p = json_object_get(sb->record, "policy");
	json_t *sc = lc_events_of(sb, events, "seccomp_events", "seccomp");
	size_t i;
	const json_t *e;

	section(o, "Security");
	kv_json(o, "seccomp", json_object_get(p, "seccomp"));
	kv_json(o, "capabilities", json_object_get(p, "capabilities"));
	kv_json(o, "no_new_privs", json_object_get(p, "no_new_privs"));
	kv_take(o, "seccomp events", sbx_xasprintf("%zu", json_array_size(sc)));
	json_array_foreach(sc, i, e)
	{
		_cleanup_free_ char *sys = lc_text(json_object_get(e, "syscall"));
		const char *args = json_string_value(json_object_get(e, "args"));

		fprintf(o, "    %s%s%s%s x%lld (pid %lld)\n", sys, args ? "(" : "", args ?: "",
			args ? ")" : "", (long long)json_integer_value(json_object_get(e, "count")),
			(long long)json_integer_value(json_object_get(e, "pid")));
	}
	json_decref(sc);
}

static void print_exit(FILE *o, const json_t *r)
{
	const json_t *ex = json_object_get(r, "exit"), *res = json_object_get(r, "resources");
	json_int_t sig = json_integer_value(json_object_get(ex, "signal"));
	char buf[64];

	section(o, "Exit");
	if (!ex) {
		fprintf(o, "  (the command has not ended, or the run was lost)\n");
	} else {
		kv_prose(o, "how it ended", sbx_rec_exit_text(r));
		kv_json(o, "status", json_object_get(ex, "status"));
		kv_json(o, "reason", json_object_get(ex, "reason"));
		if (json_is_integer(json_object_get(ex, "code")))
			kv_json(o, "exit code", json_object_get(ex, "code"));
		if (sig > 0 && sig < 65)
			kv_take(o, "signal",
				sbx_xasprintf("%lld (SIG%s)", (long long)sig,
					      sigabbrev_np((int)sig) ?: "?"));
		if (json_is_string(json_object_get(ex, "exec_error")))
			kv_json(o, "not started", json_object_get(ex, "exec_error"));
		if (json_is_string(json_object_get(ex, "error")))
			kv_json(o, "error", json_object_get(ex, "error"));
	}
	section(o, "Resources");
	if (!res) {
		fprintf(o, "  (not recorded)\n");
		return;
	}
	kv_take(o, "wall time",
		sbx_xasprintf("%.1f ms", json_number_value(json_object_get(res, "wall_ms"))));
	kv_take(o, "cpu time",
		sbx_xasprintf("%.1f ms", json_number_value(json_object_get(res, "cpu_ms"))));
	kv_take(o, "peak memory",
		json_is_number(json_object_get(res, "mem_peak"))
		    ? sbx_xstrdup(lc_size(json_number_value(json_object_get(res, "mem_peak")), buf,
					  sizeof(buf)))
		    : sbx_xstrdup("unknown"));
	/* 0 means not measured (only a pids cgroup counts them). */
	if (json_integer_value(json_object_get(res, "pids_peak")) > 0)
		kv_json(o, "most processes", json_object_get(res, "pids_peak"));
	else
		kv_take(o, "most processes", sbx_xstrdup("not measured (no pids cgroup)"));
}

static void print_output_note(FILE *o, const json_t *r)
{
	const json_t *bytes = lc_get(r, "resources.output_bytes");
	char buf[64];

	section(o, "Output");
	if (!json_is_integer(bytes)) {
		fprintf(o, "  (not recorded)\n");
		return;
	}
	kv_take(o, "captured",
		sbx_xasprintf("%s%s (sbx inspect --output)",
			      lc_size((double)json_integer_value(bytes), buf, sizeof(buf)),
			      json_is_true(lc_get(r, "resources.output_truncated")) ? ", truncated"
										    : ""));
}

static void print_profile(FILE *o, const json_t *r)
{
	const char *ini = lc_str(r, "profile.ini");
	_cleanup_free_ char *copy = ini ? sbx_xstrdup(ini) : NULL;
	char *save = NULL;

	section(o, "Resolved profile");
	if (!copy) {
		fprintf(o, "  (not recorded)\n");
		return;
	}
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		_cleanup_free_ char *e = sbx_escape_display(line);

		fprintf(o, "  %s\n", e);
	}
}

void lc_print_inspect(const struct sbx_sandbox *sb, const json_t *events, FILE *o)
{
	const json_t *r = sb->record;

	print_summary(o, sb);
	if (!r) {
		_cleanup_free_ char *e =
		    sbx_escape_display(sb->record_error ? sb->record_error : "");

		fprintf(o, "\n  no usable record: %s\n", e);
		return;
	}
	print_user(o, lc_get(r, "policy.user"));
	print_network(o, sb, events);
	print_secrets(o, r);
	print_fs(o, r);
	print_object_rows(o, "Limits", lc_get(r, "policy.limits"), NULL);
	print_security(o, sb, events);
	print_object_rows(o, "Phase timings", json_object_get(r, "timings_ms"), "ms");
	print_exit(o, r);
	print_output_note(o, r);
	print_profile(o, r);
}
