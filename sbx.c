/* SPDX-License-Identifier: MIT */
/*
 * sbx.c - main: global options and the command table.  The dispatcher does
 * what every command shares: --help for the commands whose usage it has,
 * the context (global options, the state directory opened on first use and
 * closed here), and printing the command's error once.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "fault.h"
#include "proc.h"
#include "state.h"
#include "util.h"

enum {
	CMD_HIDDEN = 1 << 0,	   /* not in the usage or the completions' list */
	CMD_STATE = 1 << 1,	   /* uses the state directory (sbx_cmd_state, closed here) */
	CMD_STATE_CREATE = 1 << 2, /* ... and creates it when it is not there yet */
	CMD_RUNS = 1 << 3,	   /* exits with its command's status (125: sbx failed) */
};

struct sbx_command {
	const char *name;
	int (*fn)(struct sbx_cmd_ctx *ctx, int argc, char **argv);
	const char *summary;
	unsigned flags;
	const char *usage; /* --help answered here; NULL: by the command (subcommands,
			    * or options that may come after the payload's) */
};

/* Sorted by name; matched exactly (no prefix matching). */
static const struct sbx_command commands[] = {
    {"apply", cmd_apply, "write a sandbox's changes into the host directories", CMD_STATE,
     sbx_usage_apply},
    {"destroy", cmd_destroy, "kill and remove sandboxes", CMD_STATE, sbx_usage_destroy},
    {"diff", cmd_diff, "show a sandbox's changes to the host directories as a patch", CMD_STATE,
     sbx_usage_diff},
    {"doctor", cmd_doctor, "check which isolation layers this host gives sbx", CMD_STATE,
     sbx_usage_doctor},
    {"exec", cmd_exec, "run a command in an existing sandbox", CMD_STATE | CMD_RUNS, NULL},
    {"export", cmd_export, "write a sandbox's change set as a tarball", CMD_STATE,
     sbx_usage_export},
    {"image", cmd_image, "unpack a rootfs tarball into the image cache",
     CMD_HIDDEN | CMD_STATE | CMD_STATE_CREATE, sbx_usage_image},
    {"inspect", cmd_inspect, "show what a sandbox ran, reached, changed and why it ended",
     CMD_STATE, sbx_usage_inspect},
    {"logs", cmd_logs, "print a sandbox's output, or follow it (-f)", CMD_STATE, sbx_usage_logs},
    {"profile", cmd_profile, "list, show and check isolation profiles", 0, NULL},
    {"proxy", cmd_proxy, "run the allowlist proxy on the host (testing)", CMD_HIDDEN,
     sbx_usage_proxy},
    {"ps", cmd_ps, "list sandboxes", CMD_STATE, sbx_usage_ps},
    {"run", cmd_run, "run a command in a new sandbox", CMD_RUNS, NULL},
    {"stop", cmd_stop, "end running sandboxes (SIGTERM, a grace time, SIGKILL)", CMD_STATE,
     sbx_usage_stop},
    {"wait", cmd_wait, "wait for a sandbox to end; exit with its status", CMD_STATE,
     sbx_usage_wait},
};

static const char usage_text[] =
    "usage: sbx [--state-dir DIR] COMMAND [ARGS...]\n"
    "\n"
    "Run commands in ephemeral, namespaced jails built from isolation profiles.\n"
    "\n"
    "Commands:\n";

static void usage(FILE *out)
{
	fputs(usage_text, out);
	for (size_t i = 0; i < SBX_ARRAY_SIZE(commands); i++)
		if (!(commands[i].flags & CMD_HIDDEN))
			fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fputs("\nGlobal options:\n"
	      "  --state-dir DIR  sandbox state (default /var/lib/sbx as root,\n"
	      "                   $XDG_STATE_HOME/sbx otherwise; env SBX_STATE_DIR)\n"
	      "  --version        print the version\n"
	      "  --help           this text; 'sbx help COMMAND' for a command\n"
	      "\nEnvironment: SBX_STATE_DIR, SBX_CACHE_DIR, NO_COLOR.\n"
	      "See sbx(1) and sbx-profile(5).\n",
	      out);
}

