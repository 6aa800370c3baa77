/* SPDX-License-Identifier: MIT */
/* lib/jail/doctor.c - what this host gives sbx, probed for real (doctor.h). */
#include "doctor.h"

#include "disk.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <sys/wait.h>

#include "config.h"
#include "jail.h"
#include "jail_int.h"
#include "limits.h"

const char *sbx_doctor_status_name(enum sbx_doctor_status s)
{
	static const char *const n[] = {"ok", "fallback", "missing", "info"};

	return n[s];
}

static struct sbx_doctor_check *add(struct sbx_doctor *d, const char *name, const char *title)
{
	struct sbx_doctor_check *c = &d->c[d->n < SBX_DOCTOR_MAX ? d->n++ : SBX_DOCTOR_MAX - 1];

	memset(c, 0, sizeof(*c));
	c->name = name;
	c->title = title;
	return c;
}

static long read_long(const char *path, long dflt)
{
	char buf[64];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return dflt;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return dflt;
	buf[n] = '\0';
	return strtol(buf, NULL, 10);
}

void sbx_doctor_explain_clone(int errnum, char *out, size_t len)
{
	long max_ns = read_long("/proc/sys/user/max_user_namespaces", -1);
	long deb = read_long("/proc/sys/kernel/unprivileged_userns_clone", -1);
	long aa = read_long("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", -1);

	if (max_ns == 0)
		snprintf(out, len,
			 "user namespaces are turned off here (user.max_user_namespaces = 0): as "
			 "root, 'sysctl -w user.max_user_namespaces=15000'; in a container, raise "
			 "the container's own limit the same way, or run sbx on the host");
	else if (geteuid() != 0 && deb == 0)
		snprintf(out, len,
			 "unprivileged user namespaces are turned off "
			 "(kernel.unprivileged_userns_clone = 0): as root, 'sysctl -w "
			 "kernel.unprivileged_userns_clone=1', or run sbx with sudo");
	else if (geteuid() != 0 && aa == 1)
		snprintf(
		    out, len,
		    "AppArmor restricts unprivileged user namespaces "
		    "(kernel.apparmor_restrict_unprivileged_userns = 1, Ubuntu 24.04's default): "
		    "as root, 'sysctl -w kernel.apparmor_restrict_unprivileged_userns=0', add an "
		    "AppArmor profile for sbx that allows userns, or run sbx with sudo");
	else if (errnum == EPERM || errnum == ENOSYS)
		snprintf(out, len,
			 "the kernel refused new namespaces (%s): inside a container, its seccomp "
			 "profile or missing capabilities forbid them (podman: --security-opt "
			 "seccomp=unconfined, or a rootless container); see 'sbx doctor'",
			 strerror(errnum));
	else if (errnum == ENOSPC || errnum == EUSERS)
		snprintf(out, len,
			 "the limit of nested user namespaces is reached (%s): raise "
			 "user.max_user_namespaces, or run sbx one level up",
			 strerror(errnum));
	else
		snprintf(out, len, "%s; see 'sbx doctor'", strerror(errnum));
}

/* ---- the namespace probe: one child, steps reported over a pipe ---- */

enum { P_USERNS, P_MOUNTNS, P_OVERLAY, P_NETNS, P_PIDNS, P_PROC, P_UTS, P_SECCOMP, P_N };

struct probe {
	int err[P_N]; /* 0 ok, errno, -1 not reached */
};

