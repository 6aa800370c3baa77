/* SPDX-License-Identifier: MIT */
/* lib/state/record_text.c - records and run-log events as prose (record_text.h). */
#include "record_text.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

const json_t *sbx_rec_get(const json_t *root, const char *path)
{
	char key[128];

	while (root && *path) {
		size_t n = strcspn(path, ".");

		if (n >= sizeof(key))
			return NULL;
		memcpy(key, path, n);
		key[n] = '\0';
		root = json_object_get(root, key);
		path += n + (path[n] == '.');
	}
	return root;
}

#define get sbx_rec_get

static const char *str(const json_t *root, const char *path)
{
	return json_string_value(get(root, path));
}

static long long num(const json_t *root, const char *path)
{
	const json_t *v = get(root, path);

	return json_is_integer(v)  ? (long long)json_integer_value(v)
	       : json_is_number(v) ? (long long)json_number_value(v)
				   : 0;
}

/* A growing string. */
struct buf {
	char *s;
	size_t n;
	FILE *f;
};

static void buf_open(struct buf *b)
{
	b->s = NULL;
	b->n = 0;
	b->f = open_memstream(&b->s, &b->n);
	if (!b->f)
		abort();
}

static char *buf_close(struct buf *b)
{
	fclose(b->f);
	return b->s;
}

/* Any value, briefly: strings bare, arrays joined, objects "k v, ...". */
static void put_value(FILE *f, const json_t *v)
{
	const char *k;
	const json_t *e;
	size_t i;

	if (!v || json_is_null(v)) {
		fputs("-", f);
	} else if (json_is_string(v)) {
		fputs(json_string_value(v), f);
	} else if (json_is_true(v) || json_is_false(v)) {
		fputs(json_is_true(v) ? "yes" : "no", f);
	} else if (json_is_integer(v)) {
		fprintf(f, "%lld", (long long)json_integer_value(v));
	} else if (json_is_real(v)) {
		fprintf(f, "%.1f", json_real_value(v));
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, e)
		{
			fputs(i ? ", " : "", f);
			put_value(f, e);
		}
	} else {
		i = 0;
		json_object_foreach((json_t *)v, k, e)
		{
			fprintf(f, "%s%s ", i++ ? ", " : "", k);
			put_value(f, e);
		}
	}
}

/* A command (an array of strings) as a shell would take it back. */
static void put_command(FILE *f, const json_t *cmd)
{
	const json_t *a;
	size_t i;

	json_array_foreach(cmd, i, a)
	{
		const char *s = json_string_value(a) ?: "";

		fputs(i ? " " : "", f);
		if (*s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "0123456789-_./=:,+@%") == strlen(s)) {
			fputs(s, f);
			continue;
		}
		fputc('\'', f);
		for (; *s; s++)
			if (*s == '\'')
				fputs("'\\''", f);
			else
				fputc(*s, f);
		fputc('\'', f);
	}
}

static const char *signame(long long sig)
{
	const char *n = sig > 0 && sig < 65 ? sigabbrev_np((int)sig) : NULL;

	return n ? n : "?";
}

static void put_exit(FILE *f, const struct sbx_record_exit *x)
{
	const char *reason = x->reason ? x->reason : "";
	long long status = x->status, sig = x->signal;

	if (!strcmp(reason, "timeout"))
		fprintf(f, "timed out (time limit), exit %lld", status);
	else if (!strcmp(reason, "oom"))
		fprintf(f, "killed by the OOM killer (memory limit), exit %lld", status);
	else if (!strcmp(reason, "stopped"))
		fprintf(f, "killed by sbx (SIGKILL) %s, exit %lld",
			x->stop && !strcmp(x->stop, "second-signal")
			    ? "on a second signal"
			    : "when it outlived its stop timeout after a signal",
			status);
	else if (!strcmp(reason, "signaled"))
		fprintf(f, "killed by signal %lld (SIG%s), exit %lld", sig, signame(sig), status);
	else if (!strcmp(reason, "error"))
		fprintf(f, "sbx failed before the command ran, exit %lld", status);
	else if (!strcmp(reason, "not-found") || !strcmp(reason, "not-executable"))
		fprintf(f, "the command %s, exit %lld",
			!strcmp(reason, "not-found") ? "was not found" : "could not be executed",
			status);
	else if (!strcmp(reason, "lost"))
		fputs("lost (its supervisor died; the end was not seen)", f);
	else
		fprintf(f, "exit %lld", status);
	if (x->exec_error)
		fprintf(f, ": %s", x->exec_error);
	else if (x->error)
		fprintf(f, ": %s", x->error);
}

