/* SPDX-License-Identifier: MIT */
/*
 * lib/state/trash.c - removal off the caller's path.
 *
 * A sandbox that is not kept leaves STATE/sandboxes/ in one rename, to
 * STATE/trash/ID.RANDOM (the same filesystem), once its mounts and cgroup
 * are gone and its record is final: from then on ps, inspect and name
 * lookup never see it (they read sandboxes/ and names/ only).  Its files
 * are removed by a detached purger (nice 19, idle I/O class, its own
 * session, stdio /dev/null and no other descriptor of the caller, so a
 * `$(sbx run ...)` or a CI runner never waits for it).  One purger at a
 * time holds STATE/trash/.lock; after letting go it looks again, so an
 * entry trashed while it worked is never left (and a run that starts
 * while one is at work forks none).  An interrupted removal
 * (the purger killed, the machine down) is finished by the next run
 * (sbx_state_purge_background) or synchronously by `destroy --all` and
 * `destroy --stale` (sbx_state_purge).  The purger also removes the empty
 * cgroups of lost sandboxes (sweep_lost), makes the ready sandbox
 * directories that are missing (lib/state/state.c), then does the caller's
 * idle work (a run's: the ready copies of its disk image, lib/jail/disk.h).
 *
 * A run's thrown-away layers on a loop-mounted image are detached from
 * every mount namespace before `sbx run` returns, but their filesystem
 * lives on while an fd refers to it: the caller hands one to the purger
 * (sbx_state.hold_fd), closes its own, and the purger closes the last one
 * once the caller has let go (a pipe tells it), before its other work and
 * at the caller's priority.  The filesystem's teardown (writing back what
 * the jail left dirty, releasing the loop device; ~1-2 ms) thus runs in
 * the purger.  The image itself
 * is in the trash by then: nothing mounts it again.
 */
#include "state.h"
#include "state_int.h"
#include "limits.h"
#include "fault.h"
#include "proc.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define TRASH	   "trash"
#define TRASH_LOCK ".lock"

#define IOPRIO_CLASS_SHIFT 13
#define IOPRIO_CLASS_IDLE  3
#define IOPRIO_WHO_PROCESS 1

static int trash_dir(struct sbx_state *st, bool create)
{
	int fd = openat(st->state_fd, TRASH, SBX_DIR_FLAGS);

	if (fd < 0 && errno == ENOENT && create) {
		if (mkdirat(st->state_fd, TRASH, 0700) < 0 && errno != EEXIST)
			return -errno;
		fd = openat(st->state_fd, TRASH, SBX_DIR_FLAGS);
	}
	return fd < 0 ? -errno : fd;
}

/* Has STATE/trash any entry (each is a directory: one stat)? */
static bool trash_has_entries(struct sbx_state *st)
{
	struct stat s;

	return st->state_fd >= 0 && fstatat(st->state_fd, TRASH, &s, AT_SYMLINK_NOFOLLOW) == 0 &&
	       S_ISDIR(s.st_mode) && s.st_nlink > 2;
}

/* Remove every entry of the trash (the first ones made missing ready
 * directories in sfd, STATE/sandboxes, when it is not -1); the names
 * removed go to removed. */
static void purge_all(int tfd, int sfd, struct sbx_strv *removed)
{
	DIR *d = sbx_opendir_at(tfd, ".");
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (sfd >= 0 && sbx_state_ready_recycle(sfd, tfd, de->d_name))
			continue;
		if (sbx_state_rm_tree(tfd, de->d_name) == 0 && removed)
			sbx_strv_push_take(
			    removed,
			    sbx_xasprintf("trash/%s (an interrupted removal)", de->d_name));
	}
	closedir(d);
}

static bool empty(int tfd)
{
	struct stat s;

	return fstat(tfd, &s) == 0 && s.st_nlink <= 2;
}

