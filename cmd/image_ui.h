/* SPDX-License-Identifier: MIT */
/*
 * cmd/image_ui.h - how commands show an image unpack: a progress bar on stderr
 * (only when it is a terminal and the tarball is larger than 64 MiB; colour
 * only when the caller says so: stderr a terminal, NO_COLOR unset) and the unpacker's
 * warnings (escaped, the first SBX_IMAGE_UI_MAX_WARN shown, then a count;
 * set-ID bits cleared and device nodes skipped are each summed up in one
 * line).
 *
 *	struct sbx_cmd_image_ui ui;
 *	sbx_cmd_image_ui_setup(&ui, &opts, tarball, color); // sets progress/warn/cb_data
 *	r = sbx_image_prepare(tarball, &opts, &dir, &stats, &err);
 *	sbx_cmd_image_ui_finish(&ui);			// clears the bar line
 */
#ifndef SBX_CMD_IMAGE_UI_H
#define SBX_CMD_IMAGE_UI_H

#include <stdbool.h>
#include <stdint.h>

#include "image.h"

#define SBX_IMAGE_UI_MAX_WARN 20
#define SBX_IMAGE_UI_BAR_MIN  (64ULL << 20)

struct sbx_cmd_image_ui {
	bool bar; /* draw a progress bar */
	bool color;
	bool drawn; /* a bar is on the current line */
	bool quiet; /* no warnings either */
	uint64_t last_ns;
	uint64_t warnings;
	/* What every distribution image has a few of, set-ID bits cleared and
	 * device nodes skipped: one line each, with the first paths, at the
	 * end. */
	struct sbx_cmd_image_ui_sum {
		uint64_t n;
		char paths[256];
	} setid, devices;
};

void sbx_cmd_image_ui_setup(struct sbx_cmd_image_ui *ui, struct sbx_image_opts *o,
			    const char *tarball, bool color);
void sbx_cmd_image_ui_finish(struct sbx_cmd_image_ui *ui);

#endif
