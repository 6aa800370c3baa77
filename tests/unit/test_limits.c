/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_limits.c - lib/limits: detection parsers, the v2 and v1
 * backends against fake trees (file writes, usage parsing, kill, destroy,
 * delegation walk, self-move), the rlimit fallback in a real child, and,
 * as root on a cgroup v1 machine, real cgroups: OOM kill, fork limit,
 * usage, destroy.  Run as root and as nobody by `make check`.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "disk.h"
#include "limits.h"
#include "util.h"

/* ---- helpers ---- */

static char tmpl[64];

/* snprintf into a PATH_MAX buffer (tmpl is short: nothing truncates). */
__attribute__((format(printf, 2, 3))) static void pathf(char *out, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out, PATH_MAX, fmt, ap);
	va_end(ap);
}

static void put(const char *dir, const char *file, const char *content)
{
	char p[PATH_MAX];
	FILE *f;

	pathf(p, "%s/%s", dir, file);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(content, f);
	fclose(f);
}

static char *get(const char *dir, const char *file)
{
	static char buf[4096];
	char p[PATH_MAX];
	FILE *f;
	size_t n;

	pathf(p, "%s/%s", dir, file);
	f = fopen(p, "r");
	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static bool exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* A fake cgroup2 directory: interface files as the kernel would show. */
static void fake_cg(const char *dir, bool root, const char *procs, const char *subtree)
{
	assert_true(mkdir(dir, 0755) == 0 || errno == EEXIST);
	put(dir, "cgroup.controllers", "cpuset cpu io memory pids");
	put(dir, "cgroup.subtree_control", subtree);
	put(dir, "cgroup.procs", procs);
	if (!root)
		put(dir, "cgroup.type", "domain\n");
}

static int rm_tree(const char *path)
{
	char cmd[PATH_MAX + 32];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	return system(cmd);
}

static int setup_tmp(void **state)
{
	snprintf(tmpl, sizeof(tmpl), "/tmp/sbx-test-limits-XXXXXX");
	assert_non_null(mkdtemp(tmpl));
	assert_int_equal(chmod(tmpl, 0755), 0);
	return 0;
}

static int teardown_tmp(void **state)
{
	rm_tree(tmpl);
	unsetenv("SBX_CGROUP_ROOT");
	unsetenv("SBX_CGROUP_V1_ROOT");
	unsetenv("SBX_CGROUP_SELF");
	unsetenv("SBX_CGROUP");
	return 0;
}

static void cfg_limits(struct sbx_config *cfg, uint64_t mem, uint64_t pids, uint64_t cpus)
{
	sbx_config_init(cfg);
	cfg->memory = mem;
	cfg->pids = pids;
	cfg->cpus_milli = cpus;
}

/* ---- parsers ---- */

/* This machine: v1 controllers plus an empty cgroup2 at .../unified. */
static const char mountinfo_hybrid[] =
    "22 1 0:21 / /sys rw,nosuid shared:7 - sysfs sysfs rw\n"
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer\n"
    "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
    "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

static const char self_hybrid[] =
    "9:name=systemd:/\n8:pids:/\n6:freezer:/\n4:memory:/process_api/4c65\n"
    "2:cpuacct:/\n1:cpu:/\n0::/\n";

static void test_parse_hybrid(void **state)
{
	struct sbx_cgroup_sys s = {0};

	sbx_cgroup_parse_mountinfo(mountinfo_hybrid, &s);
	sbx_cgroup_parse_self(self_hybrid, &s);
	assert_string_equal(s.v2_mount, "/sys/fs/cgroup/unified");
	assert_string_equal(s.v2_self, "/");
	assert_string_equal(s.v1_mount[SBX_CG_MEMORY], "/sys/fs/cgroup/memory");
	assert_string_equal(s.v1_mount[SBX_CG_PIDS], "/sys/fs/cgroup/pids");
	assert_string_equal(s.v1_mount[SBX_CG_CPU], "/sys/fs/cgroup/cpu");
	assert_string_equal(s.v1_mount[SBX_CG_CPUACCT], "/sys/fs/cgroup/cpuacct");
	assert_string_equal(s.v1_mount[SBX_CG_FREEZER], "/sys/fs/cgroup/freezer");
	assert_string_equal(s.v1_self[SBX_CG_MEMORY], "/process_api/4c65");
	assert_string_equal(s.v1_self[SBX_CG_PIDS], "/");
	sbx_cgroup_sys_free(&s);
}

/* A modern v2-only host (systemd, nsdelegate), user's scope. */
static void test_parse_v2_only(void **state)
{
	struct sbx_cgroup_sys s = {0};

	sbx_cgroup_parse_mountinfo(
	    "25 22 0:22 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 "
	    "cgroup2 rw,nsdelegate,memory_recursiveprot\n",
	    &s);
	sbx_cgroup_parse_self(
	    "0::/user.slice/user-1000.slice/user@1000.service/app.slice/vte.scope\n", &s);
	assert_string_equal(s.v2_mount, "/sys/fs/cgroup");
	assert_string_equal(s.v2_self,
			    "/user.slice/user-1000.slice/user@1000.service/app.slice/vte.scope");
	for (int c = 0; c < SBX_CG_NCTRL; c++)
		assert_null(s.v1_mount[c]);
	sbx_cgroup_sys_free(&s);
}

/* A container: co-mounted cpu,cpuacct, a non-/ mount root, an escaped path. */
static void test_parse_container(void **state)
{
	struct sbx_cgroup_sys s = {0};

	sbx_cgroup_parse_mountinfo(
	    "600 590 0:40 /docker/abc /sys/fs/cgroup/cpu,cpuacct ro,nosuid master:9 - cgroup "
	    "cgroup rw,cpu,cpuacct\n"
	    "601 590 0:41 /docker/abc /sys/fs/cgroup/my\\040mem rw - cgroup cgroup rw,memory\n",
	    &s);
	sbx_cgroup_parse_self("5:cpu,cpuacct:/docker/abc/sub\n4:memory:/docker/abc\n", &s);
	assert_null(s.v2_mount);
	assert_string_equal(s.v1_mount[SBX_CG_CPU], "/sys/fs/cgroup/cpu,cpuacct");
	assert_string_equal(s.v1_mount[SBX_CG_CPUACCT], "/sys/fs/cgroup/cpu,cpuacct");
	assert_string_equal(s.v1_self[SBX_CG_CPU], "/sub");
	assert_string_equal(s.v1_self[SBX_CG_CPUACCT], "/sub");
	assert_string_equal(s.v1_mount[SBX_CG_MEMORY], "/sys/fs/cgroup/my mem");
	assert_string_equal(s.v1_self[SBX_CG_MEMORY], "/");
	assert_null(s.v1_mount[SBX_CG_PIDS]);
	sbx_cgroup_sys_free(&s);
}

/* ---- v2 against a fake tree ---- */

/* root/user.slice/u@.service/app.slice/term.scope, sbx in term.scope with
 * another process: sbx-ID must go in app.slice (no processes). */
static void fake_v2_systemd(struct sbx_cgroup_sys *s, char *app)
{
	char p[PATH_MAX];

	fake_cg(tmpl, true, "1\n", "cpu memory pids");
	pathf(p, "%s/user.slice", tmpl);
	fake_cg(p, false, "", "cpu memory pids");
	pathf(p, "%s/user.slice/u.service", tmpl);
	fake_cg(p, false, "", "cpu memory pids");
	pathf(app, "%s/user.slice/u.service/app.slice", tmpl);
	fake_cg(app, false, "", "");
	pathf(p, "%s/term.scope", app);
	fake_cg(p, false, "4242\n", "");
	memset(s, 0, sizeof(*s));
	s->v2_mount = sbx_xstrdup(tmpl);
	s->v2_root = sbx_xstrdup("/");
	s->v2_self = sbx_xstrdup("/user.slice/u.service/app.slice/term.scope");
}

static void test_v2_create_writes(void **state)
{
	struct sbx_cgroup_sys s;
	struct sbx_cgroup cg;
	struct sbx_config cfg;
	struct sbx_err err = {0};
	char app[PATH_MAX], leaf[PATH_MAX], desc[512];

	fake_v2_systemd(&s, app);
	cfg_limits(&cfg, 32 << 20, 8, 1500);
	assert_int_equal(sbx_cgroup_create_in(&cg, &s, "t1", &cfg, &err), 0);
	assert_int_equal(cg.version, 2);
	assert_true(cg.fake);
	pathf(leaf, "%s/sbx-t1", app);
	assert_string_equal(cg.path2, leaf);
	/* Controllers enabled in the process-free parent, in kernel syntax. */
	assert_string_equal(get(app, "cgroup.subtree_control"), "+memory +pids +cpu");
	assert_string_equal(get(leaf, "memory.max"), "33554432");
	assert_string_equal(get(leaf, "memory.swap.max"), "0");
	assert_string_equal(get(leaf, "memory.oom.group"), "1");
	assert_string_equal(get(leaf, "pids.max"), "8");
	assert_string_equal(get(leaf, "cpu.max"), "150000 100000");
	assert_int_equal(cg.memory, SBX_ENF_CGROUP2);
	assert_int_equal(cg.pids, SBX_ENF_CGROUP2);
	assert_int_equal(cg.cpus, SBX_ENF_CGROUP2);
	assert_true(cg.swap_off && cg.oom_group);
	/* The jail goes in a leaf below the limits. */
	assert_string_equal(cg.leaf2, strcat(leaf, "/jail"));
	assert_int_equal(sbx_cgroup_attach(&cg, 31337, &err), 0);
	assert_string_equal(get(cg.leaf2, "cgroup.procs"), "31337");
	/* Nothing was written where the other process lives. */
	pathf(leaf, "%s/term.scope", app);
	assert_string_equal(get(leaf, "cgroup.subtree_control"), "");

	sbx_limits_describe(&cfg, &cg, desc, sizeof(desc));
	assert_non_null(strstr(desc, "memory 32M (cgroup v2, swap off, OOM kills the whole jail)"));
	assert_non_null(strstr(desc, "pids 8 (cgroup v2)"));
	assert_non_null(strstr(desc, "cpus 1.5 (cgroup v2 cpu.max)"));

	assert_int_equal(sbx_cgroup_kill(&cg), 0);
	assert_string_equal(get(cg.path2, "cgroup.kill"), "1");
	pathf(leaf, "%s", cg.path2);
	assert_int_equal(sbx_cgroup_destroy(&cg, &err), 0);
	assert_false(exists(leaf));
	assert_null(cg.path2);
	assert_true(exists(app));
	sbx_cgroup_free(&cg);
	sbx_cgroup_sys_free(&s);
	sbx_config_free(&cfg);
}

static void test_v2_usage(void **state)
{
	struct sbx_cgroup_sys s;
	struct sbx_cgroup cg;
	struct sbx_config cfg;
	struct sbx_usage u;
	struct sbx_err err = {0};
	char app[PATH_MAX];

	fake_v2_systemd(&s, app);
	cfg_limits(&cfg, 64 << 20, 100000000, SBX_UNSET);
	assert_int_equal(sbx_cgroup_create_in(&cg, &s, "u1", &cfg, &err), 0);
	/* Above PID_MAX_LIMIT the kernel refuses a number: "max". */
	assert_string_equal(get(cg.path2, "pids.max"), "max");
	put(cg.path2, "memory.events",
	    "low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\noom_group_kill 1\n");
	put(cg.path2, "cpu.stat", "usage_usec 123456\nuser_usec 100000\nsystem_usec 23456\n");
	put(cg.path2, "memory.peak", "9999\n");
	put(cg.path2, "pids.peak", "7\n");
	put(cg.path2, "pids.events", "max 5\n");
	assert_int_equal(sbx_cgroup_usage(&cg, &u), 0);
	assert_true(u.have_cgroup_stats);
	assert_int_equal(u.cpu_usec, 123456);
	assert_int_equal(u.mem_peak, 9999);
	assert_int_equal(u.pids_peak, 7);
	assert_int_equal(u.oom_kills, 2);
	assert_int_equal(u.mem_limit_hits, 12);
	assert_int_equal(u.pids_denied, 5);
	assert_int_equal(sbx_cgroup_destroy(&cg, &err), 0);
	sbx_cgroup_free(&cg);
	sbx_cgroup_sys_free(&s);
	sbx_config_free(&cfg);
}

/* The only process in our delegated scope is us and nothing above is
 * usable: sbx moves itself to sbx-sup-ID, enables controllers, undoes it. */
static void test_v2_self_move(void **state)
{
	struct sbx_cgroup_sys s = {0};
	struct sbx_cgroup cg;
	struct sbx_config cfg;
	struct sbx_err err = {0};
	char scope[PATH_MAX], me[32], p[PATH_MAX];

	snprintf(me, sizeof(me), "%d\n", (int)getpid());
	/* A namespace root (has cgroup.type) holding processes: unusable. */
	fake_cg(tmpl, false, "1\n", "");
	pathf(scope, "%s/run.scope", tmpl);
	fake_cg(scope, false, me, "");
	s.v2_mount = sbx_xstrdup(tmpl);
	s.v2_root = sbx_xstrdup("/");
	s.v2_self = sbx_xstrdup("/run.scope");
	cfg_limits(&cfg, SBX_UNSET, 16, SBX_UNSET);
	assert_int_equal(sbx_cgroup_create_in(&cg, &s, "m1", &cfg, &err), 0);
	assert_int_equal(cg.version, 2);
	pathf(p, "%s/sbx-sup-m1", scope);
	assert_string_equal(cg.sup2, p);
	assert_int_equal(atoi(get(p, "cgroup.procs")), getpid());
	assert_string_equal(get(scope, "cgroup.subtree_control"), "+memory +pids +cpu");
	pathf(p, "%s/sbx-m1", scope);
	assert_string_equal(cg.path2, p);
	assert_string_equal(get(p, "pids.max"), "16");
	assert_non_null(strstr(cg.why, "moved sbx"));
	/* Untouched: the ns root with other processes. */
	assert_string_equal(get(tmpl, "cgroup.subtree_control"), "");

	assert_int_equal(sbx_cgroup_destroy(&cg, &err), 0);
	assert_false(exists(p));
	pathf(p, "%s/sbx-sup-m1", scope);
	assert_false(exists(p));
	assert_string_equal(get(scope, "cgroup.subtree_control"), "-memory -pids -cpu");
	assert_int_equal(atoi(get(scope, "cgroup.procs")), getpid());
	assert_null(cg.sup2);
	sbx_cgroup_free(&cg);
	sbx_cgroup_sys_free(&s);
	sbx_config_free(&cfg);
}

/* As a user whose scope is not delegated (root-owned): version 0 with the
 * reason, and the rlimit fallbacks.  Root runs this in a child as 65534. */
static void test_v2_not_delegated(void **state)
{
	char app[PATH_MAX], cmd[PATH_MAX + 64];
	pid_t pid;
	int st;

	struct sbx_cgroup_sys s;

	fake_v2_systemd(&s, app);
	snprintf(cmd, sizeof(cmd), "chmod -R a-w '%s'", tmpl);
	assert_int_equal(system(cmd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct sbx_cgroup cg;
		struct sbx_config cfg;
		struct sbx_err err = {0};

		if (geteuid() == 0 && (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
				       setresuid(65534, 65534, 65534)))
			_exit(10);
		cfg_limits(&cfg, 64 << 20, 32, 500);
		if (sbx_cgroup_create_in(&cg, &s, "n1", &cfg, &err) != 0)
			_exit(11);
		if (cg.version != 0 || cg.memory != SBX_ENF_RLIMIT || cg.pids != SBX_ENF_RLIMIT ||
		    cg.cpus != SBX_ENF_UNENFORCED)
			_exit(12);
		if (!strstr(cg.why, "not writable") || !strstr(cg.why, "Delegate=yes") ||
		    !strstr(cg.why, "RLIMIT_NPROC"))
			_exit(13);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	snprintf(cmd, sizeof(cmd), "chmod -R u+w '%s'", tmpl);
	assert_int_equal(system(cmd), 0);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	sbx_cgroup_sys_free(&s);
}

/* The public entry point with the environment overrides, and --stale. */
static void test_v2_env_and_stale(void **state)
{
	struct sbx_cgroup cg;
	struct sbx_config cfg;
	struct sbx_err err = {0};
	struct sbx_cgroup_sys s;
	char app[PATH_MAX], self[PATH_MAX], p[PATH_MAX];

	fake_v2_systemd(&s, app);
	sbx_cgroup_sys_free(&s);
	pathf(self, "%s/self", tmpl);
	put(tmpl, "self", "0::/user.slice/u.service/app.slice/term.scope\n");
	setenv("SBX_CGROUP_ROOT", tmpl, 1);
	setenv("SBX_CGROUP_SELF", self, 1);
	cfg_limits(&cfg, SBX_UNSET, 100, SBX_UNSET);
	assert_int_equal(sbx_cgroup_create(&cg, "e1", &cfg, &err), 0);
	assert_int_equal(cg.version, 2);
	pathf(p, "%s/sbx-e1", app);
	assert_string_equal(cg.path2, p);
	/* A lost run: forget the struct, then clean up by id. */
	sbx_cgroup_free(&cg);
	pathf(p, "%s/user.slice/sbx-e1", tmpl); /* another place */
	assert_int_equal(mkdir(p, 0755), 0);
	assert_int_equal(sbx_cgroup_remove_stale("e1", &err), 2);
	assert_false(exists(p));
	pathf(p, "%s/sbx-e1", app);
	assert_false(exists(p));
	assert_int_equal(sbx_cgroup_remove_stale("e1", &err), 0);
	assert_true(sbx_cgroup_remove_stale("../x", &err) < 0);

	setenv("SBX_CGROUP", "none", 1);
	assert_int_equal(sbx_cgroup_create(&cg, "e2", &cfg, &err), 0);
	assert_int_equal(cg.version, 0);
	assert_int_equal(cg.pids, SBX_ENF_RLIMIT);
	setenv("SBX_CGROUP", "bogus", 1);
	assert_true(sbx_cgroup_create(&cg, "e3", &cfg, &err) < 0);
	sbx_config_free(&cfg);
}

/* `sbx exec`: the handle rebuilt from the record attaches to the same
 * cgroup; forged paths are refused. */
static void test_v2_from_json(void **state)
{
	struct sbx_cgroup_sys s;
	struct sbx_cgroup cg, back;
	struct sbx_config cfg;
	struct sbx_err err = {0};
	char app[PATH_MAX], self[PATH_MAX], other[PATH_MAX];
	json_t *j, *bad;

	fake_v2_systemd(&s, app);
	pathf(self, "%s/self", tmpl);
	put(tmpl, "self", "0::/user.slice/u.service/app.slice/term.scope\n");
	setenv("SBX_CGROUP_ROOT", tmpl, 1);
	setenv("SBX_CGROUP_SELF", self, 1);
	cfg_limits(&cfg, 64 << 20, SBX_UNSET, 1000);
	assert_int_equal(sbx_cgroup_create_in(&cg, &s, "x1", &cfg, &err), 0);
	j = sbx_cgroup_json(&cg);
	assert_int_equal(sbx_cgroup_from_json(&back, "x1", j, &cfg, &err), 0);
	assert_int_equal(back.version, 2);
	assert_string_equal(back.path2, cg.path2);
	assert_string_equal(back.leaf2, cg.leaf2);
	assert_int_equal(back.memory, SBX_ENF_CGROUP2);
	assert_int_equal(back.cpus, SBX_ENF_CGROUP2);
	assert_int_equal(back.pids, SBX_ENF_NONE);
	assert_int_equal(sbx_cgroup_attach(&back, 4711, &err), 0);
	assert_string_equal(get(cg.leaf2, "cgroup.procs"), "4711");
	sbx_cgroup_free(&back);
	/* Another sandbox's id, a path outside the hierarchy, a missing one. */
	assert_true(sbx_cgroup_from_json(&back, "x2", j, &cfg, &err) < 0);
	pathf(other, "%s/sbx-x1", "/tmp");
	bad = json_pack("{s:i,s:[s]}", "version", 2, "paths", other);
	assert_true(sbx_cgroup_from_json(&back, "x1", bad, &cfg, &err) < 0);
	json_decref(bad);
	pathf(other, "%s/../sbx-x1", app);
	bad = json_pack("{s:i,s:[s]}", "version", 2, "paths", other);
	assert_true(sbx_cgroup_from_json(&back, "x1", bad, &cfg, &err) < 0);
	json_decref(bad);
	bad = json_pack("{s:i,s:[]}", "version", 2, "paths");
	assert_true(sbx_cgroup_from_json(&back, "x1", bad, &cfg, &err) < 0);
	json_decref(bad);
	/* No cgroup in the record: the rlimit fallbacks. */
	bad = json_pack("{s:i,s:[]}", "version", 0, "paths");
	assert_int_equal(sbx_cgroup_from_json(&back, "x1", bad, &cfg, &err), 0);
	assert_int_equal(back.version, 0);
	assert_int_equal(back.memory, SBX_ENF_RLIMIT);
	json_decref(bad);
	sbx_cgroup_free(&back);
	json_decref(j);
	assert_int_equal(sbx_cgroup_destroy(&cg, &err), 0);
	sbx_cgroup_free(&cg);
	sbx_cgroup_sys_free(&s);
	sbx_config_free(&cfg);
}

/* ---- v1 against a fake tree (this machine's layout) ---- */

static void test_v1_fake(void **state)
{
	struct sbx_cgroup_sys s = {0};
	struct sbx_cgroup cg;
	struct sbx_config cfg;
	struct sbx_err err = {0};
	struct sbx_usage u;
	char v2[PATH_MAX], dir[PATH_MAX], desc[512];
	const char *names[] = {"memory", "pids", "cpu", "cpuacct", "freezer"};

	/* An empty cgroup2 (only hugetlb) must not be taken for v2. */
	pathf(v2, "%s/unified", tmpl);
	assert_int_equal(mkdir(v2, 0755), 0);
	put(v2, "cgroup.controllers", "hugetlb\n");
	s.v2_mount = sbx_xstrdup(v2);
	for (int c = 0; c < SBX_CG_NCTRL; c++) {
		pathf(dir, "%s/%s", tmpl, names[c]);
		assert_int_equal(mkdir(dir, 0755), 0);
		s.v1_mount[c] = sbx_xstrdup(dir);
		s.v1_self[c] = sbx_xstrdup("/");
	}
	pathf(dir, "%s/memory/process_api", tmpl);
	assert_int_equal(mkdir(dir, 0755), 0);
	free(s.v1_self[SBX_CG_MEMORY]);
	s.v1_self[SBX_CG_MEMORY] = sbx_xstrdup("/process_api");

	cfg_limits(&cfg, 512 << 20, 64, 1500);
	cfg.time_ms = 30000;
	cfg.nofile = 1024;
	assert_int_equal(sbx_cgroup_create_in(&cg, &s, "v1", &cfg, &err), 0);
	assert_int_equal(cg.version, 1);
	pathf(dir, "%s/memory/process_api/sbx-v1", tmpl);
	assert_string_equal(cg.mem1, dir);
	assert_string_equal(get(dir, "memory.limit_in_bytes"), "536870912");
	assert_string_equal(get(dir, "memory.memsw.limit_in_bytes"), "536870912");
	assert_string_equal(get(cg.pids1, "pids.max"), "64");
	assert_string_equal(get(cg.cpu1, "cpu.cfs_period_us"), "100000");
	assert_string_equal(get(cg.cpu1, "cpu.cfs_quota_us"), "150000");
	assert_non_null(cg.cpuacct1);
	assert_non_null(cg.freezer1);
	assert_non_null(strstr(cg.note, "has no memory, pids or cpu controller: using v1"));
	assert_null(strstr(cg.why, "using v1"));
	assert_non_null(strstr(cg.why, "OOM kills one process"));
	sbx_limits_describe(&cfg, &cg, desc, sizeof(desc));
	assert_string_equal(desc,
			    "memory 512M (cgroup v1, swap off, OOM kills one process), "
			    "pids 64 (cgroup v1), cpus 1.5 (cgroup v1 cfs), "
			    "time 30s (supervisor timer), nofile 1024 (rlimit), core 0 (rlimit)");

	assert_int_equal(sbx_cgroup_attach(&cg, 777, &err), 0);
	assert_string_equal(get(cg.pids1, "cgroup.procs"), "777");
	assert_string_equal(get(cg.cpuacct1, "cgroup.procs"), "777");
	put(cg.mem1, "memory.max_usage_in_bytes", "4096000\n");
	put(cg.mem1, "memory.failcnt", "9\n");
	put(cg.mem1, "memory.oom_control", "oom_kill_disable 0\nunder_oom 1\noom_kill 1\n");
	put(cg.pids1, "pids.peak", "8\n");
	put(cg.pids1, "pids.events", "max 42\n");
	put(cg.cpuacct1, "cpuacct.usage", "2500000000\n");
	sbx_cgroup_usage(&cg, &u);
	assert_int_equal(u.mem_peak, 4096000);
	assert_int_equal(u.mem_limit_hits, 9);
	assert_int_equal(u.oom_kills, 1);
	assert_true(u.under_oom);
	assert_int_equal(u.pids_peak, 8);
	assert_int_equal(u.pids_denied, 42);
	assert_int_equal(u.cpu_usec, 2500000);

	{
		json_t *j = sbx_limits_json(&cfg, &cg), *c = sbx_cgroup_json(&cg);

		assert_string_equal(
		    json_string_value(json_object_get(json_object_get(j, "memory"), "enforced")),
		    "cgroup1");
		assert_int_equal(
		    json_integer_value(json_object_get(json_object_get(j, "pids"), "value")), 64);
		assert_true(json_real_value(json_object_get(json_object_get(j, "cpus"), "value")) ==
			    1.5);
		assert_int_equal(
		    json_integer_value(json_object_get(json_object_get(j, "time"), "value_ms")),
		    30000);
		assert_int_equal(json_integer_value(json_object_get(c, "version")), 1);
		assert_int_equal(json_array_size(json_object_get(c, "paths")), 5);
		json_decref(j);
		json_decref(c);
	}
	assert_int_equal(sbx_cgroup_destroy(&cg, &err), 0);
	assert_false(exists(dir));
	for (int c = 0; c < SBX_CG_NCTRL; c++) {
		pathf(dir, "%s/%s/sbx-v1", tmpl, names[c]);
		assert_false(exists(dir));
	}
	sbx_cgroup_free(&cg);
	sbx_cgroup_sys_free(&s);
	sbx_config_free(&cfg);
}

static void test_describe_fallback(void **state)
{
	struct sbx_config cfg;
	struct sbx_cgroup cg = {0};
	char buf[512];
	json_t *j;

	cfg_limits(&cfg, 1 << 30, 50, 2000);
	cfg.fsize = 10 << 20;
	cg.memory = SBX_ENF_RLIMIT;
	cg.pids = SBX_ENF_RLIMIT;
	cg.cpus = SBX_ENF_UNENFORCED;
	sbx_limits_describe(&cfg, &cg, buf, sizeof(buf));
	assert_string_equal(buf, "memory 1G (rlimit AS: address space, approximate), "
				 "pids 50 (rlimit NPROC, per uid in the jail's user namespace), "
				 "cpus 2 (not enforced: no cpu controller), fsize 10M (rlimit), "
				 "core 0 (rlimit)");
	/* snprintf semantics: the needed length even when truncated. */
	assert_int_equal(sbx_limits_describe(&cfg, &cg, buf, 8), (int)strlen(buf));
	j = sbx_limits_json(&cfg, &cg);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(j, "cpus"), "enforced")),
	    "unenforced");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(j, "pids"), "enforced")), "rlimit");
	json_decref(j);
	sbx_config_free(&cfg);
}