/* Purge under the trash lock; again after letting go if entries came. */
static void purge_locked(int tfd, int sfd, bool wait, struct sbx_strv *removed)
{
	int lk = openat(tfd, TRASH_LOCK, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (lk < 0)
		return;
	do {
		if (flock(lk, wait ? LOCK_EX : LOCK_EX | LOCK_NB) < 0)
			break; /* another purger has it: it looks again when done */
		purge_all(tfd, sfd, removed);
		(void)flock(lk, LOCK_UN);
	} while (!empty(tfd));
	close(lk);
}

/*
 * The cgroups of lost sandboxes: a supervisor SIGKILLed by a batch engine
 * (its SIGTERM-to-SIGKILL gap shorter than the stop timeout) takes its
 * jail with it (the init dies of PDEATHSIG, the mounts with their
 * namespace), but the empty cgroup directories it made stay.  The record
 * stays too (ps says lost; destroy --stale removes it): it is what a
 * postmortem reads.
 */
/*
 * A sandbox whose record says exited (kept) is never lost: told from the
 * record's first KiB, not a parse of all of it, which for a kept sandbox
 * of ~24 KiB cost ~0.6 ms of the purger's CPU at the end of every run, for
 * each one kept.
 */
static bool exited(const struct sbx_state *st, const char *id)
{
	char path[SBX_ID_LEN + 16], text[1024], state[16];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/record.json", id);
	fd = openat(st->sandboxes_fd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, text, sizeof(text));
	close(fd);
	return n > 0 && sbx_record_state_peek(text, (size_t)n, state, sizeof(state)) &&
	       strcmp(state, "exited") == 0;
}

static void sweep_lost(struct sbx_state *st)
{
	struct sbx_strv ids = {0};

	if (sbx_sandbox_list(st, &ids, NULL) < 0)
		return;
	for (size_t i = 0; i < ids.n; i++) {
		struct sbx_sandbox sb;
		int code;

		if (exited(st, ids.v[i]))
			continue;
		if (sbx_sandbox_open(st, ids.v[i], false, &sb, NULL) == 0 && sb.record &&
		    sb.rec.cgroup && !strcmp(sbx_sandbox_state(&sb, &code), "lost"))
			(void)sbx_cgroup_remove_empty(sb.id, sb.rec.cgroup, NULL);
		sbx_sandbox_close(&sb);
	}
	sbx_strv_free(&ids);
}

/*
 * The purger's descriptors: stdio /dev/null, 3 the trash, 4 STATE/sandboxes,
 * 5 a held mount, 6 the caller's end (each closed when there is none),
 * nothing else; its own session and name.  System calls only: a handed-off
 * purger does this while the caller still runs in the memory they share.
 */
static bool purger_fds(int nul, int tfd, int sfd, int hold, int gone)
{
	/* out of the way of 3 to 6 first, whatever numbers they have now */
	int from[4] = {tfd, sfd, hold, gone};

	for (int i = 0; i < 4; i++)
		from[i] = from[i] >= 0 ? fcntl(from[i], F_DUPFD_CLOEXEC, 64) : -1;
	setsid();
	if (nul < 0 || dup3(nul, 0, 0) < 0 || dup3(nul, 1, 0) < 0 || dup3(nul, 2, 0) < 0 ||
	    from[0] < 0)
		return false;
	for (int i = 0; i < 4; i++)
		if (from[i] < 0 || dup3(from[i], 3 + i, O_CLOEXEC) < 0)
			close(3 + i);
	close_range(7, ~0U, 0);
	prctl(PR_SET_NAME, "sbx-purge", 0, 0, 0);
	return true;
}

/* The purger's work, the caller gone or having let go: st's strings and
 * idle work are its own (copies, for a handed-off one). */
static void __attribute__((noreturn)) purger_work(const struct sbx_state *st)
{
	struct sbx_state lost = {.state_dir = st->state_dir,
				 .cache_dir = st->cache_dir,
				 .state_fd = -1,
				 .sandboxes_fd = st->sandboxes_fd >= 0 ? 4 : -1};

	/* ps and pgrep -f see "sbx-purge", not the caller's command line:
	 * what sbx run ran has ended when it returned */
	sbx_proc_retitle("sbx-purge");
	/* A held mount's last reference: its teardown here, first, at the
	 * caller's priority (it takes locks that the next run's mount and
	 * loop device need). */
	close(5);
	close(6);
	(void)setpriority(PRIO_PROCESS, 0, 19);
	(void)syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0,
		      IOPRIO_CLASS_IDLE << IOPRIO_CLASS_SHIFT);
	signal(SIGHUP, SIG_IGN);
	sbx_fault_pause("purger-start");
	purge_locked(3, lost.sandboxes_fd, false, NULL);
	if (lost.sandboxes_fd >= 0 && lost.state_dir)
		sweep_lost(&lost);
	sbx_state_ready_fill(&lost);
	for (size_t i = 0; i < st->n_idle; i++)
		st->idle[i].fn(st->state_dir, st->idle[i].args);
	_exit(0);
}

/* A forked purger: with a held mount, it waits until the caller has closed
 * its copy (the end of file on gone). */
static void __attribute__((noreturn)) purger(int tfd, const struct sbx_state *st, int gone)
{
	int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	bool hold = st->holding && gone >= 0;
	char c;

	if (!purger_fds(nul, tfd, st->sandboxes_fd, hold ? st->hold_fd : -1, hold ? gone : -1))
		_exit(1);
	if (hold)
		while (read(6, &c, 1) < 0 && errno == EINTR)
			;
	purger_work(st);
}

