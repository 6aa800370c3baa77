/* SPDX-License-Identifier: MIT */
/*
 * cmd/run.c - sbx run [options] [--] CMD [ARG...]
 *
 * Options, then the library: the options that mirror profile keys go
 * through sbx_profile_set() after the profile is loaded (one code path, the
 * command line wins); sbx_run() (lib/run/run.h) does the rest, and the run
 * log's human lines are printed by cmd/run_human.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"
#include "image_ui.h"
#include "profile.h"
#include "run_cli.h"

/* The profile, then the command-line options over it. */
static int load_with(struct run_ctx *c, const struct sbx_profile_vars *vars, struct sbx_err *err)
{
	int r = sbx_profile_load(&c->cfg, c->args.profile ? c->args.profile : "default", vars, err);

	for (size_t i = 0; r == 0 && i < c->args.n_sets; i++) {
		struct run_set *s = &c->args.sets[i];

		r = sbx_profile_set(&c->cfg, s->section, s->key, s->value, err);
		if (r < 0)
			run_option_error(s, err);
	}
	return r;
}

static int load_config(struct run_ctx *c, struct sbx_err *err)
{
	struct sbx_profile_vars vars;
	struct sbx_sudo_caller who;
	_cleanup_free_ char *declined = NULL;
	int r;

	sbx_profile_vars_from_process(&vars);
	r = load_with(c, &vars, err);
	/* `sudo sbx run` in the caller's own project runs as the caller, with
	 * the caller's ~ in the profile (~/.claude, the masks), as without
	 * sudo: loaded again with those variables. */
	if (r == 0 && sbx_profile_vars_for_sudo_caller(&c->cfg, &vars, &who, &declined)) {
		sbx_config_free(&c->cfg);
		sbx_config_init(&c->cfg);
		r = load_with(c, &vars, err);
		if (r == 0)
			sbx_config_act_for(&c->cfg, &who);
	} else if (r == 0) {
		c->cfg.sudo_declined = declined; /* the run log's user line says why */
		declined = NULL;
	}
	if (r == 0) {
		sbx_config_drop_host_only(&c->cfg);
		sbx_config_drop_hidden(&c->cfg);
		sbx_config_drop_covered_overlays(&c->cfg);
		sbx_config_mask_sudo_home(&c->cfg, vars.home);
		sbx_config_protect_git(&c->cfg, vars.home);
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

/* ---- -d, --detach ---- */

/* The command has started: tell the caller (who prints the name or id and
 * returns) and let go of its stderr. */
static void started(const char *id, const char *name, void *data)
{
	struct run_ctx *c = data;
	_cleanup_free_ char *line = sbx_xasprintf("%s\n", name ? name : id);
	int nul;

	if (c->detach_fd < 0)
		return;
	if (!c->args.quiet)
		sbx_errorf("detached (supervisor pid %d): 'sbx logs -f %s' follows its output, "
			   "'sbx stop %s' ends it",
			   (int)getpid(), name ? name : id, name ? name : id);
	fflush(stderr);
	(void)sbx_write_all(c->detach_fd, line, strlen(line));
	sbx_fd_close(&c->detach_fd);
	nul = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (nul >= 0) {
		dup3(nul, STDERR_FILENO, 0);
		close(nul);
	}
}

/* Copy what err_r has now (or until its end when block) to stderr. */
static void relay_stderr(int err_r, bool block)
{
	char buf[8192];
	ssize_t n;

	if (!block)
		fcntl(err_r, F_SETFL, fcntl(err_r, F_GETFL) | O_NONBLOCK);
	while ((n = read(err_r, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
		if (n > 0)
			(void)sbx_write_all(STDERR_FILENO, buf, (size_t)n);
}

/*
 * The caller's side of -d: the run log's start-up lines as they come, then
 * the sandbox's name or id on stdout once the command started (exit 0); a
 * run that ended before that (a set-up error, a command not found) exits
 * with its own status.  SIGINT, SIGTERM and SIGHUP while it starts go to
 * the detaching supervisor, which then stops the jail as a run does.
 */
static int detach_wait(pid_t child, int status_r, int err_r)
{
	char id[SBX_NAME_MAX + 8];
	size_t n = 0;
	sigset_t mask;
	int sfd, st = 0;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	for (;;) {
		struct pollfd q[3] = {{.fd = status_r, .events = POLLIN},
				      {.fd = err_r, .events = POLLIN},
				      {.fd = sfd, .events = POLLIN}};
		ssize_t r;

		if (poll(q, 3, -1) < 0 && errno != EINTR)
			break;
		if (q[2].revents & POLLIN) {
			struct signalfd_siginfo si;

			while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
				kill(child, (int)si.ssi_signo);
		}
		if (q[1].revents) {
			char buf[8192];

			r = read(err_r, buf, sizeof(buf));
			if (r > 0)
				(void)sbx_write_all(STDERR_FILENO, buf, (size_t)r);
			else if (r == 0)
				err_r = -1;
		}
		if (!(q[0].revents))
			continue;
		r = read(status_r, id + n, sizeof(id) - 1 - n);
		if (r > 0) {
			n += (size_t)r;
			if (n < sizeof(id) - 1 && id[n - 1] != '\n')
				continue;
			id[n] = '\0';
			if (err_r >= 0)
				relay_stderr(err_r, false);
			fputs(id, stdout);
			return fflush(stdout) == 0 ? 0 : SBX_EXIT_SBX;
		}
		if (r < 0 && errno == EINTR)
			continue;
		break; /* the run ended before its command started */
	}
	if (err_r >= 0)
		relay_stderr(err_r, true);
	while (waitpid(child, &st, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/*
 * Fork the supervisor into a session of its own, without a terminal:
 * stdin and stdout /dev/null, stderr a pipe to the caller until the
 * command has started, every other inherited descriptor closed (a
 * caller's `$(sbx run -d ...)` or a CI runner's pipes are not held).
 * Returns in the child (0); the caller's side never returns.
 */
static int detach(struct run_ctx *c, struct sbx_err *err)
{
	int sp[2], ep[2], nul;
	pid_t pid;

	if (pipe2(sp, O_CLOEXEC) < 0 || pipe2(ep, O_CLOEXEC) < 0)
		return sbx_err_set(err, errno, "cannot detach: pipe");
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return sbx_err_set(err, errno, "cannot detach: fork");
	if (pid > 0) {
		close(sp[1]);
		close(ep[1]);
		exit(detach_wait(pid, sp[0], ep[0]));
	}
	close(sp[0]);
	close(ep[0]);
	setsid();
	nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (nul < 0 || dup3(nul, STDIN_FILENO, 0) < 0 || dup3(nul, STDOUT_FILENO, 0) < 0 ||
	    dup3(ep[1], STDERR_FILENO, 0) < 0 || dup3(sp[1], 3, O_CLOEXEC) < 0)
		_exit(SBX_EXIT_SBX);
	close_range(4, ~0U, 0);
	c->detach_fd = 3;
	return 0;
}

int cmd_run(struct sbx_cmd_ctx *ctx, int argc, char **argv)
{
	struct run_ctx c = {0};
	struct sbx_err err = {0};
	_cleanup_free_ char *cwd = getcwd(NULL, 0);
	int cwd_errno = errno, r;

	sbx_config_init(&c.cfg);
	c.color = ctx->color;
	signal(SIGPIPE, SIG_IGN);
	c.detach_fd = -1;
	r = run_parse_args(argc, argv, &c.args, &err);
	if (r == 0)
		r = load_config(&c, &err);
	/* $PWD is then "/" (sbx_profile_vars_from_process) */
	if (r == 0 && !cwd && !c.cfg.workdir && !c.args.quiet)
		sbx_warnf("the working directory is gone (%s): the command runs in / (-w DIR sets "
			  "another)",
			  strerror(cwd_errno));
	if (r == 0)
		c.cfg.tty = sbx_jail_tty_wanted(c.cfg.tty_mode, c.args.detach);
	if (r == 0 && c.args.detach && c.cfg.tty_mode == SBX_TTY_YES)
		r = sbx_err_set(
		    &err, 0,
		    "run: --detach and a terminal (-t, or tty = yes in the profile): a "
		    "detached sandbox has none (use 'sbx exec -t SANDBOX CMD' for one)");
	if (r == 0 && c.args.detach)
		r = detach(&c, &err);
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
		    .detached = c.args.detach,
		    .started = c.args.detach ? started : NULL,
		    .human = c.args.quiet ? run_human_quiet : run_human,
		    .say = say,
		    .image_begin = image_begin,
		    .image_end = image_end,
		    .data = &c,
		};

		r = sbx_run(&o, &c.res);
		run_human_held(&c); /* a run that ended without its exit event */
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