static int overlay_step(void)
{
	static const char *const dirs[] = {"/tmp/sbx-l", "/tmp/sbx-u", "/tmp/sbx-w", "/tmp/sbx-m"};
	int fd;

	for (size_t i = 0; i < SBX_ARRAY_SIZE(dirs); i++)
		if (mkdir(dirs[i], 0755) < 0)
			return errno;
	if (mount("overlay", "/tmp/sbx-m", "overlay", 0,
		  "lowerdir=/tmp/sbx-l,upperdir=/tmp/sbx-u,workdir=/tmp/sbx-w,userxattr") < 0)
		return errno;
	fd = open("/tmp/sbx-m/f", O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int lo_step(void)
{
	struct ifreq ifr = {0};
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), r = 0;

	if (s < 0)
		return errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		r = errno;
	ifr.ifr_flags |= IFF_UP;
	if (r == 0 && ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		r = errno;
	close(s);
	return r;
}

/* In the pid namespace: a fresh /proc (what a container's masks refuse). */
static int proc_step(void)
{
	pid_t g = fork();
	int st;

	if (g < 0)
		return errno;
	if (g == 0) {
		if (mkdir("/tmp/sbx-p", 0755) < 0 && errno != EEXIST)
			_exit(errno);
		_exit(mount("proc", "/tmp/sbx-p", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) <
			      0
			  ? errno
			  : 0);
	}
	if (waitpid(g, &st, 0) < 0)
		return errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : EINTR;
}

static int seccomp_step(void)
{
	struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog prog = {.len = 1, .filter = &allow};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return errno;
	return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0 ? errno : 0;
}

static void __attribute__((noreturn)) probe_child(int go, int res)
{
	int e[P_N];
	char c;

	for (int i = 0; i < P_N; i++)
		e[i] = -1;
	e[P_USERNS] = unshare(CLONE_NEWUSER) < 0 ? errno : 0;
	(void)!write(res, &e[P_USERNS], sizeof(int));
	if (e[P_USERNS] || read(go, &c, 1) != 1 || c != 1)
		_exit(0);
	/* Root of the namespace, as the jail's init becomes (its own uid is
	 * not mapped when root probes sbx's range). */
	if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)
		_exit(0);
	e[P_MOUNTNS] = unshare(CLONE_NEWNS) < 0 ||
			       mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
			       mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=1m") < 0
			   ? errno
			   : 0;
	if (!e[P_MOUNTNS])
		e[P_OVERLAY] = overlay_step();
	e[P_NETNS] = unshare(CLONE_NEWNET) < 0 ? errno : lo_step();
	e[P_PIDNS] = unshare(CLONE_NEWPID) < 0 ? errno : 0;
	if (!e[P_PIDNS] && !e[P_MOUNTNS])
		e[P_PROC] = proc_step();
	e[P_UTS] = unshare(CLONE_NEWUTS) < 0 || sethostname("sbx-doctor", 10) < 0 ? errno : 0;
	e[P_SECCOMP] = seccomp_step();
	(void)!write(res, &e[1], sizeof(int) * (P_N - 1));
	_exit(0);
}

/* The probe as the calling user (or, as_nobody, as uid/gid 65534). */
static void probe_ns(struct probe *p, bool as_nobody)
{
	int go[2], res[2];
	char ok = 1;
	pid_t pid;
	uid_t uid = as_nobody ? 65534 : geteuid();
	gid_t gid = as_nobody ? 65534 : getegid();

	for (int i = 0; i < P_N; i++)
		p->err[i] = -1;
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(res, O_CLOEXEC) < 0)
		return;
	pid = fork();
	if (pid == 0) {
		close(go[1]);
		close(res[0]);
		if (as_nobody && (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 ||
				  setresuid(uid, uid, uid) < 0))
			_exit(1);
		probe_child(go[0], res[1]);
	}
	close(go[0]);
	close(res[1]);
	if (pid > 0 && read(res[0], &p->err[P_USERNS], sizeof(int)) == sizeof(int) &&
	    p->err[P_USERNS] == 0) {
		char path[64], map[64];
		struct sbx_err e = {0};

		/* As root, sbx's range; otherwise the user alone, as a jail does. */
		if (uid == 0)
			snprintf(map, sizeof(map), "0 %u %u\n", sbx_jail_host_base(),
				 SBX_JAIL_ID_COUNT);
		else
			snprintf(map, sizeof(map), "0 %u 1\n", uid);
		snprintf(path, sizeof(path), "/proc/%d/setgroups", (int)pid);
		if (uid != 0)
			(void)sbx_write_file(path, "deny", 4);
		snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)pid);
		if (sbx_write_file(path, map, strlen(map)) < 0)
			ok = 0;
		if (uid != 0)
			snprintf(map, sizeof(map), "0 %u 1\n", gid);
		snprintf(path, sizeof(path), "/proc/%d/gid_map", (int)pid);
		if (ok && sbx_write_file(path, map, strlen(map)) < 0)
			ok = 0;
		if (!ok)
			p->err[P_USERNS] = EPERM;
		(void)e;
		(void)!write(go[1], &ok, 1);
		if (ok)
			(void)!read(res[0], &p->err[1], sizeof(int) * (P_N - 1));
	}
	close(go[1]);
	close(res[0]);
	if (pid > 0)
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
}

