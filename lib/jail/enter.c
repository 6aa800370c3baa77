/* SPDX-License-Identifier: MIT */
/*
 * lib/jail/enter.c - join a running jail (`sbx exec`): find and verify its init,
 * then a helper that leaves every host fd behind, joins the jail's cgroup
 * and namespaces and forks the command, which becomes the sandbox's user
 * through the jail's own command side (sbx_jail_exec_command).  See
 * lib/jail/enter.h for the picture and the security argument.
 */
#include "enter.h"
#include "jail_int.h"

#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "proc.h"

void sbx_enter_target_init(struct sbx_enter_target *t)
{
	memset(t, 0, sizeof(*t));
	t->init_pid = -1;
	t->pidfd = -1;
	for (int i = 0; i < SBX_ENTER_NNS; i++)
		t->nsfd[i] = -1;
}

void sbx_enter_target_free(struct sbx_enter_target *t)
{
	sbx_closep(&t->pidfd);
	for (int i = 0; i < SBX_ENTER_NNS; i++)
		sbx_closep(&t->nsfd[i]);
	sbx_enter_target_init(t);
}

/* ---- finding init ---- */

static bool start_matches(pid_t pid, uint64_t start)
{
	uint64_t now;

	return start && sbx_proc_starttime(pid, &now) == 0 && start == now;
}

/* Without init_start: a child of the verified supervisor (its start time,
 * or it holds the sandbox's lock file). */
static bool init_by_parent(const struct sbx_enter_record *rec, int dirfd, pid_t pid)
{
	pid_t sup = rec->supervisor_pid;
	long ppid;
	struct stat lock;

	if (sup <= 1 || sup > (1 << 30) || sbx_proc_status_nums(pid, "PPid", &ppid) != 1 ||
	    ppid != sup)
		return false;
	if (rec->supervisor_start)
		return start_matches(sup, rec->supervisor_start);
	if (fstatat(dirfd, "lock", &lock, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(lock.st_mode))
		return false;
	return sbx_proc_holds_file(sup, &lock);
}

/* The lines of /proc/PID/{uid,gid}_map (inside, outside, count); how many. */
static int read_map(pid_t pid, const char *which, unsigned long v[][3], int max,
		    struct sbx_err *err)
{
	char path[64];
	_cleanup_fclose_ FILE *f = NULL;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, which);
	f = fopen(path, "re");
	if (!f)
		return sbx_err_set(err, errno, "cannot read '%s'", path);
	while (n < max && fscanf(f, "%lu %lu %lu", &v[n][0], &v[n][1], &v[n][2]) == 3)
		n++;
	if (n == 0)
		return sbx_err_set(err, EINVAL, "'%s' maps nothing", path);
	return n;
}

/* The inside id that is host id `out` (a one-id line), or -1. */
static long inside_of(unsigned long m[][3], int n, unsigned long out)
{
	for (int i = 0; i < n; i++)
		if (m[i][1] == out && m[i][2] == 1)
			return (long)m[i][0];
	return -1;
}

/* Cross-check with record.policy.user when the record has it already. */
static int check_policy_user(const struct sbx_enter_record *rec, const struct sbx_jail_ids *ids,
			     struct sbx_err *err)
{
	if (!rec->has_user)
		return 0;
	if (rec->uid != (int64_t)ids->uid || rec->host_uid != (int64_t)ids->host_uid)
		return sbx_err_set(err, EPERM,
				   "the sandbox's command runs as uid %lld (host uid %lld), this "
				   "would be %u (host uid %u): was it started by another user?",
				   (long long)rec->uid, (long long)rec->host_uid, ids->uid,
				   ids->host_uid);
	return 0;
}

/* A kept sandbox started by root with another base than today's (the
 * layers are owned by its ids): the record's, when it is one sbx gives. */
static void record_base(const struct sbx_enter_record *rec, struct sbx_jail_ids *ids)
{
	int64_t huid = rec->host_uid, uid = rec->uid < 0 ? 0 : rec->uid;
	unsigned long base;

	if (!ids->range || huid < 0 || huid < uid)
		return;
	base = (unsigned long)(huid - uid);
	if (base == ids->base || !sbx_jail_host_base_valid(base))
		return;
	ids->base = (uid_t)base;
	ids->host_uid = ids->base + ids->uid;
	ids->host_gid = ids->base + ids->gid;
	ids->host_root = ids->base;
}

