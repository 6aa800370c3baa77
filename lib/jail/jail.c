/* SPDX-License-Identifier: MIT */
/*
 * lib/jail/jail.c - the supervisor's half of starting a jail: clone into new
 * namespaces, write the id maps, attach the cgroup, hand idmapped lower
 * layers to init, and wait until the command is exec'd or set-up failed.
 */
#include "jail_int.h"
#include "fault.h"
#include "doctor.h"
#include "rmtree.h"
#include "treecopy.h"

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

extern char **environ;

const int sbx_jail_fwd_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH};
const size_t sbx_jail_n_fwd_signals = SBX_ARRAY_SIZE(sbx_jail_fwd_signals);

void sbx_jail_fwd_sigset(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGCHLD);
	for (size_t i = 0; i < sbx_jail_n_fwd_signals; i++)
		sigaddset(set, sbx_jail_fwd_signals[i]);
}

void sbx_jail_winsize(struct winsize *ws)
{
	if (ioctl(STDIN_FILENO, TIOCGWINSZ, ws) < 0)
		memset(ws, 0, sizeof(*ws));
}

int sbx_openat2(int dirfd, const char *path, int flags, uint64_t resolve)
{
	struct open_how how = {.flags = (uint64_t)flags | O_CLOEXEC, .resolve = resolve};

	return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

/* ---- the sync protocol ---- */

int sbx_jail_send(int sock, const struct sbx_jail_msg *m, const int *fds, size_t nfds)
{
	char cbuf[CMSG_SPACE(sizeof(int) * SBX_MSG_MAXFDS)];
	struct iovec iov = {.iov_base = (void *)m, .iov_len = sizeof(*m)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

	if (nfds > SBX_MSG_MAXFDS)
		return -E2BIG;
	if (nfds > 0) {
		struct cmsghdr *cm;

		memset(cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	}
	for (;;) {
		if (sendmsg(sock, &mh, MSG_NOSIGNAL) >= 0)
			return 0;
		if (errno != EINTR)
			return -errno;
	}
}

ssize_t sbx_jail_recv(int sock, struct sbx_jail_msg *m, int *fds, size_t maxfds, size_t *nfds)
{
	char cbuf[CMSG_SPACE(sizeof(int) * SBX_MSG_MAXFDS)];
	struct iovec iov = {.iov_base = m, .iov_len = sizeof(*m)};
	struct msghdr mh = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
	ssize_t n;

	if (nfds)
		*nfds = 0;
	memset(m, 0, sizeof(*m));
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		size_t k;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (fds && nfds && *nfds < maxfds)
				fds[(*nfds)++] = fd;
			else
				close(fd);
		}
	}
	m->text[SBX_MSG_TEXT - 1] = '\0';
	return n;
}

void sbx_jail_report(int sock, int type, int errnum, const char *fmt, ...)
{
	struct sbx_jail_msg m;
	va_list ap;

	memset(&m, 0, sizeof(m));
	m.type = type;
	m.errnum = errnum;
	va_start(ap, fmt);
	vsnprintf(m.text, sizeof(m.text), fmt, ap);
	va_end(ap);
	(void)sbx_jail_send(sock, &m, NULL, 0);
}

void sbx_jail_die(int sock, const struct sbx_err *err, int code)
{
	sbx_jail_report(sock, SBX_MSG_ERROR, err->errnum, "%s", err->msg);
	_exit(code);
}

int sbx_jail_rearm_pdeathsig(int sock, struct sbx_err *err)
{
	struct pollfd p = {.fd = sock, .events = POLLIN};

	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		return sbx_err_set(err, errno, "cannot set the parent-death signal");
	/* The id change also reset dumpable to fs.suid_dumpable. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return sbx_err_set(err, errno, "cannot make init non-dumpable");
	/* The supervisor never sends while we set up: readable means EOF. */
	if (poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP)))
		_exit(1);
	return 0;
}

/* ---- ids ---- */

/* Ranges of /etc/subuid-style FILE that overlap [base, base + count):
 * the end of the highest such range, or 0. */