/* ---- checks ---- */

/* Inside a container?  Its marker file, pid 1's container= variable (what
 * podman, docker and systemd-nspawn set), or a cgroup path that names one. */
static void where(struct sbx_doctor *d)
{
	struct stat st;
	char buf[4096] = "", env[4096] = "";
	int fd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		buf[n > 0 ? n : 0] = '\0';
		close(fd);
	}
	fd = open("/proc/1/environ", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, env, sizeof(env) - 1);
		close(fd);
		for (ssize_t i = 0; i < n; i++)
			if (env[i] == '\0')
				env[i] = '\n';
		env[n > 0 ? n : 0] = '\0';
	}
	if (stat("/run/.containerenv", &st) == 0 || strstr(buf, "libpod") ||
	    strstr(env, "container=podman"))
		snprintf(d->where, sizeof(d->where), "a podman container");
	else if (strstr(buf, "/docker") || strstr(env, "container=docker"))
		snprintf(d->where, sizeof(d->where), "a docker container");
	else if (strstr(buf, "kubepods"))
		snprintf(d->where, sizeof(d->where), "a Kubernetes pod");
	else if (strstr(env, "container="))
		snprintf(d->where, sizeof(d->where), "a container");
}

static const char *who(bool nobody)
{
	return nobody ? "as an ordinary user (nobody)" : geteuid() == 0 ? "as root" : "as you";
}

/* User namespaces: false when nothing else can be probed. */
static bool userns_check(struct sbx_doctor *d, const struct probe *p, bool nobody, const char *w)
{
	struct sbx_doctor_check *c;

	c = add(d, nobody ? "userns_user" : "userns", "user namespaces");
	if (nobody && p->err[P_USERNS] < 0) {
		c->status = SBX_DOC_INFO;
		snprintf(c->detail, sizeof(c->detail),
			 "%s: not probed (nobody is not an id of this user namespace)", w);
		return false;
	}
	if (p->err[P_USERNS] == 0) {
		if (!nobody && geteuid() == 0)
			snprintf(c->detail, sizeof(c->detail),
				 "%s: jail ids 0-65535 are host %u-%u%s", w, sbx_jail_host_base(),
				 sbx_jail_host_base() + SBX_JAIL_ID_COUNT - 1,
				 sbx_jail_host_base() != SBX_JAIL_HOST_BASE
				     ? " (above every /etc/subuid range)"
				     : "");
		else
			snprintf(c->detail, sizeof(c->detail), "%s: the jail maps the user", w);
	} else {
		c->status = SBX_DOC_MISSING;
		snprintf(c->detail, sizeof(c->detail),
			 "%s: cannot create one (%s): sbx cannot "
			 "isolate a run and never runs one without",
			 w, p->err[P_USERNS] > 0 ? strerror(p->err[P_USERNS]) : "not probed");
		sbx_doctor_explain_clone(p->err[P_USERNS] > 0 ? p->err[P_USERNS] : EPERM, c->fix,
					 sizeof(c->fix));
		return false;
	}
	return true;
}