char *sbx_rec_exit_text(const struct sbx_record *r)
{
	struct buf b;

	if (!r->exit.set)
		return NULL;
	buf_open(&b);
	put_exit(b.f, &r->exit);
	return buf_close(&b);
}

static void put_resources(FILE *f, const struct sbx_record_resources *res)
{
	char sz[32];

	if (!res->set)
		return;
	fprintf(f, "wall %.0f ms, cpu %.1f ms", res->wall_ms, res->cpu_ms);
	if (res->mem_peak > 0)
		fprintf(f, ", peak memory %s",
			sbx_size_text((double)res->mem_peak, sz, sizeof(sz)));
	/* 0: not measured (no cgroup counts them), not "no process". */
	if (res->pids_peak > 0)
		fprintf(f, ", at most %llu processes", (unsigned long long)res->pids_peak);
	fprintf(f, ", %s of output%s", sbx_size_text((double)res->output_bytes, sz, sizeof(sz)),
		res->output_truncated ? " (truncated)" : "");
	if (res->disk.set) {
		char *d = sbx_rec_disk_text(&res->disk);

		fprintf(f, ", disk %s", d);
		free(d);
	}
}

char *sbx_rec_disk_text(const struct sbx_record_disk *d)
{
	char a[32], b[32], n[64] = "";

	if (d->inodes)
		snprintf(n, sizeof(n), ", %llu of %llu inodes", (unsigned long long)d->inodes_used,
			 (unsigned long long)d->inodes);
	return sbx_xasprintf("%s of %s%s%s", sbx_size_text((double)d->used, a, sizeof(a)),
			     sbx_size_text((double)d->size, b, sizeof(b)), n,
			     d->full ? " (full at the end)" : "");
}

char *sbx_rec_resources_text(const struct sbx_record *r)
{
	struct buf b;

	buf_open(&b);
	put_resources(b.f, &r->resources);
	return buf_close(&b);
}

char *sbx_rec_root_text(const struct sbx_record *r)
{
	const struct sbx_record_filesystem *fs = &r->policy.filesystem;
	const char *spec = r->rootfs.spec;
	bool host = !spec || !strcmp(spec, "host");
	size_t n = 0;
	struct buf b;

	buf_open(&b);
	if (host)
		fputs("the host's root, read-only", b.f);
	else if (fs->writable_layer && !strcmp(fs->writable_layer, "private"))
		fprintf(b.f, "image %s, with a private copy-on-write layer", spec);
	else
		fprintf(b.f, "image %s, read-only", spec);
	for (size_t i = 0; i < fs->n_layers; i++) {
		const char *t = fs->layers[i].target;

		if (!t || !strcmp(t, "/"))
			continue;
		fprintf(b.f, "%s%s", n++ ? ", " : "; copy-on-write: ", t);
	}
	if (n)
		fputs(" (the changes stay in this sandbox: sbx inspect --changes)", b.f);
	if (fs->layers_in_memory)
		fputs("; the layers are in memory while it runs ([limits] disk)", b.f);
	return buf_close(&b);
}

char *sbx_rec_mount_text(const struct sbx_record_mount *m, const char **kind)
{
	const char *k = m->kind ? m->kind : "?", *src = m->src, *dst = m->dst ? m->dst : "?";
	struct buf b;

	buf_open(&b);
	if (!strcmp(k, "tmpfs"))
		*kind = "private tmpfs";
	else if (!strcmp(k, "bind"))
		*kind = "shared, read-write";
	else if (!strcmp(k, "ro-bind"))
		*kind = "shared, read-only";
	else if (!strcmp(k, "overlay"))
		*kind = "copy-on-write";
	else if (!strcmp(k, "mask"))
		*kind = "hidden";
	else
		*kind = k;
	fputs(dst, b.f);
	if (src && strcmp(src, dst))
		fprintf(b.f, " (from %s)", src);
	if (m->written_as >= 0)
		fprintf(b.f, ", written as its owner uid %lld", (long long)m->written_as);
	if (m->read_only)
		fprintf(b.f, ", read-only: %s", m->read_only);
	else if (m->git_ro) {
		fputs(", its .git read-only", b.f);
		for (size_t i = 0; i < m->git_named.n; i++) {
			_cleanup_free_ char *e = sbx_escape_display(m->git_named.v[i]);

			fprintf(b.f, "%s%s", i ? ", " : ", and what git reaches from it: ", e);
		}
	}
	return buf_close(&b);
}