static unsigned long overlapping_end(const char *file, unsigned long base)
{
	_cleanup_fclose_ FILE *f = fopen(file, "re");
	char line[512];
	unsigned long end = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		unsigned long start, n;

		if (!c2)
			continue;
		start = strtoul(c1 + 1, NULL, 10);
		n = strtoul(c2 + 1, NULL, 10);
		if (n && start < base + SBX_JAIL_ID_COUNT && start + n > base && start + n > end)
			end = start + n;
	}
	return end;
}

bool sbx_jail_host_base_valid(unsigned long base)
{
	return base == SBX_JAIL_HOST_BASE ||
	       (base >= 2 * SBX_JAIL_ID_COUNT && base % SBX_JAIL_ID_COUNT == 0 &&
		base <= 0xffffffffUL - 2 * SBX_JAIL_ID_COUNT);
}

uid_t sbx_jail_host_base(void)
{
	static unsigned long base;
	unsigned long b = SBX_JAIL_HOST_BASE, e;

	if (base)
		return (uid_t)base;
	for (int rounds = 0; rounds < 4096; rounds++) {
		e = overlapping_end("/etc/subuid", b);
		if (!e)
			e = overlapping_end("/etc/subgid", b);
		if (!e)
			break;
		b = (e + SBX_JAIL_ID_COUNT - 1) / SBX_JAIL_ID_COUNT * SBX_JAIL_ID_COUNT;
		if (!sbx_jail_host_base_valid(b)) {
			b = SBX_JAIL_HOST_BASE; /* every range taken: nothing better */
			break;
		}
	}
	base = b;
	return (uid_t)base;
}

/* Not the initial user namespace ("0 0 4294967295"): *parent is uid one
 * level up. */
static bool nested_userns(uid_t uid, uid_t *parent)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/uid_map", "re");
	unsigned long in, out, n;
	bool nested = false;

	*parent = uid;
	if (!f)
		return false;
	while (fscanf(f, "%lu %lu %lu", &in, &out, &n) == 3) {
		if (!(in == 0 && out == 0 && n == 4294967295UL))
			nested = true;
		if (uid >= in && uid - in < n)
			*parent = (uid_t)(out + (uid - in));
	}
	return nested;
}

/* Does map (our own uid_map or gid_map) cover base and the
 * SBX_JAIL_ID_COUNT ids after it? */
static bool range_mapped(const char *map, unsigned long base)
{
	_cleanup_fclose_ FILE *f = fopen(map, "re");
	unsigned long in, out, n;

	if (!f)
		return true; /* no user namespaces at all: the initial one */
	while (fscanf(f, "%lu %lu %lu", &in, &out, &n) == 3)
		if (in <= base && in + n >= base + SBX_JAIL_ID_COUNT)
			return true;
	return false;
}

int sbx_jail_ids_resolve(const struct sbx_config *cfg, struct sbx_jail_ids *ids,
			 struct sbx_err *err)
{
	memset(ids, 0, sizeof(*ids));
	ids->outer_uid = geteuid();
	ids->outer_gid = getegid();
	/* Root maps the jail's ids to its range only where that range exists:
	 * root of a container's user namespace (rootless podman) often has
	 * only a few ids, and then maps itself, as an ordinary user does. */
	ids->base = ids->outer_uid == 0 ? sbx_jail_host_base() : 0;
	ids->range = ids->outer_uid == 0 && range_mapped("/proc/self/uid_map", ids->base) &&
		     range_mapped("/proc/self/gid_map", ids->base);
	ids->nested = nested_userns(ids->outer_uid, &ids->parent_uid);
	if (cfg->user_set && cfg->user_root) {
		ids->uid = 0;
		ids->gid = 0;
	} else if (cfg->user_set) {
		ids->uid = cfg->uid;
		ids->gid = cfg->gid;
	} else {
		ids->uid = getuid();
		ids->gid = getgid();
	}
	if (ids->range) {
		if (ids->uid >= SBX_JAIL_ID_COUNT || ids->gid >= SBX_JAIL_ID_COUNT)
			return sbx_err_set(err, ERANGE,
					   "user %u:%u is outside the jail's id range 0..%u",
					   ids->uid, ids->gid, SBX_JAIL_ID_COUNT - 1);
		ids->host_uid = ids->base + ids->uid;
		ids->host_gid = ids->base + ids->gid;
		ids->host_root = ids->base;
	} else {
		ids->host_uid = ids->outer_uid;
		ids->host_gid = ids->outer_gid;
		ids->host_root = ids->uid == 0 ? ids->outer_uid : (uid_t)-1;
		/* The user's subordinate range, the user's own id where the
		 * jail's user is (when that fits in the range). */
		if (sbx_subid_lookup(ids->outer_uid, ids->outer_gid, &ids->sub) &&
		    ids->uid <= ids->sub.ucount && ids->gid <= ids->sub.gcount) {
			ids->subid = true;
			if (ids->uid != 0)
				ids->host_root = ids->sub.ustart;
		}
	}
	return 0;
}