/* The mount namespace and overlayfs, as root and as nobody. */
static void mount_checks(struct sbx_doctor *d, const struct probe *p, bool nobody, const char *w)
{
	struct sbx_doctor_check *c;

	c = add(d, nobody ? "mountns_user" : "mountns", "mount namespace");
	if (p->err[P_MOUNTNS] == 0)
		snprintf(c->detail, sizeof(c->detail), "%s: private mounts, tmpfs", w);
	else {
		c->status = SBX_DOC_MISSING;
		snprintf(c->detail, sizeof(c->detail), "%s: %s", w, strerror(p->err[P_MOUNTNS]));
		snprintf(c->fix, sizeof(c->fix),
			 "a container must allow mount(2) in a user "
			 "namespace of its own (its seccomp profile)");
	}
	c = add(d, nobody ? "overlay_user" : "overlay", "overlayfs");
	if (p->err[P_OVERLAY] == 0)
		snprintf(c->detail, sizeof(c->detail),
			 "%s: copy-on-write layers (images, the default profile's home and "
			 "working directory)",
			 w);
	else {
		c->status = SBX_DOC_MISSING;
		snprintf(c->detail, sizeof(c->detail),
			 "%s: %s: profiles with copy-on-write directories or an image's writable "
			 "layer fail; binds and 'writable = no' still work",
			 w, p->err[P_OVERLAY] > 0 ? strerror(p->err[P_OVERLAY]) : "not probed");
		snprintf(c->fix, sizeof(c->fix),
			 "Linux 5.11 or later allows overlayfs in a user "
			 "namespace");
	}
}

/* The other namespaces and seccomp (probed once, as the caller). */
static void jail_ns_checks(struct sbx_doctor *d, const struct probe *p, const char *w)
{
	struct sbx_doctor_check *c;

	c = add(d, "pidns", "pid namespace, /proc");
	if (p->err[P_PIDNS] == 0 && p->err[P_PROC] == 0)
		snprintf(c->detail, sizeof(c->detail),
			 "%s: the jail is pid 1 with a /proc of its own", w);
	else {
		c->status = SBX_DOC_MISSING;
		snprintf(c->detail, sizeof(c->detail), "%s: %s", w,
			 p->err[P_PIDNS] ? strerror(p->err[P_PIDNS] > 0 ? p->err[P_PIDNS] : EPERM)
					 : "a fresh /proc cannot be mounted");
		snprintf(c->fix, sizeof(c->fix),
			 "a container that masks /proc refuses a fresh one: podman --security-opt "
			 "unmask=ALL (or systempaths=unconfined)");
	}
	c = add(d, "netns", "network namespace");
	if (p->err[P_NETNS] == 0)
		snprintf(c->detail, sizeof(c->detail), "%s: own loopback, up (--net none, proxy)",
			 w);
	else {
		c->status = SBX_DOC_MISSING;
		snprintf(c->detail, sizeof(c->detail), "%s: %s: only --net host would run", w,
			 strerror(p->err[P_NETNS] > 0 ? p->err[P_NETNS] : EPERM));
	}
	c = add(d, "hostname", "hostname");
	if (p->err[P_UTS] == 0)
		snprintf(c->detail, sizeof(c->detail), "%s: the jail's own (sbx-ID)", w);
	else {
		c->status = SBX_DOC_FALLBACK;
		snprintf(c->detail, sizeof(c->detail),
			 "%s: %s: the jail keeps the container's hostname (its UTS namespace is "
			 "still its own); a profile that sets one fails",
			 w, strerror(p->err[P_UTS] > 0 ? p->err[P_UTS] : EPERM));
		snprintf(c->fix, sizeof(c->fix),
			 "the container's seccomp profile refuses "
			 "sethostname without CAP_SYS_ADMIN");
	}
	c = add(d, "seccomp", "seccomp");
	if (p->err[P_SECCOMP] == 0) {
		bool notif = syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0,
				     &(unsigned int){SECCOMP_RET_USER_NOTIF}) == 0;

		snprintf(c->detail, sizeof(c->detail), "filters load%s",
			 notif
			     ? "; user notification: blocked calls are logged (audit)"
			     : "; no user notification: blocked calls are refused but not logged");
	} else {
		c->status = SBX_DOC_MISSING;
		snprintf(c->detail, sizeof(c->detail), "%s", strerror(p->err[P_SECCOMP]));
	}
}

static void ns_checks(struct sbx_doctor *d, const struct probe *p, bool nobody)
{
	const char *w = who(nobody);

	if (!userns_check(d, p, nobody, w))
		return;
	mount_checks(d, p, nobody, w);
	if (!nobody)
		jail_ns_checks(d, p, w);
}

