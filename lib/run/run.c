/* SPDX-License-Identifier: MIT */
/*
 * lib/run/run.c - sbx_run(): the state directory and lock, the image, the
 * cgroup, the writable layers, the jail, supervision, the record, and the
 * sandbox kept or removed (lib/README.md, "A run from start to end").
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "disk.h"
#include "proc.h"
#include "profile.h"
#include "rmtree.h"
#include "run_int.h"

#define OUTPUT_CAP (8ULL << 20)
#define GRACE_MS   2000

void sbx_run_say(struct sbx_run *c, const char *msg)
{
	if (c->opt->say)
		c->opt->say(msg, c->opt->data);
}

void sbx_run_say_err(struct sbx_run *c, const struct sbx_err *e)
{
	char buf[SBX_ERR_MSG_MAX + 128];

	sbx_run_say(c, sbx_err_str(e, buf, sizeof(buf)));
}

/* ---- set-up ---- */

/* The profile's checks that need the machine: the seccomp filter (audit
 * mode compiles the notify filter; the plain one only when audit mode
 * cannot be had, whose error then names a bad file), the jail's ids. */
static int check_config(struct sbx_run *c, struct sbx_err *err)
{
	struct sbx_seccomp_opts so = {.policy = c->cfg->seccomp};
	int r = 0;

	c->auditing = sbx_seccomp_audit_init(&c->audit, c->cfg->seccomp, err) == 0;
	if (!c->auditing)
		r = sbx_seccomp_prepare(&so, &c->filter, err);
	if (r == 0)
		r = sbx_jail_ids_resolve(c->cfg, &c->ids, err);
	return r;
}

static int prepare_image(struct sbx_run *c, struct sbx_err *err)
{
	struct sbx_image_opts o = {
	    .cache_dir = c->st.cache_dir,
	    .max_bytes = c->cfg->image_size == SBX_UNSET ? 0 : c->cfg->image_size,
	    .max_entries = c->cfg->image_entries == SBX_UNSET ? 0 : c->cfg->image_entries,
	    .preserve_owner = geteuid() == 0,
	    /* Walking a cached image costs one fstatat per entry: start-up
	     * would grow with the image.  check_image() walks it after a
	     * failed command instead. */
	    .no_verify = true,
	};
	uint64_t t0 = sbx_now_ns();
	int r;

	if (!c->cfg->rootfs || strcmp(c->cfg->rootfs, "host") == 0)
		return 0;
	/* The caller's progress bar and the unpacker's warnings. */
	if (c->opt->image_begin)
		c->opt->image_begin(&o, c->cfg->rootfs, c->opt->data);
	r = sbx_image_prepare(c->cfg->rootfs, &o, &c->rootfs_dir, &c->img, err);
	if (c->opt->image_end)
		c->opt->image_end(c->opt->data);
	c->t_image = sbx_ms_since(t0);
	if (r < 0)
		sbx_err_wrap(err, "rootfs '%s'", c->cfg->rootfs);
	return r;
}