int sbx_enter_ids(const struct sbx_config *cfg, const struct sbx_enter_record *record, pid_t init,
		  struct sbx_jail_ids *ids, struct sbx_err *err)
{
	unsigned long um[8][3], gm[8][3];
	int r, nu, ng;
	bool by_root;
	long u, g;

	r = sbx_jail_ids_resolve(cfg, ids, err);
	if (r == 0 && init <= 0)
		record_base(record, ids);
	if (r < 0 || init <= 0)
		return r < 0 ? r : check_policy_user(record, ids, err);
	nu = read_map(init, "uid_map", um, 8, err);
	ng = nu < 0 ? nu : read_map(init, "gid_map", gm, 8, err);
	if (ng < 0)
		return ng;
	/* Root's jails map 0..65535 -> 100000..; a user's map the user (and,
	 * with /etc/subuid, the user's subordinate range around it). */
	by_root = nu == 1 && um[0][0] == 0 && um[0][2] == SBX_JAIL_ID_COUNT &&
		  sbx_jail_host_base_valid(um[0][1]);
	if (by_root != ids->range)
		return sbx_err_set(err, EPERM, "the jail was started %s: enter it as %s",
				   by_root ? "by root" : "by an ordinary user",
				   by_root ? "root" : "that user");
	if (ids->range && um[0][1] != ids->base) {
		/* Started with another base (/etc/subuid changed since): its own. */
		ids->base = (uid_t)um[0][1];
		ids->host_uid = ids->base + ids->uid;
		ids->host_gid = ids->base + ids->gid;
		ids->host_root = ids->base;
	}
	if (!ids->range) {
		u = inside_of(um, nu, ids->outer_uid);
		g = inside_of(gm, ng, ids->outer_gid);
		if (u < 0 || g < 0)
			return sbx_err_set(err, EPERM, "the jail belongs to another host user");
		ids->uid = (uid_t)u;
		ids->gid = (gid_t)g;
		ids->subid = nu > 1 && ids->subid;
		ids->host_root = ids->uid == 0 ? ids->outer_uid
				 : ids->subid  ? ids->sub.ustart
					       : (uid_t)-1;
	}
	return check_policy_user(record, ids, err);
}

/* ---- the jail's namespaces, as nsfs fds ---- */

/* pidfs ioctls (linux/pidfd.h, 6.11) and nsfs ones (linux/nsfs.h, 6.10)
 * the build's kernel headers may not have yet. */
#define SBX_PIDFS_IOCTL		   0xFF
#define SBX_PIDFD_GET_NS(n)	   _IO(SBX_PIDFS_IOCTL, (n))
#define SBX_NSIO		   0xb7
#define SBX_NS_GET_USERNS	   _IO(SBX_NSIO, 0x1)
#define SBX_NS_GET_TGID_FROM_PIDNS _IOR(SBX_NSIO, 0x7, int)

/* In the order they are joined: the user namespace first. */
static const struct {
	int flag;
	int pidfs_nr; /* PIDFD_GET_<NS>_NAMESPACE */
	const char *name;
} ns_kinds[SBX_ENTER_NNS] = {
    {CLONE_NEWUSER, 9, "user"},	    {CLONE_NEWNS, 3, "mnt"},   {CLONE_NEWPID, 5, "pid"},
    {CLONE_NEWIPC, 2, "ipc"},	    {CLONE_NEWUTS, 10, "uts"}, {CLONE_NEWNET, 4, "net"},
    {CLONE_NEWCGROUP, 1, "cgroup"},
};
enum { NS_USER = 0, NS_PID = 2, NS_NET = 5 };

static bool same_file(int a, int b)
{
	struct stat sa, sb;

	return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/*
 * Where the namespace fds come from: the pidfd (PIDFD_GET_*_NAMESPACE,
 * Linux 6.11), or /proc/PID/ns/NAME on older kernels (and with the test
 * hook SBX_ENTER_PROC=1).  /proc/PID is checked to still be the pidfd's
 * process after the opens (alive then: it owned PID all along).
 */
struct ns_src {
	int pidfd;
	pid_t pid;
	bool proc;
};

static bool alive(int pidfd)
{
	return syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0 || errno == EPERM;
}

static int ns_fds_of(const struct ns_src *src, const struct sbx_config *cfg, int fds[SBX_ENTER_NNS])
{
	for (int i = 0; i < SBX_ENTER_NNS; i++) {
		char path[64];

		/* A host-network jail has the host's netns: nothing to join. */
		if (i == NS_NET && cfg->net == SBX_NET_HOST)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)src->pid, ns_kinds[i].name);
		fds[i] = src->proc ? open(path, O_RDONLY | O_CLOEXEC)
				   : ioctl(src->pidfd, SBX_PIDFD_GET_NS(ns_kinds[i].pidfs_nr), 0);
		if (fds[i] < 0)
			return -errno;
	}
	return src->proc && !alive(src->pidfd) ? -ESRCH : 0;
}

