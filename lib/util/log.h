/* SPDX-License-Identifier: MIT */
/*
 * lib/util/log.h - the run log: structured events (jansson) sent to sinks.
 *
 * Each event is a JSON object {"ts": RFC3339, "event": TYPE, ...fields}.
 * Sinks: the sandbox's log.jsonl, the --log-json file, and a human
 * formatter supplied by cmd/ (lib/ never prints on its own).
 */
#ifndef SBX_LOG_H
#define SBX_LOG_H

#include <jansson.h>
#include <stdbool.h>

#include "util.h"

/*
 * Lines are compact, ASCII-only JSON (JSON_ENSURE_ASCII), one write(2) per
 * line on O_APPEND fds, so concurrent writers never interleave.
 */
typedef void (*sbx_log_human_fn)(const json_t *event, void *data);

struct sbx_log {
	int jsonl_fds[4]; /* O_APPEND fds that get one JSON line per event */
	size_t n_fds;
	sbx_log_human_fn human; /* NULL when quiet */
	void *human_data;
	json_t *events; /* array of every event, for the record */
};

void sbx_log_init(struct sbx_log *l);
void sbx_log_add_fd(struct sbx_log *l, int fd); /* not owned */
/* Emit an event; steals `fields` (an object, may be NULL). */
void sbx_log_event(struct sbx_log *l, const char *type, json_t *fields);
void sbx_log_free(struct sbx_log *l);

/* Serialize one event as a line (malloc'd, ends with '\n'). */
char *sbx_log_line(const json_t *event);

/*
 * A JSON string from bytes that may not be UTF-8 (names from the jail, the
 * command line): invalid bytes and NULs become U+FFFD.  jansson refuses
 * invalid UTF-8, so every string that did not come from sbx goes through
 * this.  Never NULL for non-NULL s (json_null() for NULL).
 */
json_t *sbx_json_string_lossy(const char *s, size_t len);
/* The same for a C string (json null for NULL), and a string vector as
 * an array of them. */
json_t *sbx_json_str(const char *s);
json_t *sbx_json_strv(const struct sbx_strv *v);

#endif
