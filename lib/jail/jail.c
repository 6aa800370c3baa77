/* SPDX-License-Identifier: MIT */
/*
 * lib/jail/jail.c - the supervisor's half of starting a jail: clone into new
 * namespaces, write the id maps, attach the cgroup, hand idmapped lower
 * layers to init, and wait until the command is exec'd or set-up failed;
 * the command's exit code.  The sync protocol is in protocol.c, the ids
 * and environment in ids.c, the layers after a run in layers.c.
 */
#include "jail_int.h"
#include "fault.h"
#include "doctor.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <linux/openat2.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

/* ---- starting ---- */

void sbx_jail_init(struct sbx_jail *j)
{
	memset(j, 0, sizeof(*j));
	j->init_pid = -1;
	j->pidfd = j->sync_fd = j->pty_fd = j->listen_fd = j->seccomp_fd = j->layer_fd = -1;
	j->ns_user_fd = j->ns_net_fd = j->fence_fd = -1;
	for (size_t i = 0; i < SBX_ARRAY_SIZE(j->capture_fds); i++)
		j->capture_fds[i] = -1;
	j->cmd_pid = -1;
}

void sbx_jail_free(struct sbx_jail *j)
{
	sbx_closep(&j->pidfd);
	sbx_closep(&j->sync_fd);
	sbx_closep(&j->pty_fd);
	sbx_closep(&j->listen_fd);
	for (size_t i = 0; i < SBX_ARRAY_SIZE(j->capture_fds); i++)
		sbx_closep(&j->capture_fds[i]);
	sbx_closep(&j->layer_fd);
	sbx_closep(&j->seccomp_fd);
	sbx_closep(&j->ns_user_fd);
	sbx_closep(&j->fence_fd);
	sbx_closep(&j->ns_net_fd);
	free(j->warnings);
	free(j->exec_msg);
	free(j->mount_owner);
	for (size_t i = 0; j->mount_ro && i < j->n_mount_ro; i++)
		free(j->mount_ro[i]);
	free(j->mount_ro);
	sbx_jail_init(j);
}

void sbx_jail_kill(struct sbx_jail *j)
{
	if (j->pidfd >= 0)
		(void)syscall(SYS_pidfd_send_signal, j->pidfd, SIGKILL, NULL, 0);
}

static int write_map(pid_t pid, const char *file, const char *data, struct sbx_err *err)
{
	char path[64];
	int r;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	r = sbx_write_file(path, data, strlen(data));
	if (r < 0)
		return sbx_err_set(err, -r, "cannot write '%s' (\"%s\")", path, data);
	return 0;
}

static int write_id_maps(pid_t pid, const struct sbx_jail_ids *ids, struct sbx_err *err)
{
	char map[64];
	int r;

	if (ids->range) {
		snprintf(map, sizeof(map), "0 %u %u\n", ids->base, SBX_JAIL_ID_COUNT);
		r = write_map(pid, "uid_map", map, err);
		return r < 0 ? r : write_map(pid, "gid_map", map, err);
	}
	if (ids->subid)
		return sbx_subid_write_maps(&ids->sub, pid, ids->uid, ids->gid, err);
	r = write_map(pid, "setgroups", "deny", err);
	if (r < 0)
		return r;
	snprintf(map, sizeof(map), "%u %u 1\n", ids->uid, ids->outer_uid);
	r = write_map(pid, "uid_map", map, err);
	if (r < 0)
		return r;
	snprintf(map, sizeof(map), "%u %u 1\n", ids->gid, ids->outer_gid);
	return write_map(pid, "gid_map", map, err);
}

/* The proxy listener, and with capture the other sockets in the netns. */
static void take_listeners(struct sbx_jail *j, const struct sbx_jail_msg *m, int *fds, size_t nfds)
{
	size_t k = 0;

	j->capture_on = m->value != 0 && nfds > 1;
	snprintf(j->capture_why, sizeof(j->capture_why), "%.255s", m->text);
	for (size_t i = 0; i < nfds; i++) {
		if (i == 0 && j->listen_fd < 0)
			j->listen_fd = fds[i];
		else if (i > 0 && k < SBX_ARRAY_SIZE(j->capture_fds))
			j->capture_fds[k++] = fds[i];
		else
			close(fds[i]);
	}
}

static void add_warning(struct sbx_jail *j, const char *text)
{
	size_t n = strlen(text) + 1;

	j->warnings = sbx_xrealloc(j->warnings, j->warnings_len + n);
	memcpy(j->warnings + j->warnings_len, text, n);
	j->warnings_len += n;
}

