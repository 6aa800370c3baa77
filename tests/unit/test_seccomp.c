/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_seccomp.c - lib/seccomp: the built-in policies checked
 * call by call in forked children (tests/escape/seccomp_table.h), other
 * ABIs killed, strict running a shell and a compiler, policy files and
 * their errors, and audit mode with this process as the supervisor.
 * Runs as root and as an unprivileged user (the filters need only
 * no_new_privs).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <string.h>
#include <sys/stat.h>

#include "../escape/seccomp_table.h"
#include "seccomp.h"
#include "seccomp_int.h"

struct result {
	int idx;
	long ret;
	int err;
};

/* Hand the listener to the parent over a unix socket (as the jail does). */
static void send_fd(int sock, int fd)
{
	char c = 'f';
	struct iovec iov = {.iov_base = &c, .iov_len = 1};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr m = {.msg_iov = &iov,
			   .msg_iovlen = 1,
			   .msg_control = u.buf,
			   .msg_controllen = sizeof(u.buf)};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	if (sendmsg(sock, &m, 0) != 1)
		_exit(98);
}

static int recv_fd(int sock)
{
	char c;
	struct iovec iov = {.iov_base = &c, .iov_len = 1};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr m = {.msg_iov = &iov,
			   .msg_iovlen = 1,
			   .msg_control = u.buf,
			   .msg_controllen = sizeof(u.buf)};
	struct cmsghdr *cm;
	int fd = -1;

	if (recvmsg(sock, &m, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&m);
	if (cm && cm->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/* The filters prepared on the host, [notify], as a run hands its jail one. */
static struct sbx_seccomp_filter prepared[2];

static int prepare_file(const char *path, bool notify, struct sbx_err *err)
{
	struct sbx_seccomp_opts o = {.policy = path, .notify = notify};

	sbx_seccomp_filter_free(&prepared[notify]);
	return sbx_seccomp_prepare(&o, &prepared[notify], err);
}

/* In the child: load the policy; in notify mode pass the listener on. */
static void child_load(const char *policy, bool notify, int sock)
{
	struct sbx_seccomp_opts o = {
	    .policy = policy, .notify = notify, .filter = &prepared[notify]};
	struct sbx_err err = {0};
	int fd = sbx_seccomp_load(&o, &err);

	if (fd < 0) {
		fprintf(stderr, "load %s: %s\n", policy, err.msg);
		_exit(97);
	}
	if (notify) {
		if (sock >= 0)
			send_fd(sock, fd);
		close(fd);
	}
}

static void child_run_table(int out)
{
	for (size_t i = 0; i < SBX_ARRAY_SIZE(st_checks); i++) {
		struct result r = {.idx = (int)i};

		errno = 0;
		r.ret = st_checks[i].call();
		r.err = r.ret < 0 ? errno : 0;
		if (write(out, &r, sizeof(r)) != sizeof(r))
			_exit(96);
	}
}

/*
 * Run the whole table under policy in a child.  With audit, this process
 * serves the child's notifications.  Returns the number of wrong answers.
 */
static int run_table(const char *policy, bool strict, struct sbx_seccomp_audit *audit, pid_t *child)
{
	int res[2], sv[2], nfd = -1, bad = 0, status;
	struct result r;
	pid_t pid;

	assert_int_equal(pipe2(res, O_CLOEXEC), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(res[0]);
		setsid(); /* no controlling tty: vhangup is harmless */
		child_load(policy, audit != NULL, sv[1]);
		child_run_table(res[1]);
		_exit(0);
	}
	close(res[1]);
	close(sv[1]);
	if (audit)
		assert_true((nfd = recv_fd(sv[0])) >= 0);
	for (;;) {
		struct pollfd p[2] = {{res[0], POLLIN, 0}, {nfd, POLLIN, 0}};
		struct sbx_err err = {0};

		assert_true(poll(p, nfd >= 0 ? 2 : 1, 10000) > 0);
		if (nfd >= 0 && (p[1].revents & POLLIN) &&
		    sbx_seccomp_audit_handle(nfd, audit, &err) < 0)
			fail_msg("audit: %s: %s", err.msg, strerror(err.errnum));
		if (!(p[0].revents & (POLLIN | POLLHUP)))
			continue;
		if (read(res[0], &r, sizeof(r)) != sizeof(r))
			break;
		const struct st_check *c = &st_checks[r.idx];
		enum st_want want = strict ? c->want_strict : c->want_default;

		if (!st_ok(want, r.ret, r.err)) {
			print_error("%s %s: %s: want %s, got %ld (%s)\n", policy,
				    audit ? "audit" : "", c->what, st_want_name(want), r.ret,
				    r.ret < 0 ? strerror(r.err) : "success");
			bad++;
		}
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	close(res[0]);
	close(sv[0]);
	if (nfd >= 0)
		close(nfd);
	if (child)
		*child = pid;
	return bad;
}

static void test_default_table(void **state)
{
	assert_int_equal(run_table("default", false, NULL, NULL), 0);
}

static void test_strict_table(void **state)
{
	assert_int_equal(run_table("strict", true, NULL, NULL), 0);
}

static const struct sbx_seccomp_audit_entry *audit_find(const struct sbx_seccomp_audit *a,
							const char *name, int errnum)
{
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->entries[i].name, name) == 0 && a->entries[i].errnum == errnum)
			return &a->entries[i];
	return NULL;
}

/* Calls of name answered errnum, over every argument description. */
static uint64_t audit_count(const struct sbx_seccomp_audit *a, const char *name, int errnum)
{
	uint64_t n = 0;

	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->entries[i].name, name) == 0 && a->entries[i].errnum == errnum)
			n += a->entries[i].count;
	return n;
}

