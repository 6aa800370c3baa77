/* SPDX-License-Identifier: MIT */
/*
 * cmd/run.c - sbx run [options] [--] CMD [ARG...]
 *
 * Options, then the library: the options that mirror profile keys go
 * through sbx_profile_set() after the profile is loaded (one code path, the
 * command line wins); sbx_run() (lib/run/run.h) does the rest, and the run
 * log's human lines are printed by cmd/run_human.c.
 */
#include <getopt.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "image_ui.h"
#include "profile.h"
#include "run_cli.h"

static int load_config(struct run_ctx *c, struct sbx_err *err)
{
	struct sbx_profile_vars vars;
	int r;

	sbx_profile_vars_from_process(&vars);
	r = sbx_profile_load(&c->cfg, c->args.profile ? c->args.profile : "default", &vars, err);
	for (size_t i = 0; r == 0 && i < c->args.n_sets; i++) {
		struct run_set *s = &c->args.sets[i];

		r = sbx_profile_set(&c->cfg, s->section, s->key, s->value, err);
		if (r < 0)
			run_option_error(s, err);
	}
	if (r == 0) {
		sbx_config_drop_host_only(&c->cfg);
		sbx_config_drop_covered_overlays(&c->cfg);
		r = sbx_config_check_sources(&c->cfg, err);
	}
	if (r == 0 && c->cfg.rootfs_required && !c->cfg.rootfs)
		r = sbx_err_set(err, 0, "profile '%s' needs --rootfs TARBALL|DIR",
				c->cfg.profile_name ? c->cfg.profile_name : "?");
	return r;
}

static void image_begin(struct sbx_image_opts *o, const char *spec, void *data)
{
	struct run_ctx *c = data;

	/* The progress bar (a terminal, a large tarball) and the unpacker's
	 * warnings, as `sbx image unpack` shows them; none with -q. */
	sbx_cmd_image_ui_setup(&c->ui, o, spec, c->color);
	c->ui.quiet = c->ui.quiet || c->args.quiet;
	c->ui.bar = c->ui.bar && !c->args.quiet;
}

static void image_end(void *data)
{
	struct run_ctx *c = data;

	sbx_cmd_image_ui_finish(&c->ui);
}

static void say(const char *line, void *data)
{
	(void)data;
	sbx_errorf("%s", line);
}

int cmd_run(struct sbx_cmd_ctx *ctx, int argc, char **argv)
{
	struct run_ctx c = {0};
	struct sbx_err err = {0};
	_cleanup_free_ char *cwd = getcwd(NULL, 0);
	int r;

	sbx_config_init(&c.cfg);
	c.color = ctx->color;
	signal(SIGPIPE, SIG_IGN);
	r = run_parse_args(argc, argv, &c.args, &err);
	if (r == 0)
		r = load_config(&c, &err);
	if (r == 0) {
		struct sbx_run_opts o = {
		    .cfg = &c.cfg,
		    .state_dir = ctx->state_dir,
		    .cache_dir = ctx->cache_dir,
		    .name = c.args.name,
		    .keep = c.args.keep,
		    .rm = c.args.rm,
		    .quiet = c.args.quiet,
		    .log_json = c.args.log_json,
		    .argv = c.args.argv,
		    .title = c.args.title,
		    .title_len = c.args.title_len,
		    .cwd = cwd,
		    .human = c.args.quiet ? NULL : run_human,
		    .say = say,
		    .image_begin = image_begin,
		    .image_end = image_end,
		    .data = &c,
		};

		r = sbx_run(&o, &c.res);
	} else if (r > 0) {
		r = 0;
	} else {
		/* Nothing was made: no sandbox, no record. */
		r = sbx_cmd_fail(ctx, &err, SBX_EXIT_SBX);
	}
	sbx_config_free(&c.cfg);
	run_args_free(&c.args);
	return r;
}
