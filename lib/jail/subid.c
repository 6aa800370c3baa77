/* SPDX-License-Identifier: MIT */
/*
 * lib/jail/subid.c - subordinate ids for an unprivileged jail, as podman maps
 * them.
 *
 * An ordinary user's jail maps one id: the user.  Programs that switch to
 * another id (apt-get dropping to _apt, tar restoring owners, setgroups)
 * then fail, with EINVAL where they expect EPERM.  When the user has a
 * range in /etc/subuid and /etc/subgid and the setuid helpers newuidmap
 * and newgidmap exist (Debian's uidmap), the jail maps the whole range
 * instead, keeping the user's own id where the jail's user is:
 *
 *   inside 0 .. u-1      -> the range's first u ids
 *   inside u (the user)  -> the user itself
 *   inside u+1 .. count  -> the rest of the range
 *
 * so files the jail's user makes in a bind are still the user's.  Files a
 * switched-to id makes in the sandbox's own layers belong to a subordinate
 * id the user cannot remove directly: sbx_subid_rm_rf_at() removes them
 * from a user namespace with the same mapping.  SBX_SUBID=0 in the
 * environment turns this off (one id, as before).
 */
#include "jail.h"
#include "rmtree.h"

#include <fcntl.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static const char *const helper_dirs[] = {"/usr/bin", "/bin", "/usr/sbin", "/sbin"};

/* The setuid helper NAME (newuidmap, newgidmap), or false. */
static bool find_helper(const char *name, char *out, size_t len)
{
	struct stat st;

	for (size_t i = 0; i < SBX_ARRAY_SIZE(helper_dirs); i++) {
		snprintf(out, len, "%s/%s", helper_dirs[i], name);
		if (stat(out, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111))
			return true;
	}
	return false;
}

/* The first range of FILE for user NAME or numeric id ID: start, count. */
static bool find_range(const char *file, const char *name, unsigned long id, unsigned long *start,
		       unsigned long *count)
{
	_cleanup_fclose_ FILE *f = fopen(file, "re");
	char line[512], idstr[32];

	if (!f)
		return false;
	snprintf(idstr, sizeof(idstr), "%lu", id);
	while (fgets(line, sizeof(line), f)) {
		char *who = strtok(line, ":\n"), *s = strtok(NULL, ":\n"), *c = strtok(NULL, ":\n");

		if (!who || !s || !c ||
		    (strcmp(who, idstr) != 0 && (!name || strcmp(who, name) != 0)))
			continue;
		*start = strtoul(s, NULL, 10);
		*count = strtoul(c, NULL, 10);
		if (*count > 0 && *start > 0)
			return true;
	}
	return false;
}

bool sbx_subid_lookup(uid_t uid, gid_t gid, struct sbx_subid *s)
{
	const char *off = getenv("SBX_SUBID");
	struct passwd *pw;
	unsigned long us, uc, gs, gc;

	memset(s, 0, sizeof(*s));
	if ((off && strcmp(off, "0") == 0) || uid == 0)
		return false;
	pw = sbx_user(uid);
	if (!find_range("/etc/subuid", pw ? pw->pw_name : NULL, uid, &us, &uc) ||
	    !find_range("/etc/subgid", pw ? pw->pw_name : NULL, uid, &gs, &gc) ||
	    !find_helper("newuidmap", s->newuidmap, sizeof(s->newuidmap)) ||
	    !find_helper("newgidmap", s->newgidmap, sizeof(s->newgidmap)))
		return false;
	s->uid = uid;
	s->gid = gid;
	s->ustart = (uid_t)us;
	s->ucount = uc > SBX_JAIL_ID_COUNT ? SBX_JAIL_ID_COUNT : (uint32_t)uc;
	s->gstart = (gid_t)gs;
	s->gcount = gc > SBX_JAIL_ID_COUNT ? SBX_JAIL_ID_COUNT : (uint32_t)gc;
	return true;
}