static const struct sbx_command *find_command(const char *name)
{
	for (size_t i = 0; i < SBX_ARRAY_SIZE(commands); i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

static int unknown_command(const char *name)
{
	const char *names[SBX_ARRAY_SIZE(commands)];
	size_t n = 0;
	const char *near;

	for (size_t i = 0; i < SBX_ARRAY_SIZE(commands); i++)
		if (!(commands[i].flags & CMD_HIDDEN))
			names[n++] = commands[i].name;
	near = sbx_closest(name, names, n);
	if (near)
		sbx_errorf("unknown command '%s' (did you mean '%s'?)", name, near);
	else
		sbx_errorf("unknown command '%s' (see 'sbx --help')", name);
	return SBX_EXIT_USAGE;
}

static int run_command(struct sbx_cmd_ctx *ctx, const struct sbx_command *c, int argc, char **argv)
{
	int r;

	if (c->usage && sbx_cmd_wants_help(argc, argv, c->usage))
		return 0;
	/* getopt state is shared: reset it for the subcommand. */
	optind = 0;
	ctx->st.state_fd = ctx->st.sandboxes_fd = -1;
	ctx->state_use = c->flags & CMD_STATE_CREATE ? SBX_CMD_STATE_CREATE
			 : c->flags & CMD_STATE	     ? SBX_CMD_STATE_OPEN
						     : SBX_CMD_STATE_NONE;
	r = c->fn(ctx, argc, argv);
	/* What went to stdout must have reached it: a full disk or an I/O
	 * error is one line and a failure, never 0 with half a patch (`sbx
	 * diff ID >fix.patch`).  sbx run and exec say it for the command's
	 * own output themselves; here it is their -d line. */
	if ((fflush(stdout) != 0 || ferror(stdout)) && !ctx->err.msg[0]) {
		sbx_err_set(&ctx->err, errno ? errno : EIO, "cannot write to standard output");
		if (r == 0)
			r = (c->flags & CMD_RUNS) ? SBX_EXIT_SBX : SBX_EXIT_FAIL;
	}
	if (ctx->err.msg[0])
		sbx_print_err(&ctx->err);
	if (ctx->st_open)
		sbx_state_close(&ctx->st);
	return r;
}

int main(int argc, char **argv)
{
	struct sbx_cmd_ctx ctx = {
	    .state_dir = getenv("SBX_STATE_DIR"),
	    .cache_dir = getenv("SBX_CACHE_DIR"),
	    .color = isatty(STDERR_FILENO) && !getenv("NO_COLOR"),
	};
	int i = 1;

	sbx_proc_title_init(argc, argv);
	for (; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			usage(stdout);
			return 0;
		} else if (strcmp(a, "--version") == 0) {
			printf("sbx %s\n", SBX_VERSION);
			return 0;
		} else if (strcmp(a, "--list-commands") == 0) {
			for (size_t k = 0; k < SBX_ARRAY_SIZE(commands); k++)
				if (!(commands[k].flags & CMD_HIDDEN))
					printf("%s\n", commands[k].name);
			return 0;
		} else if (strcmp(a, "--state-dir") == 0) {
			if (i + 1 >= argc) {
				fprintf(stderr, "sbx: option '--state-dir' needs a directory\n");
				return SBX_EXIT_USAGE;
			}
			ctx.state_dir = argv[++i];
		} else if (strncmp(a, "--state-dir=", 12) == 0) {
			ctx.state_dir = a + 12;
		} else {
			sbx_errorf("unknown option '%s' (see 'sbx --help')", a);
			return SBX_EXIT_USAGE;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return SBX_EXIT_USAGE;
	}
	if (strcmp(argv[i], "help") == 0) {
		const struct sbx_command *c;
		char *hargv[] = {NULL, (char *)"--help", NULL};

		if (i + 1 >= argc) {
			usage(stdout);
			return 0;
		}
		c = find_command(argv[i + 1]);
		if (!c)
			return unknown_command(argv[i + 1]);
		hargv[0] = argv[i + 1];
		return run_command(&ctx, c, 2, hargv);
	}
	const struct sbx_command *c = find_command(argv[i]);

	if (!c)
		return unknown_command(argv[i]);
	int rc = run_command(&ctx, c, argc - i, argv + i);

	/* sbx run handed its memory to its purger, which takes it over once
	 * this process has exited (lib/state/trash.c): no exit handler may run
	 * after the mark, so the output is flushed first and _exit() ends it. */
	if (sbx_state_handoff_pending()) {
		fflush(NULL);
		sbx_fault_point("before-handoff-exit");
		sbx_state_handoff_exit();
		_exit(rc);
	}
	return rc;
}