static const struct sbx_seccomp_audit_entry *audit_find_args(const struct sbx_seccomp_audit *a,
							     const char *name, const char *args)
{
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->entries[i].name, name) == 0 && strcmp(a->entries[i].args, args) == 0)
			return &a->entries[i];
	return NULL;
}

/* Every blocked call (but clone3, a plain ENOSYS) reached the supervisor. */
static void check_audit(const struct sbx_seccomp_audit *a, bool strict, pid_t pid)
{
	uint64_t want_total = 0;

	for (size_t i = 0; i < SBX_ARRAY_SIZE(st_checks); i++) {
		const struct st_check *c = &st_checks[i];
		enum st_want w = strict ? c->want_strict : c->want_default;
		const struct sbx_seccomp_audit_entry *e;

		if (w == ST_ALLOWED || strcmp(c->name, "clone3") == 0)
			continue;
		want_total++;
		if (w == ST_BLOCKED)
			continue; /* named or not, depending on libseccomp */
		e = audit_find(a, c->name, w == ST_EPERM ? EPERM : ENOSYS);
		if (!e)
			fail_msg("audit has no entry for %s (%s)", c->what, st_want_name(w));
		assert_true(e->count >= 1);
		assert_int_equal(e->pid, pid);
		/* Same pid namespace here: the jail's view is the same pid. */
		assert_int_equal(e->jail_pid, pid);
	}
	assert_true(audit_find(a, "clone3", ENOSYS) == NULL);
	assert_true(audit_find(a, "getpid", EPERM) == NULL);
	assert_int_equal(a->total, want_total);
}

static void test_default_audit(void **state)
{
	struct sbx_seccomp_audit a;
	struct sbx_err err = {0};
	const struct sbx_seccomp_audit_entry *e;
	pid_t pid;

	assert_int_equal(sbx_seccomp_audit_init(&a, "default", &err), 0);
	assert_int_equal(run_table("default", false, &a, &pid), 0);
	check_audit(&a, false, pid);
	e = audit_find(&a, "clone", EPERM);
	assert_non_null(e);
	assert_int_equal(audit_count(&a, "clone", EPERM), 7); /* one per namespace flag */
	assert_int_equal(audit_count(&a, "ioctl", EPERM), 4);
	/* The arguments that decided are named: family and type, a netlink
	 * protocol, ioctl's request. */
	assert_non_null(audit_find_args(&a, "socket", "AF_PACKET, SOCK_RAW"));
	assert_non_null(audit_find_args(&a, "socket", "AF_INET6, SOCK_RAW"));
	assert_non_null(audit_find_args(&a, "socket", "AF_NETLINK, SOCK_RAW, protocol 9"));
	assert_non_null(audit_find_args(&a, "socket", "AF_NETLINK, SOCK_DGRAM, protocol 15"));
	assert_null(audit_find_args(&a, "socket", "AF_NETLINK, SOCK_RAW, protocol 0"));
	assert_non_null(audit_find_args(&a, "ioctl", "request 0x5412"));
	assert_non_null(audit_find_args(&a, "clone", "flags 0x10000011"));

	json_t *j = sbx_seccomp_audit_json(&a), *o;
	assert_true(json_is_array(j));
	assert_int_equal(json_array_size(j), a.n);
	o = json_array_get(j, 0);
	assert_string_equal(json_string_value(json_object_get(o, "syscall")), a.entries[0].name);
	assert_int_equal(json_integer_value(json_object_get(o, "count")), a.entries[0].count);
	assert_int_equal(json_integer_value(json_object_get(o, "pid")), pid);
	assert_string_equal(json_string_value(json_object_get(o, "errno")), "EPERM");
	json_decref(j);
	o = sbx_seccomp_audit_entry_json(audit_find_args(&a, "socket", "AF_PACKET, SOCK_RAW"));
	assert_string_equal(json_string_value(json_object_get(o, "args")), "AF_PACKET, SOCK_RAW");
	json_decref(o);
	sbx_seccomp_audit_free(&a);
}