static int open_logs(struct sbx_run *c, struct sbx_err *err)
{
	sbx_log_init(&c->log);
	c->jsonl_fd = openat(c->sb.dirfd, "log.jsonl",
			     O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
	sbx_log_add_fd(&c->log, c->jsonl_fd);
	if (c->opt->log_json) {
		/* a preview's token is in the log: a new file is the user's only */
		c->log_json_fd =
		    sbx_open_users_file(c->opt->log_json, O_WRONLY | O_APPEND | O_CLOEXEC,
					c->cfg->publish.n ? 0600 : 0644);
		if (c->log_json_fd < 0)
			return sbx_err_set(err, -c->log_json_fd, "cannot open '%s'",
					   c->opt->log_json);
		sbx_log_add_fd(&c->log, c->log_json_fd);
	}
	c->log.human = c->opt->human;
	c->log.human_data = c->opt->data;
	return 0;
}

/*
 * The record is saved while the jail starts (sbx_run_record_save_async): a
 * state directory without room for it must stop the run before the command
 * starts, not after.  Records and logs take a few KiB; 1 MiB and 64 inodes
 * leave room for them and for output.log's first writes.
 */
#define STATE_MIN_FREE	 (1024 * 1024)
#define STATE_MIN_INODES 64

static int check_state_space(const struct sbx_state *st, struct sbx_err *err)
{
	struct statvfs v;

	if (statvfs(st->state_dir, &v) < 0)
		return sbx_err_set(err, errno, "cannot check the state directory '%s'",
				   st->state_dir);
	if ((uint64_t)v.f_bavail * v.f_frsize < STATE_MIN_FREE ||
	    (v.f_files > 0 && v.f_favail < STATE_MIN_INODES))
		return sbx_err_set(err, ENOSPC,
				   "state directory '%s' is full (sbx needs 1 MiB and 64 inodes "
				   "free for the sandbox's record and logs)",
				   st->state_dir);
	return 0;
}

static int setup(struct sbx_run *c, struct sbx_err *err)
{
	int r;

	r = check_config(c, err);
	if (r == 0)
		r = sbx_state_open(&c->st, c->opt->state_dir, c->opt->cache_dir, true, err);
	if (r == 0)
		r = sbx_run_hide_state(c->cfg, &c->st, err);
	if (r == 0)
		r = check_state_space(&c->st, err);
	if (r == 0)
		r = sbx_sandbox_create_unsaved(&c->st, c->opt->name, &c->sb, err);
	if (r < 0)
		return r;
	sbx_state_purge_background(&c->st); /* what an interrupted removal left */
	sbx_run_extras_begin(c);
	r = sbx_run_control_open(c, err);
	/* Before the jail: a published port in use stops the run here. */
	if (r == 0)
		r = sbx_run_publish_listen(c, err);
	if (r < 0)
		return r;
	r = open_logs(c, err);
	if (r == 0)
		r = prepare_image(c, err);
	/* A cgroup only when a limit needs one: attaching costs milliseconds
	 * (v1 memory), and pid-namespace teardown already ends every process. */
	if (r == 0 && (c->cfg->memory != SBX_UNSET || c->cfg->pids != SBX_UNSET ||
		       c->cfg->cpus_milli != SBX_UNSET))
		r = sbx_cgroup_create(&c->cg, c->sb.id, c->cfg, err);
	/* After the cgroup (it starts from a cleared struct): the layers' cap
	 * is said with the other limits. */
	if (r == 0)
		r = sbx_run_prepare_layers(c, err);
	return r;
}

/* ---- running ---- */

/* stdout and stderr go to the same place (a terminal, `>f 2>&1`). */
static bool same_output(void)
{
	struct stat a, b;

	return fstat(STDOUT_FILENO, &a) == 0 && fstat(STDERR_FILENO, &b) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int sbx_run_stdio_pipes(bool tty, int out[2], int errp[2], struct sbx_err *err)
{
	if (tty)
		return 0;
	if (pipe2(out, O_CLOEXEC) < 0 || (!same_output() && pipe2(errp, O_CLOEXEC) < 0))
		return sbx_err_set(err, errno, "cannot create the output pipes");
	return 0;
}

/* While init builds the root: the record says running (fsync'ed), policy. */
static void after_go(struct sbx_jail *j, void *data)
{
	struct sbx_run *c = data;
	uint64_t start;

	c->sb.rec.init_pid = j->init_pid;
	/* with its start time: destroy and exec never take a reused pid for it */
	if (sbx_proc_starttime(j->init_pid, &start) == 0)
		c->sb.rec.init_start = start;
	sbx_run_record_start(c);
	c->sb.rec.detached = c->opt->detached;
	c->sb.rec.tty = c->cfg->tty;
	sbx_run_log_policy(c);
	sbx_run_publish_log(c);
	sbx_run_record_save_async(c);
}

static int start_jail(struct sbx_run *c, int out[2], int errp[2], struct sbx_err *err)
{
	struct sbx_strv env = {0}, extra = {0};
	struct sbx_jail_opts o = {
	    .cfg = c->cfg,
	    .id = c->sb.id,
	    .rootfs_dir = c->rootfs_dir,
	    .sandbox_dir = c->layer_dir,
	    .argv = c->opt->argv,
	    .workdir = c->cfg->workdir,
	    .host_cwd = c->cwd,
	    .ids = c->ids,
	    .cg = &c->cg,
	    .out_fd = -1,
	    .err_fd = -1,
	    .tty = c->cfg->tty,
	};
	int r;

	r = sbx_run_extras_prepare(c, &extra, err);
	if (r < 0) {
		sbx_secrets_wipe_strv(&extra);
		return r;
	}
	o.after_go = after_go;
	o.after_go_data = c;
	o.title = c->opt->title;
	o.title_len = c->opt->title_len;
	o.files = c->files;
	o.n_files = c->n_files;
	o.seccomp = c->auditing ? &c->audit.filter : &c->filter;
	o.volatile_layers = true; /* synced in teardown() only if kept */
	o.layer_tmpfs = c->disk_memory ? c->layer_size : 0;
	o.layer_uppers = c->layer_uppers;
	o.layer_later = c->disk_later;
	o.layer_ready = sbx_run_layers_ready;
	o.proxy_port = c->cfg->net == SBX_NET_PROXY ? SBX_PROXY_DEFAULT_PORT : 0;
	o.capture = c->cfg->capture;
	o.keep_ns = c->cfg->publish.n > 0;
	o.exec_fence = c->opt->started != NULL;
	sbx_jail_build_env(c->cfg, &c->ids, c->rootfs_dir == NULL, o.tty, extra.v, &env);
	o.envp = env.v;
	for (size_t i = 0; i < env.n; i++)
		if (strncmp(env.v[i], "PATH=", 5) == 0)
			c->jail_path = sbx_xstrdup(env.v[i] + 5);
	if (o.tty) {
		sbx_jail_term_of_caller(&o.term);
	} else {
		r = sbx_run_stdio_pipes(false, out, errp, err);
		o.out_fd = out[1];
		o.err_fd = errp[1] >= 0 ? errp[1] : out[1];
	}
	if (r == 0) {
		sbx_later_begin(&c->later, c->cfg);
		r = sbx_jail_start(&c->jail, &o, err);
	}
	sbx_closep(&out[1]);
	sbx_closep(&errp[1]);
	sbx_secrets_wipe_strv(&env);
	sbx_secrets_wipe_strv(&extra);
	return r;
}

static int run_jail(struct sbx_run *c, struct sbx_err *err)
{
	int out[2] = {-1, -1}, errp[2] = {-1, -1};
	struct sbx_jail_io io = {.log_cap = OUTPUT_CAP,
				 .time_ms = c->cfg->time_ms,
				 .grace_ms = GRACE_MS,
				 .stop_ms = c->cfg->stop_timeout_ms,
				 .cg = &c->cg,
				 .event = sbx_run_event_cb,
				 .event_data = c};
	int r;

	c->output_fd = openat(c->sb.dirfd, "output.log",
			      O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	r = start_jail(c, out, errp, err);
	if (r < 0)
		goto out;
	sbx_run_log_warnings(c);
	sbx_run_log_timings(c);
	io.out_r = out[0];
	io.err_r = errp[0];
	io.log_fd = c->output_fd;
	r = sbx_run_extras_started(c, &io, err);
	if (r == 0)
		r = sbx_run_publish_start(c, &io, err);
	if (r == 0 && c->ctl_fd >= 0 && io.n_watch < SBX_JAIL_MAX_WATCH)
		io.watch[io.n_watch++] =
		    (struct sbx_jail_watch){c->ctl_fd, sbx_run_control_on_ready, c};
	c->io = &io;
	if (r == 0 && c->opt->started && sbx_jail_exec_landed(&c->jail, 10000)) {
		/* sbx ps, exec and stop find it running once the caller returns */
		sbx_run_record_join(c);
		c->opt->started(c->sb.id, c->sb.name, c->opt->data);
	}
	if (r < 0) {
		sbx_jail_kill(&c->jail);
		io.out_r = io.err_r = -1;
	}
	{
		struct sbx_err e2 = {0};
		int r2 = sbx_jail_supervise(&c->jail, &io, &c->res, r < 0 ? &e2 : err);

		if (r == 0)
			r = r2;
	}
	c->io = NULL;
	sbx_run_publish_finish(c);
	sbx_run_extras_finish(c);
out:
	sbx_closep(&out[0]);
	sbx_closep(&errp[0]);
	return r;
}

static void finish(struct sbx_run *c)
{
	bool oom = false;

	if (c->cg.version > 0 && sbx_cgroup_usage(&c->cg, &c->usage) == 0)
		oom = c->usage.oom_kills > 0;
	oom = oom || c->oom_seen;
	c->exit_code = sbx_jail_exit_code(&c->jail, &c->res);
	if (c->jail.exec_errno)
		c->reason = c->exit_code == SBX_EXIT_NOTFOUND ? "not-found" : "not-executable";
	else if (c->res.timed_out)
		c->reason = "timeout";
	else if (c->res.stopped || c->res.stop_requested)
		c->reason = "stopped";
	else if (oom && c->exit_code == 128 + SIGKILL)
		c->reason = "oom";
	else if ((c->res.have_status && WIFSIGNALED(c->res.status)) || !c->res.have_status)
		c->reason = "signaled"; /* no status: the jail was killed from outside */
	else
		c->reason = "exited";
}

/*
 * Output the caller's stdout or stderr did not take (a full disk): a
 * command that succeeded ends in 125, sbx's own failure, so that a script
 * does not take a truncated file for a good one (and the sandbox is kept
 * under persist = on-failure).  Said by say_output_lost.
 */
static void check_output(struct sbx_run *c)
{
	char msg[SBX_ERR_MSG_MAX];

	if (!sbx_jail_output_lost(&c->res, msg, sizeof(msg)))
		return;
	c->output_lost = sbx_xstrdup(msg);
	if (c->exit_code != 0)
		return;
	c->error = sbx_xstrdup(msg);
	c->exit_code = SBX_EXIT_SBX;
	c->reason = "error";
}

/* ... even with -q, in the run log too, and where the output is now. */
static void say_output_lost(struct sbx_run *c)
{
	struct sbx_err e = {0};

	if (!c->output_lost)
		return;
	if (c->kept)
		sbx_err_set(&e, 0, "%s; the sandbox's output log has it: sbx inspect --output %s",
			    c->output_lost, c->sb.name ? c->sb.name : c->sb.id);
	else
		sbx_err_set(&e, 0, "%s; the sandbox is not kept (%s), nor its output log",
			    c->output_lost, c->keep_reason ? c->keep_reason : "removed");
	sbx_run_say_err(c, &e);
	sbx_log_event(&c->log, "output-lost", json_pack("{s:s}", "message", e.msg));
	free(c->output_lost);
	c->output_lost = NULL;
}

/*
 * A command that failed on a cached image: was the image damaged since it
 * was published (files deleted or truncated in the cache)?  Then that is
 * the failure sbx reports, 125, naming the image; a command that succeeds
 * is never held back by the walk.
 */
static void check_image(struct sbx_run *c)
{
	struct sbx_err e = {0};

	if (c->exit_code == 0 || !c->img.cached || c->img.is_dir || !c->rootfs_dir ||
	    sbx_image_verify(c->st.cache_dir, c->rootfs_dir, &e) == 0)
		return;
	sbx_run_say_err(c, &e);
	c->error = sbx_xstrdup(e.msg);
	c->exit_code = SBX_EXIT_SBX;
	c->reason = "error";
}

/*
 * A command that could not be started: one line, like env(1), naming it
 * and why (what the jail saw, and on the host which profile entry hides
 * it), printed even with -q, and kept for the record.
 */
static void explain_exec_failure(struct sbx_run *c)
{
	char hint[2048];
	const char *why = c->jail.exec_msg;

	if (!c->jail.exec_errno)
		return;
	if (!why)
		why = strerror(c->jail.exec_errno);
	if (c->jail.exec_absent && sbx_exec_hint(c->cfg, c->rootfs_dir != NULL, c->opt->argv[0],
						 c->jail_path, c->cwd, hint, sizeof(hint)))
		c->exec_error = sbx_xasprintf("%s; %s", why, hint);
	else
		c->exec_error = sbx_xstrdup(why);
	sbx_run_say(c, c->exec_error);
}

/* `sbx destroy` of this running sandbox killed the jail (and is waiting
 * for our lock to remove it), or already removed its directory. */
static bool destroyed(const struct sbx_run *c)
{
	struct stat st;

	return c->sb.dirfd >= 0 &&
	       ((fstat(c->sb.dirfd, &st) == 0 && st.st_nlink == 0) ||
		faccessat(c->sb.dirfd, SBX_SANDBOX_DESTROYING, F_OK, AT_SYMLINK_NOFOLLOW) == 0);
}

static void decide_keep(struct sbx_run *c)
{
	bool failed = c->exit_code != 0;

	if (destroyed(c)) {
		c->kept = false;
		c->keep_reason = "destroyed by 'sbx destroy' while it ran";
	} else if (c->opt->rm) {
		c->kept = false;
		c->keep_reason = "--rm";
	} else if (c->opt->keep) {
		c->kept = true;
		c->keep_reason = "--keep";
	} else if (c->cfg->persist == SBX_PERSIST_ALWAYS) {
		c->kept = true;
		c->keep_reason = "persist = always";
	} else if (c->cfg->persist == SBX_PERSIST_ON_FAILURE && c->res.stop_requested) {
		/* sbx stop is the user's own end of it, not a failure */
		c->kept = false;
		c->keep_reason = "persist = on-failure and it was stopped by 'sbx stop'";
		c->say_discarded = true;
	} else if (c->cfg->persist == SBX_PERSIST_ON_FAILURE && c->jail.exec_errno) {
		c->kept = false;
		c->keep_reason = "persist = on-failure and the command never started";
	} else if (c->cfg->persist == SBX_PERSIST_ON_FAILURE && failed) {
		c->kept = true;
		c->keep_reason = "persist = on-failure and the command failed";
	} else {
		c->kept = false;
		c->keep_reason = c->cfg->persist == SBX_PERSIST_NEVER
				     ? "persist = never"
				     : "persist = on-failure and the command succeeded";
		c->say_discarded = true;
	}
	/* What the command wrote goes with the sandbox, which the user did not
	 * ask for by name (as with --rm): the run log says whose writes.  A
	 * kept sandbox's says where they are, for sbx diff and apply. */
	if ((c->say_discarded || c->kept) &&
	    ((c->opt->human && !c->opt->quiet) || c->opt->log_json))
		c->written = sbx_run_layers_written(c);
	/* the layers' use: for the record of a kept sandbox, or a run log
	 * someone reads (a removed sandbox's own log.jsonl goes with it) */
	if (c->kept || (c->opt->human && !c->opt->quiet) || c->opt->log_json)
		sbx_run_layers_usage(c);
}

/*
 * What a run mounts in its own namespace is the layers' disk on layer_dir
 * (lib/run/run_layers.c), and nothing stacks on it: one umount, checked
 * by device numbers, instead of reading mountinfo twice (a host with many
 * mounts makes that slow).  Anything left: every mount under the sandbox.
 */
static int unmount_disk(struct sbx_run *c, struct sbx_err *err)
{
	struct stat a, b;

	if (c->layer_dir && umount2(c->layer_dir, MNT_DETACH | UMOUNT_NOFOLLOW) == 0 &&
	    lstat(c->layer_dir, &a) == 0 && fstat(c->sb.dirfd, &b) == 0 && a.st_dev == b.st_dev)
		return 0;
	return sbx_sandbox_unmount_all(&c->sb, NULL, err);
}

static void teardown(struct sbx_run *c)
{
	struct sbx_err e = {0};
	bool purge_kept = false;

	sbx_run_record_join(c);
	sbx_run_publish_free(c);
	sbx_jail_free(&c->jail);
	sbx_run_extras_free(c);
	sbx_closep(&c->output_fd);
	if (c->cg.version > 0 && sbx_cgroup_destroy(&c->cg, &e) < 0)
		sbx_run_say_err(c, &e);
	sbx_cgroup_free(&c->cg);
	if (c->sb.dirfd >= 0 && c->sb.record) {
		/* The layers are on disk before a record says they were kept. */
		if (c->kept && c->layer_dir &&
		    (sbx_jail_layers_settle(c->layer_dir, c->cfg,
					    c->rootfs_dir && c->cfg->rootfs_writable, &e) < 0 ||
		     (c->disk_loop && sbx_disk_settle(c->layer_dir, c->sb.dirfd, &e) < 0)))
			sbx_run_say_err(c, &e);
		sbx_run_record_finish(c);
		/* Thrown away, the image's filesystem is detached here but torn
		 * down by the purger (lib/state/trash.c): an fd of it goes there. */
		if (!c->kept && c->disk_loop && c->disk_mounted && c->layer_dir) {
			c->st.hold_fd =
			    open(c->layer_dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			c->st.holding = c->st.hold_fd >= 0;
		}
		/* An image stays a file when kept (sbx_disk_attach_kept mounts it
		 * for inspect, export and exec): no mount or loop device left. */
		if ((!c->kept || c->disk_loop) && c->disk_mounted && unmount_disk(c, &e) < 0)
			sbx_run_say_err(c, &e);
		c->st.exiting = true; /* sbx run returns next */
		/* one rename, removed by a detached purger (lib/state/trash.c);
		 * kept, the purger only does the idle work (a ready image),
		 * spawned below */
		if (!c->kept && sbx_sandbox_trash(&c->st, &c->sb, &e) < 0)
			sbx_run_say_err(c, &e);
		purge_kept = c->kept;
	}
	/* A kept sandbox is let go before anyone hears it is kept (a waiter
	 * may exec into it at once), and before the purger is spawned: a
	 * clone of sbx, it would hold a copy of the lock until its first step,
	 * and a purger scheduled late kept the sandbox "in use" after sbx run
	 * returned. */
	sbx_closep(&c->sb.lockfd);
	/* sbx wait and stop return now: the sandbox is kept or gone */
	sbx_run_control_finish(c);
	sbx_closep(&c->jsonl_fd);
	sbx_closep(&c->log_json_fd);
	sbx_log_free(&c->log);
	sbx_sandbox_close(&c->sb);
	if (purge_kept)
		sbx_state_purge_background(&c->st);
	sbx_state_close(&c->st);
	sbx_seccomp_filter_free(&c->filter);
	free(c->rootfs_dir);
	free(c->layer_dir);
	free(c->layer_uppers);
	free(c->jail_path);
	sbx_later_free(&c->later);
	free(c->exec_error);
	free(c->layer_note);
	json_decref(c->written);
	free(c->error);
}

static void ctx_init(struct sbx_run *c, const struct sbx_run_opts *o, struct sbx_run_result *res)
{
	memset(c, 0, sizeof(*c));
	memset(res, 0, sizeof(*res));
	c->opt = o;
	c->res_out = res;
	c->cfg = o->cfg;
	sbx_jail_init(&c->jail);
	c->sb.dirfd = c->sb.lockfd = -1;
	c->st.sandboxes_fd = -1;
	c->jsonl_fd = c->log_json_fd = c->output_fd = c->oom_fd = -1;
	c->ca_pipe[0] = c->ca_pipe[1] = c->ca_key_fd = -1;
	c->ca_files[0] = c->ca_files[1] = -1;
	c->ctl_fd = -1;
	c->netsock.fd = c->netsock.pid = -1;
	c->cwd = o->cwd;
	c->reason = "error";
}

/* sbx failed before or while the command ran: the record says so. */
static void failed(struct sbx_run *c, struct sbx_err *err)
{
	/* Killed for memory before the command started. */
	if (c->jail.exec_ok == false && c->cg.version > 0 &&
	    sbx_cgroup_usage(&c->cg, &c->usage) == 0 && c->usage.oom_kills > 0) {
		sbx_err_set(err, 0,
			    "the jail ran out of memory while it started: the memory limit "
			    "(%.1f MiB) is too small for it",
			    (double)c->cfg->memory / 1048576.0);
	}
	sbx_run_say_err(c, err);
	c->error = sbx_xstrdup(err->msg);
	c->exit_code = SBX_EXIT_SBX;
	c->reason = "error";
	c->kept = c->opt->keep;
	c->keep_reason = c->kept ? "--keep" : "sbx failed before the command ran";
}

int sbx_run(const struct sbx_run_opts *opts, struct sbx_run_result *res)
{
	struct sbx_run c;
	struct sbx_err err = {0};
	int r;

	ctx_init(&c, opts, res);
	r = setup(&c, &err);
	if (r == 0)
		r = run_jail(&c, &err);
	if (r > 0) {
		c.exit_code = 0;
	} else if (r < 0) {
		failed(&c, &err);
	} else {
		finish(&c);
		explain_exec_failure(&c);
		check_image(&c);
		check_output(&c);
		decide_keep(&c);
		say_output_lost(&c);
	}
	sbx_run_keep_layers(&c);
	res->exit_code = c.exit_code;
	res->reason = c.reason;
	res->kept = c.kept;
	teardown(&c);
	return res->exit_code;
}

/* ---- shared with sbx exec ---- */

/* Is path already masked by cfg? */
static bool masked(const struct sbx_config *cfg, const char *path)
{
	for (size_t i = 0; i < cfg->n_mounts; i++)
		if (cfg->mounts[i].kind == SBX_MNT_MASK && strcmp(cfg->mounts[i].dst, path) == 0)
			return true;
	return false;
}

int sbx_run_hide_state(struct sbx_config *cfg, const struct sbx_state *st, struct sbx_err *err)
{
	const char *dirs[] = {st->state_dir, st->cache_dir};

	for (size_t i = 0; i < SBX_ARRAY_SIZE(dirs); i++) {
		_cleanup_free_ char *real = NULL;
		const char *d = dirs[i];
		int r;

		if (!d || d[0] != '/')
			continue;
		/* Masks are resolved inside the jail: hide the path as given and,
		 * if it differs, the path its symlinks lead to on the host. */
		real = realpath(d, NULL);
		for (int k = 0; k < 2; k++) {
			const char *p = k == 0 ? d : real;

			if (!p || strcmp(p, "/") == 0 || masked(cfg, p))
				continue;
			r = sbx_profile_set(cfg, "filesystem", "mask", p, err);
			if (r < 0)
				return sbx_err_wrap(
				    err, "cannot hide sbx's state directory from the jail");
		}
	}
	return 0;
}
