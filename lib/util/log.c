/* SPDX-License-Identifier: MIT */
/* lib/util/log.c - the run log: events as JSON lines, a human sink, and a record copy. */
#include "log.h"

#include <string.h>

void sbx_log_init(struct sbx_log *l)
{
	memset(l, 0, sizeof(*l));
	l->events = json_array();
}

void sbx_log_add_fd(struct sbx_log *l, int fd)
{
	if (fd >= 0 && l->n_fds < SBX_ARRAY_SIZE(l->jsonl_fds))
		l->jsonl_fds[l->n_fds++] = fd;
}

char *sbx_log_line(const json_t *event)
{
	char *s = json_dumps(event, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_PRESERVE_ORDER |
					JSON_REAL_PRECISION(9));
	size_t n;

	if (!s)
		return NULL;
	n = strlen(s);
	s = sbx_xrealloc(s, n + 2);
	s[n] = '\n';
	s[n + 1] = '\0';
	return s;
}

void sbx_log_event(struct sbx_log *l, const char *type, json_t *fields)
{
	char ts[40];
	json_t *ev = json_object();
	char *line;

	json_object_set_new(ev, "ts", json_string(sbx_rfc3339_now(ts, sizeof(ts))));
	json_object_set_new(ev, "event", json_string(type));
	if (json_is_object(fields)) {
		const char *k;
		json_t *v;

		json_object_foreach(fields, k,
				    v) if (strcmp(k, "ts") != 0 && strcmp(k, "event") != 0)
		    json_object_set(ev, k, v);
	}
	json_decref(fields);
	line = sbx_log_line(ev);
	if (line) {
		size_t n = strlen(line);

		/* One write(2) per line on O_APPEND fds: lines never interleave. */
		for (size_t i = 0; i < l->n_fds; i++)
			(void)sbx_write_all(l->jsonl_fds[i], line, n);
		free(line);
	}
	if (l->human)
		l->human(ev, l->human_data);
	if (l->events)
		json_array_append(l->events, ev);
	json_decref(ev);
}

void sbx_log_free(struct sbx_log *l)
{
	json_decref(l->events);
	l->events = NULL;
	l->n_fds = 0;
	l->human = NULL;
}

json_t *sbx_json_string_lossy(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *e = p + len;
	char *out, *o;
	json_t *j;

	if (!s)
		return json_null();
	if (sbx_utf8_valid(s, len) && !memchr(s, '\0', len))
		return json_stringn(s, len);
	out = o = sbx_xmalloc(len * 3 + 1);
	while (p < e) {
		/* (a NUL would truncate C readers: replaced too) */
		size_t n = *p ? sbx_utf8_char_len((const char *)p) : 0;

		if (n && (size_t)(e - p) >= n) {
			memcpy(o, p, n);
			o += n;
			p += n;
			continue;
		}
		memcpy(o, "\xef\xbf\xbd", 3); /* U+FFFD */
		o += 3;
		p++;
	}
	j = json_stringn(out, (size_t)(o - out));
	free(out);
	return j;
}

json_t *sbx_json_str(const char *s)
{
	return s ? sbx_json_string_lossy(s, strlen(s)) : json_null();
}

json_t *sbx_json_strv(const struct sbx_strv *v)
{
	json_t *a = json_array();

	for (size_t i = 0; i < v->n; i++)
		json_array_append_new(a, sbx_json_str(v->v[i]));
	return a;
}