static void idmap_check(struct sbx_doctor *d)
{
	struct sbx_doctor_check *c = add(d, "idmap", "idmapped mounts");
	char dir[] = "/var/tmp/sbx-doctor.XXXXXX";
	struct sbx_err e = {0};
	int ns, fd = -1;

	if (!mkdtemp(dir)) {
		c->status = SBX_DOC_FALLBACK;
		snprintf(c->detail, sizeof(c->detail), "not probed: %s", strerror(errno));
		return;
	}
	ns = sbx_idmap_userns(1000, sbx_jail_host_base(), 1000, sbx_jail_host_base(), &e);
	if (ns >= 0)
		fd = sbx_idmap_tree(dir, ns, false, 0);
	if (fd >= 0) {
		snprintf(c->detail, sizeof(c->detail),
			 "a user's project is written as its owner under sudo; root's files show "
			 "as the jail's root's in copy-on-write views");
		close(fd);
	} else if (ns < 0) {
		/* The user namespace check above already says why and how to fix it. */
		c->status = SBX_DOC_FALLBACK;
		snprintf(c->detail, sizeof(c->detail),
			 "not probed: an idmapped mount needs a user namespace, and none can be "
			 "created here (%s)",
			 strerror(-ns));
	} else {
		c->status = SBX_DOC_FALLBACK;
		snprintf(c->detail, sizeof(c->detail),
			 "%s: read-write binds are written as uid %u (a user's project is not "
			 "writable under sudo), copy-on-write views show files as they are",
			 strerror(-fd), sbx_jail_host_base());
		if (d->where[0])
			snprintf(c->fix, sizeof(c->fix),
				 "inside %s: idmapped mounts need CAP_SYS_ADMIN of the host's user "
				 "namespace, which a container does not have",
				 d->where);
		else
			snprintf(c->fix, sizeof(c->fix),
				 "Linux 5.12 or later, and a filesystem "
				 "that supports idmapped mounts (ext4, xfs, "
				 "btrfs, tmpfs)");
	}
	if (ns >= 0)
		close(ns);
	rmdir(dir);
}

static void subid_check(struct sbx_doctor *d)
{
	struct sbx_doctor_check *c = add(d, "subid", "subordinate ids");
	struct sbx_subid s;

	if (sbx_subid_lookup(geteuid(), getegid(), &s)) {
		snprintf(c->detail, sizeof(c->detail),
			 "/etc/subuid %u-%u (newuidmap): programs can switch ids in a jail",
			 s.ustart, s.ustart + s.ucount - 1);
		return;
	}
	c->status = SBX_DOC_FALLBACK;
	snprintf(c->detail, sizeof(c->detail),
		 "none for this user (or no newuidmap): the jail maps one id; switching to "
		 "another is EPERM (apt-get cannot drop to _apt)");
	snprintf(c->fix, sizeof(c->fix),
		 "as root: apt-get install uidmap; usermod --add-subuids 100000-165535 "
		 "--add-subgids 100000-165535 USER");
}

static void cgroup_check(struct sbx_doctor *d)
{
	struct sbx_doctor_check *c = add(d, "cgroup", "cgroups");
	struct sbx_config cfg;
	struct sbx_cgroup cg = {0};
	struct sbx_err e = {0};
	char id[32];

	sbx_config_init(&cfg);
	cfg.memory = 64 << 20;
	cfg.pids = 64;
	cfg.cpus_milli = 1000;
	snprintf(id, sizeof(id), "doctor-%d", (int)getpid());
	if (sbx_cgroup_create(&cg, id, &cfg, &e) < 0) {
		c->status = SBX_DOC_FALLBACK;
		snprintf(c->detail, sizeof(c->detail), "%.400s: limits fall back to rlimits",
			 e.msg);
	} else {
		if (cg.version == 0)
			c->status = SBX_DOC_FALLBACK;
		snprintf(c->detail, sizeof(c->detail),
			 "%s: memory %s, pids %s, cpu %s%s%.200s%s%.300s",
			 cg.version == 2   ? "cgroup v2"
			 : cg.version == 1 ? "cgroup v1"
					   : "none usable",
			 sbx_enforce_name(cg.memory), sbx_enforce_name(cg.pids),
			 sbx_enforce_name(cg.cpus), cg.note[0] ? "; " : "", cg.note,
			 cg.why[0] ? "; " : "", cg.why);
		if (cg.version == 0 && geteuid() != 0)
			snprintf(c->fix, sizeof(c->fix),
				 "a delegated cgroup v2 subtree (systemd-run --user --scope -p "
				 "Delegate=yes), or run sbx as root");
		else if (cg.version == 0)
			snprintf(
			    c->fix, sizeof(c->fix),
			    "a cgroup hierarchy sbx may write (inside a container: cgroup v2 with "
			    "its subtree delegated to the container)");
		if (cg.version > 0)
			(void)sbx_cgroup_destroy(&cg, &e);
	}
	sbx_cgroup_free(&cg);
	sbx_config_free(&cfg);
}