/* ---- rlimits in a real child ---- */

/* Fork n children that wait; count how many forks succeeded. */
static int fork_many(int n, int *eagain)
{
	int ok = 0;

	*eagain = 0;
	for (int i = 0; i < n; i++) {
		pid_t p = fork();

		if (p == 0) {
			pause();
			_exit(0);
		}
		if (p > 0)
			ok++;
		else if (errno == EAGAIN)
			(*eagain)++;
	}
	return ok;
}

static char big[8192];

/* valgrind virtualises rlimits (it keeps fds and address space for
 * itself), so the rlimit tests cannot run under it. */
static bool under_valgrind(void)
{
	const char *p = getenv("LD_PRELOAD");

	return p && strstr(p, "vgpreload");
}

#if defined(__SANITIZE_ADDRESS__)
static const bool asan = true;
#else
static const bool asan = false;
#endif

static int rlimit_child_cfg(struct sbx_config *cfg);

static int rlimit_child(void)
{
	struct sbx_config cfg;
	int r = rlimit_child_cfg(&cfg);

	sbx_config_free(&cfg);
	return r;
}

static int rlimit_child_cfg(struct sbx_config *cfgp)
{
#define cfg (*cfgp)
	struct sbx_cgroup cg = {0};
	struct sbx_err err = {0};
	struct rlimit rl;
	int eagain, ok, fd;
	char path[PATH_MAX];

	sbx_config_init(&cfg);
	if (geteuid() == 0 && (setgroups(0, NULL) || setresgid(65533, 65533, 65533) ||
			       setresuid(65533, 65533, 65533)))
		return 10;
	/* As in the jail: a fresh user namespace, so NPROC counts only ours. */
	if (unshare(CLONE_NEWUSER) < 0)
		return 11;
	cfg.memory = asan ? SBX_UNSET : 64 << 20;
	cfg.pids = 8;
	cfg.nofile = 16;
	cfg.fsize = 4096;
	cg.memory = SBX_ENF_RLIMIT;
	cg.pids = SBX_ENF_RLIMIT;
	if (sbx_rlimits_apply(&cfg, &cg, &err) < 0)
		return 12;
	if (getrlimit(RLIMIT_CORE, &rl) || rl.rlim_cur != 0 || rl.rlim_max != 0)
		return 13;
	if (getrlimit(RLIMIT_NPROC, &rl) || rl.rlim_max != 8)
		return 14;
	/* Raising it back is refused: the hard limit is set too. */
	rl.rlim_cur = rl.rlim_max = 1000;
	if (setrlimit(RLIMIT_NPROC, &rl) == 0)
		return 15;
	ok = fork_many(50, &eagain);
	signal(SIGTERM, SIG_IGN);
	kill(0, SIGTERM);
	while (wait(NULL) > 0)
		;
	if (ok >= 8 || ok < 1 || eagain < 40)
		return 16;
	/* ASan reserves terabytes of shadow: it cannot run under RLIMIT_AS. */
	if (!asan && malloc(256 << 20) != NULL)
		return 17;
	fd = -1;
	for (int i = 0; i < 32; i++)
		fd = open("/dev/null", O_RDONLY);
	if (fd >= 0 || errno != EMFILE)
		return 18;
	for (int i = 3; i < 16; i++)
		close(i);
	pathf(path, "%s/fsize", tmpl);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	signal(SIGXFSZ, SIG_IGN);
	if (fd < 0 || write(fd, big, sizeof(big)) != 4096 || write(fd, big, 1) >= 0 ||
	    errno != EFBIG)
		return 19;
	return 0;
#undef cfg
}