static void close_all(int fds[SBX_ENTER_NNS])
{
	for (int i = 0; i < SBX_ENTER_NNS; i++)
		sbx_closep(&fds[i]);
}

/* Is the pid namespace of src init's?  Asked of the kernel (6.10), or, on
 * the /proc path, known from src being a child of init: a process's pid
 * namespace never changes, and init's children are in init's (orphans of
 * a nested namespace go to that namespace's reaper, not to init). */
static bool in_init_pidns(const struct ns_src *src, int pidns, pid_t init)
{
	long ppid = -1, level = -1;

	if (!src->proc)
		return ioctl(pidns, SBX_NS_GET_TGID_FROM_PIDNS, 1) == init;
	if (src->pid == init)
		return true;
	return sbx_proc_status_nums(src->pid, "NSpid", &level) == 2 &&
	       sbx_proc_status_nums(src->pid, "PPid", &ppid) == 1 && ppid == init &&
	       alive(src->pidfd);
}

/*
 * Namespaces that came from a jail process are the jail's: its pid
 * namespace is init's, the user namespace owns that pid namespace, and it
 * owns every other one.
 */
static bool ns_verified(const struct ns_src *src, const int fds[SBX_ENTER_NNS], pid_t init)
{
	_cleanup_close_ int owner = -1;

	if (fds[NS_PID] < 0 || fds[NS_USER] < 0 || !in_init_pidns(src, fds[NS_PID], init))
		return false;
	owner = ioctl(fds[NS_PID], SBX_NS_GET_USERNS);
	if (owner < 0 || !same_file(owner, fds[NS_USER]))
		return false;
	for (int i = 0; i < SBX_ENTER_NNS; i++) {
		_cleanup_close_ int o = -1;

		if (i == NS_USER || fds[i] < 0)
			continue;
		o = ioctl(fds[i], SBX_NS_GET_USERNS);
		if (o < 0 || !same_file(o, owner))
			return false;
	}
	return true;
}

/* From a child of init (init itself is not dumpable: unprivileged callers
 * may not look at it), verified. */
static int ns_fds_via_child(struct sbx_enter_target *t, const struct sbx_config *cfg, bool proc,
			    struct sbx_err *err)
{
	char path[64];
	_cleanup_fclose_ FILE *f = NULL;
	long child;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)t->init_pid,
		 (int)t->init_pid);
	f = fopen(path, "re");
	while (f && fscanf(f, "%ld", &child) == 1) {
		_cleanup_close_ int cfd = (int)syscall(SYS_pidfd_open, (pid_t)child, 0);
		struct ns_src src = {cfd, (pid_t)child, proc};
		int fds[SBX_ENTER_NNS] = {-1, -1, -1, -1, -1, -1, -1};

		if (cfd < 0 || ns_fds_of(&src, cfg, fds) < 0 ||
		    !ns_verified(&src, fds, t->init_pid)) {
			close_all(fds);
			continue;
		}
		memcpy(t->nsfd, fds, sizeof(fds));
		t->via_child = true;
		return 0;
	}
	return sbx_err_set(err, 0,
			   "cannot reach the jail's namespaces: its init cannot be inspected "
			   "without privilege and none of its processes can be");
}

static int open_namespaces(struct sbx_enter_target *t, const struct sbx_config *cfg,
			   struct sbx_err *err)
{
	const char *hook = getenv("SBX_ENTER_PROC");
	struct ns_src src = {t->pidfd, t->init_pid, hook && *hook == '1'};
	int r = ns_fds_of(&src, cfg, t->nsfd);

	if ((r == -ENOTTY || r == -EINVAL) && !src.proc) {
		/* No PIDFD_GET_*_NAMESPACE: this kernel is older than 6.11. */
		close_all(t->nsfd);
		src.proc = true;
		r = ns_fds_of(&src, cfg, t->nsfd);
	}
	if (r == 0)
		return ns_verified(&src, t->nsfd, t->init_pid)
			   ? 0
			   : sbx_err_set(err, 0, "the jail's namespaces do not match its init");
	close_all(t->nsfd);
	if (r != -EACCES && r != -EPERM)
		return sbx_err_set(err, -r, "cannot open the namespaces of the jail's init");
	return ns_fds_via_child(t, cfg, src.proc, err);
}

