/* SPDX-License-Identifier: MIT */
/*
 * lib/limits/limits_cgfs.c - cgroup filesystem helpers and the cgroup v1 backend
 * (memory, pids, cpu, cpuacct, freezer hierarchies, one directory each).
 */
#include "limits_int.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

const char *const sbx_cg_ctrl_names[SBX_CG_NCTRL] = {
    "memory", "pids", "cpu", "cpuacct", "freezer",
};

static void sleep_ms(long ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

void sbx_cg_pids_text(uint64_t pids, char *buf, size_t len)
{
	if (pids > 4194304)
		snprintf(buf, len, "max");
	else
		snprintf(buf, len, "%" PRIu64, pids);
}

char *sbx_cg_join(const char *dir, const char *name)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	while (*name == '/')
		name++;
	if (!*name)
		return sbx_xstrndup(dir, n);
	if (n == 1 && dir[0] == '/')
		return sbx_xasprintf("/%s", name);
	return sbx_xasprintf("%.*s/%s", (int)n, dir, name);
}

bool sbx_cg_is_cgroupfs(const char *dir)
{
	struct statfs st;

	if (statfs(dir, &st) < 0)
		return false;
	return st.f_type == CGROUP2_SUPER_MAGIC || st.f_type == CGROUP_SUPER_MAGIC;
}

bool sbx_cg_has(const char *dir, const char *file)
{
	_cleanup_free_ char *p = sbx_cg_join(dir, file);

	return access(p, F_OK) == 0;
}

int sbx_cg_write(bool fake, const char *dir, const char *file, const char *val)
{
	_cleanup_free_ char *p = sbx_cg_join(dir, file);
	int flags = O_WRONLY | O_CLOEXEC | O_NOCTTY | O_TRUNC | (fake ? O_CREAT : 0);
	_cleanup_close_ int fd = open(p, flags, 0644);
	size_t len = strlen(val);
	ssize_t w;

	if (fd < 0)
		return -errno;
	/* cgroup files take one write per value: no partial-write loop. */
	do
		w = write(fd, val, len);
	while (w < 0 && errno == EINTR);
	if (w < 0)
		return -errno;
	return (size_t)w == len ? 0 : -EIO;
}