static void test_rlimits_apply(void **state)
{
	pid_t pid;
	int st;

	if (under_valgrind()) {
		print_message("skip: valgrind virtualises rlimits\n");
		skip();
	}

	chmod(tmpl, 0777);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		setpgid(0, 0);
		_exit(rlimit_child());
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 11)
		skip(); /* no unprivileged user namespaces: the jail cannot run */
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* Without cgroups, cfg limits that need no fallback still get core=0 and a
 * clear error for a nofile above the hard limit. */
static void test_rlimits_errors(void **state)
{
	pid_t pid;
	int st;

	if (under_valgrind()) {
		print_message("skip: valgrind virtualises rlimits\n");
		skip();
	}
	pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		struct sbx_config cfg;
		struct sbx_err err = {0};
		struct rlimit rl = {64, 64};

		sbx_config_init(&cfg);
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			_exit(1);
		if (geteuid() == 0 &&
		    (setresgid(65533, 65533, 65533) || setresuid(65533, 65533, 65533)))
			_exit(2);
		cfg.nofile = 100000;
		if (sbx_rlimits_apply(&cfg, NULL, &err) >= 0)
			_exit(3);
		if (!strstr(err.msg, "RLIMIT_NOFILE") || !strstr(err.msg, "hard limit is 64"))
			_exit(4);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* ---- real cgroups (root, v1 or v2 with controllers) ---- */

/* Test ids carry the pid: v1 hierarchies are shared by every test run on
 * the machine, and two runs of this suite may overlap. */
static const char *uid_of(const char *name)
{
	static char id[64];

	snprintf(id, sizeof(id), "%s%d", name, (int)getpid());
	return id;
}

static bool real_cg(struct sbx_cgroup *cg, const char *name, struct sbx_config *cfg)
{
	struct sbx_err err = {0};
	int r = sbx_cgroup_create(cg, uid_of(name), cfg, &err);

	assert_int_equal(r, 0);
	return cg->version != 0;
}

/* Fork a child that waits on a pipe, attach it, release it to run fn. */
static pid_t run_in(struct sbx_cgroup *cg, int (*fn)(void))
{
	int p[2];
	pid_t pid;
	struct sbx_err err = {0};
	char c;

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(100);
		_exit(fn());
	}
	close(p[0]);
	assert_int_equal(sbx_cgroup_attach(cg, pid, &err), 0);
	assert_int_equal(write(p[1], "x", 1), 1);
	close(p[1]);
	return pid;
}

