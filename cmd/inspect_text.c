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

/* A string of the record, escaped; "-" when it has none. */
static void kv_str(FILE *o, const char *key, const char *s)
{
	kv_take(o, key, s ? sbx_escape_display(s) : NULL);
}

/* A list: "a, b", or "none". */
static void kv_strv(FILE *o, const char *key, const struct sbx_strv *v)
{
	char *out = sbx_xstrdup(v->n ? "" : "none");

	for (size_t i = 0; i < v->n; i++) {
		char *n = sbx_xasprintf("%s%s%s", out, i ? ", " : "", v->v[i]);

		free(out);
		out = n;
	}
	kv_take(o, key, sbx_escape_display(out));
	free(out);
}

static void kv_bool(FILE *o, const char *key, bool set, bool v)
{
	kv_take(o, key, sbx_xstrdup(!set ? "-" : v ? "yes" : "no"));
}

static void print_summary(FILE *o, const struct sbx_sandbox *sb)
{
	const struct sbx_record *r = &sb->rec;
	char state[64];

	fprintf(o, "Sandbox %s\n", sb->id);
	if (sb->name)
		kv_take(o, "name", sbx_escape_display(sb->name));
	kv_take(o, "state", sbx_xstrdup(lc_state_label(sb, state, sizeof(state))));
	kv_str(o, "created", r->created);
	kv_str(o, "ended", r->ended);
	kv_take(o, "command", lc_command_display(&r->command));
	if (r->detached)
		kv_str(o, "detached", "yes (sbx run -d: sbx logs, sbx stop, sbx wait)");
	if (r->tty)
		kv_str(o, "terminal", "a pseudo-terminal of its own (-t, or run at a terminal)");
	kv_str(o, "workdir", r->workdir);
	kv_str(o, "profile", r->profile.name);
	if (r->profile.set)
		kv_strv(o, "profile sources", &r->profile.sources);
	else
		kv_str(o, "profile sources", NULL);
	kv_str(o, "rootfs", r->rootfs.spec);
	if (r->rootfs.dir)
		kv_str(o, "image dir", r->rootfs.dir);
	if (r->rootfs.sha256)
		kv_str(o, "image sha256", r->rootfs.sha256);
	kv_take(o, "state dir", sbx_escape_display(sb->dir));
}

/* A recorded id (0 when it was not recorded, as jansson reads a null). */
static long long id_of(int64_t v)
{
	return v < 0 ? 0 : (long long)v;
}

