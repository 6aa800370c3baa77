/* SPDX-License-Identifier: MIT */
/*
 * lib/jail/command.c - the last steps before the jailed command runs, in the
 * order that leaves it least: new session, stdio or a pty, rlimits,
 * capability bounding set and ambient set cleared, groups and ids, the
 * remaining capability sets emptied (libcap), workdir, no_new_privs, every
 * fd but stdio closed on exec, seccomp last, execve looked up in the
 * jail's PATH.  Shared with `sbx exec`.
 */
#include "jail_int.h"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/ioctl.h>
#include <linux/keyctl.h>
#include <linux/magic.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <termios.h>

#include "seccomp.h"

static void reset_signals(void)
{
	sigset_t none;

	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			signal(s, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

/*
 * The jail's devpts multiplexer.  Not /dev/ptmx: in a running jail (sbx
 * exec -t) that is the jail's to replace, by a symlink to anything it can
 * reach (runc CVE-2025-52565).  /dev/pts is a mount point the jail cannot
 * move; what is opened must still be devpts's ptmx (5:2).
 */
static int open_ptmx(struct sbx_err *err)
{
	_cleanup_close_ int fd = open("/dev/pts/ptmx", O_RDWR | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
	struct statfs f;
	struct stat st;

	if (fd < 0)
		return sbx_err_set(err, errno, "cannot open '/dev/pts/ptmx'");
	if (fstatfs(fd, &f) < 0 || f.f_type != DEVPTS_SUPER_MAGIC || fstat(fd, &st) < 0 ||
	    !S_ISCHR(st.st_mode) || major(st.st_rdev) != 5 || minor(st.st_rdev) != 2)
		return sbx_err_set(err, EPERM,
				   "'/dev/pts/ptmx' is not the jail's devpts multiplexer");
	return steal_fd(&fd);
}

/* The line discipline's echo off (the command may turn it on again). */
static int pty_no_echo(int fd)
{
	struct termios t;

	if (tcgetattr(fd, &t) < 0)
		return -1;
	t.c_lflag &= ~(tcflag_t)(ECHO | ECHOE | ECHOK | ECHONL | ECHOCTL | ECHOKE);
	return tcsetattr(fd, TCSANOW, &t);
}

/*
 * -t: a pty in the jail's devpts, made by the command's parent (the jail's
 * init, or sbx exec's helper), which becomes the leader of a new session
 * with the pty as its controlling terminal; the master goes to the
 * supervisor.  The command then takes a process group of its own in that
 * session and makes it the pty's foreground job (take_pty).  Its group so
 * has a parent in the same session and is not orphaned: a program that
 * reads Ctrl-Z as a key and then stops itself with kill(0, SIGTSTP) (vim,
 * less) is stopped, where the kernel discards that stop for an orphaned
 * group (the command as a session leader of its own, its parent in
 * another session).  The parent is told of the stop (SBX_MSG_STOPPED) and
 * sbx suspends.  The slave is returned, without O_CLOEXEC: the parent
 * closes it once the command has it.
 */
int sbx_jail_pty_open(uid_t uid, gid_t gid, const struct sbx_jail_term *term, int report_fd,
		      struct sbx_err *err)
{
	struct sbx_jail_msg m = {.type = SBX_MSG_PTY};
	_cleanup_close_ int master = -1;
	int slave, unlock = 0, r;

	if (setsid() < 0)
		return sbx_err_set(err, errno, "cannot start a new session");
	master = open_ptmx(err);
	if (master < 0)
		return master;
	if (ioctl(master, TIOCSPTLCK, &unlock) < 0)
		return sbx_err_set(err, errno, "cannot unlock the pty");
	if (term->ws.ws_row && ioctl(master, TIOCSWINSZ, &term->ws) < 0)
		return sbx_err_set(err, errno, "cannot set the pty's size");
	slave = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY);
	if (slave < 0)
		return sbx_err_set(err, errno, "cannot open the pty");
	if (term->no_echo && pty_no_echo(slave) < 0)
		r = sbx_err_set(err, errno, "cannot turn the pty's echo off");
	else if (ioctl(slave, TIOCSCTTY, 0) < 0)
		r = sbx_err_set(err, errno, "cannot make the pty the controlling terminal");
	else if (fchown(slave, uid, gid) < 0)
		r = sbx_err_set(err, errno, "cannot give the pty to the jail's user");
	else if (sbx_jail_send(report_fd, &m, &master, 1) < 0)
		r = sbx_err_set(err, errno, "cannot pass the pty to sbx");
	else
		return slave;
	close(slave);
	return r;
}

/* -t: the command's own process group, the pty's foreground job. */
static int take_pty(const struct sbx_jail_cmd *c, struct sbx_err *err)
{
	sigset_t ttou, old;
	int r = 0;

	if (setpgid(0, 0) < 0)
		return sbx_err_set(err, errno, "cannot start a process group");
	/* a group that is not yet the foreground job is sent SIGTTOU for it */
	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	sigprocmask(SIG_BLOCK, &ttou, &old);
	if (tcsetpgrp(c->pty_slave, getpid()) < 0)
		r = sbx_err_set(err, errno, "cannot make the command the pty's foreground job");
	sigprocmask(SIG_SETMASK, &old, NULL);
	for (int fd = 0; fd < 3 && r == 0; fd++)
		if (dup2(c->pty_slave, fd) < 0)
			r = sbx_err_set(err, errno, "cannot use the pty");
	return r;
}

static int setup_stdio(const struct sbx_jail_cmd *c, struct sbx_err *err)
{
	if (c->tty)
		return take_pty(c, err);
	if (setsid() < 0)
		return sbx_err_set(err, errno, "cannot start a new session");
	if (c->out_fd >= 0 && dup2(c->out_fd, STDOUT_FILENO) < 0)
		return sbx_err_set(err, errno, "cannot set up stdout");
	if (c->err_fd >= 0 && dup2(c->err_fd, STDERR_FILENO) < 0)
		return sbx_err_set(err, errno, "cannot set up stderr");
	return 0;
}

static bool cap_kept(const struct sbx_jail_cmd *c, int cap)
{
	return cap < 64 && (c->cfg->caps_keep & (1ULL << cap));
}

/* Bounding and ambient sets (needs CAP_SETPCAP: before the ids change). */
static int drop_bounding(const struct sbx_jail_cmd *c, struct sbx_err *err)
{
	int last = (int)cap_max_bits() - 1;

	for (int cap = 0; cap <= last; cap++) {
		if (cap_kept(c, cap))
			continue;
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
			return sbx_err_set(err, errno,
					   "cannot drop capability %d from the bounding set", cap);
	}
	if (cap_reset_ambient() < 0 && errno != EINVAL)
		return sbx_err_set(err, errno, "cannot clear the ambient capabilities");
	return 0;
}

static int set_ids(const struct sbx_jail_cmd *c, struct sbx_err *err)
{
	const struct sbx_jail_ids *ids = c->ids;

	if (c->cfg->caps_keep && prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
		return sbx_err_set(err, errno, "cannot keep capabilities");
	if ((ids->range || ids->subid) && setgroups(0, NULL) < 0)
		return sbx_err_set(err, errno, "cannot clear the supplementary groups");
	if (setresgid(ids->gid, ids->gid, ids->gid) < 0)
		return sbx_err_set(err, errno, "cannot become gid %u", ids->gid);
	if (setresuid(ids->uid, ids->uid, ids->uid) < 0)
		return sbx_err_set(err, errno, "cannot become uid %u", ids->uid);
	return 0;
}

/* Effective, permitted, inheritable: empty, or what the profile keeps. */
static int set_caps(const struct sbx_jail_cmd *c, struct sbx_err *err)
{
	cap_t caps = cap_init();
	int last = (int)cap_max_bits() - 1;
	int r = 0;

	if (!caps)
		return sbx_err_set(err, errno, "cannot allocate a capability set");
	for (int cap = 0; cap <= last; cap++) {
		cap_value_t v = cap;

		if (!cap_kept(c, cap))
			continue;
		cap_set_flag(caps, CAP_EFFECTIVE, 1, &v, CAP_SET);
		cap_set_flag(caps, CAP_PERMITTED, 1, &v, CAP_SET);
		cap_set_flag(caps, CAP_INHERITABLE, 1, &v, CAP_SET);
	}
	if (cap_set_proc(caps) < 0)
		r = sbx_err_set(err, errno, "cannot set the capability sets");
	cap_free(caps);
	/* A non-root user keeps them across execve only through the ambient set. */
	for (int cap = 0; r == 0 && cap <= last && c->ids->uid != 0; cap++)
		if (cap_kept(c, cap) && cap_set_ambient(cap, CAP_SET) < 0)
			r = sbx_err_set(err, errno, "cannot raise ambient capability %d", cap);
	if (c->cfg->caps_keep)
		prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0);
	return r;
}

static int enter_workdir(const struct sbx_jail_cmd *c, struct sbx_err *err)
{
	if (c->workdir) {
		if (chdir(c->workdir) < 0)
			return sbx_err_set(
			    err, errno,
			    "cannot change to the working directory '%s' in the jail "
			    "(-w, [sandbox] workdir)",
			    c->workdir);
		return 0;
	}
	if (c->host_cwd && chdir(c->host_cwd) == 0)
		return 0;
	if (chdir("/") < 0)
		return sbx_err_set(err, errno, "cannot change to '/'");
	return 0;
}

static const char *env_get(char *const *envp, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; envp && envp[i]; i++)
		if (strncmp(envp[i], name, n) == 0 && envp[i][n] == '=')
			return envp[i] + n + 1;
	return NULL;
}

/* execvpe's semantics, with PATH taken from the jail's environment. */
static int exec_lookup(char *const *argv, char *const *envp)
{
	const char *file = argv[0];
	const char *path = env_get(envp, "PATH");
	char buf[4096];
	int saved = ENOENT;

	if (!file || !*file)
		return ENOENT;
	if (strchr(file, '/')) {
		execve(file, argv, envp);
		return errno;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path;; p++) {
		const char *end = strchrnul(p, ':');
		size_t dl = (size_t)(end - p);

		if (dl + strlen(file) + 2 <= sizeof(buf)) {
			snprintf(buf, sizeof(buf), "%.*s%s%s", (int)dl, p, dl ? "/" : "", file);
			execve(buf, argv, envp);
			if (errno == EACCES)
				saved = EACCES;
			else if (errno != ENOENT && errno != ENOTDIR && errno != ESTALE &&
				 errno != ENODEV)
				return errno;
		}
		if (!*end)
			break;
		p = end;
	}
	return saved;
}

/*
 * The kernel's keyrings are not namespaced: the session keyring sbx was
 * started with (a login's links the user's keyring, where sbx keeps the
 * CAs it made ahead, lib/run/run_extras.c) would be the command's too.
 * Every built-in seccomp policy refuses keyctl(2), so only under a policy
 * file (which may allow it) does the command get an empty session keyring
 * of its own; a run under a built-in one pays nothing for it.  Where
 * keyrings are refused (a container's seccomp policy: the command inherits
 * it) or absent, it cannot reach any; any other failure (the user's key
 * quota full) stops the command.
 */
static int new_session_keyring(const struct sbx_jail_cmd *c, struct sbx_err *err)
{
	if (sbx_seccomp_is_builtin(c->cfg->seccomp) ||
	    syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL, 0, 0, 0) >= 0 ||
	    errno == ENOSYS || errno == EPERM || errno == EACCES)
		return 0;
	return sbx_err_set(err, errno,
			   "cannot give the command a session keyring of its own (seccomp "
			   "policy '%s' may allow keyctl)",
			   c->cfg->seccomp);
}