/* Close the caller's hold on a detached mount (see the top). */
static void let_go(struct sbx_state *st)
{
	if (st->holding)
		close(st->hold_fd);
	st->holding = false;
}

/*
 * The purger of a caller that exits next (sbx run's last step) is a clone
 * sharing the caller's memory (CLONE_VM), not a fork's copy of it, and
 * takes that memory over once the caller has exited.  The caller then pays
 * neither the copy of its page tables, nor the copy-on-write faults after
 * it, nor the teardown of its memory at exit (which the purger does when
 * it ends): ~0.9 ms of each `sbx run`'s return on a 2-CPU VM, measured.
 * Until the caller is gone the clone makes system calls only, on a stack
 * of its own, every signal blocked: its descriptors (purger_fds), then it
 * reads a pipe whose other end the caller holds until the kernel closes it
 * at exit (after its memory is released: exit_mm comes before exit_files)
 * for the end of file.  The caller marks, as the last thing before
 * _exit(), that it ended normally (sbx_state_handoff_exit); one killed
 * instead, perhaps inside malloc(), left the heap as it was then, and the
 * clone exits without touching it: the next run finishes the removal.
 * Not under ASan or valgrind, whose exit-time checks and clone() support
 * need a process of their own: a fork there, as for the other callers.
 */
#if defined(__SANITIZE_ADDRESS__)
#define SBX_HANDOFF 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SBX_HANDOFF 0
#endif
#endif
#ifndef SBX_HANDOFF
#define SBX_HANDOFF 1
#endif

#define HANDOFF_STACK (8u << 20) /* reserved, not committed */

static struct {
	struct sbx_state st; /* copies: the caller frees its own */
	int tfd, hold, gone, nul;
	sigset_t mask;
	volatile sig_atomic_t clean;
	bool armed;
} handoff = {.tfd = -1, .hold = -1, .gone = -1, .nul = -1};

static int handoff_main(void *arg)
{
	sigset_t all;
	char c;

	(void)arg;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	if (sbx_fault_fails("purger-late")) { /* a raw sleep: this clone shares sbx's TLS */
		struct timespec ts = {1, 0};

		(void)syscall(SYS_nanosleep, &ts, NULL);
	}
	if (!purger_fds(handoff.nul, handoff.tfd, handoff.st.sandboxes_fd, handoff.hold,
			handoff.gone))
		_exit(1);
	while (read(6, &c, 1) > 0)
		; /* nothing is written: the end of file is the caller's exit */
	if (!handoff.clean)
		_exit(0);
	sigprocmask(SIG_SETMASK, &handoff.mask, NULL);
	purger_work(&handoff.st);
}

static bool under_valgrind(void)
{
	const char *p = getenv("LD_PRELOAD");

	return p && strstr(p, "vgpreload");
}