static int hog(void)
{
	size_t n = 256 << 20;
	char *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return 2;
	for (size_t i = 0; i < n; i += 4096)
		m[i] = 1;
	return 0; /* survived: the limit did not hold */
}

static int forker(void)
{
	int eagain, ok = fork_many(50, &eagain);

	/* exit code: successful forks; 200 if none failed with EAGAIN */
	return eagain ? ok : 200;
}

static int worker(void)
{
	size_t n = 16 << 20;
	char *m = malloc(n);
	volatile uint64_t x = 0;
	uint64_t t0 = sbx_now_ns();
	struct timespec cpu = {0};

	if (!m)
		return 2;
	memset(m, 1, n);
	/* 200 ms of our own cpu time (however loaded the machine), 10 s cap */
	while ((cpu.tv_sec == 0 && cpu.tv_nsec < 200000000L) &&
	       sbx_now_ns() - t0 < 10000000000ULL &&
	       clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu) == 0)
		x += m[x % n];
	free(m);
	return 0;
}

#define NEED_ROOT_CG(cg, id, cfg)                                                                  \
	do {                                                                                       \
		if (geteuid() != 0) {                                                              \
			print_message("skip: real cgroups need root (running as uid %u)\n",        \
				      (unsigned)geteuid());                                        \
			sbx_config_free(cfg);                                                      \
			skip();                                                                    \
		}                                                                                  \
		if (!real_cg(cg, id, cfg)) {                                                       \
			print_message("skip: no usable cgroup: %s\n", (cg)->why);                  \
			sbx_config_free(cfg);                                                      \
			skip();                                                                    \
		}                                                                                  \
	} while (0)