static int privileges(const struct sbx_jail_cmd *c, struct sbx_err *err)
{
	int r;

	r = sbx_rlimits_apply(c->cfg, c->cg, err);
	if (r == 0)
		r = drop_bounding(c, err);
	if (r == 0)
		r = set_ids(c, err);
	if (r == 0)
		r = new_session_keyring(c, err);
	if (r == 0)
		r = set_caps(c, err);
	/* Changing ids reset dumpable to fs.suid_dumpable (1 lets the jail ptrace us until execve).
	 */
	if (r == 0 && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		r = sbx_err_set(err, errno, "cannot make the command non-dumpable until execve");
	/* Changing ids cleared the parent-death signal. */
	if (r == 0 && prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		r = sbx_err_set(err, errno, "cannot set the parent-death signal");
	if (r == 0)
		r = enter_workdir(c, err);
	if (r == 0 && c->cfg->no_new_privs && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		r = sbx_err_set(err, errno, "cannot set no_new_privs");
	return r;
}

static int load_seccomp(const struct sbx_jail_cmd *c, struct sbx_jail_msg *m, struct sbx_err *err)
{
	bool notify = c->seccomp && c->seccomp->notify;
	struct sbx_seccomp_opts so = {
	    .policy = c->cfg->seccomp, .notify = notify, .filter = c->seccomp};
	int r;

	m->ts[SBX_TS_SECCOMP0] = sbx_now_ns();
	/* One id mapped: another id is EPERM, as on the host, not EINVAL. */
	if (!c->ids->range && !c->ids->subid) {
		r = sbx_seccomp_ids_load(c->ids->uid, c->ids->gid, err);
		if (r < 0)
			return sbx_err_wrap(err, "seccomp");
	}
	r = sbx_seccomp_load(&so, err);
	m->ts[SBX_TS_SECCOMP1] = sbx_now_ns();
	if (r < 0)
		return sbx_err_wrap(err, "seccomp");
	if (notify && r > 0) {
		struct sbx_jail_msg n = {.type = SBX_MSG_SECCOMP};

		(void)sbx_jail_send(c->report_fd, &n, &r, 1);
		close(r);
	}
	return 0;
}

void sbx_jail_exec_command(const struct sbx_jail_cmd *c)
{
	struct sbx_jail_msg m = {.type = SBX_MSG_EXEC};
	struct sbx_err err = {0};
	int r;

	m.ts[SBX_TS_GO] = c->ts_go;
	m.ts[SBX_TS_MOUNTED] = c->ts_mounted;
	m.ts[SBX_TS_LAYER0] = c->ts_layer0;
	m.ts[SBX_TS_LAYER1] = c->ts_layer1;
	m.ts[SBX_TS_CMD] = sbx_now_ns();
	reset_signals();
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	r = setup_stdio(c, &err);
	if (r == 0)
		r = privileges(c, &err);
	if (r < 0)
		sbx_jail_die(c->report_fd, &err, 125);
	if (c->exec_fence) {
		int p[2];
		struct sbx_jail_msg fm = {.type = SBX_MSG_FENCE};

		if (pipe2(p, O_CLOEXEC) == 0) {
			(void)sbx_jail_send(c->report_fd, &fm, &p[0], 1);
			close(p[0]); /* p[1] lives until execve (or _exit) */
		}
	}
	/* Every fd but stdio is gone at execve (the report socket too). */
	close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
	if (load_seccomp(c, &m, &err) < 0)
		sbx_jail_die(c->report_fd, &err, 125);
	m.value = (int)getpid();
	m.ts[SBX_TS_EXEC] = sbx_now_ns();
	(void)sbx_jail_send(c->report_fd, &m, NULL, 0);
	r = exec_lookup(c->argv, c->envp);
	{
		struct sbx_jail_msg f = {.type = SBX_MSG_EXEC_FAIL, .errnum = r};

		f.value = sbx_exec_diagnose(c->argv[0] ? c->argv[0] : "", env_get(c->envp, "PATH"),
					    r, f.text, sizeof(f.text));
		(void)sbx_jail_send(c->report_fd, &f, NULL, 0);
	}
	_exit(r == ENOENT || r == ENOTDIR ? 127 : 126);
}