int sbx_enter_find_init(const struct sbx_enter_record *record, int sandbox_dirfd,
			const struct sbx_config *cfg, struct sbx_enter_target *t,
			struct sbx_err *err)
{
	pid_t pid = record->init_pid;
	uint64_t start = record->init_start;
	_cleanup_close_ int pidfd = -1;
	int r;

	if (pid <= 1 || pid > (1 << 30))
		return sbx_err_set(err, 0, "the record names no jail init (still starting?)");
	pidfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
	if (pidfd < 0)
		return sbx_err_set(err, errno == ESRCH ? 0 : errno,
				   "cannot open the jail's init (pid %lld)%s", (long long)pid,
				   errno == ESRCH ? ": it is gone" : "");
	/* Verify what /proc/PID is, then that the pidfd's process is still
	 * alive: then it still owns PID, so it is the process verified.  A
	 * start time counts 10 ms ticks: the jail's init must also be pid 1 of
	 * a pid namespace below ours. */
	if (!sbx_proc_is_ns_init((pid_t)pid) ||
	    (start ? !start_matches(pid, start)
		   : !init_by_parent(record, sandbox_dirfd, (pid_t)pid)))
		return sbx_err_set(err, 0,
				   "pid %lld is not the jail's init any more (the jail is gone)",
				   (long long)pid);
	r = sbx_enter_ids(cfg, record, (pid_t)pid, &t->ids, err);
	if (r == 0 && syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0 && errno == ESRCH)
		r = sbx_err_set(err, 0, "the jail's init (pid %lld) is gone", (long long)pid);
	if (r < 0)
		return r;
	t->init_pid = (pid_t)pid;
	t->pidfd = steal_fd(&pidfd);
	return open_namespaces(t, cfg, err);
}

/* ---- the helper (a fork of sbx exec) ---- */

enum { H_SOCK, H_OUT, H_ERR, H_NS, H_N = H_NS + SBX_ENTER_NNS };

/*
 * Keep fds[] (moved to 3, 4, ...) and stdio; close every other fd, so no
 * host file, directory or socket of sbx's goes along into the jail.
 */
static int keep_only(int fds[H_N], struct sbx_err *err)
{
	int tmp[H_N];

	for (int i = 0; i < H_N; i++) {
		tmp[i] = fds[i] < 0 ? -1 : fcntl(fds[i], F_DUPFD_CLOEXEC, 3 + H_N);
		if (fds[i] >= 0 && tmp[i] < 0)
			return sbx_err_set(err, errno, "cannot move a descriptor");
	}
	for (int i = 0; i < H_N; i++) {
		if (tmp[i] < 0) {
			close(3 + i);
			fds[i] = -1;
		} else if (dup3(tmp[i], 3 + i, O_CLOEXEC) < 0) {
			return sbx_err_set(err, errno, "cannot move a descriptor");
		} else {
			fds[i] = 3 + i;
		}
	}
	if (close_range(3 + H_N, ~0U, 0) < 0)
		return sbx_err_set(err, errno, "cannot close the descriptors sbx holds");
	return 0;
}

static void rearm_pdeathsig(pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (getppid() != parent)
		_exit(1);
}

/* Until execve nothing of this process may be inspected by the jail. */
static void not_dumpable(int sock)
{
	struct sbx_err e = {0};

	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 || prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0) {
		sbx_err_set(&e, errno, "cannot make the entering process non-dumpable");
		sbx_jail_die(sock, &e, 125);
	}
}

/*
 * Take the command's ids here, outside the jail's pid namespace, keeping
 * every capability (in the jail's user namespace): the command side's
 * set_ids() is then a no-op, and a change of ids, which makes a process
 * dumpable again when fs.suid_dumpable is 1, never happens where the jail
 * can see it.  (Host root is nobody in a root-started jail until then; a
 * user's jail maps our own uid, so nothing changes there.)
 */
