/* SPDX-License-Identifier: MIT */
/*
 * cmd/logs.c - sbx logs [-f] [--tail N] SANDBOX: the command's output as
 * output.log has it (capped, secret values already redacted by the
 * supervisor as they were written), of a running or kept sandbox; -f
 * follows it (inotify) until the sandbox ends, which its control socket
 * says (lib/run/control.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "cmd.h"
#include "control.h"
#include "lifecycle.h"

const char sbx_usage_logs[] =
    "usage: sbx logs [-f] [--tail N] SANDBOX\n"
    "\n"
    "Print the output of a sandbox's command (stdout and stderr as they came,\n"
    "and what background processes of 'sbx exec' wrote after it returned),\n"
    "of a running or kept sandbox. Secret values are redacted, as in the\n"
    "record. The output log keeps the first 8 MiB.\n"
    "\n"
    "  -f, --follow   keep printing new output until the sandbox ends\n"
    "  -n, --tail N   start with the last N lines only\n";

/* What fd has now to stdout: 0, or -errno of a failed write. */
static int copy_out(int fd)
{
	char buf[65536];
	ssize_t n;
	int r;

	while ((n = read(fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
		if (n > 0 && (r = sbx_write_all(STDOUT_FILENO, buf, (size_t)n)) < 0)
			return r;
	return 0;
}

/* Seek fd to the start of its last `lines` lines. */
static void seek_tail(int fd, uint64_t lines)
{
	off_t end = lseek(fd, 0, SEEK_END), pos = end;
	uint64_t seen = 0;
	char buf[8192];

	if (end <= 0)
		return;
	if (lines == 0) {
		lseek(fd, 0, SEEK_END);
		return;
	}
	/* a last line without its newline counts as one */
	while (pos > 0) {
		size_t chunk = pos > (off_t)sizeof(buf) ? sizeof(buf) : (size_t)pos;
		ssize_t n;

		pos -= (off_t)chunk;
		n = pread(fd, buf, chunk, pos);
		if (n <= 0)
			break;
		for (ssize_t i = n - 1; i >= 0; i--) {
			if (buf[i] != '\n' || pos + i == end - 1)
				continue;
			if (++seen == lines) {
				lseek(fd, pos + i + 1, SEEK_SET);
				return;
			}
		}
	}
	lseek(fd, 0, SEEK_SET);
}

/* Until the control socket answers (the sandbox ended) or goes away. */
static int follow(int fd, int dirfd, int ctl)
{
	int in = inotify_init1(IN_CLOEXEC | IN_NONBLOCK), r = 0;
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d/output.log", dirfd);
	if (in >= 0)
		inotify_add_watch(in, path, IN_MODIFY);
	for (;;) {
		struct pollfd q[2] = {{.fd = in, .events = POLLIN}, {.fd = ctl, .events = POLLIN}};
		char ev[4096];

		if ((r = copy_out(fd)) < 0)
			break;
		/* no inotify: every 200 ms */
		if (poll(q, 2, in >= 0 ? 5000 : 200) < 0 && errno != EINTR)
			break;
		if (in >= 0 && (q[0].revents & POLLIN))
			while (read(in, ev, sizeof(ev)) > 0)
				;
		if (q[1].revents) {
			r = copy_out(fd); /* what came last */
			break;
		}
	}
	sbx_closep(&in);
	return r;
}

int cmd_logs(struct sbx_cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"follow", no_argument, NULL, 'f'},
	    {"tail", required_argument, NULL, 'n'},
	    {NULL, 0, NULL, 0},
	};
	struct sbx_err err = {0};
	struct sbx_sandbox sb;
	struct sbx_state *st;
	bool follow_it = false;
	uint64_t tail = 0;
	bool have_tail = false;
	const char *state;
	int opt, fd, ctl = -1, code = 0, rc = 0;

	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":fn:", longopts, NULL)) != -1) {
		if (opt == 'f') {
			follow_it = true;
		} else if (opt == 'n') {
			if (sbx_parse_u64(optarg, &tail, &err) < 0)
				return sbx_cmd_usage_error(ctx,
							   "logs: --tail '%s': expected a number "
							   "of lines",
							   optarg);
			have_tail = true;
		} else {
			return sbx_cmd_bad_option(ctx, "logs", opt, argv[optind - 1], longopts);
		}
	}
	if (optind != argc - 1)
		return sbx_cmd_usage_error(ctx, "logs: expected one sandbox (usage: sbx logs [-f] "
						"[--tail N] SANDBOX)");
	st = sbx_cmd_state(ctx, &err);
	if (!st)
		return sbx_cmd_fail(ctx, &err, SBX_EXIT_FAIL);
	if (lc_open(st, argv[optind], false, &sb, &err) < 0) {
		sbx_sandbox_close(&sb);
		if (err.errnum == ENOENT || !err.msg[0])
			sbx_err_set(&err, ENOENT, "no sandbox '%s' (see 'sbx ps -a')",
				    argv[optind]);
		return sbx_cmd_fail(ctx, &err, SBX_EXIT_FAIL);
	}
	state = sbx_sandbox_state(&sb, &code);
	/* ask for the end first: nothing written after the last read is lost */
	if (follow_it && (!strcmp(state, "running") || !strcmp(state, "created")))
		ctl = sbx_control_request(&sb, SBX_CONTROL_WAIT, 0, NULL, 0, NULL);
	fd = openat(sb.dirfd, "output.log", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno != ENOENT) {
		sbx_err_set(&err, errno, "cannot read '%s/output.log'", sb.dir);
		sbx_closep(&ctl);
		sbx_sandbox_close(&sb);
		return sbx_cmd_fail(ctx, &err, SBX_EXIT_FAIL);
	}
	if (fd >= 0 && have_tail)
		seek_tail(fd, tail);
	if (fd >= 0 && ctl >= 0)
		rc = follow(fd, sb.dirfd, ctl);
	else if (fd >= 0)
		rc = copy_out(fd);
	if (sb.rec.resources.output_truncated)
		sbx_errorf("%s: the output log stopped at its cap; later output was not kept",
			   argv[optind]);
	sbx_closep(&fd);
	sbx_closep(&ctl);
	sbx_sandbox_close(&sb);
	if (rc < 0)
		sbx_err_set(&ctx->err, -rc, "cannot write to standard output");
	return rc < 0 ? SBX_EXIT_FAIL : 0;
}
