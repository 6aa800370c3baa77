/* SPDX-License-Identifier: MIT */
/*
 * lib/state/report.h - `sbx inspect --html`: one self-contained HTML file (inline
 * CSS and a little JS, no external assets) with the summary, the policy
 * answers, the timeline, the output, the network events and the changes.
 * Every string is HTML-escaped; invalid UTF-8 and control characters are
 * shown as \xNN.
 */
#ifndef SBX_REPORT_H
#define SBX_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "state.h"
#include "util.h"

/* Limits of what goes into the page (the rest is summarised). */
#define SBX_REPORT_OUTPUT_MAX  (256u << 10)
#define SBX_REPORT_CHANGES_MAX 20000u

/*
 * What `sbx diff` says of the sandbox (the caller makes it with
 * lib/review/review.h): the patch of its copy-on-write host directories
 * and the files in it that run code on the host later, for the Changes
 * section.
 */
struct sbx_report_review {
	const char *diff;		/* the patch, or NULL */
	const struct sbx_strv *flagged; /* "PATH: why" lines, or NULL */
	const char *error;		/* why there is no patch, or NULL */
};

/* Write the report of sb (events: its log.jsonl, an array; review: may be
 * NULL) to file. */
int sbx_report_write(const struct sbx_sandbox *sb, const json_t *events, const char *state_label,
		     const struct sbx_report_review *review, const char *file, struct sbx_err *err);

/* HTML-escape len bytes to f; multiline keeps \n and \t as they are. */
void sbx_html_escape(FILE *f, const char *s, size_t len, bool multiline);

#endif