static int become_ids(const struct sbx_jail_ids *ids, struct sbx_err *err)
{
	cap_t caps = NULL;
	int r = 0;

	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
		return sbx_err_set(err, errno, "cannot keep capabilities");
	if ((ids->range || ids->subid) && setgroups(0, NULL) < 0)
		r = sbx_err_set(err, errno, "cannot clear the supplementary groups");
	else if (setresgid(ids->gid, ids->gid, ids->gid) < 0)
		r = sbx_err_set(err, errno, "cannot become gid %u", ids->gid);
	else if (setresuid(ids->uid, ids->uid, ids->uid) < 0)
		r = sbx_err_set(err, errno, "cannot become uid %u", ids->uid);
	prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0);
	if (r < 0)
		return r;
	/* A uid other than 0 lost the effective set: raise it from permitted. */
	caps = cap_get_proc();
	for (cap_value_t c = 0; caps && c < (cap_value_t)cap_max_bits(); c++) {
		cap_flag_value_t v = CAP_CLEAR;

		if (cap_get_flag(caps, c, CAP_PERMITTED, &v) == 0)
			cap_set_flag(caps, CAP_EFFECTIVE, 1, &c, v);
	}
	if (!caps || cap_set_proc(caps) < 0)
		r = sbx_err_set(err, errno, "cannot keep the capabilities the jail set-up needs");
	if (caps)
		cap_free(caps);
	return r;
}

static int join(const struct sbx_enter_opts *o, int fds[H_N], pid_t parent, struct sbx_err *err)
{
	int r;

	if (o->cg && o->cg->version > 0) {
		r = sbx_cgroup_attach(o->cg, getpid(), err);
		if (r < 0)
			return sbx_err_wrap(err, "cannot join the sandbox's cgroup");
	}
	for (int i = 0; i < SBX_ENTER_NNS; i++) {
		if (fds[H_NS + i] < 0)
			continue;
		if (setns(fds[H_NS + i], ns_kinds[i].flag) < 0)
			return sbx_err_set(err, errno, "cannot join the jail's %s namespace",
					   ns_kinds[i].name);
		sbx_closep(&fds[H_NS + i]);
	}
	r = become_ids(&o->target->ids, err);
	if (r < 0)
		return r;
	/* Joining the user namespace and changing ids reset dumpable to
	 * fs.suid_dumpable and cleared the parent-death signal. */
	not_dumpable(fds[H_SOCK]);
	rearm_pdeathsig(parent);
	/* setns(CLONE_NEWNS) put root and cwd at the jail's root; say it. */
	if (chdir("/") < 0)
		return sbx_err_set(err, errno, "cannot change to the jail's root");
	return 0;
}

static void __attribute__((noreturn))
run_command(const struct sbx_enter_opts *o, const int fds[H_N], int pty)
{
	struct sbx_jail_cmd c = {
	    .cfg = o->cfg,
	    .ids = &o->target->ids,
	    .cg = o->cg,
	    .argv = o->argv,
	    .envp = o->envp,
	    .workdir = o->workdir,
	    .host_cwd = o->host_cwd,
	    .out_fd = fds[H_OUT],
	    .err_fd = fds[H_ERR],
	    .tty = o->tty,
	    .pty_slave = pty,
	    .seccomp = o->seccomp,
	    .report_fd = fds[H_SOCK],
	};

	sbx_jail_exec_command(&c);
}

/* Forward signals to the command, reap it, report its status, exit. */
static void __attribute__((noreturn)) wait_command(int sock, pid_t cmd, pid_t parent)
{
	struct sbx_jail_msg m = {.type = SBX_MSG_STATUS};
	bool frozen = false; /* the supervisor's freeze, until its SIGCONT */
	sigset_t set;

	sbx_jail_fwd_sigset(&set);
	for (;;) {
		siginfo_t si;
		int sig = sigwaitinfo(&set, &si), st;

		if (sig != SIGCHLD && sig > 0) {
			int did = sbx_jail_fwd_pass(&si, cmd, parent, false);

			if (did)
				frozen = did == SIGSTOP;
			continue;
		}
		while (waitpid(cmd, &st, WNOHANG | WUNTRACED) == cmd) {
			if (WIFSTOPPED(st)) { /* told, unless the freeze did it */
				if (frozen)
					continue;
				struct sbx_jail_msg stop = {.type = SBX_MSG_STOPPED,
							    .value = WSTOPSIG(st)};

				(void)sbx_jail_send(sock, &stop, NULL, 0);
				continue;
			}
			m.value = st;
			(void)sbx_jail_send(sock, &m, NULL, 0);
			_exit(0);
		}
	}
}