static bool spawn_handoff(int tfd, struct sbx_state *st)
{
	int p[2];
	char *stack;
	pid_t pid;

	if (!SBX_HANDOFF || handoff.armed || under_valgrind() || pipe2(p, O_CLOEXEC) < 0)
		return false;
	stack = mmap(NULL, HANDOFF_STACK, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	handoff.nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	handoff.st = *st;
	handoff.st.state_dir = st->state_dir ? sbx_xstrdup(st->state_dir) : NULL;
	handoff.st.cache_dir = st->cache_dir ? sbx_xstrdup(st->cache_dir) : NULL;
	handoff.tfd = tfd;
	handoff.hold = st->holding ? st->hold_fd : -1;
	handoff.gone = p[0];
	sigprocmask(SIG_SETMASK, NULL, &handoff.mask);
	pid = stack == MAP_FAILED || handoff.nul < 0
		  ? -1
		  : clone(handoff_main, stack + HANDOFF_STACK, CLONE_VM | SIGCHLD, NULL);
	close(p[0]);
	sbx_closep(&handoff.nul);
	if (pid < 0) {
		close(p[1]);
		free(handoff.st.state_dir);
		free(handoff.st.cache_dir);
		if (stack != MAP_FAILED)
			munmap(stack, HANDOFF_STACK);
		return false;
	}
	/* p[1] stays open until this process exits; the clone has its copy
	 * of the held mount */
	handoff.armed = true;
	let_go(st);
	return true;
}

bool sbx_state_handoff_pending(void)
{
	return handoff.armed;
}

void sbx_state_handoff_exit(void)
{
	handoff.clean = 1;
}

/* A detached purger of STATE/trash (the caller does not wait for it). */
static void spawn_purger(int tfd, struct sbx_state *st)
{
	int go[2] = {-1, -1};
	pid_t pid;

	/* The purger's mark, taken before the caller can return: a shared
	 * lock on the trash directory, held through the purger's copy of tfd
	 * (the same open file) until it exits (sbx_state_purgers_wait). */
	(void)flock(tfd, LOCK_SH);
	if (st->exiting && spawn_handoff(tfd, st))
		return;
	if (st->holding && pipe2(go, O_CLOEXEC) < 0)
		let_go(st); /* the teardown here, then */
	pid = fork();
	if (pid == 0) {
		/* a grandchild, so that the caller never has to reap it; a
		 * caller about to exit has it as its child (its reaper takes it
		 * over), and waits for no intermediate process */
		if (go[1] >= 0)
			close(go[1]);
		if (st->exiting || fork() == 0)
			purger(tfd, st, go[0]);
		_exit(0);
	}
	/* the purger has its own copy now (or there is none): this one goes
	 * first, then the pipe says so */
	let_go(st);
	if (go[0] >= 0) {
		close(go[0]);
		close(go[1]);
	}
	if (st->exiting)
		return;
	if (pid > 0)
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
}

int sbx_sandbox_trash(struct sbx_state *st, struct sbx_sandbox *sb, struct sbx_err *err)
{
	unsigned char rnd[4] = {0};
	char name[SBX_ID_LEN + 16];
	int tfd;

	if (st->sandboxes_fd < 0 || st->state_fd < 0)
		return sbx_sandbox_remove(st, sb, err);
	tfd = trash_dir(st, true);
	if (tfd < 0)
		return sbx_sandbox_remove(st, sb, err);
	if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd))
		memset(rnd, 0, sizeof(rnd)); /* the id alone is unique enough */
	snprintf(name, sizeof(name), "%s.%02x%02x%02x%02x", sb->id, rnd[0], rnd[1], rnd[2], rnd[3]);
	sbx_state_release_name(st, sb->name, sb->id);
	if (renameat(st->sandboxes_fd, sb->id, tfd, name) < 0) {
		close(tfd);
		/* gone already (destroyed meanwhile), or not movable: at once */
		return errno == ENOENT ? 0 : sbx_sandbox_remove(st, sb, err);
	}
	spawn_purger(tfd, st);
	close(tfd);
	return 0;
}

/*
 * Is a purger at work, holding the trash lock?  It looks at the trash
 * again after letting go (purge_locked), so an entry there now is its to
 * remove: a run that starts right after another one (whose purger is
 * still deleting, its discards synchronous on a filesystem mounted with
 * -o discard) then forks none of its own.  A fork before the jail's
 * clone cost ~1.6 ms of that run's start on a 2-CPU VM.
 */
static bool purger_at_work(int tfd)
{
	int lk = openat(tfd, TRASH_LOCK, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	bool busy;

	if (lk < 0)
		return false;
	busy = flock(lk, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK;
	close(lk); /* a lock taken here goes with it */
	return busy;
}

bool sbx_state_idle_add(struct sbx_state *st,
			void (*fn)(const char *state_dir, const uint64_t args[2]), uint64_t a0,
			uint64_t a1)
{
	if (st->n_idle >= SBX_ARRAY_SIZE(st->idle))
		return false;
	st->idle[st->n_idle++] = (struct sbx_idle_work){.fn = fn, .args = {a0, a1}};
	return true;
}

void sbx_state_purge_background(struct sbx_state *st)
{
	int tfd;

	if (!trash_has_entries(st) && !st->n_idle && !(st->exiting && sbx_state_ready_missing(st)))
		return;
	tfd = trash_dir(st, true); /* the first run's purger may have no trash yet */
	if (tfd >= 0 && !st->n_idle && !st->exiting && purger_at_work(tfd)) {
		close(tfd);
		return;
	}
	if (tfd >= 0) {
		spawn_purger(tfd, st);
		close(tfd);
	}
}

/*
 * Wait for the purgers at work in this state directory: each holds a
 * shared lock on STATE/trash from before its caller could return until it
 * exits (spawn_purger), having made the ready directories and images it
 * makes.  `destroy --stale` and `--all` do, so that a script removing its
 * state directory after them races with no purger still making a file in
 * it.  Never called by a purger, nor by a caller whose purger waits for it.
 */
void sbx_state_purgers_wait(struct sbx_state *st)
{
	int tfd = st->state_fd >= 0 ? trash_dir(st, false) : -1;

	if (tfd < 0)
		return;
	while (flock(tfd, LOCK_EX) < 0 && errno == EINTR)
		;
	close(tfd); /* the lock goes with it */
}

void sbx_state_purge(struct sbx_state *st, struct sbx_strv *removed)
{
	int tfd;

	if (st->state_fd < 0 || (tfd = trash_dir(st, false)) < 0)
		return;
	purge_locked(tfd, -1, true, removed);
	close(tfd);
}