/* A read-write bind shown read-only (not world-writable): root owns it,
 * or its group is root's and its owner has no other; said once. */
static void note_read_only(struct sbx_jail *j, const struct sbx_jail_opts *o,
			   const struct sbx_mount *m, uid_t owner, const char *why)
{
	_cleanup_free_ char *msg = NULL;
	const char *what = o->host_cwd && strcmp(o->host_cwd, m->src) == 0 ? "the project" : "bind";

	if (owner == 0)
		msg = sbx_xasprintf("%s '%s' is read-only in the jail: %s, and a jail never writes "
				    "as host root; to let the jail write it, run sbx as the user "
				    "who should own the changes, or chown the directory to that "
				    "user (sbx then writes it as that user)",
				    what, m->src, why);
	else
		msg = sbx_xasprintf("%s '%s' is read-only in the jail: %s; a jail never writes as "
				    "host root's group; to let the jail write it, chgrp it to the "
				    "group its files should have (sbx then writes it as uid %u and "
				    "that group)",
				    what, m->src, why, owner);
	add_warning(j, msg);
}

/* The owner-mapping user namespace for uid:gid (one kept at a time). */
static int owner_ns(const struct sbx_jail_opts *o, uid_t u, gid_t g, int *userns, uid_t *ns_uid,
		    gid_t *ns_gid)
{
	struct sbx_err e = {0};

	if (*userns < 0 || *ns_uid != u || *ns_gid != g) {
		sbx_closep(userns);
		*userns = sbx_idmap_userns(u, o->ids.host_uid, g, o->ids.host_gid, &e);
		*ns_uid = u;
		*ns_gid = g;
	}
	return *userns;
}

/*
 * A copy-on-write lower, as root: a directory an ordinary user owns shows
 * as the jail's user's (as a read-write bind of it would, so `sudo sbx run
 * -- make` in a user's project can write its copy-on-write view); any
 * other through the jail's own mapping (host root's files as the jail's
 * root's).  The upper directory is made to match (sbx_jail_layer_owner).
 */
static int idmap_lower(const struct sbx_jail_opts *o, const struct sbx_mount *m, int jail_ns,
		       int *userns, uid_t *ns_uid, gid_t *ns_gid)
{
	uid_t u;
	gid_t g;
	int ns = jail_ns, fd;

	if (sbx_idmap_bind_owner(m->src, &u, &g) == 1)
		ns = owner_ns(o, u, g, userns, ns_uid, ns_gid);
	fd = ns < 0 ? -1 : sbx_idmap_tree(m->src, ns, false, 0);
	return fd < 0 ? -1 : fd;
}

/*
 * A read-write bind, as root (lib/jail/idmap.c): a directory an ordinary user
 * owns is idmapped so that the jail's user writes as that owner; one that
 * root owns (and that is not world-writable) is shown read-only through
 * the jail's own mapping (root's files as the jail's root's, readable as
 * they are on the host, never written).  -1: a plain bind (world-writable,
 * missing, or the filesystem refuses idmapping: said).
 */
static int idmap_bind(struct sbx_jail *j, const struct sbx_jail_opts *o, size_t i, int jail_ns,
		      int *userns, uid_t *ns_uid, gid_t *ns_gid)
{
	const struct sbx_mount *m = &o->cfg->mounts[i];
	const uint64_t attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
	struct stat st;
	uid_t u;
	gid_t g;
	int own = sbx_idmap_bind_owner(m->src, &u, &g), fd;

	if (own < 0 || stat(m->src, &st) < 0)
		return -1;
	if (own == 0 && (st.st_mode & S_IWOTH))
		return -1;
	if (own == 0) {
		char *why = sbx_idmap_read_only_why(u);

		fd = sbx_idmap_tree(m->src, jail_ns, true, attrs | MOUNT_ATTR_RDONLY);
		note_read_only(j, o, m, u, why);
		if (fd >= 0)
			j->mount_ro[i] = why;
		else
			free(why);
		return fd < 0 ? -1 : fd;
	}
	fd = owner_ns(o, u, g, userns, ns_uid, ns_gid);
	if (fd >= 0)
		fd = sbx_idmap_tree(m->src, fd, true, attrs);
	if (fd < 0) {
		_cleanup_free_ char *msg = sbx_xasprintf(
		    "'%s' is written as uid %u, not as its owner %u: it cannot be idmapped (%s)",
		    m->src, o->ids.host_uid, u, strerror(-fd));

		add_warning(j, msg);
		return -1;
	}
	j->mount_owner[i] = u;
	return fd;
}