int sbx_cg_read(const char *dir, const char *file, char **out)
{
	_cleanup_free_ char *p = sbx_cg_join(dir, file);
	_cleanup_close_ int fd = open(p, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	size_t len;

	*out = NULL;
	if (fd < 0)
		return -errno;
	return sbx_read_fd_string(fd, 1 << 20, out, &len);
}

int sbx_cg_read_u64(const char *dir, const char *file, uint64_t *v)
{
	_cleanup_free_ char *s = NULL;
	char *end;
	int r = sbx_cg_read(dir, file, &s);

	if (r < 0)
		return r;
	if (strncmp(s, "max", 3) == 0) {
		*v = UINT64_MAX;
		return 0;
	}
	errno = 0;
	*v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	return 0;
}

int sbx_cg_read_key(const char *dir, const char *file, const char *key, uint64_t *v)
{
	_cleanup_free_ char *s = NULL;
	size_t kl = strlen(key);
	int r = sbx_cg_read(dir, file, &s);

	if (r < 0)
		return r;
	for (char *line = s; line && *line;) {
		char *nl = strchr(line, '\n');

		if (strncmp(line, key, kl) == 0 && line[kl] == ' ') {
			*v = strtoull(line + kl + 1, NULL, 10);
			return 0;
		}
		line = nl ? nl + 1 : NULL;
	}
	return -ENOENT;
}

bool sbx_cg_list_has(const char *list, const char *word)
{
	size_t wl = strlen(word);

	for (const char *p = list; p && *p;) {
		size_t n;

		p += strspn(p, " \t\n");
		if (*p == '+')
			p++;
		n = strcspn(p, " \t\n");
		if (n == wl && strncmp(p, word, wl) == 0)
			return true;
		p += n;
	}
	return false;
}

bool sbx_cg_procs_empty(const char *dir)
{
	_cleanup_free_ char *s = NULL;

	if (sbx_cg_read(dir, "cgroup.procs", &s) < 0)
		return true;
	return s[strspn(s, " \t\n")] == '\0';
}

/* Call fn(path, arg) for dir and every child cgroup below it (depth first,
 * children before the parent).  Stops at the first negative return. */
static int for_tree(const char *dir, int depth, int (*fn)(const char *, void *), void *arg)
{
	DIR *d;
	struct dirent *de;
	int r = 0;

	if (depth > 64)
		return -ELOOP;
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while (r >= 0 && (de = readdir(d))) {
		_cleanup_free_ char *sub = NULL;

		if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		sub = sbx_cg_join(dir, de->d_name);
		r = for_tree(sub, depth + 1, fn, arg);
	}
	closedir(d);
	return r < 0 ? r : fn(dir, arg);
}

static int count_procs(const char *dir, void *arg)
{
	if (!sbx_cg_procs_empty(dir))
		(*(int *)arg)++;
	return 0;
}

bool sbx_cg_tree_empty(const char *dir)
{
	int n = 0;

	for_tree(dir, 0, count_procs, &n);
	return n == 0;
}

static int kill_listed(const char *dir, void *arg)
{
	_cleanup_free_ char *s = NULL;
	char *p, *end;

	if (sbx_cg_read(dir, "cgroup.procs", &s) < 0)
		return 0;
	for (p = s; *p; p = end) {
		long pid = strtol(p, &end, 10);

		if (end == p)
			break;
		/* Never pid 0 or -1: those would signal groups. */
		if (pid > 1 && pid != getpid() && kill((pid_t)pid, SIGKILL) == 0)
			(*(int *)arg)++;
		while (*end == '\n' || *end == ' ')
			end++;
	}
	return 0;
}

static void freeze(const char *fdir, const char *ffile, const char *val, bool wait_frozen)
{
	if (!fdir || sbx_cg_write(false, fdir, ffile, val) < 0 || !wait_frozen)
		return;
	for (int i = 0; i < 100; i++) {
		_cleanup_free_ char *s = NULL;
		uint64_t frozen = 0;

		if (!strcmp(ffile, "freezer.state")) {
			if (sbx_cg_read(fdir, ffile, &s) < 0 || !strncmp(s, "FROZEN", 6))
				return;
		} else if (sbx_cg_read_key(fdir, "cgroup.events", "frozen", &frozen) < 0 ||
			   frozen) {
			return;
		}
		sleep_ms(10);
	}
}

int sbx_cg_kill_tree(const char *dir, const char *freeze_dir, const char *freeze_file,
		     const char *on, const char *off)
{
	/* Frozen first, so nothing forks between reading the list and the
	 * kill; then thawed, so the killed tasks run to their exit. */
	long waited = 0;

	freeze(freeze_dir, freeze_file, on, true);
	for (long step = 1; waited < 2000; waited += step, step = step < 10 ? step * 2 : 10) {
		int n = 0;

		for_tree(dir, 0, kill_listed, &n);
		if (waited == 0)
			freeze(freeze_dir, freeze_file, off, false);
		if (sbx_cg_tree_empty(dir))
			return 0;
		sleep_ms(step);
	}
	return -EBUSY;
}

static int rm_one(const char *dir, void *arg)
{
	bool fake = *(bool *)arg;

	if (fake) {
		DIR *d = opendir(dir);
		struct dirent *de;

		while (d && (de = readdir(d))) {
			if (de->d_type == DT_REG)
				unlinkat(dirfd(d), de->d_name, 0);
		}
		if (d)
			closedir(d);
	}
	for (int i = 0; i < 200; i++) {
		if (rmdir(dir) == 0 || errno == ENOENT)
			return 0;
		/* A cgroup whose last task is still exiting is busy briefly. */
		if (errno != EBUSY)
			return -errno;
		sleep_ms(10);
	}
	return -EBUSY;
}

int sbx_cg_rmtree(const char *dir, bool fake)
{
	return for_tree(dir, 0, rm_one, &fake);
}

/* ---- cgroup v1 ---- */

static char **v1_slot(struct sbx_cgroup *cg, int c)
{
	char **slots[SBX_CG_NCTRL] = {
	    &cg->mem1, &cg->pids1, &cg->cpu1, &cg->cpuacct1, &cg->freezer1,
	};

	return slots[c];
}

/* mkdir sbx-ID in controller c's hierarchy; shares the directory with an
 * earlier controller co-mounted with it (cpu,cpuacct).  0 or -errno. */
static int v1_mkdir(struct sbx_cgroup *cg, const struct sbx_cgroup_sys *s, int c, const char *id)
{
	_cleanup_free_ char *base = NULL;
	char name[96];

	for (int o = 0; o < c; o++) {
		if (s->v1_mount[o] && *v1_slot(cg, o) && !strcmp(s->v1_mount[o], s->v1_mount[c])) {
			*v1_slot(cg, c) = sbx_xstrdup(*v1_slot(cg, o));
			return 0;
		}
	}
	snprintf(name, sizeof(name), "sbx-%s", id);
	base = sbx_cg_join(s->v1_mount[c], s->v1_self[c] ? s->v1_self[c] : "/");
	*v1_slot(cg, c) = sbx_cg_join(base, name);
	if (mkdir(*v1_slot(cg, c), 0755) < 0) {
		int e = errno;

		free(*v1_slot(cg, c));
		*v1_slot(cg, c) = NULL;
		return -e;
	}
	return 0;
}

static int v1_limits(struct sbx_cgroup *cg, const struct sbx_config *cfg, struct sbx_err *err)
{
	char v[64];
	int r;

	if (cg->mem1 && cfg->memory != SBX_UNSET) {
		snprintf(v, sizeof(v), "%" PRIu64, cfg->memory);
		r = sbx_cg_write(cg->fake, cg->mem1, "memory.limit_in_bytes", v);
		if (r < 0)
			return sbx_err_set(err, -r, "cannot set memory.limit_in_bytes in '%s'",
					   cg->mem1);
		/* memsw = memory + swap: the same value means no swap at all. */
		if (cg->fake || sbx_cg_has(cg->mem1, "memory.memsw.limit_in_bytes")) {
			r = sbx_cg_write(cg->fake, cg->mem1, "memory.memsw.limit_in_bytes", v);
			if (r < 0)
				return sbx_err_set(err, -r,
						   "cannot set memory.memsw.limit_in_bytes in '%s'",
						   cg->mem1);
			cg->swap_off = true;
		} else {
			sbx_cg_write(false, cg->mem1, "memory.swappiness", "0");
			sbx_cg_why(cg, "no swap accounting (memory.memsw missing): swappiness 0, "
				       "swap not limited");
		}
		cg->memory = SBX_ENF_CGROUP1;
		sbx_cg_why(cg, "cgroup v1 OOM kills one process (the largest), not the whole jail");
	}
	if (cg->pids1 && cfg->pids != SBX_UNSET) {
		sbx_cg_pids_text(cfg->pids, v, sizeof(v));
		r = sbx_cg_write(cg->fake, cg->pids1, "pids.max", v);
		if (r < 0)
			return sbx_err_set(err, -r, "cannot set pids.max in '%s'", cg->pids1);
		cg->pids = SBX_ENF_CGROUP1;
	}
	if (cg->cpu1 && cfg->cpus_milli != SBX_UNSET) {
		uint64_t q = cfg->cpus_milli * SBX_CG_PERIOD_US / 1000;

		snprintf(v, sizeof(v), "%llu", SBX_CG_PERIOD_US);
		r = sbx_cg_write(cg->fake, cg->cpu1, "cpu.cfs_period_us", v);
		if (r >= 0) {
			snprintf(v, sizeof(v), "%" PRIu64, q < 1000 ? 1000 : q);
			r = sbx_cg_write(cg->fake, cg->cpu1, "cpu.cfs_quota_us", v);
		}
		if (r < 0)
			return sbx_err_set(err, -r, "cannot set cpu.cfs_quota_us in '%s'",
					   cg->cpu1);
		cg->cpus = SBX_ENF_CGROUP1;
	}
	return 0;
}

int sbx_cg1_create(struct sbx_cgroup *cg, const struct sbx_cgroup_sys *s, const char *id,
		   const struct sbx_config *cfg, struct sbx_err *err)
{
	int made = 0, denied = 0, r;

	for (int c = 0; c < SBX_CG_NCTRL; c++) {
		if (!s->v1_mount[c])
			continue;
		r = v1_mkdir(cg, s, c, id);
		if (r == -EEXIST) {
			sbx_cg1_destroy(cg, NULL);
			return sbx_err_set(err, EEXIST,
					   "cgroup 'sbx-%s' already exists in the %s hierarchy "
					   "(left by a lost run? try 'sbx destroy --stale')",
					   id, sbx_cg_ctrl_names[c]);
		}
		if (r < 0) {
			denied++;
			continue;
		}
		if (!made++)
			cg->fake = !sbx_cg_is_cgroupfs(*v1_slot(cg, c));
	}
	if (!made) {
		sbx_cg_why(cg, "cgroup v1 hierarchies are not writable by uid %u (no delegation)",
			   (unsigned)geteuid());
		return 0;
	}
	if (denied)
		sbx_cg_why(cg, "%d cgroup v1 hierarchies were not writable", denied);
	cg->version = 1;
	r = v1_limits(cg, cfg, err);
	if (r < 0) {
		sbx_cg1_destroy(cg, NULL);
		cg->version = 0;
		cg->memory = cg->pids = cg->cpus = SBX_ENF_NONE;
	}
	return r;
}

int sbx_cg1_attach(struct sbx_cgroup *cg, pid_t pid, struct sbx_err *err)
{
	char v[32];

	snprintf(v, sizeof(v), "%d", (int)pid);
	for (int c = 0; c < SBX_CG_NCTRL; c++) {
		const char *dir = *v1_slot(cg, c);
		int r;

		/* Co-mounted controllers share a directory: write it once. */
		if (!dir || (c > 0 && *v1_slot(cg, c - 1) && !strcmp(*v1_slot(cg, c - 1), dir)))
			continue;
		r = sbx_cg_write(cg->fake, dir, "cgroup.procs", v);
		if (r < 0)
			return sbx_err_set(err, -r, "cannot move pid %d into cgroup '%s'", (int)pid,
					   dir);
	}
	return 0;
}

static void read_oom_control(const char *dir, struct sbx_usage *u)
{
	uint64_t v;

	if (sbx_cg_read_key(dir, "memory.oom_control", "oom_kill", &v) == 0)
		u->oom_kills = v;
	if (sbx_cg_read_key(dir, "memory.oom_control", "under_oom", &v) == 0)
		u->under_oom = v != 0;
}

void sbx_cg1_usage(struct sbx_cgroup *cg, struct sbx_usage *u)
{
	uint64_t v;

	if (cg->mem1) {
		if (sbx_cg_read_u64(cg->mem1, "memory.max_usage_in_bytes", &v) == 0)
			u->mem_peak = v;
		if (sbx_cg_read_u64(cg->mem1, "memory.failcnt", &v) == 0)
			u->mem_limit_hits = v;
		/* With swap off the memsw counter is the one that trips. */
		if (sbx_cg_read_u64(cg->mem1, "memory.memsw.failcnt", &v) == 0 &&
		    v > u->mem_limit_hits)
			u->mem_limit_hits = v;
		read_oom_control(cg->mem1, u);
		u->have_cgroup_stats = true;
	}
	if (cg->pids1) {
		if (sbx_cg_read_u64(cg->pids1, "pids.peak", &v) == 0)
			u->pids_peak = v;
		if (sbx_cg_read_key(cg->pids1, "pids.events", "max", &v) == 0)
			u->pids_denied = v;
		u->have_cgroup_stats = true;
	}
	if (cg->cpuacct1 && sbx_cg_read_u64(cg->cpuacct1, "cpuacct.usage", &v) == 0) {
		u->cpu_usec = v / 1000; /* nanoseconds */
		u->have_cgroup_stats = true;
	}
}

int sbx_cg1_kill(struct sbx_cgroup *cg)
{
	const char *dir = cg->mem1	 ? cg->mem1
			  : cg->pids1	 ? cg->pids1
			  : cg->freezer1 ? cg->freezer1
			  : cg->cpu1	 ? cg->cpu1
					 : cg->cpuacct1;

	/* v1 has no cgroup.kill: freeze, SIGKILL every listed pid, thaw, and
	 * repeat until the cgroup is empty. */
	if (!dir || cg->fake)
		return 0;
	return sbx_cg_kill_tree(dir, cg->freezer1, "freezer.state", "FROZEN", "THAWED");
}

int sbx_cg1_destroy(struct sbx_cgroup *cg, struct sbx_err *err)
{
	int ret = 0;

	if (cg->version == 1)
		sbx_cg1_kill(cg);
	for (int c = 0; c < SBX_CG_NCTRL; c++) {
		char **slot = v1_slot(cg, c);
		int r;

		if (!*slot)
			continue;
		r = sbx_cg_rmtree(*slot, cg->fake);
		if (r < 0 && !ret)
			ret = sbx_err_set(err, -r, "cannot remove cgroup '%s'", *slot);
		/* Keep the path if it is still there, so a retry can find it. */
		if (r == 0) {
			for (int o = c + 1; o < SBX_CG_NCTRL; o++) {
				if (*v1_slot(cg, o) && !strcmp(*v1_slot(cg, o), *slot)) {
					free(*v1_slot(cg, o));
					*v1_slot(cg, o) = NULL;
				}
			}
			free(*slot);
			*slot = NULL;
		}
	}
	return ret;
}

int sbx_cgroup_oom_fd(struct sbx_cgroup *cg, struct sbx_err *err)
{
	_cleanup_close_ int efd = -1, cfd = -1;
	_cleanup_free_ char *ctl = NULL;
	char v[32];
	int r;

	if (cg->version != 1 || !cg->mem1 || cg->fake)
		return sbx_err_set(err, EOPNOTSUPP, "no cgroup v1 memory controller to watch");
	/* Documentation/admin-guide/cgroup-v1/memory.rst, "OOM Control":
	 * write "<event_fd> <fd of memory.oom_control>" to cgroup.event_control. */
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (efd < 0)
		return sbx_err_set(err, errno, "cannot create an eventfd");
	ctl = sbx_cg_join(cg->mem1, "memory.oom_control");
	cfd = open(ctl, O_RDONLY | O_CLOEXEC);
	if (cfd < 0)
		return sbx_err_set(err, errno, "cannot open '%s'", ctl);
	snprintf(v, sizeof(v), "%d %d", efd, cfd);
	r = sbx_cg_write(false, cg->mem1, "cgroup.event_control", v);
	if (r < 0)
		return sbx_err_set(err, -r, "cannot watch '%s' for OOM", ctl);
	return steal_fd(&efd);
}
