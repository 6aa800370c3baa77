/* SPDX-License-Identifier: MIT */
/*
 * cmd/exec.c - sbx exec [-t] [-e NAME[=VAL]] [-w DIR] SANDBOX [--] CMD...
 *
 * Into a running sandbox: join its init's namespaces and its cgroup
 * (lib/jail/enter.c) and run CMD as the sandbox's command runs: same uid, no
 * capabilities, no_new_privs, the same seccomp policy, an environment
 * built from the same profile.  Into a kept, exited sandbox: a new jail
 * over the same writable layer and resolved profile (cmd/exec_kept.c).
 * Either way an `exec` event is appended to the sandbox's log.jsonl; the
 * record (and its exit) is never rewritten.
 */
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <poll.h>
#include <unistd.h>

#include "cmd.h"
#include "control.h"
#include "exec.h"
#include "lifecycle.h"
#include "log.h"
#include "netpolicy.h"
#include "proxy.h"
#include "profile.h"
#include "run_cli.h"
#include "seccomp.h"

static const char usage[] =
    "usage: sbx exec [options] SANDBOX [--] CMD [ARG...]\n"
    "\n"
    "Run CMD in a sandbox: in a running one, joining its namespaces and\n"
    "cgroup as the same user, with no capabilities, no_new_privs and its\n"
    "seccomp policy; in a kept, exited one, in a new jail over its writable\n"
    "layer and resolved profile (for a postmortem).\n"
    "\n"
    "  -t, --tty                 give the command a pseudo-terminal (the default\n"
    "                            when stdin, stdout and stderr are this terminal)\n"
    "  -T, --no-tty              pipes, not a pseudo-terminal\n"
    "  -e, --env NAME[=VAL]      pass NAME from the caller, or set it\n"
    "  -w, --workdir DIR         working directory inside (default: the sandbox's)\n"
    "\n"
    "SANDBOX is an id, a unique id prefix or a name.\n"
    "Exit status: the command's own, 128+N if killed by signal N, 125 if sbx\n"
    "failed, 126 not executable, 127 not found.\n";

/* clang-format off */
static const struct option long_opts[] = {
    {"tty", no_argument, NULL, 't'},
    {"no-tty", no_argument, NULL, 'T'},
    {"env", required_argument, NULL, 'e'},
    {"workdir", required_argument, NULL, 'w'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};
/* clang-format on */

void exec_args_free(struct exec_args *a)
{
	sbx_strv_free(&a->env);
	sbx_cmd_argv_free(a->argv_owned);
	free(a->workdir_owned);
	memset(a, 0, sizeof(*a));
}

int exec_parse_args(int argc, char **argv, struct exec_args *a, struct sbx_err *err)
{
	int opt;

	memset(a, 0, sizeof(*a));
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+:tTe:w:h", long_opts, NULL)) != -1) {
		switch (opt) {
		case 't':
		case 'T':
			a->tty_mode = opt == 't' ? SBX_TTY_YES : SBX_TTY_NO;
			break;
		case 'e':
			sbx_strv_push(&a->env, optarg);
			break;
		case 'w':
			a->workdir = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 1;
		default:
			return sbx_cmd_option_error(err, "exec", "exec", argv[optind - 1],
						    long_opts, opt == ':');
		}
	}
	if (optind >= argc)
		return sbx_err_set(
		    err, 0,
		    "exec: no sandbox given (usage: sbx exec [options] SANDBOX [--] CMD...)");
	a->sandbox = argv[optind++];
	if (optind < argc && strcmp(argv[optind], "--") == 0)
		optind++;
	if (optind >= argc)
		return sbx_err_set(
		    err, 0,
		    "exec: no command given (usage: sbx exec [options] SANDBOX [--] CMD...)");
	if (a->workdir && a->workdir[0] != '/')
		return sbx_err_set(err, 0, "exec: the working directory '%s' is not absolute",
				   a->workdir);
	a->tty = sbx_jail_tty_wanted(a->tty_mode, false);
	a->argv = argv + optind;
	a->title = sbx_cmd_title(argc, argv, optind, &a->title_len, &a->argv_owned);
	if (a->argv_owned) {
		a->argv = a->argv_owned;
		if (a->workdir)
			a->workdir = a->workdir_owned = sbx_xstrdup(a->workdir);
	}
	return 0;
}

/* ---- shared by both ways in ---- */

