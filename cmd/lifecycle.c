/* SPDX-License-Identifier: MIT */
/* cmd/lifecycle.c - helpers shared by ps, inspect, export and destroy. */
#include "lifecycle.h"

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
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%",
			    *s))
			return true;
	return false;
}

char *lc_command_display(const json_t *cmd)
{
	size_t i;
	const json_t *v;
	char *out = sbx_xstrdup(""), *esc;

	json_array_foreach(cmd, i, v) {
		const char *a = json_string_value(v);
		char *q, *n;

		if (!a)
			continue;
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
	struct tm tm = { 0 };
	const char *rest;
	time_t then;

	if (!t)
		return -1;
	rest = strptime(t, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!rest)
		return -1;
	then = timegm(&tm);
	return difftime(time(NULL), then);
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
	static const char *const u[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	size_t i = 0;

	while (b >= 1024 && i + 1 < SBX_ARRAY_SIZE(u)) {
		b /= 1024;
		i++;
	}
	if (i == 0)
		snprintf(buf, len, "%.0f B", b);
	else
		snprintf(buf, len, "%.1f %s", b, u[i]);
	return buf;
}

const json_t *lc_get(const json_t *root, const char *path)
{
	char key[128];
	const char *p = path;

	while (root && *p) {
		size_t n = strcspn(p, ".");

		if (n >= sizeof(key))
			return NULL;
		memcpy(key, p, n);
		key[n] = '\0';
		root = json_object_get(root, key);
		p += n;
		if (*p == '.')
			p++;
	}
	return root;
}

const char *lc_str(const json_t *root, const char *path)
{
	return json_string_value(lc_get(root, path));
}
