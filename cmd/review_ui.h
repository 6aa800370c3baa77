/* SPDX-License-Identifier: MIT */
/* cmd/review_ui.h - a sandbox's change set for `sbx inspect` (cmd/diff.c). */
#ifndef SBX_CMD_REVIEW_UI_H
#define SBX_CMD_REVIEW_UI_H

#include <jansson.h>

#include "state.h"
#include "util.h"

/* What `sbx diff` would say of sb, made once for inspect's three forms. */
struct review_view {
	char *diff;		 /* the patch (text, .git/ left out), or NULL */
	struct sbx_strv lines;	 /* "M path  (flags)" per path, for the text report */
	struct sbx_strv flagged; /* "path: runs code on the host later (flags)" */
	json_t *json;		 /* the entries as `sbx diff --json` has them */
	char *error;		 /* why there is none (a layer in memory while running) */
};
void review_view_make(const struct sbx_sandbox *sb, bool want_diff, struct review_view *v);
void review_view_free(struct review_view *v);

#endif