static void idmap_lowers(struct sbx_jail *j, const struct sbx_jail_opts *o, pid_t pid, int *fds,
			 size_t *n)
{
	const struct sbx_config *cfg = o->cfg;
	_cleanup_close_ int userns = -1;
	_cleanup_close_ int bind_ns = -1;
	uid_t ns_uid = 0;
	gid_t ns_gid = 0;
	char path[64];

	*n = 0;
	j->mount_owner = sbx_xcalloc(cfg->n_mounts + 1, sizeof(*j->mount_owner));
	j->mount_ro = sbx_xcalloc(cfg->n_mounts + 1, sizeof(*j->mount_ro));
	j->n_mount_ro = cfg->n_mounts;
	for (size_t i = 0; i < cfg->n_mounts; i++)
		j->mount_owner[i] = (uid_t)-1;
	if (!o->ids.range)
		return;
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
	userns = open(path, O_RDONLY | O_CLOEXEC);
	if (userns < 0)
		return;
	/* Slots: [0] the image, then one per overlay and per read-write bind. */
	fds[(*n)++] = o->rootfs_dir ? sbx_idmap_tree(o->rootfs_dir, userns, false, 0) : -1;
	for (size_t i = 0; i < cfg->n_mounts && *n < SBX_MSG_MAXFDS; i++) {
		const struct sbx_mount *m = &cfg->mounts[i];

		if (m->kind == SBX_MNT_OVERLAY)
			fds[(*n)++] = idmap_lower(o, m, userns, &bind_ns, &ns_uid, &ns_gid);
		else if (m->kind == SBX_MNT_BIND)
			fds[(*n)++] = idmap_bind(j, o, i, userns, &bind_ns, &ns_uid, &ns_gid);
	}
	for (size_t i = 0; i < *n; i++)
		if (fds[i] < 0)
			fds[i] = -1;
}

