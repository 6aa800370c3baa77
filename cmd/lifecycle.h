/* SPDX-License-Identifier: MIT */
/* cmd/lifecycle.h - helpers shared by ps, inspect, export and destroy. */
#ifndef SBX_CMD_LIFECYCLE_H
#define SBX_CMD_LIFECYCLE_H

#include <jansson.h>
#include <stdbool.h>

#include "state.h"

/* Resolve SANDBOX (id, prefix or name) and open it. */
int lc_open(struct sbx_state *st, const char *ref, bool lock, struct sbx_sandbox *sb,
	    struct sbx_err *err);
/* "running", "exited 1", "killed (SIGKILL)", "timeout", "oom", "lost"... */
const char *lc_state_label(const struct sbx_sandbox *sb, char *buf, size_t len);
/* Derived state as JSON: {"state": ..., "exit_code"/"signal": N, "lock_held": bool}. */
json_t *lc_state_json(const struct sbx_sandbox *sb);
/* The command (a JSON array) shell-quoted and escaped for a terminal (malloc'd). */
char *lc_command_display(const json_t *cmd);
/* Age of an RFC 3339 time: "12s", "5m", "3h", "2d" ("?" if unparsable). */
const char *lc_age(const char *rfc3339, char *buf, size_t len);
/* Seconds since an RFC 3339 time, or -1. */
double lc_age_seconds(const char *rfc3339);
/* Human size: "512 B", "1.5 KiB", "64.0 MiB". */
const char *lc_size(double bytes, char *buf, size_t len);
/* String member of a nested object by path "a.b.c" (NULL if not a string). */
const char *lc_str(const json_t *root, const char *path);
const json_t *lc_get(const json_t *root, const char *path);

#endif
