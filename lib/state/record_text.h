/* SPDX-License-Identifier: MIT */
/*
 * lib/state/record_text.h - a sandbox's record (struct sbx_record) and run-log events
 * (log.jsonl) as prose, for the two human reports: `sbx inspect` (text)
 * and `sbx inspect --html`.  Every function returns a malloc'd UTF-8
 * string built from the record's values, NOT escaped: the caller escapes
 * it for its medium (sbx_escape_display for a terminal, sbx_html_escape
 * for HTML).  The record is hostile input (the jail chose some of its
 * strings): nothing here interprets it beyond reading values.
 */
#ifndef SBX_RECORD_TEXT_H
#define SBX_RECORD_TEXT_H

#include <jansson.h>
#include <stddef.h>

#include "record.h"

/* "exit 3", "killed by signal 9 (SIGKILL), exit 137", "timed out (time
 * limit), exit 124", "command not found, exit 127: 'x': not found on the
 * jail's PATH (...)", ... or NULL when the record has no exit yet. */
char *sbx_rec_exit_text(const struct sbx_record *r);

/* The writable layers' cap at the end: "1.2 MiB of 19.4 MiB, 14 of 2560
 * inodes (full at the end)". */
char *sbx_rec_disk_text(const struct sbx_record_disk *d);

/* "wall 12 ms, cpu 3.0 ms, peak memory 1.5 MiB, at most 2 processes,
 * 6 B of output, disk 1.2 MiB of 19.4 MiB ..." (the parts the record
 * has). */
char *sbx_rec_resources_text(const struct sbx_record *r);

/* The root and its writable layers: "the host's root, read-only; copy-on-
 * write: /root, /work (changes in this sandbox)", "image busybox.tar.gz
 * with a private copy-on-write layer", ... */
char *sbx_rec_root_text(const struct sbx_record *r);

/* One [filesystem] entry of policy.filesystem.mounts: its kind in words
 * into *kind ("tmpfs", "bind rw", "read-only bind", "copy-on-write",
 * "hidden") and what it is ("/work from /home/me/project, written as its
 * owner uid 1000"). */
char *sbx_rec_mount_text(const struct sbx_record_mount *m, const char **kind);

/* "API_KEY (env var), TOKEN (file /run/secrets/TOKEN); absent (optional):
 * X", or "none". */
char *sbx_rec_secrets_text(const struct sbx_record *r);

/* One policy.limits entry's value in words: "4.0 GiB" (memory, disk,
 * fsize), "90s" (time), "1024", "-" (none). */
char *sbx_rec_limit_value(const char *name, const json_t *limit);
/* "memory 4 GiB (cgroup v1), pids 1024 (cgroup v1), core 0 (rlimit)", or
 * "none". */
char *sbx_rec_limits_text(const struct sbx_record *r);

/* A run-log event's details as one line (without its time and type):
 * "user: root inside ...; network: none ...", "forwarded SIGTERM",
 * "ALLOWED api.example.com:443 (allowed by 'api.example.com')", ... */
char *sbx_rec_event_text(const json_t *event);

/* The member at "a.b.c" of nested objects (a run-log event), or NULL. */
const json_t *sbx_rec_get(const json_t *root, const char *path);

#endif
