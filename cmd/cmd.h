/* SPDX-License-Identifier: MIT */
/* cmd/cmd.h - subcommands and the helpers they share. */
#ifndef SBX_CMD_H
#define SBX_CMD_H

#include <stdbool.h>

#include "state.h"
#include "util.h"

/* One function per subcommand, in cmd/<name>.c. */
int cmd_destroy(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_exec(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_image(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_profile(int argc, char **argv);
int cmd_proxy(int argc, char **argv);
int cmd_ps(int argc, char **argv);
int cmd_run(int argc, char **argv);

/* Exit statuses (README.md "Exit status", sbx(1) EXIT STATUS). */
enum {
	SBX_EXIT_OK = 0,
	SBX_EXIT_FAIL = 1,  /* other subcommands: failure */
	SBX_EXIT_USAGE = 2, /* other subcommands: usage error */
	SBX_EXIT_TIMEOUT = 124,
	SBX_EXIT_SBX = 125, /* run/exec: sbx itself failed */
	SBX_EXIT_NOEXEC = 126,
	SBX_EXIT_NOTFOUND = 127,
};

/* Global options, parsed by sbx.c before the subcommand. */
struct sbx_globals {
	const char *state_dir; /* --state-dir or $SBX_STATE_DIR (may be NULL) */
	const char *cache_dir; /* $SBX_CACHE_DIR (may be NULL) */
	bool color;	       /* stderr is a terminal and NO_COLOR unset */
};
extern struct sbx_globals sbx_globals;

/* Print "sbx: <msg>" (and errno text) on stderr. */
void sbx_print_err(const struct sbx_err *err);
void sbx_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sbx_warnf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Open the state directory once (global options applied). */
int sbx_cmd_state(struct sbx_state *st, bool create, struct sbx_err *err);

/*
 * Hide sbx's state and cache directories from the jail (masks, applied
 * last): records, logs and other sandboxes' layers are sbx's, and a jail
 * whose host-root, home or working-directory view contains them must not
 * read them.
 */
struct sbx_config;
int sbx_cmd_hide_state(struct sbx_config *cfg, const struct sbx_state *st, struct sbx_err *err);

/*
 * " (did you mean '--memory'?)" for an unknown long option arg ("--memroy"
 * or "--memroy=1g") close to one of opts, else "": to append to the
 * "unknown option" line, as profile keys do.
 */
struct option;
const char *sbx_cmd_option_hint(const char *arg, const struct option *opts, char *buf, size_t len);

/*
 * The one line for an option getopt did not know (arg, e.g. argv[optind -
 * 1]): "unknown option '--memroy' (did you mean '--memory'?) (see 'sbx
 * CMD --help')".
 */
void sbx_cmd_unknown_option(const char *cmd, const char *arg, const struct option *opts);

/* Standard --help handling: prints usage to stdout, returns true if asked. */
bool sbx_cmd_wants_help(int argc, char **argv, const char *usage);

#endif
