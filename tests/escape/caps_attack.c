/* SPDX-License-Identifier: MIT */
/*
 * tests/escape/caps_attack.c - privilege attacks from inside a jail.
 *
 *	caps_attack caps            the five sets, capset, ambient, no_new_privs,
 *	                            setuid(0), user namespaces (unshare, clone, clone3)
 *	caps_attack exec NAME PATH  exec PATH (a setuid-root or file-capability
 *	                            copy of this program) and check what it got
 *	caps_attack report          print "euid=N capprm=HEX capeff=HEX" (what
 *	                            the copies run)
 *
 * Prints "contained caps/NAME" or "ESCAPED caps/NAME: ..." (see esc.h).
 */
#include "esc.h"

#include <linux/capability.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/xattr.h>

static void status_field(const char *key, char *out, size_t n)
{
	char buf[4096], *p;

	out[0] = 0;
	if (slurp("/proc/self/status", buf, sizeof(buf)) <= 0 || !(p = strstr(buf, key)))
		return;
	p += strlen(key);
	while (*p == ' ' || *p == '\t')
		p++;
	snprintf(out, n, "%.*s", (int)strcspn(p, "\n"), p);
}

static int child_in_userns(unsigned long flags)
{
	pid_t p = (pid_t)syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
	int st;

	if (p == 0)
		_exit(0);
	if (p < 0)
		return -errno;
	waitpid(p, &st, 0);
	return 0;
}

static void caps(void)
{
	const char *sets[] = {"CapInh:", "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:"};
	char v[64], what[512] = "";
	int k = 0;

	for (size_t i = 0; i < ARRAY_SIZE(sets); i++) {
		status_field(sets[i], v, sizeof(v));
		if (strspn(v, "0") != strlen(v) || !v[0])
			k += snprintf(what + k, sizeof(what) - k, "%s %s; ", sets[i], v);
	}
	verdict(k == 0, "caps/five-sets-zero", "%s", k ? what : "all five sets 0");

	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	memset(d, 0xff, sizeof(d));
	int r = (int)syscall(SYS_capset, &h, d);
	verdict(r < 0, "caps/capset-raise", "capset all: %s", err_name(r ? errno : 0));

	k = 0;
	what[0] = 0;
	for (int c = 0; c <= 40; c++)
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, c, 0, 0) == 0)
			k += snprintf(what + k, sizeof(what) - k, "ambient %d; ", c);
	if (prctl(PR_SET_NO_NEW_PRIVS, 0, 0, 0, 0) == 0 &&
	    prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 0)
		k += snprintf(what + k, sizeof(what) - k, "no_new_privs cleared; ");
	status_field("NoNewPrivs:", v, sizeof(v));
	if (strcmp(v, "1"))
		k += snprintf(what + k, sizeof(what) - k, "NoNewPrivs: %s; ", v);
	verdict(k == 0, "caps/ambient-and-no-new-privs", "%s",
		k ? what : "no ambient cap raised, no_new_privs stays 1");

	if (getuid() != 0) {
		int a = setuid(0) ? errno : 0;
		int b = setresuid(0, 0, 0) ? errno : 0;
		int c = setgid(0) ? errno : 0;
		verdict(a && b && c && geteuid() != 0, "caps/setuid-root",
			"setuid(0): %s; setresuid: %s; setgid(0): %s", err_name(a), err_name(b),
			err_name(c));
	}

	int u1 = unshare(CLONE_NEWUSER) ? errno : 0;
	int u2 = child_in_userns(CLONE_NEWUSER);
	struct clone_args ca = {.flags = CLONE_NEWUSER, .exit_signal = SIGCHLD};
	long p = syscall(SYS_clone3, &ca, sizeof(ca));
	int u3 = p < 0 ? errno : 0;
	if (p == 0)
		_exit(0);
	if (p > 0)
		waitpid((pid_t)p, NULL, 0);
	verdict(u1 && u2 && u3, "caps/unshare-newuser", "unshare: %s; clone: %s; clone3: %s",
		err_name(u1), err_name(-u2), err_name(u3));

	int flags[] = {CLONE_NEWNS,  CLONE_NEWPID,    CLONE_NEWNET, CLONE_NEWUTS,
		       CLONE_NEWIPC, CLONE_NEWCGROUP, CLONE_NEWTIME};
	k = 0;
	what[0] = 0;
	for (size_t i = 0; i < ARRAY_SIZE(flags); i++) {
		if (unshare(flags[i]) == 0)
			k += snprintf(what + k, sizeof(what) - k, "unshare %#x; ", flags[i]);
		/* In clone()'s flags 0x80 is part of the exit signal, not CLONE_NEWTIME. */
		if (flags[i] != CLONE_NEWTIME && child_in_userns((unsigned long)flags[i]) == 0)
			k += snprintf(what + k, sizeof(what) - k, "clone %#x; ", flags[i]);
	}
	verdict(k == 0, "caps/unshare-namespaces", "%s", k ? what : "every namespace flag refused");
}

static void report(void)
{
	char prm[64], eff[64];

	status_field("CapPrm:", prm, sizeof(prm));
	status_field("CapEff:", eff, sizeof(eff));
	printf("euid=%d capprm=%s capeff=%s\n", (int)geteuid(), prm, eff);
}

static void exec_check(const char *name, const char *path)
{
	char full[128], out[256] = "", xa[64];
	int p[2], st;
	struct stat sb;

	snprintf(full, sizeof(full), "caps/%s", name);
	if (stat(path, &sb) < 0) {
		verdict(1, full, "%s not in the jail: %s", path, strerror(errno));
		return;
	}
	ssize_t xl = getxattr(path, "security.capability", xa, sizeof(xa));
	if (pipe(p) < 0)
		return;
	pid_t c = fork();
	if (c == 0) {
		dup2(p[1], 1);
		execl(path, path, "report", (char *)NULL);
		printf("exec failed: %s\n", strerror(errno));
		_exit(127);
	}
	close(p[1]);
	ssize_t n = read(p[0], out, sizeof(out) - 1);
	out[n > 0 ? n : 0] = 0;
	out[strcspn(out, "\n")] = 0;
	waitpid(c, &st, 0);
	int euid = -1;
	char prm[64] = "?", eff[64] = "?";
	if (sscanf(out, "euid=%d capprm=%63s capeff=%63s", &euid, prm, eff) != 3) {
		verdict(1, full, "exec did not run it: %s", out);
		return;
	}
	int ok = euid == (int)getuid() && strspn(prm, "0") == strlen(prm) &&
		 strspn(eff, "0") == strlen(eff);
	verdict(ok, full, "mode %o owner %d%s; after exec %s (uid %d)", sb.st_mode & 07777,
		(int)sb.st_uid, xl > 0 ? ", security.capability set" : ", no file capability", out,
		(int)getuid());
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 2 && !strcmp(argv[1], "caps"))
		caps();
	else if (argc >= 2 && !strcmp(argv[1], "report"))
		report();
	else if (argc == 4 && !strcmp(argv[1], "exec"))
		exec_check(argv[2], argv[3]);
	else {
		fprintf(stderr, "caps_attack: bad usage\n");
		return 2;
	}
	return 0;
}