static void __attribute__((noreturn))
helper_main(const struct sbx_enter_opts *o, int sock, pid_t parent)
{
	int fds[H_N] = {sock, o->out_fd, o->err_fd};
	struct sbx_err err = {0};
	int pty = -1;
	sigset_t set;
	pid_t cmd;

	for (int i = 0; i < SBX_ENTER_NNS; i++)
		fds[H_NS + i] = o->target->nsfd[i];
	not_dumpable(sock);
	rearm_pdeathsig(parent);
	prctl(PR_SET_NAME, "sbx-exec", 0, 0, 0);
	/* before the command is forked into the jail's pid namespace, where
	 * the jail's processes can read its /proc/PID/cmdline until its execve */
	sbx_proc_set_title(o->title, o->title_len, "sbx-exec");
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SBX_JAIL_SIG_CTL);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (keep_only(fds, &err) < 0 || join(o, fds, parent, &err) < 0)
		sbx_jail_die(fds[H_SOCK] >= 0 ? fds[H_SOCK] : sock, &err, 125);
	/* -t: the helper leads the pty's session, the command's group its job */
	if (o->tty) {
		pty = sbx_jail_pty_open(o->target->ids.uid, o->target->ids.gid, &o->term,
					fds[H_SOCK], &err);
		if (pty < 0)
			sbx_jail_die(fds[H_SOCK], &err, 125);
	}
	cmd = fork();
	if (cmd < 0) {
		sbx_err_set(&err, errno, "cannot fork in the jail (is it ending?)");
		sbx_jail_die(fds[H_SOCK], &err, 125);
	}
	if (cmd == 0)
		run_command(o, fds, pty);
	sbx_closep(&pty);
	sbx_closep(&fds[H_OUT]);
	sbx_closep(&fds[H_ERR]);
	wait_command(fds[H_SOCK], cmd, parent);
}

/* ---- sbx exec's side ---- */

/* Read messages until EXEC, EXEC_FAIL or ERROR (or the helper's death). */
static int wait_exec(struct sbx_jail *j, struct sbx_err *err)
{
	struct sbx_jail_msg m;
	int fds[4];
	size_t nfds;

	for (;;) {
		ssize_t n = sbx_jail_recv(j->sync_fd, &m, fds, SBX_ARRAY_SIZE(fds), &nfds);

		if (n <= 0)
			return sbx_err_set(err, n < 0 ? (int)-n : ECHILD,
					   "the process entering the jail died");
		if (m.type == SBX_MSG_PTY && nfds == 1 && j->pty_fd < 0) {
			j->pty_fd = fds[0];
			continue;
		}
		for (size_t i = 0; i < nfds; i++)
			close(fds[i]);
		switch (m.type) {
		case SBX_MSG_ERROR:
			return sbx_err_set(err, m.errnum, "%s", m.text);
		case SBX_MSG_EXEC_FAIL:
		case SBX_MSG_EXEC:
			(void)sbx_jail_exec_result(j, &m);
			return 0;
		default:
			break;
		}
	}
}

int sbx_enter_start(struct sbx_jail *j, const struct sbx_enter_opts *o, struct sbx_err *err)
{
	uint64_t t0 = sbx_now_ns();
	pid_t parent = getpid();
	int sv[2];
	int r;

	if (!o->target || o->target->nsfd[NS_USER] < 0 || o->target->nsfd[NS_PID] < 0)
		return sbx_err_set(err, EINVAL, "no jail to enter");
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return sbx_err_set(err, errno, "cannot create the sync socket");
	fflush(NULL);
	j->init_pid = fork();
	if (j->init_pid < 0) {
		r = errno;
		close(sv[0]);
		close(sv[1]);
		return sbx_err_set(err, r, "cannot fork");
	}
	if (j->init_pid == 0) {
		close(sv[0]);
		helper_main(o, sv[1], parent);
	}
	close(sv[1]);
	j->sync_fd = sv[0];
	j->pidfd = (int)syscall(SYS_pidfd_open, j->init_pid, 0);
	if (j->pidfd < 0)
		r = sbx_err_set(err, errno, "cannot open a pidfd of the entering process");
	else
		r = wait_exec(j, err);
	j->t_namespaces = sbx_ms_since(t0);
	if (r < 0) {
		kill(j->init_pid, SIGKILL);
		(void)waitpid(j->init_pid, NULL, 0);
		j->init_pid = -1;
	}
	return r;
}

void sbx_enter_block_signals(void)
{
	sigset_t fwd;

	sigemptyset(&fwd);
	for (size_t i = 0; i < sbx_jail_n_fwd_signals; i++)
		sigaddset(&fwd, sbx_jail_fwd_signals[i]);
	sigprocmask(SIG_BLOCK, &fwd, NULL);
}
