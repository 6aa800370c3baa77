/* SPDX-License-Identifier: MIT */
/*
 * lib/profile/secrets.h - secret values for a run, and the output redactor.
 *
 * `[secrets] NAME = env:VAR | file:PATH [as env | as file]` (lib/profile/config.h)
 * is resolved on the host before the jail starts.  Values live only in
 * this process's memory (mlock()ed when the limit allows, wiped with
 * explicit_bzero() on free) and reach the jail only as an environment
 * variable or as /run/secrets/NAME.  They never reach the record, the run
 * log, inspect, the HTML report or export: only sbx_secrets_describe()
 * (names, sources, injection) goes there.
 *
 * Rules (errors name the secret and its source, never the value):
 *   - env:VAR  the variable of sbx's own environment; unset is an error
 *   - file:PATH  a regular file of at most 1 MiB; one trailing "\n" (or
 *     "\r\n") is removed, as editors add one
 *   - a source that is missing is an error unless the reference ends in
 *     '?' (optional): then the secret is skipped
 *   - an empty value, or one shorter than SBX_SECRET_MIN_LEN bytes, is an
 *     error: it could not be redacted from the output without mangling it
 *   - a value injected as env must not contain a NUL byte
 *   - a value the proxy injects ("inject HOST,...") must be one line of
 *     printable ASCII (it goes into HTTP headers)
 *
 * A secret injected by the proxy reaches the jail only as its placeholder,
 * in the env var or the file; the value itself only goes to the proxy
 * (lib/net/proxy_tls.c), which puts it into HTTPS requests to its hosts.
 */
#ifndef SBX_SECRETS_H
#define SBX_SECRETS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "config.h"
#include "util.h"

#define SBX_SECRET_MIN_LEN 4
#define SBX_SECRET_MAX_LEN (1024 * 1024)

struct sbx_secret_value {
	char *name;
	enum sbx_secret_inject inject;
	char *value; /* NUL-terminated for convenience; may contain NULs (file) */
	size_t len;
	bool locked; /* mlock() succeeded */
	/* "inject HOST,...": the proxy puts the value into requests to these
	 * hosts (borrowed from the config); the jail gets placeholder instead
	 * ("sbx-placeholder-" and 32 random hex digits, unique to the run). */
	const struct sbx_strv *hosts;
	char placeholder[49];
};

struct sbx_secrets {
	struct sbx_secret_value *v; /* the resolved ones (optional missing skipped) */
	size_t n;
};

/* Resolve every secret of the config; on error nothing is kept. */
int sbx_secrets_resolve(struct sbx_secrets *s, const struct sbx_config *c, struct sbx_err *err);
/* Wipe and free every value. */
void sbx_secrets_free(struct sbx_secrets *s);

/*
 * Add "NAME=value" for each secret injected as env (the placeholder for a
 * secret the proxy injects).  The strings hold
 * values: free them with sbx_secrets_wipe_strv(), not sbx_strv_free().
 */
void sbx_secrets_env(const struct sbx_secrets *s, struct sbx_strv *env);
/* explicit_bzero() every string, then free the vector. */
void sbx_secrets_wipe_strv(struct sbx_strv *v);

/* Does any secret need /run/secrets? */
bool sbx_secrets_has_files(const struct sbx_secrets *s);
/* What the jail gets for v: its value, or the placeholder; length in *len. */
const char *sbx_secret_jail_value(const struct sbx_secret_value *v, size_t *len);
/* Does any secret get injected by the proxy? */
bool sbx_secrets_has_proxy(const struct sbx_secrets *s);

/*
 * The record's description, no values:
 *   [{"name": "API_KEY", "source": "env" | "file", "ref": "VAR" | "/path",
 *     "inject": "env" | "file", "path": "/run/secrets/API_KEY" (file only),
 *     "proxy_hosts": ["api.example.com"], "jail_holds": "value" | "placeholder",
 *     "optional": bool, "present": bool (when resolved is given)}]
 * resolved may be NULL (describe the profile only).
 */
json_t *sbx_secrets_describe(const struct sbx_config *c, const struct sbx_secrets *resolved);

/*
 * Streaming redactor for output.log: exact occurrences of each value are
 * replaced by "[secret NAME]".  Leftmost match first; at one position the
 * longest value wins (so a value that contains another is replaced
 * whole).  Correct across chunk boundaries: up to max_len - 1 bytes are
 * held back until more data or sbx_redact_flush() decides them.
 */
typedef int (*sbx_redact_write_fn)(void *ctx, const void *buf, size_t len);

struct sbx_redact_pat {
	const char *value; /* borrowed from the sbx_secrets */
	size_t len;
	char *label; /* "[secret NAME]" */
};

struct sbx_redact {
	struct sbx_redact_pat *p; /* sorted longest first */
	size_t n;
	size_t max_len;
	unsigned char first[256]; /* first bytes that may start a value */
	char *hold;		  /* held-back tail, < max_len bytes */
	size_t hold_len;
	uint64_t replaced; /* occurrences replaced so far */
};

/* The secrets must outlive the redactor. */
void sbx_redact_init(struct sbx_redact *r, const struct sbx_secrets *s);
/* Feed output; write_fn gets the redacted bytes (its error is returned). */
int sbx_redact_feed(struct sbx_redact *r, const void *buf, size_t len, sbx_redact_write_fn fn,
		    void *ctx);
/* End of output: write what is held back. */
int sbx_redact_flush(struct sbx_redact *r, sbx_redact_write_fn fn, void *ctx);
void sbx_redact_free(struct sbx_redact *r); /* wipes the held tail */

#endif
