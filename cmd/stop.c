/* SPDX-License-Identifier: MIT */
/*
 * cmd/stop.c - sbx stop [--time DURATION] SANDBOX... and sbx wait SANDBOX:
 * clients of a running sandbox's control socket (lib/run/control.h).  The
 * supervisor does the stopping (SIGTERM to the command, the jail killed
 * after the grace time) and answers once the persist policy was applied.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "control.h"
#include "lifecycle.h"

const char sbx_usage_stop[] =
    "usage: sbx stop [--time DURATION] SANDBOX...\n"
    "\n"
    "End running sandboxes: SIGTERM to the command, then, if the sandbox has\n"
    "not ended within the grace time, SIGKILL to its whole jail. The persist\n"
    "policy then applies as at any end (a sandbox stopped under persist =\n"
    "on-failure is removed; --keep or persist = always keep it). Returns\n"
    "when each one is kept or gone, printing one line per sandbox.\n"
    "\n"
    "  -t, --time DURATION   the grace time (default 10s; 0: kill at once)\n"
    "\n"
    "Exit status: 0 when every sandbox was stopped or had already ended, 1\n"
    "otherwise.\n";

const char sbx_usage_wait[] =
    "usage: sbx wait [-q] SANDBOX\n"
    "\n"
    "Wait until a sandbox has ended (its persist policy applied) and exit with\n"
    "its exit status (sbx run's: the command's, 128+N, 124...). An ended,\n"
    "kept sandbox returns at once with its recorded status.\n"
    "\n"
    "  -q, --quiet   no line on stderr\n";

/* "exited, exit 4; kept"; after "stopped", a reason that only says
 * stopped again is left out ("exit 143; removed"). */
static const char *end_text(const struct sbx_control_reply *r, bool stopped, char *buf, size_t len)
{
	bool same = stopped && !strcmp(r->reason, "stopped");

	snprintf(buf, len, "%s%sexit %d; %s", same ? "" : r->reason, same ? "" : ", ", r->exit_code,
		 r->kept ? "kept" : "removed");
	return buf;
}

/* A running sandbox, or NULL with *code set (printed why). */
static int open_ref(struct sbx_state *st, const char *ref, struct sbx_sandbox *sb,
		    const char **state)
{
	struct sbx_err err = {0};
	int code = 0;

	if (lc_open(st, ref, false, sb, &err) < 0) {
		if (err.errnum == ENOENT || !err.msg[0])
			sbx_errorf("no sandbox '%s' (see 'sbx ps -a')", ref);
		else
			sbx_print_err(&err);
		return -1;
	}
	*state = sbx_sandbox_state(sb, &code);
	return 0;
}