/* ---- environment ---- */

static bool env_has(const struct sbx_strv *env, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < env->n; i++)
		if (strncmp(env->v[i], name, n) == 0 && env->v[i][n] == '=')
			return true;
	return false;
}

/* Set NAME=VALUE, replacing an earlier entry. */
static void env_put(struct sbx_strv *env, const char *entry)
{
	const char *eq = strchr(entry, '=');
	size_t n = eq ? (size_t)(eq - entry) : strlen(entry);

	for (size_t i = 0; i < env->n; i++) {
		if (strncmp(env->v[i], entry, n) == 0 && env->v[i][n] == '=') {
			free(env->v[i]);
			env->v[i] = sbx_xstrdup(entry);
			return;
		}
	}
	sbx_strv_push(env, entry);
}

static void env_pass(const struct sbx_config *cfg, struct sbx_strv *env)
{
	for (char **e = environ; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		_cleanup_free_ char *name = NULL;

		if (!eq)
			continue;
		name = sbx_xstrndup(*e, (size_t)(eq - *e));
		for (size_t i = 0; i < cfg->env_pass.n; i++) {
			if (fnmatch(cfg->env_pass.v[i], name, 0) == 0) {
				env_put(env, *e);
				break;
			}
		}
	}
}

void sbx_jail_build_env(const struct sbx_config *cfg, const struct sbx_jail_ids *ids,
			bool host_root, bool tty, char *const *extra, struct sbx_strv *out)
{
	const char *home = getenv("HOME");

	if (!cfg->env_clear)
		for (char **e = environ; e && *e; e++)
			sbx_strv_push(out, *e);
	env_pass(cfg, out);
	for (size_t i = 0; i < cfg->env_set.n; i++)
		env_put(out, cfg->env_set.v[i]);
	for (size_t i = 0; extra && extra[i]; i++)
		env_put(out, extra[i]);
	if (!env_has(out, "PATH"))
		sbx_strv_push(out,
			      "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
	if (!env_has(out, "HOME")) {
		if (host_root && home && home[0] == '/')
			sbx_strv_push_take(out, sbx_xasprintf("HOME=%s", home));
		else
			sbx_strv_push(out, ids->uid == 0 ? "HOME=/root" : "HOME=/");
	}
	if (tty && !env_has(out, "TERM")) {
		const char *term = getenv("TERM");

		sbx_strv_push_take(out, sbx_xasprintf("TERM=%s", term && *term ? term : "xterm"));
	}
}

/* ---- starting ---- */

void sbx_jail_init(struct sbx_jail *j)
{
	memset(j, 0, sizeof(*j));
	j->init_pid = -1;
	j->pidfd = j->sync_fd = j->pty_fd = j->listen_fd = j->seccomp_fd = j->layer_fd = -1;
	j->cmd_pid = -1;
}

void sbx_jail_free(struct sbx_jail *j)
{
	sbx_closep(&j->pidfd);
	sbx_closep(&j->sync_fd);
	sbx_closep(&j->pty_fd);
	sbx_closep(&j->listen_fd);
	sbx_closep(&j->layer_fd);
	sbx_closep(&j->seccomp_fd);
	free(j->warnings);
	free(j->exec_msg);
	free(j->mount_owner);
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

static void add_warning(struct sbx_jail *j, const char *text)
{
	size_t n = strlen(text) + 1;

	j->warnings = sbx_xrealloc(j->warnings, j->warnings_len + n);
	memcpy(j->warnings + j->warnings_len, text, n);
	j->warnings_len += n;
}

/* A root-owned read-write bind (not world-writable): said once. */
static void note_root_owned(struct sbx_jail *j, const struct sbx_jail_opts *o,
			    const struct sbx_mount *m)
{
	_cleanup_free_ char *msg = NULL;
	bool project = o->host_cwd && strcmp(o->host_cwd, m->src) == 0;

	msg = sbx_xasprintf("%s '%s' is read-only in the jail: root owns it, and a jail never "
			    "writes as host root; to let the jail write it, run sbx as the user "
			    "who should own the changes, or chown the directory to that user "
			    "(sbx then writes it as that user)",
			    project ? "the project" : "bind", m->src);
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
static int idmap_bind(struct sbx_jail *j, const struct sbx_jail_opts *o, size_t i,
		      int jail_ns, int *userns, uid_t *ns_uid, gid_t *ns_gid)
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
		fd = sbx_idmap_tree(m->src, jail_ns, true, attrs | MOUNT_ATTR_RDONLY);
		note_root_owned(j, o, m);
		if (fd >= 0)
			j->mount_owner[i] = 0;
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

/* SCM_RIGHTS cannot carry -1: send the valid ones and a bitmap of which. */
static int send_go(int sock, const int *fds, size_t n, struct sbx_err *err)
{
	struct sbx_jail_msg m = {.type = SBX_MSG_GO};
	int valid[SBX_MSG_MAXFDS];
	size_t nv = 0;
	int r;

	for (size_t i = 0; i < n; i++) {
		if (fds[i] >= 0) {
			valid[nv++] = fds[i];
			if (i < sizeof(m.text))
				m.text[i] = 1;
		}
	}
	m.value = (int)n;
	r = sbx_jail_send(sock, &m, valid, nv);
	if (r < 0)
		return sbx_err_set(err, -r, "cannot release the jail");
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
			if (nfds == 1)
				j->listen_fd = fds[0];
			break;
		case SBX_MSG_SECCOMP:
			if (nfds == 1)
				j->seccomp_fd = fds[0];
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
			j->t_mounts = ts_ms(m.ts[SBX_TS_GO], m.ts[SBX_TS_MOUNTED]);
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
	r = send_go(j->sync_fd, fds, n, err);
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
	 * reach the command.  Only SIGHUP keeps an inherited SIG_IGN (nohup).
	 */
	for (size_t i = 0; i < sbx_jail_n_fwd_signals; i++) {
		struct sigaction sa;
		int sig = sbx_jail_fwd_signals[i];

		if (sig != SIGHUP && sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN)
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

/* Open parent/name, a directory the kernel's overlay made mode 0: its owner
 * (us, or root) makes it searchable first.  Never follows a symlink. */
static int open_marker_dir(int parent, const char *name)
{
	if (parent < 0)
		return -1;
	if (fchmodat(parent, name, 0700, AT_SYMLINK_NOFOLLOW) < 0)
		return -1;
	return sbx_openat2(parent, name, O_RDONLY | O_DIRECTORY,
			   RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
}

/* The overlay's volatile marker DIR/work/work/incompat/volatile/dirty. */
static int drop_volatile_marker(int dirfd, const char *dir, struct sbx_err *err)
{
	_cleanup_close_ int work = -1;
	_cleanup_close_ int ww = -1;
	_cleanup_close_ int inc = -1;
	_cleanup_close_ int vol = -1;

	work = sbx_openat2(dirfd, dir, O_RDONLY | O_DIRECTORY,
			   RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	ww = open_marker_dir(work, "work");
	inc = open_marker_dir(ww, "incompat");
	vol = open_marker_dir(inc, "volatile");
	if (vol < 0)
		return errno == ENOENT ? 0 : sbx_err_set(err, errno, "cannot open '%s/work'", dir);
	if ((unlinkat(vol, "dirty", 0) < 0 && errno != ENOENT) ||
	    (unlinkat(inc, "volatile", AT_REMOVEDIR) < 0 && errno != ENOENT) ||
	    (unlinkat(ww, "incompat", AT_REMOVEDIR) < 0 && errno != ENOENT))
		return sbx_err_set(err, errno, "cannot remove the volatile marker in '%s/work'",
				   dir);
	return 0;
}

int sbx_jail_layers_settle(const char *layer_dir, const struct sbx_config *cfg, bool rootfs_layer,
			   struct sbx_err *err)
{
	_cleanup_close_ int fd = -1;
	int r = 0;

	fd = open(layer_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return sbx_err_set(err, errno, "cannot open '%s'", layer_dir);
	if (syncfs(fd) < 0)
		return sbx_err_set(err, errno, "cannot sync the writable layer in '%s'", layer_dir);
	if (rootfs_layer)
		r = drop_volatile_marker(fd, "work", err);
	for (size_t i = 0; r == 0 && i < cfg->n_mounts; i++) {
		char dir[48];

		if (cfg->mounts[i].kind != SBX_MNT_OVERLAY)
			continue;
		snprintf(dir, sizeof(dir), "overlays/%zu/work", i);
		r = drop_volatile_marker(fd, dir, err);
	}
	return r;
}

/* The upper directories of the layout: "upper" (rootfs_layer), then
 * "overlays/I/upper" for each overlay entry.  NULL past the end. */
static const char *layer_upper(const struct sbx_config *cfg, bool rootfs_layer, size_t *k,
			       char buf[48])
{
	if (*k == 0) {
		(*k)++;
		if (rootfs_layer)
			return "upper";
	}
	while (*k - 1 < cfg->n_mounts) {
		size_t i = (*k)++ - 1;

		if (cfg->mounts[i].kind == SBX_MNT_OVERLAY) {
			snprintf(buf, 48, "overlays/%zu/upper", i);
			return buf;
		}
	}
	return NULL;
}

/* SKELETON: NAME and its sibling work/ (and the directories above them)
 * made in `to` with the modes they have in `from`. */
static int make_skeleton(int from, int to, const char *name, struct sbx_err *err)
{
	char path[48], work[48];
	const char *dirs[] = {name, work};
	size_t n = strlen(name) - strlen("upper");

	snprintf(work, sizeof(work), "%.*swork", (int)n, name);
	for (const char *sl = strchr(name, '/'); sl; sl = strchr(sl + 1, '/')) {
		snprintf(path, sizeof(path), "%.*s", (int)(sl - name), name);
		if (mkdirat(to, path, 0700) < 0 && errno != EEXIST)
			return sbx_err_set(err, errno, "cannot create '%s'", path);
	}
	for (size_t i = 0; i < SBX_ARRAY_SIZE(dirs); i++) {
		struct stat st;

		if (fstatat(from, dirs[i], &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) ||
		    mkdirat(to, dirs[i], 0700) < 0 || fchmodat(to, dirs[i], st.st_mode & 07777, 0) < 0)
			return sbx_err_set(err, errno, "cannot create '%s'", dirs[i]);
	}
	return 0;
}

/* INTO / REPLACE: the contents of from/NAME into to/NAME, or into a copy
 * beside it (a copy an earlier crash left there goes first) that then
 * takes its place in one rename. */
static int copy_upper(int from, int to, const char *name, bool replace, struct sbx_err *err)
{
	const int dflags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
	_cleanup_free_ char *tmp = sbx_xasprintf("%s.new", name);
	struct sbx_tree_copy_stats st;
	struct stat old;
	_cleanup_close_ int s = -1;
	_cleanup_close_ int d = -1;
	int r = 0;

	s = openat(from, name, dflags);
	if (s < 0)
		return sbx_err_set(err, errno, "cannot open the writable layer '%s'", name);
	if (replace) {
		(void)sbx_rm_rf_at(to, tmp);
		if (fstatat(to, name, &old, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(old.st_mode) ||
		    mkdirat(to, tmp, 0700) < 0 || fchmodat(to, tmp, old.st_mode & 07777, 0) < 0)
			r = sbx_err_set(err, errno, "cannot make '%s'", tmp);
	}
	if (r == 0 && (d = openat(to, replace ? tmp : name, dflags)) < 0)
		r = sbx_err_set(err, errno, "cannot open '%s'", replace ? tmp : name);
	if (r == 0)
		r = sbx_tree_copy(s, d, &st, err);
	if (r == 0 && replace && renameat2(to, tmp, to, name, RENAME_EXCHANGE) < 0)
		r = sbx_err_set(err, errno, "cannot put '%s' in place", name);
	if (replace)
		(void)sbx_rm_rf_at(to, tmp); /* the old one, or the failed copy */
	return r;
}

int sbx_jail_layers_copy(int from, int to, const struct sbx_config *cfg, bool rootfs_layer,
			 enum sbx_layers_copy how, struct sbx_err *err)
{
	char buf[48];
	const char *name;
	size_t k = 0;
	int r = 0;

	while ((name = layer_upper(cfg, rootfs_layer, &k, buf))) {
		struct sbx_err e = {0};
		int r1 = how == SBX_LAYERS_SKELETON
			     ? make_skeleton(from, to, name, &e)
			     : copy_upper(from, to, name, how == SBX_LAYERS_REPLACE, &e);

		if (r1 < 0 && r == 0) {
			r = r1;
			*err = e;
			sbx_err_wrap(err, "copying the in-memory writable layer");
		}
	}
	return r;
}

int sbx_jail_keep_layers(const struct sbx_jail *j, const char *layer_dir,
			 const struct sbx_config *cfg, bool rootfs_layer, bool replace,
			 struct sbx_err *err)
{
	_cleanup_close_ int dst = -1;

	if (j->layer_fd < 0)
		return sbx_err_set(err, EBADF, "the jail has no in-memory writable layer");
	dst = open(layer_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dst < 0)
		return sbx_err_set(err, errno, "cannot open '%s'", layer_dir);
	return sbx_jail_layers_copy(j->layer_fd, dst, cfg, rootfs_layer,
				    replace ? SBX_LAYERS_REPLACE : SBX_LAYERS_INTO, err);
}

struct keep_arg {
	const struct sbx_jail *j;
	const char *layer_dir;
	const struct sbx_config *cfg;
	bool rootfs_layer, replace;
};

static int keep_fn(void *p)
{
	struct keep_arg *a = p;
	struct sbx_err e = {0};

	return sbx_jail_keep_layers(a->j, a->layer_dir, a->cfg, a->rootfs_layer, a->replace, &e);
}

int sbx_jail_keep_layers_as(const struct sbx_jail *j, const struct sbx_jail_ids *ids,
			    const char *layer_dir, const struct sbx_config *cfg, bool rootfs_layer,
			    bool replace, struct sbx_err *err)
{
	struct keep_arg a = {j, layer_dir, cfg, rootfs_layer, replace};
	int r;

	if (!ids->subid)
		return sbx_jail_keep_layers(j, layer_dir, cfg, rootfs_layer, replace, err);
	if (j->layer_fd < 0)
		return sbx_err_set(err, EBADF, "the jail has no in-memory writable layer");
	r = sbx_subid_call(&ids->sub, keep_fn, &a);
	if (r < 0)
		return sbx_err_set(err, -r,
				   "copying the in-memory writable layer (as the subordinate ids "
				   "of /etc/subuid) to '%s' failed",
				   layer_dir);
	return 0;
}