/* Where the writable layers of a run with the default cap would be. */
static void layers_cap(struct sbx_doctor_check *c, const char *dir, const char *existing)
{
	bool loop = sbx_disk_loop_usable();
	struct sbx_disk_cap cap;
	struct sbx_err e = {0};
	char sz[32];

	if (sbx_disk_cap(existing, SBX_UNSET, !loop, &cap, &e) < 0) {
		c->status = SBX_DOC_MISSING;
		snprintf(c->detail, sizeof(c->detail), "%.400s", e.msg);
		snprintf(c->fix, sizeof(c->fix),
			 "free space there, or SBX_STATE_DIR on another "
			 "filesystem");
		return;
	}
	sbx_size_text((double)cap.size, sz, sizeof(sz));
	snprintf(c->detail, sizeof(c->detail), "%.300s: writable layers capped at %s (%s)%s%.200s",
		 dir, sz,
		 loop		  ? "an ext4 image on a loop device"
		 : geteuid() == 0 ? "a tmpfs: no loop device or mke2fs"
				  : "a tmpfs in the jail, in memory",
		 cap.clamped ? "; " : "", cap.clamped ? cap.why : "");
	if (!loop && geteuid() == 0) {
		c->status = SBX_DOC_FALLBACK;
		snprintf(c->fix, sizeof(c->fix), "%s",
			 sbx_disk_mke2fs() ? "a kernel with loop devices "
					     "(modprobe loop)"
					   : "apt-get install e2fsprogs");
	}
}

static void statedir_check(struct sbx_doctor *d, const char *dir)
{
	struct sbx_doctor_check *c = add(d, "statedir", "state directory");
	_cleanup_free_ char *p = dir ? sbx_xstrdup(dir) : NULL;
	struct statfs f;

	/* The nearest directory of it that exists: its filesystem. */
	while (p && statfs(p, &f) < 0 && strrchr(p, '/') && strcmp(p, "/") != 0)
		*(strrchr(p, '/') == p ? p + 1 : strrchr(p, '/')) = '\0';
	if (!p || statfs(p, &f) < 0) {
		c->status = SBX_DOC_INFO;
		snprintf(c->detail, sizeof(c->detail), "not known (no $HOME, no --state-dir)");
		return;
	}
	if (f.f_type == OVERLAYFS_SUPER_MAGIC) {
		c->status = SBX_DOC_FALLBACK;
		snprintf(
		    c->detail, sizeof(c->detail),
		    "%.300s is on an overlayfs (a container's root): writable layers cannot be "
		    "there, so they live in memory (a tmpfs of the [limits] disk cap, at most a "
		    "quarter of the memory)",
		    dir);
		snprintf(c->fix, sizeof(c->fix),
			 "--state-dir (or SBX_STATE_DIR) on a volume or "
			 "a tmpfs of the container");
		return;
	}
	layers_cap(c, dir, p);
}

static void info_checks(struct sbx_doctor *d)
{
	struct sbx_doctor_check *c = add(d, "tun", "TUN device");
	int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);

	c->status = SBX_DOC_INFO;
	snprintf(c->detail, sizeof(c->detail), "%s (not needed by this version's network modes)",
		 fd >= 0 ? "available" : strerror(errno));
	if (fd >= 0)
		close(fd);
}