char *sbx_rec_secrets_text(const struct sbx_record *r)
{
	const json_t *a = r->policy.secrets, *s;
	size_t i, in = 0, out = 0;
	struct buf b;

	buf_open(&b);
	for (int pass = 0; pass < 2; pass++) {
		json_array_foreach(a, i, s)
		{
			bool absent = json_is_false(json_object_get(s, "present"));
			const char *name = str(s, "name") ?: "?";

			if (absent != (pass == 1))
				continue;
			if (pass == 0)
				fprintf(b.f, "%s%s (%s)", in++ ? ", " : "", name,
					str(s, "path") ? str(s, "path") : "env var");
			else
				fprintf(b.f, "%s%s",
					out++ ? ", "
					: in  ? "; absent (optional): "
					      : "none; absent (optional): ",
					name);
		}
	}
	if (!in && !out)
		fputs("none", b.f);
	return buf_close(&b);
}

char *sbx_rec_limit_value(const char *name, const json_t *limit)
{
	const json_t *val = json_object_get(limit, "value");
	const json_t *ms = json_object_get(limit, "value_ms");
	char t[32];
	struct buf b;

	if (json_is_integer(ms) && json_integer_value(ms) >= 0)
		return sbx_xstrdup(
		    sbx_duration_text((uint64_t)json_integer_value(ms), t, sizeof(t)));
	if (json_is_integer(val) &&
	    (!strcmp(name, "memory") || !strcmp(name, "disk") || !strcmp(name, "fsize")))
		return sbx_xstrdup(sbx_size_text((double)json_integer_value(val), t, sizeof(t)));
	buf_open(&b);
	put_value(b.f, val);
	return buf_close(&b);
}

char *sbx_rec_limits_text(const struct sbx_record *r)
{
	const json_t *l = r->policy.limits, *v;
	const char *k;
	size_t n = 0;
	struct buf b;

	buf_open(&b);
	json_object_foreach((json_t *)l, k, v)
	{
		_cleanup_free_ char *val = NULL;

		if (!json_is_object(v))
			continue;
		val = sbx_rec_limit_value(k, v);
		fprintf(b.f, "%s%s %s", n++ ? ", " : "", k, val);
		if (str(v, "enforced"))
			fprintf(b.f, " (%s)", str(v, "enforced"));
	}
	if (!n)
		fputs("none", b.f);
	return buf_close(&b);
}

static void put_net(FILE *f, const json_t *e)
{
	bool allowed = json_is_true(json_object_get(e, "allowed"));
	const char *result = str(e, "result");
	char up[32], down[32];

	if (!allowed)
		fputs("DENIED ", f);
	else if (result && strcmp(result, "ok"))
		fputs("FAILED ", f);
	else
		fputs("allowed ", f);
	fprintf(f, "%s %s:%lld", str(e, "method") ?: "", str(e, "host") ?: "?", num(e, "port"));
	if (str(e, "address"))
		fprintf(f, " (%s)", str(e, "address"));
	if (str(e, "reason"))
		fprintf(f, ": %s", str(e, "reason"));
	if (allowed && (num(e, "bytes_up") || num(e, "bytes_down")))
		fprintf(f, "; %s up, %s down",
			sbx_size_text((double)num(e, "bytes_up"), up, sizeof(up)),
			sbx_size_text((double)num(e, "bytes_down"), down, sizeof(down)));
}