static void test_real_oom(void **state)
{
	struct sbx_cgroup cg;
	struct sbx_config cfg;
	struct sbx_usage u;
	struct sbx_err err = {0};
	int st;
	pid_t pid;

	cfg_limits(&cfg, 32 << 20, SBX_UNSET, SBX_UNSET);
	NEED_ROOT_CG(&cg, "utoom", &cfg);
	assert_true(cg.memory == SBX_ENF_CGROUP1 || cg.memory == SBX_ENF_CGROUP2);
	pid = run_in(&cg, hog);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGKILL);
	sbx_cgroup_usage(&cg, &u);
	print_message("oom: oom_kills=%llu under_oom=%d limit_hits=%llu peak=%llu\n",
		      (unsigned long long)u.oom_kills, u.under_oom,
		      (unsigned long long)u.mem_limit_hits, (unsigned long long)u.mem_peak);
	assert_true(u.oom_kills >= 1 || u.under_oom || u.mem_limit_hits > 0);
	assert_true(u.mem_peak <= (32 << 20) + (1 << 20));
	assert_int_equal(sbx_cgroup_destroy(&cg, &err), 0);
	sbx_cgroup_free(&cg);
	sbx_config_free(&cfg);
}

static void test_real_pids(void **state)
{
	struct sbx_cgroup cg;
	struct sbx_config cfg;
	struct sbx_usage u;
	struct sbx_err err = {0};
	int st;
	pid_t pid;

	cfg_limits(&cfg, SBX_UNSET, 8, SBX_UNSET);
	NEED_ROOT_CG(&cg, "utpids", &cfg);
	pid = run_in(&cg, forker);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	/* 8 tasks in all: the forker and at most 7 children. */
	assert_true(WEXITSTATUS(st) <= 7);
	assert_true(WEXITSTATUS(st) >= 1);
	sbx_cgroup_usage(&cg, &u);
	print_message("pids: forks ok=%d peak=%llu denied=%llu\n", WEXITSTATUS(st),
		      (unsigned long long)u.pids_peak, (unsigned long long)u.pids_denied);
	assert_true(u.pids_denied >= 40);
	assert_true(u.pids_peak == 0 || u.pids_peak == 8);
	/* The paused children are still there: destroy must kill them. */
	assert_int_equal(sbx_cgroup_destroy(&cg, &err), 0);
	sbx_cgroup_free(&cg);
	sbx_config_free(&cfg);
}

