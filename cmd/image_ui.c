/* SPDX-License-Identifier: MIT */
/*
 * cmd/image_ui.c - the image unpack's progress bar and warnings on stderr,
 * shared by `sbx image unpack` and `sbx run` (see image_ui.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "image_ui.h"

static void ui_clear(struct sbx_cmd_image_ui *ui)
{
	if (ui->drawn)
		fprintf(stderr, "\r%78s\r", "");
	ui->drawn = false;
}

static void ui_progress(uint64_t done, uint64_t total, void *data)
{
	struct sbx_cmd_image_ui *ui = data;
	char bar[31];
	unsigned pct, fill;
	uint64_t now = sbx_now_ns();

	if (!ui->bar || !total || (done < total && now - ui->last_ns < 100000000ULL))
		return;
	ui->last_ns = now;
	pct = done >= total ? 100 : (unsigned)(done * 100 / total);
	fill = pct * 30 / 100;
	memset(bar, '#', fill);
	memset(bar + fill, '.', 30 - fill);
	bar[30] = '\0';
	fprintf(stderr, "\rsbx: unpacking %s[%s]%s %3u%% %llu/%llu MiB",
		ui->color ? "\033[36m" : "", bar, ui->color ? "\033[0m" : "", pct,
		(unsigned long long)(done >> 20), (unsigned long long)(total >> 20));
	fflush(stderr);
	ui->drawn = true;
}

/* Counts one entry of a summed-up kind, keeping the first three paths. */
static void ui_sum(struct sbx_cmd_image_ui_sum *sum, const char *path)
{
	size_t n = strlen(sum->paths);

	if (sum->n++ < 3 && n + 4 < sizeof(sum->paths)) {
		char *p = sbx_escape_display(path);

		snprintf(sum->paths + n, sizeof(sum->paths) - n, "%s%s", n ? ", " : "", p);
		free(p);
	}
}

static void ui_warn(const char *path, const char *what, void *data)
{
	struct sbx_cmd_image_ui *ui = data;
	char *p;

	if (ui->quiet)
		return;
	if (strcmp(what, "setuid/setgid bits cleared") == 0) {
		ui_sum(&ui->setid, path);
		return;
	}
	if (strcmp(what, "character device skipped") == 0 ||
	    strcmp(what, "block device skipped") == 0) {
		ui_sum(&ui->devices, path);
		return;
	}
	if (++ui->warnings > SBX_IMAGE_UI_MAX_WARN)
		return;
	ui_clear(ui);
	p = sbx_escape_display(path);
	sbx_warnf("image entry '%s': %s", p, what);
	free(p);
}

void sbx_cmd_image_ui_setup(struct sbx_cmd_image_ui *ui, struct sbx_image_opts *o,
			    const char *tarball, bool color)
{
	struct stat sb;

	*ui = (struct sbx_cmd_image_ui){.color = color};
	ui->bar = isatty(STDERR_FILENO) && stat(tarball, &sb) == 0 && S_ISREG(sb.st_mode) &&
		  (uint64_t)sb.st_size > SBX_IMAGE_UI_BAR_MIN;
	o->progress = ui_progress;
	o->warn = ui_warn;
	o->cb_data = ui;
}

void sbx_cmd_image_ui_finish(struct sbx_cmd_image_ui *ui)
{
	ui_clear(ui);
	if (!ui->quiet && ui->devices.n)
		sbx_warnf("%llu device node%s in the image skipped (%s%s): the jail's /dev is "
			  "made by sbx",
			  (unsigned long long)ui->devices.n, ui->devices.n == 1 ? "" : "s",
			  ui->devices.paths, ui->devices.n > 3 ? ", ..." : "");
	if (!ui->quiet && ui->setid.n)
		sbx_warnf(
		    "%llu image entr%s had their setuid/setgid bits cleared (%s%s): the cache "
		    "never holds set-ID files",
		    (unsigned long long)ui->setid.n, ui->setid.n == 1 ? "y" : "ies",
		    ui->setid.paths, ui->setid.n > 3 ? ", ..." : "");
	if (!ui->quiet && ui->warnings > SBX_IMAGE_UI_MAX_WARN)
		sbx_warnf("%llu more image warnings not shown",
			  (unsigned long long)(ui->warnings - SBX_IMAGE_UI_MAX_WARN));
}
