/* SPDX-License-Identifier: MIT */
/*
 * lib/state/teardown.c - taking a sandbox down: process identity checks and
 * unmounting whatever a run left mounted under its directory.
 */
#include "state.h"

#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "limits.h"
#include "proc.h"

static int cmp_len_desc(const void *a, const void *b)
{
	size_t x = strlen(*(char *const *)a), y = strlen(*(char *const *)b);

	return x < y ? 1 : x > y ? -1 : 0;
}

int sbx_sandbox_unmount_all(const struct sbx_sandbox *sb, size_t *n_unmounted, struct sbx_err *err)
{
	size_t total = 0;
	int r = 0;

	if (n_unmounted)
		*n_unmounted = 0;
	if (!sb->dir)
		return 0;
	/* Stacked mounts show up again after the top one goes: repeat. */
	for (int round = 0; round < 64; round++) {
		struct sbx_strv m = {0};
		size_t done = 0;

		r = sbx_proc_mounts_under(sb->dir, &m);
		if (r < 0) {
			sbx_strv_free(&m);
			return sbx_err_set(err, -r, "cannot read /proc/self/mountinfo");
		}
		if (m.n == 0) {
			sbx_strv_free(&m);
			break;
		}
		qsort(m.v, m.n, sizeof(char *), cmp_len_desc);
		for (size_t i = 0; i < m.n; i++)
			if (umount2(m.v[i], MNT_DETACH | UMOUNT_NOFOLLOW) == 0)
				done++;
			else if (!r)
				r = sbx_err_set(err, errno, "cannot unmount '%s'", m.v[i]);
		sbx_strv_free(&m);
		total += done;
		if (!done)
			break;
		r = 0;
	}
	if (n_unmounted)
		*n_unmounted = total;
	return r;
}

/* ---- killing ---- */

/* The last number on line "Key:" of /proc/PID/status, -1 if none. */
static long status_last(pid_t pid, const char *key)
{
	long v;

	sbx_proc_status_nums(pid, key, &v);
	return v;
}

/*
 * Is pid still the process the record describes?  A recorded start time
 * must match, but it counts 10 ms ticks, so it is not enough alone: the
 * jail's init must also be pid 1 of a pid namespace below ours, and the
 * supervisor must hold this sandbox's lock file open.  Without a start
 * time (older records), the init must hold the lock file too.
 */
static bool same_process(pid_t pid, uint64_t start, bool init, const struct stat *lock, pid_t *out)
{
	uint64_t now;

	*out = 0;
	if (pid <= 1 || pid > 1 << 30 || sbx_proc_starttime(pid, &now) < 0)
		return false;
	*out = pid;
	if (start && start != now)
		return false;
	if (init && !sbx_proc_is_ns_init(pid))
		return false;
	return (start && init) || sbx_proc_holds_file(pid, lock);
}

/* The jail's init (init) or the supervisor, as the record names them. */
static bool kill_verified(const struct sbx_sandbox *sb, bool init)
{
	pid_t rpid = init ? sb->rec.init_pid : sb->rec.supervisor_pid;
	uint64_t start = init ? sb->rec.init_start : sb->rec.supervisor_start;
	struct stat lock, *lp = &lock;
	pid_t pid;

	if (fstatat(sb->dirfd, "lock", &lock, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(lock.st_mode))
		lp = NULL;
	if (!sb->record || !same_process(rpid, start, init, lp, &pid))
		return false;
	if (kill(pid, SIGKILL) < 0)
		return false;
	/* Wait (2 s at most) until it is gone or a zombie not reaped yet. */
	for (int i = 0; i < 200; i++) {
		char c = sbx_proc_state(pid);

		if (c == 0 || c == 'Z')
			break;
		usleep(10000);
	}
	return true;
}

/*
 * Kill the jail's init found by what it is: a pid namespace's init (NSpid
 * ends in 1) that holds this sandbox's lock file open (it inherited the
 * fd from the supervisor) or is a child of the recorded supervisor while
 * that supervisor verifiably holds the lock.  For records that do not
 * (yet) name init_pid.
 */
static bool kill_lock_holding_inits(const struct sbx_sandbox *sb)
{
	pid_t sup = sb->rec.supervisor_pid;
	struct stat lock;
	struct dirent *de;
	DIR *d;
	bool killed = false;

	if (fstatat(sb->dirfd, "lock", &lock, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(lock.st_mode))
		return false;
	if (sup <= 1 || sup > (1 << 30) || !sbx_proc_holds_file((pid_t)sup, &lock))
		sup = -1;
	d = opendir("/proc");
	if (!d)
		return false;
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 1 || pid == getpid())
			continue;
		if (!sbx_proc_is_ns_init((pid_t)pid))
			continue;
		if (!(sup > 0 && status_last((pid_t)pid, "PPid") == sup) &&
		    !sbx_proc_holds_file((pid_t)pid, &lock))
			continue;
		if (kill((pid_t)pid, SIGKILL) == 0) {
			killed = true;
			for (int i = 0; i < 200; i++) {
				char c = sbx_proc_state((pid_t)pid);

				if (c == 0 || c == 'Z')
					break;
				usleep(10000);
			}
		}
	}
	closedir(d);
	return killed;
}

