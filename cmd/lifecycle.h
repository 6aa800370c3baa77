/* SPDX-License-Identifier: MIT */
/* cmd/lifecycle.h - helpers shared by ps, inspect, export and destroy. */
#ifndef SBX_CMD_LIFECYCLE_H
#define SBX_CMD_LIFECYCLE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "state.h"

/* Resolve SANDBOX (id, prefix or name) and open it. */
int lc_open(struct sbx_state *st, const char *ref, bool lock, struct sbx_sandbox *sb,
	    struct sbx_err *err);
/* "running", "exited 1", "killed (SIGKILL)", "timeout", "oom", "lost"... */
const char *lc_state_label(const struct sbx_sandbox *sb, char *buf, size_t len);
/* Derived state as JSON: {"state": ..., "exit_code"/"signal": N, "lock_held": bool}. */
json_t *lc_state_json(const struct sbx_sandbox *sb);
/* The command (a JSON array) shell-quoted and escaped for a terminal (malloc'd). */
char *lc_command_display(const struct sbx_strv *cmd);
/* Age of an RFC 3339 time: "12s", "5m", "3h", "2d" ("?" if unparsable). */
const char *lc_age(const char *rfc3339, char *buf, size_t len);
/* Seconds since an RFC 3339 time, or -1. */
double lc_age_seconds(const char *rfc3339);
/* Human size: "512 B", "1.5 KiB", "64.0 MiB". */
const char *lc_size(double bytes, char *buf, size_t len);

/* Any JSON value as one escaped display string (malloc'd): strings as is,
 * null "-", booleans yes/no, arrays joined with ", ", objects compact. */
char *lc_text(const json_t *v);
/* Events of log.jsonl (an array, maybe empty), read without following symlinks. */
json_t *lc_read_log(const struct sbx_sandbox *sb);
/* The human report of `sbx inspect` (cmd/inspect_text.c). */
void lc_print_inspect(const struct sbx_sandbox *sb, const json_t *events, FILE *out);
/* Network / seccomp events: the record's (rec: its network_events or
 * seccomp_events), else the log's events of that type ("net", "seccomp"). */
json_t *lc_events_of(const json_t *rec, const json_t *events, const char *event_type);

/* `sbx inspect --summary` (cmd/inspect_summary.c): one row per sandbox
 * (exit, wall, peak memory, connections allowed/denied, ...); the report
 * of many rows with their totals ({"sandboxes": N, ..., "rows": [...]},
 * a new reference; rows is borrowed), and that report as a table. */
json_t *lc_summary_json(const struct sbx_sandbox *sb, const json_t *events);
json_t *lc_summary_report(json_t *rows);
void lc_print_summary(const json_t *report, FILE *out);

#endif