int exec_load_config(const struct sbx_record *rec, const struct exec_args *a,
		     struct sbx_config *cfg, struct sbx_seccomp_filter *filter, struct sbx_err *err)
{
	struct sbx_seccomp_opts so = {0};
	const char *ini = rec->profile.ini;
	struct sbx_profile_vars vars;
	int r;

	if (!ini)
		return sbx_err_set(err, 0, "the record holds no resolved profile");
	sbx_profile_vars_from_process(&vars);
	r = sbx_profile_load_written(cfg, ini, "record.json profile", &vars, err);
	if (r < 0)
		return sbx_err_wrap(err, "the sandbox's profile");
	/* a kept sandbox's new jail: its binds' .git read-only, as the run's */
	sbx_config_protect_git(cfg, vars.home);
	for (size_t i = 0; r == 0 && i < a->env.n; i++)
		r = sbx_profile_set(cfg, "env", strchr(a->env.v[i], '=') ? "set" : "pass",
				    a->env.v[i], err);
	if (r < 0)
		return sbx_err_wrap(err, "option -e");
	/* A policy file is read and compiled here, on the host, before any
	 * jail; the jail's command loads that filter. */
	so.policy = cfg->seccomp;
	return sbx_seccomp_prepare(&so, filter, err);
}

void exec_build_env(const struct sbx_config *cfg, const struct sbx_record *rec,
		    const struct sbx_jail_ids *ids, bool tty, bool proxy, struct sbx_strv *env)
{
	const char *spec = rec->rootfs.spec;
	struct sbx_strv extra = {0};

	if (proxy)
		sbx_proxy_env(SBX_PROXY_DEFAULT_PORT, &extra);
	sbx_jail_build_env(cfg, ids, !spec || strcmp(spec, "host") == 0, tty, extra.v, env);
	sbx_strv_free(&extra);
}

/* The sandbox's workdir: -w, the profile's, else the recorded one (run's
 * cwd, used only if it exists inside). */
void exec_workdir(const struct exec_args *a, const struct sbx_config *cfg,
		  const struct sbx_record *rec, const char **workdir, const char **host_cwd)
{
	*workdir = a->workdir ? a->workdir : cfg->workdir;
	*host_cwd = rec->workdir;
}