int cmd_stop(struct sbx_cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"time", required_argument, NULL, 't'},
	    {NULL, 0, NULL, 0},
	};
	uint64_t grace = 10000;
	struct sbx_err err = {0};
	struct sbx_state *st;
	int opt, rc = 0, n;
	int *fds;

	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":t:", longopts, NULL)) != -1) {
		if (opt == 't') {
			if (sbx_parse_duration(optarg, &grace, &err) < 0 &&
			    strcmp(optarg, "0") != 0)
				return sbx_cmd_usage_error(ctx, "stop: --time '%s': %s", optarg,
							   err.msg);
			if (!strcmp(optarg, "0"))
				grace = 0;
		} else {
			return sbx_cmd_bad_option(ctx, "stop", opt, argv[optind - 1], longopts);
		}
	}
	if (optind >= argc)
		return sbx_cmd_usage_error(ctx, "stop: no sandbox given (usage: sbx stop "
						"[--time DURATION] SANDBOX...)");
	st = sbx_cmd_state(ctx, &err);
	if (!st)
		return sbx_cmd_fail(ctx, &err, SBX_EXIT_FAIL);
	n = argc - optind;
	fds = sbx_xcalloc((size_t)n, sizeof(*fds));
	/* every request first, so that they all stop at once */
	for (int i = 0; i < n; i++) {
		const char *ref = argv[optind + i], *state = NULL;
		struct sbx_sandbox sb;

		fds[i] = -1;
		if (open_ref(st, ref, &sb, &state) < 0) {
			rc = SBX_EXIT_FAIL;
			sbx_sandbox_close(&sb);
			continue;
		}
		if (strcmp(state, "running") && strcmp(state, "created")) {
			char label[64];

			printf("%s: not running (%s)\n", ref,
			       lc_state_label(&sb, label, sizeof(label)));
			if (!strcmp(state, "lost")) {
				sbx_errorf(
				    "%s: lost (its supervisor died): 'sbx destroy %s' removes it",
				    ref, ref);
				rc = SBX_EXIT_FAIL;
			}
			sbx_sandbox_close(&sb);
			continue;
		}
		fds[i] = sbx_control_request(&sb, SBX_CONTROL_STOP, grace, NULL, 0, &err);
		if (fds[i] < 0) {
			/* it ended meanwhile, or its supervisor does not listen */
			if (sbx_sandbox_is_running(st, sb.id)) {
				sbx_print_err(&err);
				rc = SBX_EXIT_FAIL;
			} else {
				printf("%s: not running (ended)\n", ref);
			}
		}
		sbx_sandbox_close(&sb);
	}
	for (int i = 0; i < n; i++) {
		struct sbx_control_reply rep;
		char buf[128];

		if (fds[i] < 0)
			continue;
		if (sbx_control_reply(fds[i], -1, &rep) == 0 && rep.ok) {
			printf("%s: stopped (%s)\n", argv[optind + i],
			       end_text(&rep, true, buf, sizeof(buf)));
			if (rep.message[0])
				sbx_errorf("%s: warning: %s", argv[optind + i], rep.message);
		} else if (rep.message[0]) {
			sbx_errorf("%s: %s", argv[optind + i], rep.message);
			rc = SBX_EXIT_FAIL;
		} else {
			printf("%s: ended\n", argv[optind + i]);
		}
		close(fds[i]);
	}
	free(fds);
	if (fflush(stdout) != 0)
		rc = SBX_EXIT_FAIL;
	return rc;
}

int cmd_wait(struct sbx_cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"quiet", no_argument, NULL, 'q'},
	    {NULL, 0, NULL, 0},
	};
	struct sbx_err err = {0};
	struct sbx_sandbox sb;
	struct sbx_control_reply rep;
	struct sbx_state *st;
	const char *state = NULL, *ref;
	bool quiet = false;
	char buf[128];
	int opt, fd, code = 0;

	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":q", longopts, NULL)) != -1) {
		if (opt == 'q')
			quiet = true;
		else
			return sbx_cmd_bad_option(ctx, "wait", opt, argv[optind - 1], longopts);
	}
	if (optind != argc - 1)
		return sbx_cmd_usage_error(ctx, "wait: expected one sandbox (usage: sbx wait "
						"SANDBOX)");
	ref = argv[optind];
	st = sbx_cmd_state(ctx, &err);
	if (!st)
		return sbx_cmd_fail(ctx, &err, SBX_EXIT_SBX);
	if (open_ref(st, ref, &sb, &state) < 0) {
		sbx_sandbox_close(&sb);
		return SBX_EXIT_SBX;
	}
	if (strcmp(state, "running") && strcmp(state, "created")) {
		if (!strcmp(state, "lost") || !sb.rec.exit.set) {
			sbx_errorf("%s: %s: no exit status to wait for", ref, state);
			sbx_sandbox_close(&sb);
			return SBX_EXIT_SBX;
		}
		code = sb.rec.exit.status;
		if (!quiet)
			sbx_errorf("%s: ended (%s, exit %d; kept)", ref,
				   sb.rec.exit.reason ? sb.rec.exit.reason : "?", code);
		sbx_sandbox_close(&sb);
		return code;
	}
	fd = sbx_control_request(&sb, SBX_CONTROL_WAIT, 0, NULL, 0, &err);
	sbx_sandbox_close(&sb);
	if (fd < 0 || sbx_control_reply(fd, -1, &rep) < 0 || !rep.ok) {
		if (fd >= 0)
			close(fd);
		sbx_errorf("%s: ended before its exit status could be read (see 'sbx ps -a')", ref);
		return SBX_EXIT_SBX;
	}
	close(fd);
	if (!quiet)
		sbx_errorf("%s: ended (%s)", ref, end_text(&rep, false, buf, sizeof(buf)));
	if (rep.message[0])
		sbx_errorf("%s: warning: %s", ref, rep.message);
	return rep.exit_code;
}