static void put_event(FILE *f, const char *type, const json_t *e)
{
	const char *k;
	const json_t *v;
	size_t n = 0;

	if (!strcmp(type, "start")) {
		fprintf(f, "sandbox %s, profile %s: ", str(e, "id") ?: "?",
			str(e, "profile") ?: "?");
		put_command(f, json_object_get(e, "command"));
	} else if (!strcmp(type, "policy")) {
		fprintf(f, "user: %s; network: %s; secrets: %s; filesystem: %s; persist: %s",
			str(e, "user.summary") ?: "?", str(e, "network.summary") ?: "?",
			str(e, "secrets_summary") ?: "?", str(e, "filesystem.summary") ?: "?",
			str(e, "persist_summary") ?: str(e, "persist") ?: "?");
	} else if (!strcmp(type, "limits")) {
		fputs(str(e, "summary") ?: "", f);
	} else if (!strcmp(type, "phase")) {
		fprintf(f, "%s %.1f ms", str(e, "name") ?: "?",
			json_number_value(json_object_get(e, "ms")));
	} else if (!strcmp(type, "warning") || !strcmp(type, "error") ||
		   !strcmp(type, "output-lost")) {
		fputs(str(e, "message") ?: "", f);
	} else if (!strcmp(type, "signal")) {
		fprintf(f, "forwarded SIG%s %s", str(e, "name") ?: "?",
			str(e, "to") ? "(from the terminal) to the command's process group"
				     : "to the command");
	} else if (!strcmp(type, "suspend")) {
		if (str(e, "by") && !strcmp(str(e, "by"), "terminal"))
			fputs("suspended (Ctrl-Z): the jail and sbx stopped", f);
		else
			fprintf(f,
				"suspended: the command stopped (SIG%s), the jail and sbx with it",
				str(e, "name") ?: "?");
	} else if (!strcmp(type, "continue")) {
		fputs("continued", f);
	} else if (!strcmp(type, "stop-kill")) {
		fprintf(f, "the command outlived its stop timeout after SIG%s: the jail was killed",
			str(e, "name") ?: "?");
	} else if (!strcmp(type, "second-signal")) {
		fprintf(f, "a second SIG%s: the jail was killed", str(e, "name") ?: "?");
	} else if (!strcmp(type, "timeout")) {
		fprintf(f, "time limit reached: SIGTERM sent, SIGKILL in %lld ms",
			num(e, "grace_ms"));
	} else if (!strcmp(type, "kill")) {
		fputs("SIGKILL sent to the jail", f);
	} else if (!strcmp(type, "net")) {
		put_net(f, e);
	} else if (!strcmp(type, "seccomp")) {
		fprintf(f, "blocked %s%s%s%s, %lld time%s (%s)", str(e, "syscall") ?: "?",
			str(e, "args") ? "(" : "", str(e, "args") ?: "", str(e, "args") ? ")" : "",
			num(e, "count"), num(e, "count") == 1 ? "" : "s", str(e, "errno") ?: "?");
		if (str(e, "hint"))
			fprintf(f, ": %s", str(e, "hint"));
	} else if (!strcmp(type, "exit")) {
		/* {"exit": ..., "resources": ...}: as in the record */
		struct sbx_record r;

		(void)sbx_record_from_json(e, &r, NULL);
		put_exit(f, &r.exit);
		fputs("; ", f);
		put_resources(f, &r.resources);
		sbx_record_free(&r);
	} else if (!strcmp(type, "kept") || !strcmp(type, "removed")) {
		fprintf(f, "%s: %s", type, str(e, "reason") ?: "");
	} else if (!strcmp(type, "exec")) {
		fputs("sbx exec ", f);
		put_command(f, json_object_get(e, "command"));
		fprintf(f, " (%s): ", str(e, "mode") ?: "?");
		if (str(e, "error"))
			fprintf(f, "failed: %s", str(e, "error"));
		else
			fprintf(f, "exit %lld", num(e, "status"));
	} else {
		json_object_foreach((json_t *)e, k, v)
		{
			if (!strcmp(k, "ts") || !strcmp(k, "event"))
				continue;
			fprintf(f, "%s%s: ", n++ ? "; " : "", k);
			put_value(f, v);
		}
	}
}

char *sbx_rec_event_text(const json_t *event)
{
	struct buf b;

	buf_open(&b);
	put_event(b.f, str(event, "event") ?: "", event);
	return buf_close(&b);
}