static void test_strict_audit(void **state)
{
	struct sbx_seccomp_audit a;
	struct sbx_err err = {0};
	pid_t pid;

	assert_int_equal(sbx_seccomp_audit_init(&a, "strict", &err), 0);
	assert_int_equal(run_table("strict", true, &a, &pid), 0);
	check_audit(&a, true, pid);
	/* Same syscall, two answers: AF_PACKET is EPERM, AF_INET unlisted. */
	assert_non_null(audit_find(&a, "socket", EPERM));
	assert_non_null(audit_find(&a, "socket", ENOSYS));
	sbx_seccomp_audit_free(&a);
}

/* Fork, load policy, run fn; return the wait status. */
static int in_child(const char *policy, bool notify, int (*fn)(void *), void *arg)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		/* the fault ends the child, not cmocka's handler (which would
		 * go on with the tests in the child) */
		signal(SIGSEGV, SIG_DFL);
		signal(SIGBUS, SIG_DFL);
		signal(SIGILL, SIG_DFL);
		if (policy)
			child_load(policy, notify, -1);
		_exit(fn(arg));
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return status;
}

#ifdef ST_HAVE_COMPAT_ABIS
static int do_x32(void *arg)
{
	st_x32_getpid();
	return 0; /* still alive: escaped */
}

static int do_int80(void *arg)
{
	st_int80_getpid();
	return 0;
}

/*
 * Some kernels take no i386 system call at all: int 0x80 faults (SIGSEGV)
 * with no filter (ia32_emulation=0; the default in AMD SEV and Intel TDX
 * guests since Linux 6.7).  There is nothing to filter then: those checks
 * are skipped, and said once.
 */