/* O_PATH of DIR/NAME, or -1. */
static int open_path(int dir, const char *name)
{
	return openat(dir, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/*
 * opts->layer_later, once init has GO: the layers' filesystem from
 * opts->layer_ready, and to init a detached clone of its mount (attached
 * in the jail's namespace, where an overlay takes its upper from) with
 * every layer's upper and work directory opened on it, so that init, by
 * then the jail's root, need not open the sandbox's (the host root's)
 * directories and can wait for them where it first needs them.  Or no
 * mount and a tmpfs's size.  A jail that died meanwhile is no error here:
 * wait_exec() says why it died.
 */
static int send_layer(struct sbx_jail *j, const struct sbx_jail_opts *o, struct sbx_err *err)
{
	const struct sbx_config *cfg = o->cfg;
	struct sbx_jail_msg m = {.type = SBX_MSG_DISK};
	int fds[SBX_MSG_MAXFDS] = {0};
	size_t n = 0;
	_cleanup_close_ int mnt = -1;
	int r = o->layer_ready(o->after_go_data, &mnt, &m.ts[0], err);

	if (r < 0)
		return r;
	if (mnt >= 0) {
		fds[n++] = open_tree(mnt, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
		if (fds[0] < 0)
			return sbx_err_set(err, errno, "cannot clone the writable layer's mount");
		/* the layout of lib/jail/mounts.c capture_layers */
		if (o->rootfs_dir && cfg->rootfs_writable) {
			fds[n++] = open_path(fds[0], "upper");
			fds[n++] = open_path(fds[0], "work");
		}
		for (size_t i = 0; i < cfg->n_mounts && n + 2 <= SBX_MSG_MAXFDS; i++) {
			char p[48];

			if (cfg->mounts[i].kind != SBX_MNT_OVERLAY)
				continue;
			snprintf(p, sizeof(p), "overlays/%zu/upper", i);
			fds[n++] = open_path(fds[0], p);
			snprintf(p, sizeof(p), "overlays/%zu/work", i);
			fds[n++] = open_path(fds[0], p);
		}
	}
	(void)sbx_jail_send_slots(j->sync_fd, &m, fds, n);
	for (size_t i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return 0;
}

static pid_t clone_init(int flags, int *pidfd)
{
	return (pid_t)syscall(SYS_clone, (unsigned long)flags | CLONE_PIDFD | SIGCHLD, NULL, pidfd,
			      NULL, 0);
}

static double ts_ms(uint64_t a, uint64_t b)
{
	return b > a ? (double)(b - a) / 1e6 : 0.0;
}

bool sbx_jail_exec_result(struct sbx_jail *j, const struct sbx_jail_msg *m)
{
	if (m->type == SBX_MSG_EXEC_FAIL) {
		j->exec_errno = m->errnum ? m->errnum : ENOENT;
		free(j->exec_msg);
		j->exec_msg = m->text[0] ? sbx_xstrdup(m->text) : NULL;
		j->exec_absent = m->value != 0;
		return true;
	}
	if (m->type != SBX_MSG_EXEC)
		return false;
	j->exec_ok = true;
	j->cmd_pid = m->value;
	j->t_seccomp = ts_ms(m->ts[SBX_TS_SECCOMP0], m->ts[SBX_TS_SECCOMP1]);
	return true;
}

/* Read messages until EXEC, EXEC_FAIL or ERROR (or init's death). */
static int wait_exec(struct sbx_jail *j, struct sbx_err *err)
{
	struct sbx_jail_msg m;
	int fds[4];
	size_t nfds;

	for (;;) {
		ssize_t n = sbx_jail_recv(j->sync_fd, &m, fds, SBX_ARRAY_SIZE(fds), &nfds);

		if (n <= 0)
			return sbx_err_set(err, n < 0 ? (int)-n : ECHILD,
					   "the jail's init died during set-up");
		switch (m.type) {
		case SBX_MSG_ERROR:
			for (size_t i = 0; i < nfds; i++)
				close(fds[i]);
			return sbx_err_set(err, m.errnum, "%s", m.text);
		case SBX_MSG_WARN:
			add_warning(j, m.text);
			break;
		case SBX_MSG_PTY:
			if (nfds == 1)
				j->pty_fd = fds[0];
			break;
		case SBX_MSG_LISTEN:
			take_listeners(j, &m, fds, nfds);
			break;
		case SBX_MSG_SECCOMP:
			if (nfds == 1)
				j->seccomp_fd = fds[0];
			break;
		case SBX_MSG_FENCE:
			if (nfds == 1 && j->fence_fd < 0)
				j->fence_fd = fds[0];
			else
				for (size_t i = 0; i < nfds; i++)
					close(fds[i]);
			break;
		case SBX_MSG_LAYER:
			if (nfds == 1 && j->layer_fd < 0)
				j->layer_fd = fds[0];
			else
				for (size_t i = 0; i < nfds; i++)
					close(fds[i]);
			break;
		case SBX_MSG_EXEC_FAIL:
			(void)sbx_jail_exec_result(j, &m);
			return 0;
		case SBX_MSG_EXEC:
			sbx_fault_point("before-exec");
			(void)sbx_jail_exec_result(j, &m);
			j->t_layer_wait = ts_ms(m.ts[SBX_TS_LAYER0], m.ts[SBX_TS_LAYER1]);
			j->t_mounts =
			    ts_ms(m.ts[SBX_TS_GO], m.ts[SBX_TS_MOUNTED]) - j->t_layer_wait;
			j->t_exec = ts_ms(m.ts[SBX_TS_MOUNTED], m.ts[SBX_TS_EXEC]) - j->t_seccomp;
			return 0;
		default:
			for (size_t i = 0; i < nfds; i++)
				close(fds[i]);
			break;
		}
	}
}

static int clone_flags(const struct sbx_jail_opts *o)
{
	int f = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS;

	if (o->cfg->net != SBX_NET_HOST)
		f |= CLONE_NEWNET;
	return f;
}

/* Between clone and GO: maps, cgroup, idmapped lowers. */
static int prepare_child(struct sbx_jail *j, const struct sbx_jail_opts *o, struct sbx_err *err)
{
	int fds[SBX_MSG_MAXFDS];
	size_t n = 0;
	int r;

	r = write_id_maps(j->init_pid, &o->ids, err);
	if (r < 0)
		return r;
	if (o->cg && o->cg->version > 0) {
		r = sbx_cgroup_attach(o->cg, j->init_pid, err);
		if (r < 0)
			return r;
	}
	idmap_lowers(j, o, j->init_pid, fds, &n);
	if (o->keep_ns) {
		char p[64];

		snprintf(p, sizeof(p), "/proc/%d/ns/user", (int)j->init_pid);
		j->ns_user_fd = open(p, O_RDONLY | O_CLOEXEC);
		snprintf(p, sizeof(p), "/proc/%d/ns/net", (int)j->init_pid);
		j->ns_net_fd = open(p, O_RDONLY | O_CLOEXEC);
		if (j->ns_user_fd < 0 || j->ns_net_fd < 0)
			return sbx_err_set(err, errno, "cannot open the jail's namespaces");
	}
	r = sbx_jail_send_slots(j->sync_fd, &(struct sbx_jail_msg){.type = SBX_MSG_GO}, fds, n);
	if (r < 0)
		r = sbx_err_set(err, -r, "cannot release the jail");
	for (size_t i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return r;
}

int sbx_jail_start(struct sbx_jail *j, const struct sbx_jail_opts *o, struct sbx_err *err)
{
	struct sbx_jail_child c = {.o = o};
	uint64_t t0 = sbx_now_ns();
	sigset_t fwd;
	int sv[2];
	int r;

	sigemptyset(&fwd);
	for (size_t i = 0; i < sbx_jail_n_fwd_signals; i++)
		sigaddset(&fwd, sbx_jail_fwd_signals[i]);
	/* Blocked until the supervisor's signalfd takes them (the command unblocks). */
	sigprocmask(SIG_BLOCK, &fwd, NULL);
	/*
	 * An ignored signal never reaches a signalfd: a shell starts background
	 * jobs with SIGINT and SIGQUIT ignored, yet `kill -INT` of sbx must
	 * reach the command.  Only SIGHUP (nohup) and SIGTSTP (a caller that
	 * must not be suspended) keep an inherited SIG_IGN.
	 */
	for (size_t i = 0; i < sbx_jail_n_fwd_signals; i++) {
		struct sigaction sa;
		int sig = sbx_jail_fwd_signals[i];

		if (sig != SIGHUP && sig != SIGTSTP && sigaction(sig, NULL, &sa) == 0 &&
		    sa.sa_handler == SIG_IGN)
			signal(sig, SIG_DFL);
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return sbx_err_set(err, errno, "cannot create the jail's sync socket");
	fflush(NULL);
	j->init_pid = clone_init(clone_flags(o), &j->pidfd);
	if (j->init_pid < 0) {
		r = errno;
		close(sv[0]);
		close(sv[1]);
		char why[512];

		sbx_doctor_explain_clone(r, why, sizeof(why));
		return sbx_err_set(err, 0, "cannot create the jail's namespaces: %s", why);
	}
	if (j->init_pid == 0) {
		close(sv[0]);
		c.sock = sv[1];
		sbx_jail_init_main(&c);
	}
	close(sv[1]);
	j->sync_fd = sv[0];
	sbx_fault_point("after-clone");
	r = prepare_child(j, o, err);
	sbx_fault_point("during-mounts");
	j->t_namespaces = sbx_ms_since(t0);
	if (r == 0 && o->layer_later)
		r = send_layer(j, o, err);
	if (r == 0 && o->after_go)
		o->after_go(j, o->after_go_data);
	if (r == 0)
		r = wait_exec(j, err);
	if (r < 0) {
		sbx_jail_kill(j);
		(void)waitpid(j->init_pid, NULL, 0);
		j->init_pid = -1;
	}
	return r;
}

bool sbx_jail_exec_landed(struct sbx_jail *j, int timeout_ms)
{
	struct pollfd q = {.fd = j->fence_fd, .events = POLLIN};
	struct sbx_jail_msg m;
	int n;

	if (!j->exec_ok || j->exec_errno)
		return false;
	if (j->fence_fd < 0)
		return true;
	do
		n = poll(&q, 1, timeout_ms);
	while (n < 0 && errno == EINTR);
	close(j->fence_fd);
	j->fence_fd = -1;
	/* a failed execve sent EXEC_FAIL before the pipe's end: the next message */
	return !(recv(j->sync_fd, &m, sizeof(m), MSG_PEEK | MSG_DONTWAIT) > 0 &&
		 m.type == SBX_MSG_EXEC_FAIL);
}

int sbx_jail_exit_code(const struct sbx_jail *j, const struct sbx_jail_result *r)
{
	if (r->timed_out)
		return 124;
	if (j->exec_errno)
		return j->exec_errno == ENOENT || j->exec_errno == ENOTDIR ? 127 : 126;
	if (!r->have_status)
		return 128 + SIGKILL;
	if (WIFEXITED(r->status))
		return WEXITSTATUS(r->status);
	if (WIFSIGNALED(r->status))
		return 128 + WTERMSIG(r->status);
	return 125;
}