static void test_real_usage_destroy(void **state)
{
	struct sbx_cgroup cg;
	struct sbx_config cfg;
	struct sbx_usage u;
	struct sbx_err err = {0};
	char *paths[4] = {0};
	int st, n = 0;
	pid_t pid;

	cfg_limits(&cfg, 256 << 20, 64, 1500);
	NEED_ROOT_CG(&cg, "utuse", &cfg);
	if (cg.cpu1)
		assert_string_equal(get(cg.cpu1, "cpu.cfs_quota_us"), "150000\n");
	pid = run_in(&cg, worker);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	sbx_cgroup_usage(&cg, &u);
	print_message("usage: cpu_usec=%llu mem_peak=%llu pids_peak=%llu\n",
		      (unsigned long long)u.cpu_usec, (unsigned long long)u.mem_peak,
		      (unsigned long long)u.pids_peak);
	assert_true(u.have_cgroup_stats);
	assert_true(u.cpu_usec >= 190000);
	assert_true(u.mem_peak >= 16 << 20);
	assert_int_equal(u.oom_kills, 0);

	/* A live process left in the cgroup: destroy kills it and removes all. */
	pid = run_in(&cg, pause);
	{
		const char *all[] = {cg.path2, cg.mem1, cg.pids1, cg.cpu1};

		for (int i = 0; i < 4; i++)
			if (all[i])
				paths[n++] = sbx_xstrdup(all[i]);
	}
	assert_int_equal(sbx_cgroup_destroy(&cg, &err), 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	for (int i = 0; i < n; i++) {
		assert_false(exists(paths[i]));
		free(paths[i]);
	}
	assert_int_equal(sbx_cgroup_destroy(&cg, &err), 0); /* idempotent */
	sbx_cgroup_free(&cg);
	sbx_config_free(&cfg);
}

/* v1 kills one process on OOM: here the hog, a grandchild.  The OOM fd
 * lets the supervisor kill the rest (the v2 oom.group behaviour). */
static int hog_below(void)
{
	pid_t p = fork();

	if (p == 0)
		_exit(hog());
	pause(); /* the "command": survives a v1 OOM of its child */
	return 0;
}

static void test_real_oom_fd(void **state)
{
	struct sbx_cgroup cg;
	struct sbx_config cfg;
	struct sbx_err err = {0};
	struct pollfd pfd = {.events = POLLIN};
	uint64_t n = 0;
	pid_t pid;
	int st;

	cfg_limits(&cfg, 32 << 20, SBX_UNSET, SBX_UNSET);
	NEED_ROOT_CG(&cg, "utoomfd", &cfg);
	if (cg.version != 1) {
		assert_int_equal(sbx_cgroup_oom_fd(&cg, &err), -EOPNOTSUPP);
		sbx_cgroup_destroy(&cg, &err);
		sbx_cgroup_free(&cg);
		sbx_config_free(&cfg);
		skip(); /* v2: memory.oom.group does it in the kernel */
	}
	pfd.fd = sbx_cgroup_oom_fd(&cg, &err);
	assert_true(pfd.fd >= 0);
	pid = run_in(&cg, hog_below);
	assert_int_equal(poll(&pfd, 1, 10000), 1);
	assert_int_equal(read(pfd.fd, &n, sizeof(n)), sizeof(n));
	assert_true(n >= 1);
	/* The "command" is still alive after the kernel's single kill. */
	assert_int_equal(waitpid(pid, &st, WNOHANG), 0);
	assert_int_equal(sbx_cgroup_kill(&cg), 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	close(pfd.fd);
	assert_int_equal(sbx_cgroup_destroy(&cg, &err), 0);
	sbx_cgroup_free(&cg);
	sbx_config_free(&cfg);
}

/* Real hierarchy, `sbx exec`: a second process joins through the record. */
static void test_real_from_json(void **state)
{
	struct sbx_cgroup cg, back;
	struct sbx_config cfg;
	struct sbx_err err = {0};
	char want[PATH_MAX], line[PATH_MAX];
	json_t *j;
	pid_t pid;
	int st;
	FILE *f;
	bool in = false;

	cfg_limits(&cfg, 64 << 20, 16, SBX_UNSET);
	NEED_ROOT_CG(&cg, "utjson", &cfg);
	j = sbx_cgroup_json(&cg);
	assert_int_equal(sbx_cgroup_from_json(&back, uid_of("utjson"), j, &cfg, &err), 0);
	json_decref(j);
	assert_int_equal(back.memory, cg.memory);
	assert_int_equal(back.pids, cg.pids);
	pid = run_in(&back, pause);
	/* The process is in the sandbox's cgroup, as /proc says. */
	pathf(want, "sbx-%s", uid_of("utjson"));
	pathf(line, "/proc/%d/cgroup", (int)pid);
	f = fopen(line, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		in |= strstr(line, want) != NULL;
	fclose(f);
	assert_true(in);
	assert_int_equal(sbx_cgroup_destroy(&back, &err), 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	assert_int_equal(sbx_cgroup_destroy(&cg, &err), 0);
	sbx_cgroup_free(&back);
	sbx_cgroup_free(&cg);
	sbx_config_free(&cfg);
}

/* Real hierarchy, lost run: remove_stale finds and removes sbx-ID. */
static void test_real_stale(void **state)
{
	struct sbx_cgroup cg;
	struct sbx_config cfg;
	struct sbx_err err = {0};
	char *path;
	pid_t pid;
	int st;

	cfg_limits(&cfg, 64 << 20, 16, SBX_UNSET);
	NEED_ROOT_CG(&cg, "utstale", &cfg);
	path = sbx_xstrdup(cg.path2 ? cg.path2 : cg.mem1 ? cg.mem1 : cg.pids1);
	pid = run_in(&cg, pause);
	sbx_cgroup_free(&cg); /* the supervisor "died" */
	assert_true(sbx_cgroup_remove_stale(uid_of("utstale"), &err) >= 1);
	assert_false(exists(path));
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	free(path);
	sbx_config_free(&cfg);
}

/* Unprivileged on the real system: never an error, a described fallback
 * (or, where the user has a delegated v2 subtree, a real cgroup). */
static void test_real_unprivileged(void **state)
{
	pid_t pid = fork();
	int st;

	assert_true(pid >= 0);
	if (pid == 0) {
		struct sbx_cgroup cg;
		struct sbx_config cfg;
		struct sbx_err err = {0};
		char buf[512];

		if (geteuid() == 0 && (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
				       setresuid(65534, 65534, 65534)))
			_exit(10);
		cfg_limits(&cfg, 64 << 20, 32, 1000);
		if (sbx_cgroup_create(&cg, uid_of("utunpriv"), &cfg, &err) != 0)
			_exit(11);
		if (cg.version == 0) {
			if (cg.memory != SBX_ENF_RLIMIT || cg.pids != SBX_ENF_RLIMIT ||
			    cg.cpus != SBX_ENF_UNENFORCED || !cg.why[0])
				_exit(12);
			sbx_limits_describe(&cfg, &cg, buf, sizeof(buf));
			if (!strstr(buf, "memory 64M (rlimit AS") ||
			    !strstr(buf, "pids 32 (rlimit NPROC"))
				_exit(13);
		} else if (sbx_cgroup_destroy(&cg, &err) != 0) {
			_exit(14);
		}
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* ---- the writable layers' cap (lib/jail/disk.c) ---- */

#define MiB (1ULL << 20)
#define GiB (1ULL << 30)

/* A roomy filesystem: the default, or what was asked. */
static void test_disk_cap_default(void **state)
{
	struct sbx_disk_cap cap;
	struct sbx_err err = {0};

	(void)state;
	assert_int_equal(sbx_disk_cap_of("/s", 100 * GiB, 90 * GiB, 0, SBX_UNSET, &cap, &err), 0);
	assert_int_equal(cap.size, SBX_DISK_DEFAULT);
	assert_int_equal(cap.inodes, SBX_DISK_DEFAULT / SBX_DISK_BYTES_PER_INODE);
	assert_false(cap.clamped);
	assert_int_equal(sbx_disk_cap_of("/s", 100 * GiB, 90 * GiB, 0, 64 * MiB, &cap, &err), 0);
	assert_int_equal(cap.size, 64 * MiB);
	assert_int_equal(cap.inodes, 8192);
	/* a small cap asked for is kept, with the fewest inodes */
	assert_int_equal(sbx_disk_cap_of("/s", 100 * GiB, 90 * GiB, 0, 4 * MiB, &cap, &err), 0);
	assert_int_equal(cap.size, 4 * MiB);
	assert_int_equal(cap.inodes, SBX_DISK_MIN_INODES);
}

/* Less free than the default: all but the reserve (5%, at least 256M). */
static void test_disk_cap_reserve(void **state)
{
	struct sbx_disk_cap cap;
	struct sbx_err err = {0};

	(void)state;
	assert_int_equal(sbx_disk_cap_of("/s", 100 * GiB, 10 * GiB, 0, SBX_UNSET, &cap, &err), 0);
	assert_int_equal(cap.size, 5 * GiB);
	assert_true(cap.clamped);
	assert_non_null(strstr(cap.why, "keeps 5.0 GiB of it free"));
	assert_int_equal(sbx_disk_cap_of("/s", 1536 * MiB, 1500 * MiB, 0, SBX_UNSET, &cap, &err),
			 0);
	assert_int_equal(cap.size, 1500 * MiB - SBX_DISK_RESERVE_MIN);
	/* a container's 64M /dev/shm: a quarter of it is the reserve */
	assert_int_equal(sbx_disk_cap_of("/s", 64 * MiB, 64 * MiB, 0, SBX_UNSET, &cap, &err), 0);
	assert_int_equal(cap.size, 48 * MiB);
}

/* Down to the reserve (a kept sandbox filled its layers): a quarter of
 * what is left, until that is under the minimum, then a refusal naming the
 * directory. */
static void test_disk_cap_within_reserve(void **state)
{
	struct sbx_disk_cap cap;
	struct sbx_err err = {0};

	(void)state;
	assert_int_equal(sbx_disk_cap_of("/s", 1536 * MiB, 255 * MiB, 0, SBX_UNSET, &cap, &err), 0);
	assert_int_equal(cap.size, (255 * MiB / 4) & ~4095ULL);
	assert_true(cap.clamped);
	assert_non_null(strstr(cap.why, "a quarter of that"));
	assert_int_equal(sbx_disk_cap_of("/s", 1536 * MiB, 60 * MiB, 0, SBX_UNSET, &cap, &err),
			 -ENOSPC);
	assert_non_null(strstr(err.msg, "'/s'"));
	assert_non_null(strstr(err.msg, "SBX_STATE_DIR"));
}

/* In memory: at most a quarter of the machine's memory, whole MiB. */
static void test_disk_cap_memory(void **state)
{
	struct sbx_disk_cap cap;
	struct sbx_err err = {0};

	(void)state;
	assert_int_equal(sbx_disk_cap_of("/s", 100 * GiB, 90 * GiB, 8 * GiB, SBX_UNSET, &cap, &err),
			 0);
	assert_int_equal(cap.size, 2 * GiB);
	assert_non_null(strstr(cap.why, "a quarter of the 8.0 GiB"));
	assert_int_equal(sbx_disk_cap_of("/s", 100 * GiB, 90 * GiB, 64 * GiB, 100 * MiB + 5, &cap,
					 &err),
			 0);
	assert_int_equal(cap.size, 100 * MiB);
	assert_false(cap.clamped);
}

/* One inode per 8 KiB, at least SBX_DISK_MIN_INODES (a tmpfs too). */
static void test_disk_inodes(void **state)
{
	(void)state;
	assert_int_equal(sbx_disk_inodes(20 * MiB), 2560);
	assert_int_equal(sbx_disk_inodes(16 * GiB), 2097152);
	assert_int_equal(sbx_disk_inodes(1 * MiB), SBX_DISK_MIN_INODES);
}

static struct statfs fs_of(uint64_t blocks, uint64_t bfree, uint64_t bavail, uint64_t files,
			   uint64_t ffree)
{
	struct statfs s;

	memset(&s, 0, sizeof(s));
	s.f_bsize = 4096;
	s.f_blocks = blocks;
	s.f_bfree = bfree;
	s.f_bavail = bavail;
	s.f_files = files;
	s.f_ffree = ffree;
	return s;
}

/* Full: what ext4 keeps back after ENOSPC (2% or 16 MiB, and delayed
 * allocations), up to a 16th or 64 MiB; a tmpfs at 0; no inode left. */
static void test_disk_usage(void **state)
{
	struct sbx_disk_usage u;
	struct statfs s;

	(void)state;
	/* ext4 of [limits] disk = 20m after a dd hit ENOSPC (measured) */
	s = fs_of(4956, 347, 245, 2560, 2535);
	sbx_disk_usage_of(&s, &u);
	assert_true(u.set && u.full && !u.full_inodes);
	assert_int_equal(u.size, 4956ULL * 4096);
	assert_int_equal(u.used, (4956ULL - 347) * 4096);
	assert_int_equal(u.inodes, 2560);
	assert_int_equal(u.inodes_used, 25);
	/* the same with 2 MiB free: room left */
	s = fs_of(4956, 612, 512, 2560, 2535);
	sbx_disk_usage_of(&s, &u);
	assert_false(u.full);
	/* 16G: 20 MiB left is full, 100 MiB is not */
	s = fs_of(16 * GiB / 4096, 20 * MiB / 4096, 20 * MiB / 4096, 2097152, 2000000);
	sbx_disk_usage_of(&s, &u);
	assert_true(u.full);
	s = fs_of(16 * GiB / 4096, 100 * MiB / 4096, 100 * MiB / 4096, 2097152, 2000000);
	sbx_disk_usage_of(&s, &u);
	assert_false(u.full);
	/* a full tmpfs; one with every inode used and room left */
	s = fs_of(5120, 0, 0, 2560, 2543);
	sbx_disk_usage_of(&s, &u);
	assert_true(u.full && u.used == u.size);
	s = fs_of(5120, 5000, 5000, 2560, 0);
	sbx_disk_usage_of(&s, &u);
	assert_true(!u.full && u.full_inodes && u.inodes_used == 2560);
	/* no inode count (f_files 0): none said */
	s = fs_of(5120, 5000, 5000, 0, 0);
	sbx_disk_usage_of(&s, &u);
	assert_true(!u.full && !u.full_inodes && u.inodes == 0);
}

/* A failed assertion skips a test's own destroy: remove what is left. */
static int remove_leftovers(void **state)
{
	static const char *const names[] = {"utoom",  "utoomfd", "utpids",  "utuse",
					    "utjson", "utstale", "utunpriv"};
	struct sbx_err err = {0};

	for (size_t i = 0; i < SBX_ARRAY_SIZE(names); i++)
		sbx_cgroup_remove_stale(uid_of(names[i]), &err);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_hybrid),
	    cmocka_unit_test(test_parse_v2_only),
	    cmocka_unit_test(test_parse_container),
	    cmocka_unit_test_setup_teardown(test_v2_create_writes, setup_tmp, teardown_tmp),
	    cmocka_unit_test_setup_teardown(test_v2_usage, setup_tmp, teardown_tmp),
	    cmocka_unit_test_setup_teardown(test_v2_self_move, setup_tmp, teardown_tmp),
	    cmocka_unit_test_setup_teardown(test_v2_not_delegated, setup_tmp, teardown_tmp),
	    cmocka_unit_test_setup_teardown(test_v2_env_and_stale, setup_tmp, teardown_tmp),
	    cmocka_unit_test_setup_teardown(test_v2_from_json, setup_tmp, teardown_tmp),
	    cmocka_unit_test_setup_teardown(test_v1_fake, setup_tmp, teardown_tmp),
	    cmocka_unit_test(test_describe_fallback),
	    cmocka_unit_test_setup_teardown(test_rlimits_apply, setup_tmp, teardown_tmp),
	    cmocka_unit_test(test_rlimits_errors),
	    cmocka_unit_test(test_real_oom),
	    cmocka_unit_test(test_real_pids),
	    cmocka_unit_test(test_real_usage_destroy),
	    cmocka_unit_test(test_real_oom_fd),
	    cmocka_unit_test(test_real_from_json),
	    cmocka_unit_test(test_real_stale),
	    cmocka_unit_test(test_real_unprivileged),
	    cmocka_unit_test(test_disk_cap_default),
	    cmocka_unit_test(test_disk_cap_reserve),
	    cmocka_unit_test(test_disk_cap_within_reserve),
	    cmocka_unit_test(test_disk_cap_memory),
	    cmocka_unit_test(test_disk_inodes),
	    cmocka_unit_test(test_disk_usage),
	};

	return cmocka_run_group_tests_name("limits", tests, NULL, remove_leftovers);
}