static bool int80_taken(void)
{
	static int taken = -1;

	if (taken < 0) {
		int status = in_child(NULL, false, do_int80, NULL);

		taken = WIFEXITED(status) && WEXITSTATUS(status) == 0;
		if (!taken)
			print_message("this kernel takes no i386 system call (int 0x80 ends in "
				      "signal %d with no filter): the int 0x80 checks are "
				      "skipped\n",
				      WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	}
	return taken;
}

static void assert_sigsys(int status)
{
	if (!WIFSIGNALED(status))
		fail_msg("child was not killed (exit status %d)", WEXITSTATUS(status));
	assert_int_equal(WTERMSIG(status), SIGSYS);
}

static int do_compat_x32(void *arg)
{
	st_x32_call(arg);
	return 0;
}

static int do_compat_int80(void *arg)
{
	st_int80_call(arg);
	return 0;
}

static void test_other_abis_killed(void **state)
{
	const char *policies[] = {"default", "strict"};

	bool int80 = int80_taken();

	/* Sanity: without a filter neither kills (int 0x80 where the kernel
	 * takes it). */
	assert_true(WIFEXITED(in_child(NULL, false, do_x32, NULL)));
	for (size_t i = 0; i < SBX_ARRAY_SIZE(policies); i++) {
		assert_sigsys(in_child(policies[i], false, do_x32, NULL));
		if (int80)
			assert_sigsys(in_child(policies[i], false, do_int80, NULL));
		assert_sigsys(in_child(policies[i], true, do_x32, NULL));
		/* The blocked syscalls through the other ABIs: killed too. */
		for (size_t k = 0; k < SBX_ARRAY_SIZE(st_compat_checks); k++) {
			void *c = (void *)&st_compat_checks[k];

			assert_sigsys(in_child(policies[i], false, do_compat_x32, c));
			if (int80)
				assert_sigsys(in_child(policies[i], false, do_compat_int80, c));
		}
	}
}
#endif

/* The BPF program sbx_seccomp_export() writes for o: its instruction count. */
static size_t export_bpf(const struct sbx_seccomp_opts *o, struct sock_filter *f, size_t cap)
{
	struct sbx_err err = {0};
	int p[2];
	ssize_t n;

	assert_int_equal(pipe(p), 0);
	assert_int_equal(sbx_seccomp_export(o, p[1], true, &err), 0);
	close(p[1]);
	n = sbx_read_all(p[0], f, cap * sizeof(*f));
	close(p[0]);
	assert_true(n > 0 && n % (ssize_t)sizeof(*f) == 0);
	return (size_t)n / sizeof(*f);
}

/* The generated BPF kills x32 numbers: "nr >= 0x40000000 -> bad arch". */
static void test_bpf_rejects_x32(void **state)
{
	struct sbx_seccomp_opts o = {.policy = "default"};
	struct sock_filter f[4096];
	size_t n = export_bpf(&o, f, SBX_ARRAY_SIZE(f));
	bool found = false;

	for (size_t i = 0; i + 1 < n; i++) {
		if (f[i].code != (BPF_JMP | BPF_JGE | BPF_K) || f[i].k != 0x40000000)
			continue;
		/* Followed (when >=) by the kill-process return. */
		size_t t = i + 1 + f[i].jt;
		while (t < (size_t)n / sizeof(f[0]) && f[t].code == (BPF_JMP | BPF_JEQ | BPF_K))
			t = t + 1 + f[t].jf; /* the nr == -1 exception */
		found = f[t].code == (BPF_RET | BPF_K) && f[t].k == SECCOMP_RET_KILL_PROCESS;
	}
	assert_true(found);
}

static int do_sh(void *arg)
{
	execl("/bin/sh", "sh", "-c", (const char *)arg, (char *)NULL);
	return 127;
}

static char tmpdir[4096];

/* strict runs a shell, coreutils, busybox and gcc (cc1, as, collect2, ld). */
static void test_strict_runs_tools(void **state)
{
	const char *policies[] = {"strict", "default"};
	char *cmd;
	int status;

	const char *t = getenv("TMPDIR");

	snprintf(tmpdir, sizeof(tmpdir), "%s/sbx-seccomp-test.XXXXXX", t && *t ? t : "/tmp");
	assert_non_null(mkdtemp(tmpdir));
	cmd = sbx_xasprintf(
	    "set -e; cd %s; n=$(ls / | wc -l); test $n -gt 3; echo x > f; test \"$(cat f)\" = x;"
	    "printf '#include <stdio.h>\\nint main(void){puts(\"hi\");return 0;}\\n' > h.c;"
	    "gcc -O2 -o h h.c; test \"$(./h)\" = hi; busybox sh -c 'echo a | sort | wc -l' "
	    ">/dev/null;"
	    "mkdir -p d/e; cp -a h.c d/e/; tar cf t.tar d; rm -r d; tar xf t.tar; test -f d/e/h.c;"
	    "mkfifo p; rm p; sleep 0.01; date >/dev/null; sed s/a/b/ f >/dev/null; id -u "
	    ">/dev/null",
	    tmpdir);
	for (size_t i = 0; i < SBX_ARRAY_SIZE(policies); i++) {
		status = in_child(policies[i], false, do_sh, cmd);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			fail_msg("under %s the shell failed: status 0x%x", policies[i], status);
		status = in_child(policies[i], false, do_sh,
				  (char *)"exec 3<&0; ls /proc/self/ >/dev/null");
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	free(cmd);
	cmd = sbx_xasprintf("rm -rf %s", tmpdir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
}

/* Without a supervisor (listener closed) notified calls fail with ENOSYS. */
static int do_no_supervisor(void *arg)
{
	struct sbx_seccomp_opts o = {.policy = "default", .notify = true};
	struct sbx_err err = {0};
	int fd = sbx_seccomp_load(&o, &err);

	if (fd < 0 || !(fcntl(fd, F_GETFD) & FD_CLOEXEC))
		return 2;
	close(fd);
	if (syscall(SYS_mount, 0L, 0L, 0L, 0L, 0L) != -1 || errno != ENOSYS)
		return 3;
	if (syscall(SYS_getpid) != getpid())
		return 4;
	return 0;
}

static void test_notify_without_supervisor(void **state)
{
	int status = in_child(NULL, false, do_no_supervisor, NULL);

	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* Policy files. */
static char *write_policy(const char *content, size_t len)
{
	const char *t = getenv("TMPDIR");
	char *path = sbx_xasprintf("%s/sbx-seccomp-policy.XXXXXX", t && *t ? t : "/tmp");
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(sbx_write_all(fd, content, len), 0);
	close(fd);
	return path;
}

static int do_amended(void *arg)
{
	if (syscall(SYS_getppid) != -1 || errno != EACCES)
		return 2;
	if (syscall(SYS_mount, 0L, 0L, 0L, 0L, 0L) != -1 || errno != EPERM)
		return 3; /* the default base is still there */
	if (c_tiocsti() != -1 || errno != EPERM)
		return 4;
	if (syscall(SYS_getpid) != getpid())
		return 5;
	return 0;
}

static int do_getppid_allowed(void *arg)
{
	if (syscall(SYS_getppid) <= 0)
		return 2;
	if (syscall(SYS_mount, 0L, 0L, 0L, 0L, 0L) != -1 || errno != EPERM)
		return 3;
	return 0;
}

static int do_allow_ioctl(void *arg)
{
	if (c_tiocsti() != -1 || errno != ENOTTY)
		return 2; /* allow ioctl replaced the TIOCSTI rule */
	if (c_personality_rie() != -1 || errno != EPERM)
		return 3;
	return 0;
}

static int do_none_base(void *arg)
{
	if (syscall(SYS_getpid) != -1 || errno != EACCES)
		return 2;
	if (syscall(SYS_getppid) <= 0)
		return 3;
	/* Straight to exit_group: a sanitizer's _exit hook needs more calls. */
	syscall(SYS_exit_group, 0);
	return 4;
}

static int do_getpid(void *arg)
{
	syscall(SYS_getpid);
	return 0;
}

static void check_policy(const char *content, int (*fn)(void *), int want_sig)
{
	char *path = write_policy(content, strlen(content));
	struct sbx_err err = {0};
	int status;

	if (prepare_file(path, false, &err) < 0)
		fail_msg("validate: %s", err.msg);
	status = in_child(path, false, fn, NULL);
	if (want_sig) {
		assert_true(WIFSIGNALED(status));
		assert_int_equal(WTERMSIG(status), want_sig);
	} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fail_msg("policy %s: child status 0x%x", content, status);
	}
	unlink(path);
	free(path);
}

static void test_file_rules(void **state)
{
	check_policy("# amends the default policy\n\ndeny getppid EACCES   # trailing comment\n",
		     do_amended, 0);
	check_policy("base default\nallow ioctl\n", do_allow_ioctl, 0);
	check_policy("base none\ndefault errno EACCES\nallow getppid\nallow exit_group\n"
		     "allow munmap\nallow brk\nallow madvise\n",
		     do_none_base, 0);
	check_policy("base strict\ndeny getpid kill\n", do_getpid, SIGSYS);
	check_policy("base default\n\tdeny\tgetpid\t13\n", do_none_base, 0);
}

static const struct {
	const char *content;
	const char *want;
} bad_files[] = {
    {"deny mountt\n", "': line 1: unknown syscall 'mountt' (did you mean 'mount'?)"},
    {"\n# c\ndenny mount\n", "': line 3: unknown directive 'denny' (did you mean 'deny'?)"},
    {"deny mount\nbase strict\n", "': line 2: 'base' must come before every other directive"},
    {"base strict\nbase none\n", "': line 2: 'base' given twice"},
    {"base lax\n", "': line 1: unknown base policy 'lax'"},
    {"deny mount EPREM\n", "': line 1: unknown errno 'EPREM' (did you mean 'EPERM'?)"},
    {"deny mount 0\n", "': line 1: errno '0' out of range (1..4095)"},
    {"deny mount 4096\n", "': line 1: errno '4096' out of range"},
    {"deny mount EPERM extra\n", "': line 1: 'deny' takes SYSCALL [ERRNO|kill]"},
    {"deny a b c d e\n", "': line 1: too many words"},
    {"deny\n", "': line 1: 'deny' takes SYSCALL"},
    {"allow read write\n", "': line 1: 'allow' takes one SYSCALL"},
    {"default allow\ndefault kill\n", "': line 2: 'default' given twice"},
    {"default maybe\n", "': line 1: 'default' takes allow, log, kill or errno [ERRNO]"},
    {"default errno ENOPE\n", "': line 1: unknown errno 'ENOPE'"},
    {"allow xyzzy_frobnicate\n", "': line 1: unknown syscall 'xyzzy_frobnicate'"},
};

static void test_file_errors(void **state)
{
	struct sbx_err err;

	for (size_t i = 0; i < SBX_ARRAY_SIZE(bad_files); i++) {
		char *path = write_policy(bad_files[i].content, strlen(bad_files[i].content));
		char *want = sbx_xasprintf("seccomp policy '%s%s", path, bad_files[i].want);

		sbx_err_clear(&err);
		assert_true(sbx_seccomp_validate(path, &err) < 0);
		if (strncmp(err.msg, want, strlen(want)) != 0)
			fail_msg("policy %s: got \"%s\", want \"%s\"", bad_files[i].content,
				 err.msg, want);
		/* Loading refuses it the same way (in a child: it sets nnp). */
		free(want);
		unlink(path);
		free(path);
	}
	assert_true(sbx_seccomp_validate("/nonexistent/sbx.policy", &err) == -ENOENT);
	assert_string_equal(err.msg, "cannot open seccomp policy '/nonexistent/sbx.policy'");
	assert_true(sbx_seccomp_validate("/tmp", &err) < 0);
	assert_string_equal(err.msg, "seccomp policy '/tmp' is not a regular file");
	char *path = write_policy("deny mount\n\0deny bpf\n", 22);
	assert_true(sbx_seccomp_validate(path, &err) < 0);
	assert_non_null(strstr(err.msg, "contains a NUL byte"));
	unlink(path);
	free(path);
	assert_int_equal(sbx_seccomp_validate("default", &err), 0);
	assert_int_equal(sbx_seccomp_validate("strict", &err), 0);
	assert_int_equal(sbx_seccomp_validate(NULL, &err), 0);
}

/* Loading a file that was not validated first fails, and loads nothing. */
static int do_load_unvalidated(void *arg)
{
	struct sbx_seccomp_opts o = {.policy = arg};
	struct sbx_err err = {0};

	if (sbx_seccomp_load(&o, &err) != -EINVAL)
		return 2;
	if (!strstr(err.msg, "was not validated before the jail started"))
		return 3;
	/* Nothing was loaded: getppid is not filtered. */
	if (syscall(SYS_getppid) <= 0)
		return 4;
	return 0;
}

/* The child loads what was validated, even if the path now holds another
 * file (as it would inside a jail whose image plants one there). */
static int do_validated_copy(void *arg)
{
	if (syscall(SYS_getppid) != -1 || errno != EACCES)
		return 2;
	return 0;
}

/* Audit mode with a policy that blocks nothing: no listener, returns 0. */
static int do_notify_nothing(void *arg)
{
	struct sbx_seccomp_opts o = {.policy = arg, .notify = true, .filter = &prepared[1]};
	struct sbx_err err = {0};

	return sbx_seccomp_load(&o, &err) == 0 && syscall(SYS_getppid) > 0 ? 0 : 2;
}

static void test_notify_permissive(void **state)
{
	char *path = write_policy("base none\n", 10);
	struct sbx_err err = {0};
	int status;

	assert_int_equal(prepare_file(path, true, &err), 0);
	status = in_child(NULL, false, do_notify_nothing, path);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	unlink(path);
	free(path);
}

static void test_load_uses_validated_copy(void **state)
{
	char *path = write_policy("deny getppid EACCES\n", 20);
	char *other = write_policy("base none\n", 10);
	struct sbx_err err = {0};
	int status;

	status = in_child(NULL, false, do_load_unvalidated, path);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(prepare_file(path, false, &err), 0);
	assert_int_equal(rename(other, path), 0);
	status = in_child(path, false, do_validated_copy, NULL);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* A bad file that fails validation leaves nothing to load. */
	char *bad = write_policy("deny mountt\n", 12);
	assert_true(sbx_seccomp_validate(bad, &err) < 0);
	status = in_child(NULL, false, do_load_unvalidated, bad);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	unlink(path);
	unlink(bad);
	free(path);
	free(other);
	free(bad);
}

/* The user-space replay of the policy agrees with the table. */
static void test_eval_matches_table(void **state)
{
	struct sbx_seccomp_policy *p = NULL;
	struct sbx_err err = {0};
	uint64_t a[6] = {0};
	int e;

	assert_int_equal(sbx_seccomp_policy_get("default", &p, &err), 0);
	a[1] = TIOCSTI | (1ULL << 32);
	assert_int_equal(sbx_seccomp_policy_eval(p, SYS_ioctl, a, &e), SBX_SC_ERRNO);
	assert_int_equal(e, EPERM);
	a[1] = TCGETS;
	assert_int_equal(sbx_seccomp_policy_eval(p, SYS_ioctl, a, &e), SBX_SC_ALLOW);
	for (uint64_t v = 0; v < 0x40000; v += 1) {
		a[0] = v;
		enum sbx_sc_act want = (v == 0 || v == 8 || v == 0x20000 || v == 0x20008)
					   ? SBX_SC_ALLOW
					   : SBX_SC_ERRNO;
		if (sbx_seccomp_policy_eval(p, SYS_personality, a, &e) != want)
			fail_msg("personality(0x%llx)", (unsigned long long)v);
	}
	a[0] = 0xffffffff;
	assert_int_equal(sbx_seccomp_policy_eval(p, SYS_personality, a, &e), SBX_SC_ALLOW);
	a[0] = 0xfffffffe;
	assert_int_equal(sbx_seccomp_policy_eval(p, SYS_personality, a, &e), SBX_SC_ERRNO);
	sbx_seccomp_policy_free(p);

	assert_int_equal(sbx_seccomp_policy_get("strict", &p, &err), 0);
	for (uint64_t v = 0x5400; v < 0x5500; v++) {
		a[1] = v | (7ULL << 33);
		enum sbx_sc_act want = v == TIOCSTI || v == TIOCLINUX ? SBX_SC_ERRNO : SBX_SC_ALLOW;
		if (sbx_seccomp_policy_eval(p, SYS_ioctl, a, &e) != want)
			fail_msg("strict ioctl(0x%llx)", (unsigned long long)v);
	}
	a[0] = AF_INET;
	assert_int_equal(sbx_seccomp_policy_eval(p, SYS_socket, a, &e), SBX_SC_ERRNO);
	assert_int_equal(e, ENOSYS);
	a[0] = AF_PACKET;
	assert_int_equal(sbx_seccomp_policy_eval(p, SYS_socket, a, &e), SBX_SC_ERRNO);
	assert_int_equal(e, EPERM);
	sbx_seccomp_policy_free(p);
}


static void assert_rules_equal(const char *what, const struct sbx_sc_rule *a, size_t na,
			       const struct sbx_sc_rule *b, size_t nb)
{
	if (na != nb)
		fail_msg("%s: %zu rules, %zu resolved now", what, na, nb);
	for (size_t i = 0; i < na; i++) {
		const struct sbx_sc_rule *x = &a[i], *y = &b[i];
		bool same = x->nr == y->nr && x->act == y->act && x->err == y->err &&
			    x->quiet == y->quiet && x->has_cmp == y->has_cmp;

		if (same && x->has_cmp)
			same = x->cmp.arg == y->cmp.arg && x->cmp.op == y->cmp.op &&
			       x->cmp.datum_a == y->cmp.datum_a && x->cmp.datum_b == y->cmp.datum_b;
		if (!same)
			fail_msg("%s: rule %zu (nr %d/%d) differs from the one resolved now", what,
				 i, x->nr, y->nr);
	}
}

/*
 * The built-in rules embedded at build time (lib/seccomp/seccomp_builtin.c) are
 * those the code resolves now with this libseccomp: a stale generated file
 * fails here.  A built-in policy is a copy of them.
 */
static void test_embedded_rules(void **state)
{
	const char *names[] = {"default", "strict"};

	for (size_t i = 0; i < SBX_ARRAY_SIZE(names); i++) {
		const struct sbx_seccomp_builtin *b = sbx_seccomp_embedded_get(names[i]);
		struct sbx_seccomp_policy fresh = {0}, *got = NULL;
		struct sbx_err err = {0};

		assert_non_null(b);
		assert_int_equal(sbx_seccomp_policy_builtin_resolve(&fresh, names[i]), 0);
		assert_true(fresh.n > 100);
		assert_int_equal(b->def, fresh.def);
		assert_int_equal(b->def_err, fresh.def_err);
		assert_rules_equal(names[i], b->rules, b->n, fresh.rules, fresh.n);
		assert_int_equal(sbx_seccomp_policy_get(names[i], &got, &err), 0);
		assert_rules_equal(names[i], got->rules, got->n, fresh.rules, fresh.n);
		assert_ptr_not_equal(got->rules, b->rules);
		assert_int_equal(got->def, fresh.def);
		assert_int_equal(got->def_err, fresh.def_err);
		sbx_seccomp_policy_free(got);
		free(fresh.rules);
	}
	assert_null(sbx_seccomp_embedded_get("none"));
	assert_null(sbx_seccomp_embedded_get("/etc/default"));
}

static void assert_prog_equal(const char *what, const struct sock_filter *a, size_t na,
			      const struct sock_filter *b, size_t nb)
{
	if (na != nb)
		fail_msg("%s: %zu instructions built, %zu compiled now", what, na, nb);
	for (size_t i = 0; i < na; i++)
		if (a[i].code != b[i].code || a[i].jt != b[i].jt || a[i].jf != b[i].jf ||
		    a[i].k != b[i].k)
			fail_msg("%s: instruction %zu: {0x%x, %u, %u, 0x%x} built, "
				 "{0x%x, %u, %u, 0x%x} now",
				 what, i, a[i].code, a[i].jt, a[i].jf, a[i].k, b[i].code, b[i].jt,
				 b[i].jf, b[i].k);
}

/*
 * The BPF programs compiled at build time, which prepare and load hand to
 * the kernel for the built-in policies, equal instruction for instruction
 * a fresh libseccomp compile of the policy resolved now, and what
 * sbx_seccomp_export (sbx profile, through libseccomp) writes.
 */
static void test_embedded_programs(void **state)
{
	const char *names[] = {"default", "strict"};

	for (size_t i = 0; i < SBX_ARRAY_SIZE(names); i++) {
		for (int notify = 0; notify < 2; notify++) {
			const struct sbx_seccomp_prog *e = sbx_seccomp_embedded_prog(names[i], notify);
			struct sbx_seccomp_opts o = {.policy = names[i], .notify = notify};
			struct sbx_seccomp_policy fresh = {0};
			struct sbx_err err = {0};
			struct sock_filter *insns = NULL, f[4096];
			size_t len = 0;
			bool listener = false;
			char what[64];

			snprintf(what, sizeof(what), "%s%s", names[i], notify ? " notify" : "");
			assert_non_null(e);
			assert_int_equal(sbx_seccomp_policy_builtin_resolve(&fresh, names[i]), 0);
			if (sbx_seccomp_compile(&fresh, notify, &insns, &len, &listener, &err) < 0)
				fail_msg("%s: %s", what, err.msg);
			assert_prog_equal(what, e->insns, e->len, insns, len);
			assert_int_equal(e->listener, listener);
			assert_int_equal(e->listener, notify); /* both block something */
			len = export_bpf(&o, f, SBX_ARRAY_SIZE(f));
			assert_prog_equal(what, e->insns, e->len, f, len);
			free(insns);
			free(fresh.rules);
		}
	}
}

/* The one-id filter: another id is EPERM, the own id and -1 pass. */
static void test_ids_filter(void **state)
{
	pid_t pid = fork();
	int st;

	assert_true(pid >= 0);
	if (pid == 0) {
		uid_t u = getuid();
		gid_t g = getgid();
		struct sbx_err e = {0};
		int fd = open("/dev/null", O_RDONLY);

		if (sbx_seccomp_ids_load(u, g, &e) < 0)
			_exit(10);
		errno = 0;
		if (setuid(u + 1) == 0 || errno != EPERM)
			_exit(11);
		if (setgid(g + 1) == 0 || errno != EPERM)
			_exit(12);
		if (syscall(SYS_setresuid, -1, u + 7, -1) == 0 || errno != EPERM)
			_exit(13);
		if (syscall(SYS_setresuid, -1, -1, -1) != 0 || setuid(u) != 0)
			_exit(14);
		if (fchown(fd, u + 1, (gid_t)-1) == 0 || errno != EPERM)
			_exit(15);
		if (fchown(fd, (uid_t)-1, (gid_t)-1) != 0 && errno == EPERM)
			_exit(16);
		if (syscall(SYS_fchownat, AT_FDCWD, "/dev/null", -1, g + 3, 0) == 0 || errno != EPERM)
			_exit(17);
		if (getpid() <= 0) /* everything else still runs */
			_exit(18);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* A policy file is read and compiled by libseccomp, never taken for the
 * built-in it is named after. */
static void test_file_named_like_builtin(void **state)
{
	const char *t = getenv("TMPDIR");
	char *dir = sbx_xasprintf("%s/sbx-seccomp-dir.XXXXXX", t && *t ? t : "/tmp");
	char *path;
	struct sbx_err err = {0};
	int fd, status;

	assert_non_null(mkdtemp(dir));
	path = sbx_xasprintf("%s/default", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(sbx_write_all(fd, "deny getppid EACCES\n", 20), 0);
	close(fd);
	assert_null(sbx_seccomp_embedded_get(path));
	assert_null(sbx_seccomp_embedded_prog(path, false));
	if (prepare_file(path, false, &err) < 0)
		fail_msg("validate: %s", err.msg);
	status = in_child(path, false, do_amended, NULL);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* The built-in loaded after it is the built-in, without the file's rule. */
	status = in_child("default", false, do_getppid_allowed, NULL);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	unlink(path);
	rmdir(dir);
	free(path);
	free(dir);
}

#define SECCOMP_FILE_TESTS                                                                         \
	cmocka_unit_test(test_file_rules), cmocka_unit_test(test_file_errors),                     \
	    cmocka_unit_test(test_load_uses_validated_copy),                                       \
	    cmocka_unit_test(test_notify_permissive), cmocka_unit_test(test_eval_matches_table),   \
	    cmocka_unit_test(test_ids_filter),                                                     \
	    cmocka_unit_test(test_embedded_rules), cmocka_unit_test(test_embedded_programs),       \
	    cmocka_unit_test(test_file_named_like_builtin)

/* The same tables through the fast path: filters compiled in this process
 * before the fork, loaded as raw BPF in the child. */
static void test_prepared_filters(void **state)
{
	const char *policies[] = {"default", "strict"};

	for (size_t i = 0; i < SBX_ARRAY_SIZE(policies); i++) {
		struct sbx_seccomp_opts o = {.policy = policies[i], .notify = true};
		struct sbx_seccomp_audit a;
		struct sbx_err err = {0};
		bool strict = i == 1;
		pid_t pid;

		assert_int_equal(sbx_seccomp_validate(policies[i], &err), 0);
		sbx_seccomp_filter_free(&prepared[1]);
		assert_int_equal(sbx_seccomp_prepare(&o, &prepared[1], &err), 0);
		assert_int_equal(run_table(policies[i], strict, NULL, NULL), 0);
		assert_int_equal(sbx_seccomp_audit_init(&a, policies[i], &err), 0);
		assert_int_equal(run_table(policies[i], strict, &a, &pid), 0);
		check_audit(&a, strict, pid);
		sbx_seccomp_audit_free(&a);
#ifdef ST_HAVE_COMPAT_ABIS
		assert_sigsys(in_child(policies[i], false, do_x32, NULL));
		if (int80_taken())
			assert_sigsys(in_child(policies[i], true, do_int80, NULL));
#endif
		int status = in_child(NULL, false, do_no_supervisor, NULL);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
}

/* Valgrind does not implement seccomp(2): only user-space parts run. */
static void test_seccomp_unavailable(void **state)
{
	print_message("seccomp(2) is not available (valgrind?): kernel tests skipped\n");
	skip();
}

static bool seccomp_available(void)
{
	uint32_t action = SECCOMP_RET_ALLOW;

	return syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
}

int main(void)
{
	const struct CMUnitTest userspace_only[] = {
	    cmocka_unit_test(test_eval_matches_table),
	    cmocka_unit_test(test_embedded_rules),
	    cmocka_unit_test(test_seccomp_unavailable),
	};
	if (!seccomp_available())
		return cmocka_run_group_tests(userspace_only, NULL, NULL);

	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_default_table),
	    cmocka_unit_test(test_strict_table),
	    cmocka_unit_test(test_default_audit),
	    cmocka_unit_test(test_strict_audit),
#ifdef ST_HAVE_COMPAT_ABIS
	    cmocka_unit_test(test_other_abis_killed),
#endif
	    cmocka_unit_test(test_bpf_rejects_x32),
	    cmocka_unit_test(test_strict_runs_tools),
	    cmocka_unit_test(test_notify_without_supervisor),
	    cmocka_unit_test(test_prepared_filters),
	    SECCOMP_FILE_TESTS,
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