static void print_user(FILE *o, const struct sbx_record_policy *p)
{
	const struct sbx_record_user *u = &p->user;

	section(o, "Root or not?");
	if (!p->set || !p->has_user) {
		fprintf(o, "  (not recorded)\n");
		return;
	}
	kv_take(o, "inside",
		sbx_xasprintf("uid %lld gid %lld%s%s%s", id_of(u->uid), id_of(u->gid),
			      u->root_inside ? " (root in the jail)" : "",
			      u->sudo_user ? " as " : "", u->sudo_user ? u->sudo_user : ""));
	if (u->sudo_user)
		kv_take(o, "why",
			sbx_xasprintf("%s ran sbx through sudo, in a directory of theirs",
				      u->sudo_user));
	kv_take(o, "on the host",
		sbx_xasprintf("uid %lld gid %lld%s", id_of(u->host_uid), id_of(u->host_gid),
			      u->root_on_host ? " (ROOT ON THE HOST)" : " (not root)"));
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
static void print_unserved(FILE *o, const struct sbx_record_proxy *st)
{
	if (st->idle || st->evicted || st->refused)
		kv_take(o, "not served",
			sbx_xasprintf("%llu without a request (closed idle), %llu closed to make "
				      "room, %llu refused (503, all %d busy)",
				      (unsigned long long)st->idle, (unsigned long long)st->evicted,
				      (unsigned long long)st->refused, st->max_connections));
}

static void print_network(FILE *o, const struct sbx_sandbox *sb, const json_t *events)
{
	const struct sbx_record_network *n = &sb->rec.policy.network;
	json_t *conns = lc_events_of(sb->rec.network_events, events, "net");
	size_t i, allowed = 0, failed = 0, denied = 0;
	const json_t *e;

	section(o, "Network");
	kv_str(o, "mode", n->mode);
	if (n->allow.n)
		kv_strv(o, "allow", &n->allow);
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
	print_unserved(o, &sb->rec.proxy_stats);
	json_decref(conns);
}

/* Published ports: the URL to click, and what came in (the log's
 * "connection" events: counted, and the refused ones listed). */
static void print_publish(FILE *o, const struct sbx_sandbox *sb, const json_t *events)
{
	json_t *conns = lc_events_of(NULL, events, "connection");
	const json_t *pt, *e;
	size_t i, k;

	if (!json_array_size(sb->rec.publish))
		goto out;
	section(o, "Published ports");
	json_array_foreach(sb->rec.publish, i, pt)
	{
		int hp = (int)json_integer_value(json_object_get(pt, "host_port"));
		size_t fwd = 0, refused = 0, failed = 0, authorized = 0;
		_cleanup_free_ char *addrs = lc_text(json_object_get(pt, "addresses"));
		_cleanup_free_ char *key = sbx_xasprintf("%s port %d", addrs, hp);
		bool open = !strcmp(json_string_value(json_object_get(pt, "auth")) ?: "", "open");

		kv_take(o, key,
			sbx_xasprintf("-> jail port %d, %s",
				      (int)json_integer_value(json_object_get(pt, "port")),
				      open ? "OPEN (no token)" : "preview (needs its token)"));
		if (!open)
			kv_json(o, "url", json_object_get(pt, "url"));
		json_array_foreach(conns, k, e)
		{
			const char *res = json_string_value(json_object_get(e, "result")) ?: "";

			if (json_integer_value(json_object_get(e, "host_port")) != hp)
				continue;
			if (!strcmp(res, "refused"))
				refused++;
			else if (!strcmp(res, "failed"))
				failed++;
			else if (!strcmp(res, "authorized"))
				authorized++;
			else
				fwd++;
			if (strcmp(res, "refused") && strcmp(res, "failed"))
				continue;
			kv_take(o, res,
				sbx_xasprintf(
				    "%s %s (%s)", json_string_value(json_object_get(e, "ts")) ?: "",
				    json_string_value(json_object_get(e, "peer")) ?: "",
				    json_string_value(json_object_get(e, "reason")) ?: ""));
		}
		kv_take(o, "connections",
			sbx_xasprintf("%zu forwarded, %zu token redirects, %zu refused, %zu failed",
				      fwd, authorized, refused, failed));
	}
out:
	json_decref(conns);
}

/* A prose line from lib/state/record_text.c, escaped for the terminal. */
static void kv_prose(FILE *o, const char *key, char *text)
{
	kv_take(o, key, text ? sbx_escape_display(text) : NULL);
	free(text);
}

static void print_secrets(FILE *o, const struct sbx_record *r)
{
	const json_t *secrets = r->policy.secrets;
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
static void print_mounts(FILE *o, const struct sbx_record_filesystem *fs)
{
	size_t masks = 0;
	_cleanup_free_ char *hidden = NULL;

	for (size_t i = 0; i < fs->n_mounts; i++) {
		const char *kind = NULL;
		_cleanup_free_ char *t = sbx_rec_mount_text(&fs->mounts[i], &kind);

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

static void print_fs(FILE *o, const struct sbx_record *r)
{
	const struct sbx_record_filesystem *fs = &r->policy.filesystem;

	section(o, "Filesystem");
	kv_prose(o, "root", sbx_rec_root_text(r));
	if (fs->layers_in_memory)
		kv_take(o, "layer kept in",
			sbx_xstrdup("memory while it runs ([limits] disk, a tmpfs in the jail), "
				    "then disk/ if the sandbox is kept"));
	if (fs->shared.n)
		kv_strv(o, "shared with host", &fs->shared);
	else
		kv_take(o, "shared with host", sbx_xstrdup("nothing read-write"));
	print_mounts(o, fs);
	if (fs->sysfs)
		kv_take(o, "/sys",
			sbx_xstrdup(strcmp(fs->sysfs, "none") == 0
					? "none (an empty directory)"
					: "its own: cpus, its network devices and cgroup; "
					  "no host devices"));
	section(o, "Persistence");
	kv_str(o, "persist", r->policy.persist_summary ?: r->policy.persist);
	kv_bool(o, "kept", r->kept_set, r->kept);
	if (r->keep_reason)
		kv_str(o, "why", r->keep_reason);
}

/* policy.limits (sbx_limits_json's objects): each with its enforcement. */
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
		} else if (json_is_object(v) &&
			   (json_object_get(v, "value") || json_object_get(v, "value_ms"))) {
			_cleanup_free_ char *val = sbx_rec_limit_value(k, v);
			_cleanup_free_ char *enf = lc_text(json_object_get(v, "enforced"));

			kv_take(o, key, sbx_xasprintf("%s (enforced: %s)", val, enf));
		} else {
			kv_json(o, key, v);
		}
	}
}

static void print_security(FILE *o, const struct sbx_sandbox *sb, const json_t *events)
{
	const struct sbx_record_policy *p = &sb->rec.policy;
	json_t *sc = lc_events_of(sb->rec.seccomp_events, events, "seccomp");
	size_t i;
	const json_t *e;
	char caps[256] = "";
	bool hinted = false;

	for (int c = 0, n = 0; c < 64; c++)
		if (p->capabilities & (1ULL << c))
			n += snprintf(caps + n, sizeof(caps) - (size_t)n, "%s%d", n ? ", " : "", c);
	section(o, "Security");
	kv_str(o, "seccomp", p->seccomp);
	kv_str(o, "capabilities", !p->set ? NULL : caps[0] ? caps : "none");
	kv_bool(o, "no_new_privs", p->set, p->no_new_privs);
	kv_take(o, "seccomp events", sbx_xasprintf("%zu", json_array_size(sc)));
	json_array_foreach(sc, i, e)
	{
		_cleanup_free_ char *sys = lc_text(json_object_get(e, "syscall"));
		const char *args = json_string_value(json_object_get(e, "args"));

		const char *hint = json_string_value(json_object_get(e, "hint"));

		fprintf(o, "    %s%s%s%s x%lld (pid %lld)\n", sys, args ? "(" : "", args ?: "",
			args ? ")" : "", (long long)json_integer_value(json_object_get(e, "count")),
			(long long)json_integer_value(json_object_get(e, "pid")));
		/* What blocked calls of this kind mean, once. */
		if (hint && !hinted)
			fprintf(o, "      %s\n", hint);
		hinted |= hint != NULL;
	}
	json_decref(sc);
}

static void print_exit(FILE *o, const struct sbx_record *r)
{
	const struct sbx_record_exit *ex = &r->exit;
	const struct sbx_record_resources *res = &r->resources;
	int sig = ex->signal;
	char buf[64];

	section(o, "Exit");
	if (!ex->set) {
		fprintf(o, "  (the command has not ended, or the run was lost)\n");
	} else {
		kv_prose(o, "how it ended", sbx_rec_exit_text(r));
		kv_take(o, "status", sbx_xasprintf("%d", ex->status));
		kv_str(o, "reason", ex->reason);
		if (ex->code >= 0)
			kv_take(o, "exit code", sbx_xasprintf("%d", ex->code));
		if (sig > 0 && sig < 65)
			kv_take(o, "signal",
				sbx_xasprintf("%d (SIG%s)", sig, sigabbrev_np(sig) ?: "?"));
		if (ex->exec_error)
			kv_str(o, "not started", ex->exec_error);
		if (ex->error)
			kv_str(o, "error", ex->error);
		/* lib/run/run_later.c: what git would run on the host */
		if (ex->git_changed.n)
			kv_strv(o, "git made or changed", &ex->git_changed);
		if (ex->watch_changed.n)
			kv_strv(o, "watched, changed", &ex->watch_changed);
	}
	section(o, "Resources");
	if (!res->set) {
		fprintf(o, "  (not recorded)\n");
		return;
	}
	kv_take(o, "wall time", sbx_xasprintf("%.1f ms", res->wall_ms));
	kv_take(o, "cpu time", sbx_xasprintf("%.1f ms", res->cpu_ms));
	kv_take(o, "peak memory", sbx_xstrdup(lc_size((double)res->mem_peak, buf, sizeof(buf))));
	/* 0 means not measured (only a pids cgroup counts them). */
	if (res->pids_peak > 0)
		kv_take(o, "most processes",
			sbx_xasprintf("%llu", (unsigned long long)res->pids_peak));
	else
		kv_take(o, "most processes", sbx_xstrdup("not measured (no pids cgroup)"));
	if (res->disk.set)
		kv_take(o, "disk used", sbx_rec_disk_text(&res->disk));
}

static void print_output_note(FILE *o, const struct sbx_record *r)
{
	char buf[64];

	section(o, "Output");
	if (!r->resources.set) {
		fprintf(o, "  (not recorded)\n");
		return;
	}
	kv_take(o, "captured",
		sbx_xasprintf("%s%s (sbx inspect --output)",
			      lc_size((double)r->resources.output_bytes, buf, sizeof(buf)),
			      r->resources.output_truncated ? ", truncated" : ""));
}

/* The timings of the start-up phases, in ms. */
static void print_timings(FILE *o, const struct sbx_record_timings *t)
{
	const char *names[SBX_RECORD_PHASES];
	double ms[SBX_RECORD_PHASES];

	section(o, "Phase timings");
	if (!t->set) {
		fprintf(o, "  (not recorded)\n");
		return;
	}
	sbx_record_phases(t, names, ms);
	for (int i = 0; i < SBX_RECORD_PHASES; i++)
		kv_take(o, names[i], sbx_xasprintf("%.1f ms", ms[i]));
}

static void print_profile(FILE *o, const struct sbx_record *r)
{
	const char *ini = r->profile.ini;
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
	const struct sbx_record *r = &sb->rec;

	print_summary(o, sb);
	if (!sb->record) {
		_cleanup_free_ char *e =
		    sbx_escape_display(sb->record_error ? sb->record_error : "");

		fprintf(o, "\n  no usable record: %s\n", e);
		return;
	}
	print_user(o, &r->policy);
	print_network(o, sb, events);
	print_publish(o, sb, events);
	print_secrets(o, r);
	print_fs(o, r);
	print_object_rows(o, "Limits", r->policy.limits, NULL);
	print_security(o, sb, events);
	print_timings(o, &r->timings);
	print_exit(o, r);
	print_output_note(o, r);
	print_profile(o, r);
}
