/* SPDX-License-Identifier: MIT */
/* cmd/lifecycle.c - helpers shared by ps, inspect, export and destroy. */
#include "lifecycle.h"
#include "record_text.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <time.h>

int lc_open(struct sbx_state *st, const char *ref, bool lock, struct sbx_sandbox *sb,
	    struct sbx_err *err)
{
	char id[SBX_ID_LEN + 1];
	int r = sbx_sandbox_find(st, ref, id, err);

	if (r < 0) {
		/* sb must be closable even on failure. */
		memset(sb, 0, sizeof(*sb));
		sb->dirfd = sb->lockfd = -1;
		return r;
	}
	return sbx_sandbox_open(st, id, lock, sb, err);
}

const char *lc_state_label(const struct sbx_sandbox *sb, char *buf, size_t len)
{
	int code = 0;
	const char *s = sbx_sandbox_state(sb, &code);

	if (strcmp(s, "exited") == 0) {
		snprintf(buf, len, "exited %d", code);
	} else if (strcmp(s, "killed") == 0) {
		const char *abbr = code > 0 ? sigabbrev_np(code) : NULL;

		if (abbr)
			snprintf(buf, len, "killed (SIG%s)", abbr);
		else
			snprintf(buf, len, "killed (signal %d)", code);
	} else {
		snprintf(buf, len, "%s", s);
	}
	return buf;
}

json_t *lc_state_json(const struct sbx_sandbox *sb)
{
	int code = 0;
	const char *s = sbx_sandbox_state(sb, &code);
	json_t *j = json_pack("{s:s, s:b}", "state", s, "lock_held", sbx_sandbox_lock_held(sb));

	if (strcmp(s, "exited") == 0)
		json_object_set_new(j, "exit_code", json_integer(code));
	else if (strcmp(s, "killed") == 0)
		json_object_set_new(j, "signal", json_integer(code));
	if (sb->record_error)
		json_object_set_new(j, "record_error", json_string(sb->record_error));
	return j;
}

static bool needs_quotes(const char *s)
{
	if (!*s)
		return true;
	for (; *s; s++)
		if (!strchr(
			"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%",
			*s))
			return true;
	return false;
}

char *lc_command_display(const struct sbx_strv *cmd)
{
	char *out = sbx_xstrdup(""), *esc;

	for (size_t i = 0; i < cmd->n; i++) {
		const char *a = cmd->v[i];
		char *q, *n;

		if (needs_quotes(a)) {
			/* 'it'\''s' */
			size_t len = strlen(a), o = 0;

			q = sbx_xmalloc(len * 4 + 3);
			q[o++] = '\'';
			for (const char *p = a; *p; p++) {
				if (*p == '\'') {
					memcpy(q + o, "'\\''", 4);
					o += 4;
				} else {
					q[o++] = *p;
				}
			}
			q[o++] = '\'';
			q[o] = '\0';
		} else {
			q = sbx_xstrdup(a);
		}
		n = sbx_xasprintf("%s%s%s", out, i ? " " : "", q);
		free(out);
		free(q);
		out = n;
	}
	esc = sbx_escape_display(out);
	free(out);
	return esc;
}

double lc_age_seconds(const char *t)
{
	double then = sbx_rfc3339_parse(t);

	if (then < 0)
		return -1;
	return difftime(time(NULL), (time_t)then); /* whole seconds, as ps shows them */
}

const char *lc_age(const char *t, char *buf, size_t len)
{
	double s = lc_age_seconds(t);

	if (s < 0)
		snprintf(buf, len, "?");
	else if (s < 120)
		snprintf(buf, len, "%.0fs", s);
	else if (s < 7200)
		snprintf(buf, len, "%.0fm", s / 60);
	else if (s < 172800)
		snprintf(buf, len, "%.0fh", s / 3600);
	else
		snprintf(buf, len, "%.0fd", s / 86400);
	return buf;
}

const char *lc_size(double b, char *buf, size_t len)
{
	return sbx_size_text(b, buf, len);
}

char *lc_text(const json_t *v)
{
	char *raw, *esc;

	if (!v || json_is_null(v))
		return sbx_xstrdup("-");
	if (json_is_string(v))
		return sbx_escape_display(json_string_value(v));
	if (json_is_true(v))
		return sbx_xstrdup("yes");
	if (json_is_false(v))
		return sbx_xstrdup("no");
	if (json_is_integer(v))
		return sbx_xasprintf("%lld", (long long)json_integer_value(v));
	if (json_is_real(v))
		return sbx_xasprintf("%.1f", json_real_value(v));
	if (json_is_array(v)) {
		char *out = sbx_xstrdup("");
		size_t i;
		const json_t *e;

		if (json_array_size(v) == 0) {
			free(out);
			return sbx_xstrdup("none");
		}
		json_array_foreach(v, i, e)
		{
			char *t = lc_text(e), *n = sbx_xasprintf("%s%s%s", out, i ? ", " : "", t);

			free(t);
			free(out);
			out = n;
		}
		return out;
	}
	raw = json_dumps(v, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_PRESERVE_ORDER);
	esc = sbx_escape_display(raw ? raw : "?");
	free(raw);
	return esc;
}

json_t *lc_read_log(const struct sbx_sandbox *sb)
{
	json_t *arr = json_array();
	_cleanup_close_ int fd = -1;
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	if (sb->dirfd < 0)
		return arr;
	fd = openat(sb->dirfd, "log.jsonl", O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return arr;
	f = fdopen(fd, "re");
	if (!f)
		return arr;
	fd = -1;
	while ((n = getline(&line, &cap, f)) > 0 && json_array_size(arr) < 100000) {
		json_t *ev = json_loadb(line, (size_t)n, 0, NULL);

		if (json_is_object(ev))
			json_array_append_new(arr, ev);
		else
			json_decref(ev); /* a torn last line after a crash */
	}
	return arr;
}

json_t *lc_events_of(const json_t *rec, const json_t *events, const char *event_type)
{
	json_t *out;
	size_t i;
	const json_t *ev;

	if (json_is_array(rec) && json_array_size(rec))
		return json_incref((json_t *)rec);
	out = json_array();
	json_array_foreach(events, i,
			   ev) if (json_is_string(json_object_get(ev, "event")) &&
				   strcmp(json_string_value(json_object_get(ev, "event")),
					  event_type) == 0) json_array_append(out, (json_t *)ev);
	return out;
}