/* "in out n" triples for newuidmap: id (inside) is the user, the rest the range. */
static int triples(unsigned long self_out, unsigned long in, unsigned long start,
		   unsigned long count, char out[][24], int *n)
{
	unsigned long below = in < count ? in : count;

	if (in > count)
		return -ERANGE;
	if (below) {
		snprintf(out[(*n)++], 24, "0");
		snprintf(out[(*n)++], 24, "%lu", start);
		snprintf(out[(*n)++], 24, "%lu", below);
	}
	snprintf(out[(*n)++], 24, "%lu", in);
	snprintf(out[(*n)++], 24, "%lu", self_out);
	snprintf(out[(*n)++], 24, "1");
	if (count > below) {
		snprintf(out[(*n)++], 24, "%lu", in + 1);
		snprintf(out[(*n)++], 24, "%lu", start + below);
		snprintf(out[(*n)++], 24, "%lu", count - below);
	}
	return 0;
}

static int run_helper(const char *helper, pid_t pid, char args[][24], int n, struct sbx_err *err)
{
	char pidstr[24];
	char *argv[16];
	int k = 0, st;
	pid_t c;

	snprintf(pidstr, sizeof(pidstr), "%d", (int)pid);
	argv[k++] = (char *)helper;
	argv[k++] = pidstr;
	for (int i = 0; i < n && k < 15; i++)
		argv[k++] = args[i];
	argv[k] = NULL;
	c = fork();
	if (c < 0)
		return sbx_err_set(err, errno, "cannot run '%s'", helper);
	if (c == 0) {
		int nul = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (nul >= 0) {
			dup2(nul, STDIN_FILENO);
			dup2(nul, STDOUT_FILENO);
		}
		execv(helper, argv);
		_exit(127);
	}
	while (waitpid(c, &st, 0) < 0)
		if (errno != EINTR)
			return sbx_err_set(err, errno, "cannot wait for '%s'", helper);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return sbx_err_set(err, EPERM,
				   "'%s %s' failed (exit %d): check /etc/subuid and "
				   "/etc/subgid, or set SBX_SUBID=0 for a one-id jail",
				   helper, pidstr,
				   WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	return 0;
}

int sbx_subid_write_maps(const struct sbx_subid *s, pid_t pid, uid_t in_uid, gid_t in_gid,
			 struct sbx_err *err)
{
	char u[9][24], g[9][24];
	int nu = 0, ng = 0, r;

	if (triples(s->uid, in_uid, s->ustart, s->ucount, u, &nu) < 0 ||
	    triples(s->gid, in_gid, s->gstart, s->gcount, g, &ng) < 0)
		return sbx_err_set(err, ERANGE, "uid %u or gid %u is above the subordinate range",
				   in_uid, in_gid);
	r = run_helper(s->newuidmap, pid, u, nu, err);
	return r < 0 ? r : run_helper(s->newgidmap, pid, g, ng, err);
}

void sbx_subid_describe(const struct sbx_subid *s, uid_t in_uid, char *out, size_t len)
{
	snprintf(out, len,
		 "ids 0-%u of the jail are the subordinate range %u-%u of /etc/subuid (newuidmap), "
		 "uid %u is you",
		 s->ucount, s->ustart, s->ustart + s->ucount - 1, in_uid);
}

/*
 * fn(arg) in a child that made a user namespace with the run's mapping
 * (the user is inside uid 1, the range the rest): it is still the user
 * (what it creates is the user's) and, as the namespace's creator, holds
 * every capability over the mapped ids, so it may read, copy and remove
 * what a subordinate id made.
 */
int sbx_subid_call(const struct sbx_subid *s, int (*fn)(void *), void *arg)
{
	int go[2], st;
	char c = 0;
	pid_t pid;
	struct sbx_err e = {0};

	if (pipe2(go, O_CLOEXEC) < 0)
		return -errno;
	pid =
	    (pid_t)syscall(SYS_clone, (unsigned long)CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, 0);
	if (pid == 0) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1 || c != 1)
			_exit(2);
		_exit(fn(arg) < 0 ? 1 : 0);
	}
	close(go[0]);
	if (pid < 0) {
		close(go[1]);
		return -errno;
	}
	c = sbx_subid_write_maps(s, pid, 1, 1, &e) == 0;
	(void)!write(go[1], &c, 1);
	close(go[1]);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EACCES;
}

struct rm_arg {
	int dirfd;
	const char *name;
};

static int rm_fn(void *p)
{
	struct rm_arg *a = p;

	return sbx_rm_rf_at(a->dirfd, a->name);
}

int sbx_subid_rm_rf_at(const struct sbx_subid *s, int dirfd, const char *name)
{
	struct rm_arg a = {dirfd, name};

	return sbx_subid_call(s, rm_fn, &a);
}
