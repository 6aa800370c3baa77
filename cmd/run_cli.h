/* SPDX-License-Identifier: MIT */
/*
 * cmd/run_cli.h - sbx run's command line: shared by run.c (the call),
 * run_args.c (the options) and run_human.c (the run log's human lines).
 */
#ifndef SBX_CMD_RUN_CLI_H
#define SBX_CMD_RUN_CLI_H

#include <jansson.h>
#include <stdbool.h>

#include "config.h"
#include "image_ui.h"
#include "run.h"

/* One option that maps to a profile key, applied in command-line order. */
struct run_set {
	const char *section, *key;
	char *value;
	char *key_owned; /* --secret NAME=...: key is this NAME */
};

struct run_args {
	const char *profile;
	const char *name;
	bool keep, rm, quiet, detach;
	const char *log_json;
	struct run_set *sets;
	size_t n_sets;
	char **argv; /* the payload command (NULL-terminated) */
	char *title; /* sbx's own argv strings (for init's title) */
	size_t title_len;
	/* with a title: argv, copied out of the strings init overwrites
	 * before the command starts (its execve reads them after that) */
	char **argv_owned;
};

/* Parse `sbx run` options (no side effects; unit-testable). 0, or -EINVAL
 * with err set; 1 when --help was printed. */
int run_parse_args(int argc, char **argv, struct run_args *a, struct sbx_err *err);
void run_args_free(struct run_args *a);
/* err (from sbx_profile_set of s) in the words of the option that set it:
 * "--memory '1': memory limit '1' is too small ...". */
void run_option_error(const struct run_set *s, struct sbx_err *err);

/* run_human.c: event lines held while the command has the terminal */
struct run_held {
	char **lines;
	size_t *count; /* how many times each */
	size_t n, dropped;
};

struct run_ctx {
	struct run_args args;
	struct sbx_config cfg;
	struct sbx_cmd_image_ui ui;
	struct sbx_run_result res; /* filled by sbx_run() as it goes */
	bool color;		   /* sbx_cmd_ctx's */
	char phases[256];	   /* human timings line being built */
	bool stop_said;		   /* the stop timeout was explained once */
	bool seccomp_hinted;	   /* what a blocked call means was said once */
	int detach_fd;		   /* -d: the pipe to the caller, -1 once it returned */
	bool holding;		   /* the command has the terminal: event lines held */
	struct run_held held;
};

/* run_human.c: a run-log event as the "sbx: ..." lines on stderr. */
void run_human(const json_t *ev, void *data);
void run_human_quiet(const json_t *ev, void *data);
/* The event lines held while the command had the terminal, said now. */
void run_human_held(struct run_ctx *c);
/* The warnings of x's "git_changed" and "watch_changed" (sbx run's exit,
 * sbx exec's end): what the host runs later, made or changed. */
void run_human_later(const json_t *x);

#endif