/*
 * Proxy mode's capture, tried as a jail's init does it: in a new user and
 * network namespace (no id maps yet), lo up, then the rules and routes
 * (capture.c).  Without it proxy mode still works for the programs that
 * use the proxy variables.
 */
struct capture_probe {
	int ok;
	char why[SBX_MSG_TEXT];
};

static void capture_check(struct sbx_doctor *d)
{
	struct sbx_doctor_check *c = add(d, "nftables", "capture (nf_tables)");
	struct capture_probe res = {0};
	int p[2], st;
	pid_t pid;

	c->status = SBX_DOC_FALLBACK;
	if (pipe2(p, O_CLOEXEC) < 0) {
		snprintf(c->detail, sizeof(c->detail), "not probed: %s", strerror(errno));
		return;
	}
	pid = fork();
	if (pid == 0) {
		struct sbx_err e = {0};
		bool v6 = false;

		close(p[0]);
		if (unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0)
			snprintf(res.why, sizeof(res.why),
				 "not probed: capture is set up in a user namespace, and none can "
				 "be created here (%s)",
				 strerror(errno));
		else if (sbx_jail_lo_up(&e) < 0)
			snprintf(res.why, sizeof(res.why), "%.400s", e.msg);
		else
			/* the proxy's default port; any port loads the same rules */
			res.ok = sbx_jail_capture(3128, &v6, res.why, sizeof(res.why)) == 0;
		(void)!write(p[1], &res, sizeof(res));
		_exit(0);
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &res, sizeof(res)) != (ssize_t)sizeof(res))
		snprintf(res.why, sizeof(res.why), "the probe ended without a result");
	close(p[0]);
	if (pid > 0)
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	res.why[sizeof(res.why) - 1] = '\0';
	if (res.ok) {
		c->status = SBX_DOC_OK;
		snprintf(c->detail, sizeof(c->detail),
			 "proxy mode captures every TCP connection and DNS query in the jail's "
			 "network namespace (nftables through libnftnl)");
		return;
	}
	snprintf(c->detail, sizeof(c->detail),
		 "%.400s: proxy mode captures nothing, only programs that use the proxy "
		 "variables reach the allowlist",
		 res.why);
	if (strstr(res.why, "libnftnl.so.11 cannot be loaded"))
		snprintf(c->fix, sizeof(c->fix), "install libnftnl11 (apt-get install libnftnl11)");
}

void sbx_doctor_run(struct sbx_doctor *d, const char *state_dir)
{
	struct utsname u;
	struct probe p, q;

	memset(d, 0, sizeof(*d));
	if (uname(&u) == 0)
		snprintf(d->kernel, sizeof(d->kernel), "%s %s %s", u.sysname, u.release, u.machine);
	where(d);
	probe_ns(&p, false);
	ns_checks(d, &p, false);
	d->isolated = p.err[P_USERNS] == 0 && p.err[P_MOUNTNS] == 0 && p.err[P_PIDNS] == 0 &&
		      p.err[P_PROC] == 0 && p.err[P_SECCOMP] == 0;
	if (geteuid() == 0) {
		probe_ns(&q, true);
		ns_checks(d, &q, true);
		idmap_check(d);
	} else {
		subid_check(d);
	}
	cgroup_check(d);
	statedir_check(d, state_dir);
	info_checks(d);
	capture_check(d);
}

json_t *sbx_doctor_json(const struct sbx_doctor *d)
{
	json_t *a = json_array();

	for (size_t i = 0; i < d->n; i++) {
		const struct sbx_doctor_check *c = &d->c[i];

		json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:s, s:s?}", "name", c->name,
						   "title", c->title, "status",
						   sbx_doctor_status_name(c->status), "detail",
						   c->detail, "fix", c->fix[0] ? c->fix : NULL));
	}
	return json_pack(
	    "{s:s, s:i, s:s?, s:b, s:o, s:o}", "kernel", d->kernel, "uid", (int)geteuid(),
	    "container", d->where[0] ? d->where : NULL, "isolated", d->isolated, "host_base",
	    geteuid() == 0 ? json_integer(sbx_jail_host_base()) : json_null(), "checks", a);
}
