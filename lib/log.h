/* SPDX-License-Identifier: MIT */
/*
 * lib/log.h - the run log: structured events (jansson) sent to sinks.
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

typedef void (*sbx_log_human_fn)(const json_t *event, void *data);

struct sbx_log {
	int jsonl_fds[4];	/* O_APPEND fds that get one JSON line per event */
	size_t n_fds;
	sbx_log_human_fn human;	/* NULL when quiet */
	void *human_data;
	json_t *events;		/* array of every event, for the record */
};

void sbx_log_init(struct sbx_log *l);
void sbx_log_add_fd(struct sbx_log *l, int fd);	/* not owned */
/* Emit an event; steals `fields` (an object, may be NULL). */
void sbx_log_event(struct sbx_log *l, const char *type, json_t *fields);
void sbx_log_free(struct sbx_log *l);

/* Serialize one event as a line (malloc'd, ends with '\n'). */
char *sbx_log_line(const json_t *event);

#endif