/* Try the lock for up to ms milliseconds. */
static bool sandbox_unlinked(const struct sbx_sandbox *sb)
{
	struct stat st;

	return fstat(sb->dirfd, &st) == 0 && st.st_nlink == 0;
}

static int lock_within(struct sbx_sandbox *sb, int ms, struct sbx_err *err)
{
	for (int waited = 0;; waited += 20) {
		int r = sbx_sandbox_lock(sb, false, err);

		if (r != -EWOULDBLOCK || waited >= ms)
			return r;
		usleep(20000);
	}
}

static int remove_cgroup(const char *id, bool *removed, struct sbx_err *err)
{
	*removed = false;
	int r = sbx_cgroup_remove_stale(id, err);
	if (r > 0)
		*removed = true;
	return r < 0 ? r : 0;
}

int sbx_sandbox_destroy(struct sbx_state *st, struct sbx_sandbox *sb, struct sbx_teardown *t,
			struct sbx_err *err)
{
	int r;

	memset(t, 0, sizeof(*t));
	t->was_running = sb->lockfd < 0 && sbx_sandbox_lock_held(sb);
	/* A running supervisor learns why its jail died: it then says the
	 * sandbox was destroyed, not kept (SBX_SANDBOX_DESTROYING). */
	if (t->was_running) {
		int fd = openat(sb->dirfd, SBX_SANDBOX_DESTROYING,
				O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);

		if (fd >= 0)
			close(fd);
	}
	/* The jail first (also a lost one whose init somehow survived). */
	t->killed_init = kill_verified(sb, true);
	if (!t->killed_init && t->was_running)
		t->killed_init = kill_lock_holding_inits(sb);
	r = remove_cgroup(sb->id, &t->cgroup_removed, err);
	if (r < 0)
		return sbx_err_wrap(err, "cannot remove the cgroup of sandbox '%s'", sb->id);
	/* Then the lock: the supervisor notices its jail died and lets go. */
	r = lock_within(sb, t->was_running ? 5000 : 0, err);
	if (r == -EWOULDBLOCK) {
		t->killed_supervisor = kill_verified(sb, false);
		r = lock_within(sb, 5000, err);
	}
	if (r == -ENOENT && sandbox_unlinked(sb)) {
		/* Its supervisor saw the marker and removed it itself. */
		sbx_err_clear(err);
		return 0;
	}
	if (r < 0)
		return sbx_err_set(
		    err, -r,
		    "sandbox '%s' is still locked by another process (an exec or destroy?)",
		    sb->id);
	r = sbx_sandbox_unmount_all(sb, &t->n_unmounted, err);
	if (r < 0)
		return r;
	bool again = false;
	r = remove_cgroup(sb->id, &again, err); /* processes the lock holder left */
	t->cgroup_removed |= again;
	if (r < 0)
		return sbx_err_wrap(err, "cannot remove the cgroup of sandbox '%s'", sb->id);
	return sbx_sandbox_remove(st, sb, err);
}