/* Append {"event": "exec", ...} to log.jsonl (O_APPEND, one write). */
void exec_log_event(const struct sbx_sandbox *sb, const struct exec_args *a, const char *mode,
		    const char *via, int status, pid_t pid, const char *error,
		    const json_t *changed)
{
	json_t *fields;
	struct sbx_log log;
	json_t *cmd = json_array();
	int fd;

	fd = openat(sb->dirfd, "log.jsonl", O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	if (fd < 0)
		return;
	for (size_t i = 0; a->argv[i]; i++)
		json_array_append_new(cmd, sbx_json_string_lossy(a->argv[i], strlen(a->argv[i])));
	sbx_log_init(&log);
	sbx_log_add_fd(&log, fd);
	fields = json_pack("{s:o, s:s, s:s*, s:i, s:o, s:o, s:i}", "command", cmd, "mode", mode,
			   "namespaces_from", via, "status", status, "pid",
			   pid > 0 ? json_integer(pid) : json_null(), "error",
			   error ? json_string(error) : json_null(), "host_pid", (int)getpid());
	if (fields && json_is_object(changed))
		json_object_update(fields, (json_t *)changed);
	sbx_log_event(&log, "exec", fields);
	sbx_log_free(&log);
	close(fd);
}

/*
 * The jail may reopen what the command's stdin is through /proc/PID/fd/0:
 * harmless for a pipe, a socket or a terminal, not for a host file (it
 * could be reopened for writing) or directory (a way out).  A directory
 * is refused; a file or block device is copied through a pipe by a host
 * process (killed at the end).
 */
static int stdin_guard(struct exec_ctx *x, struct sbx_err *err)
{
	struct stat st;
	int p[2];

	if (fstat(STDIN_FILENO, &st) < 0)
		return 0;
	if (S_ISDIR(st.st_mode))
		return sbx_err_set(err, 0,
				   "standard input is a directory: not handing it to the jail");
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
		return 0;
	if (pipe2(p, O_CLOEXEC) < 0)
		return sbx_err_set(err, errno, "cannot create the stdin pipe");
	x->stdin_pump = fork();
	if (x->stdin_pump < 0) {
		close(p[0]);
		close(p[1]);
		return sbx_err_set(err, errno, "cannot fork the stdin copier");
	}
	if (x->stdin_pump == 0) {
		char buf[65536];
		ssize_t n;

		close(p[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		while ((n = read(STDIN_FILENO, buf, sizeof(buf))) > 0)
			if (sbx_write_all(p[1], buf, (size_t)n) < 0)
				break;
		_exit(0);
	}
	close(p[1]);
	if (dup2(p[0], STDIN_FILENO) < 0) {
		close(p[0]);
		return sbx_err_set(err, errno, "cannot use the stdin pipe");
	}
	close(p[0]);
	return 0;
}

/* stdio must exist, or the sync socket could land on 0..2. */
static void stdio_open(void)
{
	for (int fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF)
			(void)open("/dev/null", O_RDWR);
}

/* ---- into a running sandbox ---- */

/* The output pipes (or pty) an exec's background processes still hold,
 * when its supervisor cannot take them: relayed here until their end. */
static void relay_until_eof(int out_r, int err_r, int pty)
{
	struct pollfd q[3] = {{.fd = out_r, .events = POLLIN},
			      {.fd = err_r, .events = POLLIN},
			      {.fd = pty, .events = POLLIN}};
	const int to[3] = {STDOUT_FILENO, STDERR_FILENO, STDOUT_FILENO};

	for (int i = 0; i < 3; i++)
		if (q[i].fd >= 0)
			fcntl(q[i].fd, F_SETFL, fcntl(q[i].fd, F_GETFL) & ~O_NONBLOCK);
	while (q[0].fd >= 0 || q[1].fd >= 0 || q[2].fd >= 0) {
		if (poll(q, 3, -1) < 0 && errno != EINTR)
			return;
		for (int i = 0; i < 3; i++) {
			char buf[65536];
			ssize_t n;

			if (q[i].fd < 0 || !q[i].revents)
				continue;
			n = read(q[i].fd, buf, sizeof(buf));
			if (n <= 0)
				q[i].fd = -1;
			else
				(void)sbx_write_all(to[i], buf, (size_t)n);
		}
	}
}

/*
 * The command has ended but processes it started in the background (a dev
 * server with `&` or setsid) still hold its output: this exec returns, and
 * the sandbox's supervisor reads that output into output.log from now on
 * (sbx logs shows it), so they keep a live stdout and stderr.
 */
static void hand_over(const struct sbx_sandbox *sb, struct sbx_jail *j, int out_r, int err_r,
		      const struct sbx_jail_result *res)
{
	int fds[3];
	size_t n = 0;
	struct sbx_err e = {0};
	struct sbx_control_reply rep;
	int fd;

	if (res->out_open)
		fds[n++] = out_r;
	if (res->err_open)
		fds[n++] = err_r;
	if (res->pty_open)
		fds[n++] = j->pty_fd;
	if (n == 0)
		return;
	fd = sb ? sbx_control_request(sb, SBX_CONTROL_OUTPUT, 0, fds, n, &e) : -1;
	if (fd >= 0 && sbx_control_reply(fd, 5000, &rep) == 0 && rep.ok) {
		close(fd);
		return;
	}
	if (fd >= 0)
		close(fd);
	sbx_errorf("the command left processes holding its output, and the sandbox's supervisor "
		   "cannot take it (%s): relaying it here until they end",
		   fd < 0	    ? e.msg
		   : rep.message[0] ? rep.message
				    : "no answer");
	relay_until_eof(res->out_open ? out_r : -1, res->err_open ? err_r : -1,
			res->pty_open ? j->pty_fd : -1);
}

static int supervise(struct sbx_jail *j, int out_r, int err_r, const struct sbx_sandbox *sb,
		     struct sbx_err *err)
{
	struct sbx_jail_io io = {.out_r = out_r,
				 .err_r = err_r,
				 .log_fd = -1,
				 .time_ms = SBX_UNSET,
				 .stop_ms = SBX_UNSET,
				 .until_exit = sb != NULL};
	struct sbx_jail_result res;
	char msg[512];
	int r = sbx_jail_supervise(j, &io, &res, err);

	if (r < 0)
		return r;
	if (sb)
		hand_over(sb, j, out_r, err_r, &res);
	r = sbx_jail_exit_code(j, &res);
	if (sbx_jail_output_lost(&res, msg, sizeof(msg))) {
		sbx_errorf("%s", msg); /* exec's output has no log */
		if (r == 0)
			r = SBX_EXIT_SBX;
	}
	return r;
}

int exec_run_supervised(struct sbx_jail *j, int out[2], int errp[2], const struct sbx_sandbox *sb,
			struct sbx_err *err)
{
	int r;

	sbx_closep(&out[1]);
	sbx_closep(&errp[1]);
	r = supervise(j, out[0], errp[0], sb, err);
	sbx_closep(&out[0]);
	sbx_closep(&errp[0]);
	return r;
}

static int enter_running(struct exec_ctx *x, struct sbx_err *err)
{
	const struct sbx_record *rec = &x->sb.rec;
	struct sbx_enter_record er;
	struct sbx_enter_opts o = {.cfg = &x->cfg,
				   .target = &x->target,
				   .cg = &x->cg,
				   .argv = x->args.argv,
				   .title = x->args.title,
				   .title_len = x->args.title_len,
				   .tty = x->args.tty,
				   .seccomp = &x->filter,
				   .out_fd = -1,
				   .err_fd = -1};
	int out[2] = {-1, -1}, errp[2] = {-1, -1};
	int r;

	sbx_record_enter(rec, &er);
	r = sbx_enter_find_init(&er, x->sb.dirfd, &x->cfg, &x->target, err);
	if (r < 0)
		return sbx_err_wrap(err, "sandbox '%s'", x->sb.id);
	r = sbx_cgroup_from_json(&x->cg, x->sb.id, rec->cgroup, &x->cfg, err);
	if (r < 0)
		return r;
	exec_build_env(&x->cfg, rec, &x->target.ids, x->args.tty, x->cfg.net == SBX_NET_PROXY,
		       &x->env);
	o.envp = x->env.v;
	exec_workdir(&x->args, &x->cfg, rec, &o.workdir, &o.host_cwd);
	if (x->args.tty)
		sbx_jail_term_of_caller(&o.term);
	r = sbx_run_stdio_pipes(x->args.tty, out, errp, err);
	o.out_fd = out[1];
	o.err_fd = errp[1] >= 0 ? errp[1] : out[1];
	sbx_enter_block_signals();
	if (r == 0)
		r = sbx_enter_start(&x->jail, &o, err);
	if (r < 0) {
		sbx_closep(&out[0]);
		sbx_closep(&out[1]);
		sbx_closep(&errp[0]);
		sbx_closep(&errp[1]);
		return r;
	}
	x->mode = "running";
	return exec_run_supervised(&x->jail, out, errp, &x->sb, err);
}

/* ---- dispatch ---- */

static int open_sandbox(struct exec_ctx *x, struct sbx_err *err)
{
	char id[SBX_ID_LEN + 1];
	int r;

	x->st = sbx_cmd_state(x->cmd, err);
	r = x->st ? 0 : -EINVAL;
	if (r == 0)
		r = sbx_sandbox_find(x->st, x->args.sandbox, id, err);
	if (r == -ENOENT)
		return sbx_err_set(err, 0, "no sandbox '%s' (see 'sbx ps -a')", x->args.sandbox);
	if (r == 0)
		r = sbx_sandbox_open(x->st, id, false, &x->sb, err);
	if (r == 0 && !x->sb.record)
		r = sbx_err_set(err, 0, "sandbox '%s' has no usable record: %s", id,
				x->sb.record_error ? x->sb.record_error : "missing");
	return r;
}

/* A run saves init_pid once its jail exists: give one that is starting a
 * moment (3 s) to get there. */
static int wait_started(struct exec_ctx *x, const char **state, struct sbx_err *err)
{
	char id[SBX_ID_LEN + 1];
	int code = 0;

	memcpy(id, x->sb.id, sizeof(id));
	for (int i = 0; i < 30; i++) {
		int r;

		if (strcmp(*state, "running") != 0 && strcmp(*state, "created") != 0)
			return 0;
		if (x->sb.rec.init_pid > 0)
			return 0;
		usleep(100 * 1000);
		sbx_sandbox_close(&x->sb);
		r = sbx_sandbox_open(x->st, id, false, &x->sb, err);
		if (r < 0)
			return r;
		if (!x->sb.record)
			return sbx_err_set(err, 0, "sandbox '%s' has no usable record: %s", id,
					   x->sb.record_error ? x->sb.record_error : "missing");
		*state = sbx_sandbox_state(&x->sb, &code);
	}
	return 0;
}

static int exec_dispatch(struct exec_ctx *x, struct sbx_err *err)
{
	int code = 0;
	const char *state;
	int r;

	r = open_sandbox(x, err);
	if (r < 0)
		return r;
	state = sbx_sandbox_state(&x->sb, &code);
	r = wait_started(x, &state, err);
	if (r < 0)
		return r;
	if (!strcmp(state, "lost"))
		return sbx_err_set(err, 0,
				   "sandbox '%s' is lost (its supervisor died): nothing to enter; "
				   "'sbx destroy --stale' removes it",
				   x->sb.id);
	if (!strcmp(state, "unknown"))
		return sbx_err_set(err, 0, "sandbox '%s' is in an unknown state", x->sb.id);
	r = exec_load_config(&x->sb.rec, &x->args, &x->cfg, &x->filter, err);
	/* A new jail over a kept layer hides the state like run does (older
	 * records' profiles may lack the masks). */
	if (r == 0)
		r = sbx_run_hide_state(&x->cfg, x->st, err);
	if (r == 0 && !x->args.tty)
		r = stdin_guard(x, err);
	if (r < 0)
		return r;
	/* what the host runs later: said when the command changed it */
	sbx_later_begin(&x->later, &x->cfg);
	if (!strcmp(state, "running") || !strcmp(state, "created"))
		return enter_running(x, err);
	return exec_kept(x, err);
}

/* After the command: the git repositories and watched files it made or
 * changed, said as sbx run says them (x->changed, for the exec event). */
static void exec_changed(struct exec_ctx *x)
{
	struct sbx_strv git = {0}, watch = {0};

	sbx_later_git_changed(&x->later, &x->cfg, &git);
	sbx_later_watch_changed(&x->later, &x->cfg, &watch);
	if (git.n || watch.n) {
		x->changed = json_object();
		if (git.n)
			json_object_set_new(x->changed, "git_changed", sbx_json_strv(&git));
		if (watch.n)
			json_object_set_new(x->changed, "watch_changed", sbx_json_strv(&watch));
		run_human_later(x->changed);
	}
	sbx_strv_free(&git);
	sbx_strv_free(&watch);
}

static void ctx_init(struct exec_ctx *x)
{
	memset(x, 0, sizeof(*x));
	sbx_config_init(&x->cfg);
	sbx_jail_init(&x->jail);
	sbx_enter_target_init(&x->target);
	x->sb.dirfd = x->sb.lockfd = -1;
	x->mode = "none";
}

static void ctx_free(struct exec_ctx *x)
{
	if (x->stdin_pump > 0) {
		kill(x->stdin_pump, SIGKILL);
		waitpid(x->stdin_pump, NULL, 0);
	}
	sbx_jail_free(&x->jail);
	free(x->layer_dir);
	sbx_enter_target_free(&x->target);
	sbx_cgroup_free(&x->cg);
	sbx_strv_free(&x->env);
	sbx_later_free(&x->later);
	json_decref(x->changed);
	sbx_config_free(&x->cfg);
	sbx_seccomp_filter_free(&x->filter);
	sbx_sandbox_close(&x->sb);
	exec_args_free(&x->args);
}

/* Where the namespaces joined came from (the run log says). */
static const char *exec_via(const struct exec_ctx *x)
{
	if (x->target.nsfd[0] < 0 && !x->target.via_child)
		return NULL;
	return x->target.via_child ? "a verified child of init" : "init";
}

int cmd_exec(struct sbx_cmd_ctx *ctx, int argc, char **argv)
{
	struct exec_ctx x;
	struct sbx_err err = {0};
	int r;

	ctx_init(&x);
	x.cmd = ctx;
	signal(SIGPIPE, SIG_IGN);
	stdio_open();
	r = exec_parse_args(argc, argv, &x.args, &err);
	if (r > 0) {
		ctx_free(&x);
		return 0;
	}
	if (r == 0)
		r = exec_dispatch(&x, &err);
	if (r < 0) {
		if (x.sb.dirfd >= 0 && x.sb.record)
			exec_log_event(&x.sb, &x.args, x.mode, exec_via(&x), SBX_EXIT_SBX, -1,
				       err.msg, NULL);
		r = sbx_cmd_fail(ctx, &err, SBX_EXIT_SBX);
	} else {
		if (x.jail.exec_errno && x.jail.exec_msg)
			sbx_errorf("%s", x.jail.exec_msg);
		else if (x.jail.exec_errno)
			sbx_errorf("'%s': %s", x.args.argv[0], strerror(x.jail.exec_errno));
		exec_changed(&x);
		if (x.sb.dirfd >= 0)
			exec_log_event(&x.sb, &x.args, x.mode, exec_via(&x), r, x.jail.cmd_pid,
				       NULL, x.changed);
	}
	ctx_free(&x);
	return r;
}
