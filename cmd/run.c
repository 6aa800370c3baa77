/* SPDX-License-Identifier: MIT */
/*
 * cmd/run.c - sbx run [options] [--] CMD [ARG...]
 *
 * The options that mirror profile keys go through sbx_profile_set() after
 * the profile is loaded (one code path, the command line wins).  Then:
 * state and lock, image, cgroup, the jail, supervision, the record, and
 * the sandbox kept or removed.
 */
#include <fcntl.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <sys/wait.h>

#include "cmd.h"
#include "profile.h"
#include "image_ui.h"
#include "proc.h"
#include "run.h"
#include "disk.h"
#include "record_text.h"
#include "seccomp.h"
#include "rmtree.h"

#define OUTPUT_CAP (8ULL << 20)
#define GRACE_MS   2000

static const char usage[] =
    "usage: sbx run [options] [--] CMD [ARG...]\n"
    "\n"
    "Run CMD in a new ephemeral sandbox built from a profile.\n"
    "\n"
    "  -p, --profile NAME|FILE   isolation profile (default: default)\n"
    "      --rootfs host|TARBALL|DIR  root filesystem\n"
    "  -n, --name NAME           name the sandbox\n"
    "      --keep                keep the sandbox's state after the run\n"
    "      --rm                  always remove it (overrides persist)\n"
    "  -e, --env NAME[=VAL]      pass NAME from the caller, or set it\n"
    "      --bind SRC[:DST]      bind a host path read-write (nosuid,nodev)\n"
    "      --ro-bind SRC[:DST]   bind a host path read-only\n"
    "      --overlay SRC[:DST]   copy-on-write view of a host directory\n"
    "      --tmpfs DST[:SIZE]    a private tmpfs\n"
    "      --net MODE            none | loopback | proxy | host\n"
    "      --allow HOST[:PORT]   allow a destination through the proxy\n"
    "      --memory SIZE         memory limit (e.g. 512m)\n"
    "      --pids N              process limit\n"
    "      --cpus N              cpu limit (e.g. 1.5)\n"
    "      --time DURATION       wall-clock limit (e.g. 90s): exit 124\n"
    "      --stop-timeout DURATION  after SIGTERM/SIGINT/SIGHUP reaches sbx, kill\n"
    "                            the jail if it has not ended (default 10s; a\n"
    "                            second SIGINT/SIGTERM kills at once)\n"
    "  -w, --workdir DIR         working directory inside\n"
    "  -u, --user UID[:GID]|root user inside (never root on the host)\n"
    "      --hostname NAME       hostname inside\n"
    "  -t, --tty                 allocate a pseudo-terminal\n"
    "  -q, --quiet               no run log on stderr\n"
    "      --log-json FILE       write the run log as JSON lines to FILE\n"
    "\n"
    "Exit status: the command's own, 128+N if killed by signal N, 124 on\n"
    "timeout, 125 if sbx failed, 126 not executable, 127 not found.\n";

enum {
	O_PROFILE = 'p',
	O_NAME = 'n',
	O_ENV = 'e',
	O_WORKDIR = 'w',
	O_USER = 'u',
	O_TTY = 't',
	O_QUIET = 'q',
	O_HELP = 'h',
	O_ROOTFS = 256,
	O_KEEP,
	O_RM,
	O_BIND,
	O_ROBIND,
	O_OVERLAY,
	O_TMPFS,
	O_NET,
	O_ALLOW,
	O_MEMORY,
	O_PIDS,
	O_CPUS,
	O_TIME,
	O_HOSTNAME,
	O_LOGJSON,
	O_STOP_TIMEOUT,
};

/* Options that are profile keys: option -> section, key. */
static const struct {
	int opt;
	const char *section, *key;
} key_opts[] = {
    {O_ROOTFS, "sandbox", "rootfs"},	 {O_WORKDIR, "sandbox", "workdir"},
    {O_USER, "sandbox", "user"},	 {O_HOSTNAME, "sandbox", "hostname"},
    {O_TTY, "sandbox", "tty"},		 {O_BIND, "filesystem", "bind"},
    {O_ROBIND, "filesystem", "ro-bind"}, {O_OVERLAY, "filesystem", "overlay"},
    {O_TMPFS, "filesystem", "tmpfs"},	 {O_NET, "network", "mode"},
    {O_ALLOW, "network", "allow"},	 {O_MEMORY, "limits", "memory"},
    {O_PIDS, "limits", "pids"},		 {O_CPUS, "limits", "cpus"},
    {O_TIME, "limits", "time"},		 {O_STOP_TIMEOUT, "sandbox", "stop-timeout"},
};

static const struct option long_opts[] = {
    {"profile", required_argument, NULL, O_PROFILE},
    {"rootfs", required_argument, NULL, O_ROOTFS},
    {"name", required_argument, NULL, O_NAME},
    {"keep", no_argument, NULL, O_KEEP},
    {"rm", no_argument, NULL, O_RM},
    {"env", required_argument, NULL, O_ENV},
    {"bind", required_argument, NULL, O_BIND},
    {"ro-bind", required_argument, NULL, O_ROBIND},
    {"overlay", required_argument, NULL, O_OVERLAY},
    {"tmpfs", required_argument, NULL, O_TMPFS},
    {"net", required_argument, NULL, O_NET},
    {"allow", required_argument, NULL, O_ALLOW},
    {"memory", required_argument, NULL, O_MEMORY},
    {"pids", required_argument, NULL, O_PIDS},
    {"cpus", required_argument, NULL, O_CPUS},
    {"time", required_argument, NULL, O_TIME},
    {"stop-timeout", required_argument, NULL, O_STOP_TIMEOUT},
    {"workdir", required_argument, NULL, O_WORKDIR},
    {"user", required_argument, NULL, O_USER},
    {"hostname", required_argument, NULL, O_HOSTNAME},
    {"tty", no_argument, NULL, O_TTY},
    {"quiet", no_argument, NULL, O_QUIET},
    {"log-json", required_argument, NULL, O_LOGJSON},
    {"help", no_argument, NULL, O_HELP},
    {NULL, 0, NULL, 0},
};

static void add_set(struct run_args *a, const char *section, const char *key, const char *value)
{
	a->sets = sbx_xrealloc(a->sets, (a->n_sets + 1) * sizeof(*a->sets));
	a->sets[a->n_sets++] = (struct run_set){section, key, sbx_xstrdup(value)};
}

static bool key_opt(struct run_args *a, int opt, const char *arg)
{
	for (size_t i = 0; i < SBX_ARRAY_SIZE(key_opts); i++) {
		if (key_opts[i].opt == opt) {
			add_set(a, key_opts[i].section, key_opts[i].key, arg ? arg : "yes");
			return true;
		}
	}
	return false;
}

/* -e NAME=VAL sets, -e NAME passes the caller's value. */
static void env_opt(struct run_args *a, const char *arg)
{
	add_set(a, "env", strchr(arg, '=') ? "set" : "pass", arg);
}

static int other_opt(struct run_args *a, int opt, const char *arg, struct sbx_err *err)
{
	switch (opt) {
	case O_PROFILE:
		a->profile = arg;
		return 0;
	case O_NAME:
		a->name = arg;
		return 0;
	case O_KEEP:
		a->keep = true;
		return 0;
	case O_RM:
		a->rm = true;
		return 0;
	case O_QUIET:
		a->quiet = true;
		return 0;
	case O_LOGJSON:
		a->log_json = arg;
		return 0;
	case O_ENV:
		env_opt(a, arg);
		return 0;
	case O_HELP:
		fputs(usage, stdout);
		return 1;
	default:
		return sbx_err_set(err, 0, "run: unknown option (see 'sbx run --help')");
	}
}

int run_parse_args(int argc, char **argv, struct run_args *a, struct sbx_err *err)
{
	int opt;

	memset(a, 0, sizeof(*a));
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+p:n:e:w:u:tqh", long_opts, NULL)) != -1) {
		int r;

		if (opt == '?' || opt == ':') {
			const char *bad = argv[optind - 1];
			bool value = opt == ':' || (optopt && strchr("pnewu", optopt));
			char hint[96];

			return sbx_err_set(
			    err, 0, "run: %s '%s'%s (see 'sbx run --help')",
			    value ? "option needs a value" : "unknown option", bad ? bad : "?",
			    value ? "" : sbx_cmd_option_hint(bad, long_opts, hint, sizeof(hint)));
		}
		if (key_opt(a, opt, optarg))
			continue;
		r = other_opt(a, opt, optarg, err);
		if (r != 0)
			return r;
	}
	if (a->keep && a->rm)
		return sbx_err_set(err, 0, "run: --keep and --rm contradict each other");
	if (optind >= argc)
		return sbx_err_set(
		    err, 0, "run: no command given (usage: sbx run [options] [--] CMD [ARG...])");
	a->argv = argv + optind;
	/* main's argv strings are contiguous, from argv[0] to our last one. */
	{
		char *end = argv[argc - 1] + strlen(argv[argc - 1]) + 1;

		if (end > program_invocation_name && end - program_invocation_name < (1 << 20)) {
			a->title = program_invocation_name;
			a->title_len = (size_t)(end - program_invocation_name);
		}
	}
	return 0;
}

void run_args_free(struct run_args *a)
{
	for (size_t i = 0; i < a->n_sets; i++)
		free(a->sets[i].value);
	free(a->sets);
	a->sets = NULL;
	a->n_sets = 0;
}

/* ---- set-up ---- */

/* "--memory '1': memory limit '1' is too small ...": the option as typed,
 * not the profile key it sets. */
static void option_error(const struct run_set *s, struct sbx_err *err)
{
	_cleanup_free_ char *key = sbx_xasprintf("key '%s': ", s->key);
	char msg[SBX_ERR_MSG_MAX];
	const char *name = NULL, *m = err->msg;

	for (size_t i = 0; i < SBX_ARRAY_SIZE(key_opts) && !name; i++)
		if (!strcmp(key_opts[i].section, s->section) && !strcmp(key_opts[i].key, s->key))
			for (size_t k = 0; long_opts[k].name && !name; k++)
				if (long_opts[k].val == key_opts[i].opt)
					name = long_opts[k].name;
	_cleanup_free_ char *quoted = sbx_xasprintf("'%s' ", s->value);

	if (strncmp(m, key, strlen(key)) == 0)
		m += strlen(key);
	if (strncmp(m, quoted, strlen(quoted)) == 0) /* "'/x.tar' does not exist" */
		m += strlen(quoted);
	snprintf(msg, sizeof(msg), "%s", m);
	if (name)
		sbx_err_set(err, err->errnum, "--%s '%s': %s", name, s->value, msg);
	else
		sbx_err_set(err, err->errnum, "-e '%s': %s", s->value, msg);
}

static int load_config(struct run_ctx *c, struct sbx_err *err)
{
	struct sbx_profile_vars vars;
	int r;

	sbx_profile_vars_from_process(&vars);
	r = sbx_profile_load(&c->cfg, c->args.profile ? c->args.profile : "default", &vars, err);
	for (size_t i = 0; r == 0 && i < c->args.n_sets; i++) {
		struct run_set *s = &c->args.sets[i];

		r = sbx_profile_set(&c->cfg, s->section, s->key, s->value, err);
		if (r < 0)
			option_error(s, err);
	}
	if (r == 0) {
		sbx_config_drop_host_only(&c->cfg);
		sbx_config_drop_covered_overlays(&c->cfg);
		r = sbx_config_check_sources(&c->cfg, err);
	}
	if (r == 0 && c->cfg.rootfs_required && !c->cfg.rootfs)
		r = sbx_err_set(err, 0, "profile '%s' needs --rootfs TARBALL|DIR",
				c->cfg.profile_name ? c->cfg.profile_name : "?");
	/* Audit mode compiles the notify filter; compile the plain one only
	 * when audit mode cannot be had (validate then names a bad file). */
	if (r == 0)
		c->auditing = sbx_seccomp_audit_init(&c->audit, c->cfg.seccomp, err) == 0;
	if (r == 0 && !c->auditing)
		r = sbx_seccomp_validate(c->cfg.seccomp, err);
	if (r == 0)
		r = sbx_jail_ids_resolve(&c->cfg, &c->ids, err);
	return r;
}

static int prepare_image(struct run_ctx *c, struct sbx_err *err)
{
	struct sbx_image_opts o = {
	    .cache_dir = c->st.cache_dir,
	    .max_bytes = c->cfg.image_size == SBX_UNSET ? 0 : c->cfg.image_size,
	    .max_entries = c->cfg.image_entries == SBX_UNSET ? 0 : c->cfg.image_entries,
	    .preserve_owner = geteuid() == 0,
	    /* Walking a cached image costs one fstatat per entry: start-up
	     * would grow with the image.  check_image() walks it after a
	     * failed command instead. */
	    .no_verify = true,
	};
	uint64_t t0 = sbx_now_ns();
	int r;

	if (!c->cfg.rootfs || strcmp(c->cfg.rootfs, "host") == 0)
		return 0;
	struct sbx_cmd_image_ui ui;

	/* The progress bar (a terminal, a large tarball) and the unpacker's
	 * warnings, as `sbx image unpack` shows them; none with -q. */
	sbx_cmd_image_ui_setup(&ui, &o, c->cfg.rootfs);
	ui.quiet = ui.quiet || c->args.quiet;
	ui.bar = ui.bar && !c->args.quiet;
	r = sbx_image_prepare(c->cfg.rootfs, &o, &c->rootfs_dir, &c->img, err);
	sbx_cmd_image_ui_finish(&ui);
	c->t_image = sbx_ms_since(t0);
	if (r < 0)
		sbx_err_wrap(err, "rootfs '%s'", c->cfg.rootfs);
	return r;
}

/* An overlay upper must look like its lower's root: same mode, owned by the
 * lower's owner as the jail sees it. */
static int make_layer(struct run_ctx *c, const char *dir, const char *lower, struct sbx_err *err)
{
	_cleanup_free_ char *up = sbx_xasprintf("%s/upper", dir);
	_cleanup_free_ char *wk = sbx_xasprintf("%s/work", dir);
	struct stat st = {.st_mode = 0755};
	uid_t uid = c->ids.host_root == (uid_t)-1 ? geteuid() : c->ids.host_root, u;
	gid_t gid = c->ids.range ? (gid_t)c->ids.base : getegid(), g;

	if (lower && stat(lower, &st) == 0 && c->ids.range && st.st_uid < SBX_JAIL_ID_COUNT) {
		uid = c->ids.base + st.st_uid;
		gid = c->ids.base + (st.st_gid < SBX_JAIL_ID_COUNT ? st.st_gid : 0);
	}
	/* A lower an ordinary user owns shows as the jail's user's (lib/jail/jail.c
	 * idmap_lower): so does its upper. */
	if (lower && c->ids.range && c->rootfs_dir != lower &&
	    sbx_idmap_bind_owner(lower, &u, &g) == 1) {
		uid = c->ids.host_uid;
		gid = c->ids.host_gid;
	}
	if (sbx_mkdir_p(up, 0700) < 0 || mkdir(wk, 0700) < 0)
		return sbx_err_set(err, errno, "cannot create the writable layer in '%s'", dir);
	if (chmod(up, st.st_mode & 07777) < 0 ||
	    (c->ids.range && (chown(up, uid, gid) < 0 || chown(wk, uid, gid) < 0)))
		return sbx_err_set(err, errno, "cannot prepare the writable layer in '%s'", dir);
	return 0;
}

/*
 * [limits] disk (lib/jail/disk.h): every run with a writable layer gets a cap.
 * As root the layers live in an ext4 image of that size loop-mounted on
 * STATE/sandboxes/ID/disk (kept with the sandbox; destroy unmounts it, and
 * the loop device goes with the mount).  Without loop devices or mke2fs, in
 * a tmpfs of that size mounted there.  Unprivileged, no filesystem can be
 * mounted on the host: init mounts the tmpfs in the jail's mount namespace
 * (o.layer_tmpfs), and when the sandbox is kept its upper directories are
 * copied to disk/ (keep_layers).
 */
/* Does this run have a writable layer at all? */
static bool has_layers(const struct run_ctx *c)
{
	if (c->rootfs_dir && c->cfg.rootfs_writable)
		return true;
	for (size_t i = 0; i < c->cfg.n_mounts; i++)
		if (c->cfg.mounts[i].kind == SBX_MNT_OVERLAY)
			return true;
	return false;
}

/*
 * An overlay's upper directory cannot be on an overlayfs, which the state
 * directory is when sbx runs in a container and keeps its state on the
 * container's own root: the layers then go in memory, as an unprivileged
 * [limits] disk puts them (a tmpfs of that size, or SBX_LAYER_MEMORY_DEFAULT),
 * and the run log says so.
 */
static bool state_on_overlayfs(const struct run_ctx *c)
{
	struct statfs f;

	return statfs(c->sb.dir, &f) == 0 && f.f_type == OVERLAYFS_SUPER_MAGIC;
}

/* The layers' cap, in memory or on disk; c->cfg.disk becomes it. */
static int disk_cap(struct run_ctx *c, uint64_t asked, bool in_memory, struct sbx_err *err)
{
	struct sbx_disk_cap cap;
	int r = sbx_disk_cap(c->st.state_dir, asked, in_memory, &cap, err);

	if (r < 0)
		return r;
	c->cfg.disk = c->layer_size = cap.size;
	c->cg.disk_where = in_memory ? SBX_DISK_IN_MEMORY : SBX_DISK_ON_DISK;
	c->cg.disk_inodes = cap.inodes;
	if (cap.clamped) {
		char a[32];

		snprintf(c->cg.disk_why, sizeof(c->cg.disk_why), "%s asked: %.160s",
			 sbx_size_text((double)cap.asked, a, sizeof(a)), cap.why);
	}
	return 0;
}

static int mount_disk(struct run_ctx *c, struct sbx_err *err)
{
	_cleanup_free_ char *opts = NULL;
	_cleanup_free_ char *img = NULL;
	uint64_t asked = c->cfg.disk;
	bool overlayfs, loop, private_ns = false;
	struct sbx_err e = {0};
	int r;

	if (!has_layers(c))
		return 0;
	overlayfs = state_on_overlayfs(c);
	if (asked == SBX_DISK_NO_CAP && !overlayfs)
		return 0; /* [limits] disk = unlimited: on the state filesystem as they are */
	if (asked == SBX_DISK_NO_CAP)
		asked = SBX_UNSET; /* in memory all the same: the default cap */
	loop = !overlayfs && sbx_disk_loop_usable();
	r = disk_cap(c, asked, !loop, err);
	if (r < 0)
		return r;
	c->layer_dir = sbx_xasprintf("%s/disk", c->sb.dir);
	if (mkdir(c->layer_dir, 0700) < 0)
		return sbx_err_set(err, errno, "cannot create '%s'", c->layer_dir);
	if (overlayfs)
		c->layer_note = sbx_xasprintf(
		    "the state directory '%s' is on an overlayfs (a container's root?), where no "
		    "writable layer can be: the layers live in memory, a tmpfs of %llu MiB "
		    "([limits] disk sets its size; --state-dir on a volume avoids this)",
		    c->st.state_dir, (unsigned long long)(c->layer_size >> 20));
	if (loop) {
		_cleanup_free_ char *tpl = sbx_xasprintf("%s/disk-templates", c->st.state_dir);

		img = sbx_xasprintf("%s/disk.img", c->sb.dir);
		/* In a mount namespace of the run's own when it can be (nothing
		 * else runs in this process yet): gone with the run, even killed. */
		private_ns = sbx_disk_private_ns(c->sb.dirfd, c->sb.dir, &e) == 0;
		e = (struct sbx_err){0};
		if (sbx_disk_loop_mount(
			img, c->layer_dir,
			&(struct sbx_disk_cap){.size = c->layer_size, .inodes = c->cg.disk_inodes},
			c->cg.disk_why[0] ? NULL : tpl, &e) == 0) {
			_cleanup_free_ char *lf = sbx_xasprintf("%s/lost+found", c->layer_dir);

			if (chmod(c->layer_dir, 0700) < 0)
				return sbx_err_set(err, errno, "cannot prepare '%s'", c->layer_dir);
			(void)rmdir(lf);
			c->disk_mounted = c->disk_loop = true;
			return 0;
		}
		(void)unlink(img);
		c->layer_note = sbx_xasprintf("the writable layer cannot be an image on disk (%s): "
					      "it is a tmpfs, in memory",
					      e.msg);
		c->cg.disk_why[0] = '\0';
		r = disk_cap(c, asked, true, err);
		if (r < 0)
			return r;
	}
	/* A tmpfs mounted in the run's own namespace would not outlive it:
	 * in the jail's instead, copied to disk/ when kept, as a user's. */
	if (geteuid() != 0 || overlayfs || private_ns) {
		c->disk_memory = true;
		return 0;
	}
	opts =
	    sbx_xasprintf("size=%llu,nr_inodes=%llu,mode=0700", (unsigned long long)c->layer_size,
			  (unsigned long long)c->cg.disk_inodes);
	if (mount("sbx-disk", c->layer_dir, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0) {
		/* Root of a container without CAP_SYS_ADMIN: in the jail's own
		 * mount namespace instead, as an ordinary user's. */
		if (errno == EPERM) {
			c->disk_memory = true;
			return 0;
		}
		return sbx_err_set(err, errno,
				   "cannot mount the size-capped writable layer on '%s'",
				   c->layer_dir);
	}
	if (mount(NULL, c->layer_dir, NULL, MS_PRIVATE, NULL) < 0)
		return sbx_err_set(err, errno, "cannot make '%s' private", c->layer_dir);
	c->disk_mounted = true;
	return 0;
}

/* As root, an in-memory layer is made by the jail's root from the disk/
 * skeleton (lib/jail/mounts.c capture_layers): the skeleton's directories are
 * the jail's root's, so it can walk them. */
static int own_skeleton(struct run_ctx *c, struct sbx_err *err)
{
	uid_t u = c->ids.host_root;
	gid_t g = (gid_t)c->ids.base;
	_cleanup_free_ char *ov = sbx_xasprintf("%s/overlays", c->layer_dir);

	if (!c->disk_memory || !c->ids.range)
		return 0;
	if (chown(c->layer_dir, u, g) < 0 || (access(ov, F_OK) == 0 && chown(ov, u, g) < 0))
		return sbx_err_set(err, errno, "cannot prepare '%s'", c->layer_dir);
	for (size_t i = 0; i < c->cfg.n_mounts; i++) {
		_cleanup_free_ char *d = NULL;

		if (c->cfg.mounts[i].kind != SBX_MNT_OVERLAY)
			continue;
		d = sbx_xasprintf("%s/%zu", ov, i);
		if (chown(d, u, g) < 0)
			return sbx_err_set(err, errno, "cannot prepare '%s'", d);
	}
	return 0;
}

static int prepare_layers(struct run_ctx *c, struct sbx_err *err)
{
	uint64_t t0 = sbx_now_ns();
	int r = mount_disk(c, err);

	c->t_disk = sbx_ms_since(t0);
	if (r < 0)
		return r;
	if (!c->layer_dir)
		c->layer_dir = sbx_xstrdup(c->sb.dir);
	if (c->rootfs_dir && c->cfg.rootfs_writable)
		r = make_layer(c, c->layer_dir, c->rootfs_dir, err);
	for (size_t i = 0; r == 0 && i < c->cfg.n_mounts; i++) {
		_cleanup_free_ char *d = NULL;

		if (c->cfg.mounts[i].kind != SBX_MNT_OVERLAY)
			continue;
		d = sbx_xasprintf("%s/overlays/%zu", c->layer_dir, i);
		r = make_layer(c, d, c->cfg.mounts[i].src, err);
	}
	if (r == 0)
		r = own_skeleton(c, err);
	return r;
}

static int open_logs(struct run_ctx *c, struct sbx_err *err)
{
	sbx_log_init(&c->log);
	c->jsonl_fd = openat(c->sb.dirfd, "log.jsonl",
			     O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
	sbx_log_add_fd(&c->log, c->jsonl_fd);
	if (c->args.log_json) {
		c->log_json_fd =
		    open(c->args.log_json, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (c->log_json_fd < 0)
			return sbx_err_set(err, errno, "cannot open '%s'", c->args.log_json);
		sbx_log_add_fd(&c->log, c->log_json_fd);
	}
	if (!c->args.quiet) {
		c->log.human = run_human;
		c->log.human_data = c;
	}
	return 0;
}

/*
 * The record is saved while the jail starts (run_record_save_async): a
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

static int setup(struct run_ctx *c, struct sbx_err *err)
{
	int r;

	r = load_config(c, err);
	if (r == 0)
		r = sbx_cmd_state(&c->st, true, err);
	if (r == 0)
		r = sbx_cmd_hide_state(&c->cfg, &c->st, err);
	if (r == 0)
		r = check_state_space(&c->st, err);
	if (r == 0)
		r = sbx_sandbox_create_unsaved(&c->st, c->args.name, &c->sb, err);
	if (r < 0)
		return r;
	r = open_logs(c, err);
	if (r == 0)
		r = prepare_image(c, err);
	/* A cgroup only when a limit needs one: attaching costs milliseconds
	 * (v1 memory), and pid-namespace teardown already ends every process. */
	if (r == 0 && (c->cfg.memory != SBX_UNSET || c->cfg.pids != SBX_UNSET ||
		       c->cfg.cpus_milli != SBX_UNSET))
		r = sbx_cgroup_create(&c->cg, c->sb.id, &c->cfg, err);
	/* After the cgroup (it starts from a cleared struct): the layers' cap
	 * is said with the other limits. */
	if (r == 0)
		r = prepare_layers(c, err);
	return r;
}

/* ---- running ---- */

/* stdout and stderr go to the same place (a terminal, `>f 2>&1`): one
 * pipe for both keeps their order, on screen and in output.log. */
static bool same_output(void)
{
	struct stat a, b;

	return fstat(STDOUT_FILENO, &a) == 0 && fstat(STDERR_FILENO, &b) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* While init builds the root: the record says running (fsync'ed), policy. */
static void after_go(struct sbx_jail *j, void *data)
{
	struct run_ctx *c = data;

	uint64_t start;

	json_object_set_new(c->sb.record, "init_pid", json_integer(j->init_pid));
	/* with its start time: destroy and exec never take a reused pid for it */
	if (sbx_proc_starttime(j->init_pid, &start) == 0)
		json_object_set_new(c->sb.record, "init_start", json_integer((json_int_t)start));
	run_record_start(c);
	run_log_policy(c);
	run_record_save_async(c);
}

static int start_jail(struct run_ctx *c, int out[2], int errp[2], struct sbx_err *err)
{
	struct sbx_strv env = {0}, extra = {0};
	struct sbx_jail_opts o = {
	    .cfg = &c->cfg,
	    .id = c->sb.id,
	    .rootfs_dir = c->rootfs_dir,
	    .sandbox_dir = c->layer_dir,
	    .argv = c->args.argv,
	    .workdir = c->cfg.workdir,
	    .host_cwd = c->cwd,
	    .ids = c->ids,
	    .cg = &c->cg,
	    .out_fd = -1,
	    .err_fd = -1,
	    .tty = c->cfg.tty,
	};
	int r;

	r = run_extras_prepare(c, &extra, err);
	if (r < 0)
		return r;
	o.after_go = after_go;
	o.after_go_data = c;
	o.title = c->args.title;
	o.title_len = c->args.title_len;
	o.files = c->files;
	o.n_files = c->n_files;
	o.seccomp_notify = c->auditing;
	o.volatile_layers = true; /* synced in teardown() only if kept */
	o.layer_tmpfs = c->disk_memory ? c->layer_size : 0;
	o.proxy_port = c->cfg.net == SBX_NET_PROXY ? SBX_PROXY_DEFAULT_PORT : 0;
	sbx_jail_build_env(&c->cfg, &c->ids, c->rootfs_dir == NULL, o.tty, extra.v, &env);
	o.envp = env.v;
	for (size_t i = 0; i < env.n; i++)
		if (strncmp(env.v[i], "PATH=", 5) == 0)
			c->jail_path = sbx_xstrdup(env.v[i] + 5);
	if (o.tty) {
		sbx_jail_winsize(&o.ws);
	} else if (pipe2(out, O_CLOEXEC) < 0 || (!same_output() && pipe2(errp, O_CLOEXEC) < 0)) {
		r = sbx_err_set(err, errno, "cannot create the output pipes");
	} else {
		o.out_fd = out[1];
		o.err_fd = errp[1] >= 0 ? errp[1] : out[1];
	}
	if (r == 0)
		r = sbx_jail_start(&c->jail, &o, err);
	sbx_closep(&out[1]);
	sbx_closep(&errp[1]);
	sbx_secrets_wipe_strv(&env);
	sbx_secrets_wipe_strv(&extra);
	return r;
}

static int run_jail(struct run_ctx *c, struct sbx_err *err)
{
	int out[2] = {-1, -1}, errp[2] = {-1, -1};
	struct sbx_jail_io io = {.log_cap = OUTPUT_CAP,
				 .time_ms = c->cfg.time_ms,
				 .grace_ms = GRACE_MS,
				 .stop_ms = c->cfg.stop_timeout_ms,
				 .cg = &c->cg,
				 .event = run_event_cb,
				 .event_data = c};
	int r;

	c->output_fd = openat(c->sb.dirfd, "output.log",
			      O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	r = start_jail(c, out, errp, err);
	if (r < 0)
		goto out;
	run_log_warnings(c);
	run_log_timings(c);
	io.out_r = out[0];
	io.err_r = errp[0];
	io.log_fd = c->output_fd;
	r = run_extras_started(c, &io, err);
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
	run_extras_finish(c);
out:
	sbx_closep(&out[0]);
	sbx_closep(&errp[0]);
	return r;
}

static void finish(struct run_ctx *c)
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
	else if (c->res.stopped)
		c->reason = "stopped";
	else if (oom && c->exit_code == 128 + SIGKILL)
		c->reason = "oom";
	else if ((c->res.have_status && WIFSIGNALED(c->res.status)) || !c->res.have_status)
		c->reason = "signaled"; /* no status: the jail was killed from outside */
	else
		c->reason = "exited";
}

/*
 * A command that failed on a cached image: was the image damaged since it
 * was published (files deleted or truncated in the cache)?  Then that is
 * the failure sbx reports, 125, naming the image; a command that succeeds
 * is never held back by the walk.
 */
static void check_image(struct run_ctx *c)
{
	struct sbx_err e = {0};

	if (c->exit_code == 0 || !c->img.cached || c->img.is_dir || !c->rootfs_dir ||
	    sbx_image_verify(c->st.cache_dir, c->rootfs_dir, &e) == 0)
		return;
	sbx_print_err(&e);
	c->error = sbx_xstrdup(e.msg);
	c->exit_code = SBX_EXIT_SBX;
	c->reason = "error";
}

/*
 * A command that could not be started: one line, like env(1), naming it
 * and why (what the jail saw, and on the host which profile entry hides
 * it), printed even with -q, and kept for the record.
 */
static void explain_exec_failure(struct run_ctx *c)
{
	char hint[2048];
	const char *why = c->jail.exec_msg;

	if (!c->jail.exec_errno)
		return;
	if (!why)
		why = strerror(c->jail.exec_errno);
	if (c->jail.exec_absent && sbx_exec_hint(&c->cfg, c->rootfs_dir != NULL, c->args.argv[0],
						 c->jail_path, c->cwd, hint, sizeof(hint)))
		c->exec_error = sbx_xasprintf("%s; %s", why, hint);
	else
		c->exec_error = sbx_xstrdup(why);
	sbx_errorf("%s", c->exec_error);
}

/* `sbx destroy` of this running sandbox killed the jail (and is waiting
 * for our lock to remove it), or already removed its directory. */
static bool destroyed(const struct run_ctx *c)
{
	struct stat st;

	return c->sb.dirfd >= 0 &&
	       ((fstat(c->sb.dirfd, &st) == 0 && st.st_nlink == 0) ||
		faccessat(c->sb.dirfd, SBX_SANDBOX_DESTROYING, F_OK, AT_SYMLINK_NOFOLLOW) == 0);
}

static void decide_keep(struct run_ctx *c)
{
	bool failed = c->exit_code != 0;

	if (destroyed(c)) {
		c->kept = false;
		c->keep_reason = "destroyed by 'sbx destroy' while it ran";
	} else if (c->args.rm) {
		c->kept = false;
		c->keep_reason = "--rm";
	} else if (c->args.keep) {
		c->kept = true;
		c->keep_reason = "--keep";
	} else if (c->cfg.persist == SBX_PERSIST_ALWAYS) {
		c->kept = true;
		c->keep_reason = "persist = always";
	} else if (c->cfg.persist == SBX_PERSIST_ON_FAILURE && c->jail.exec_errno) {
		c->kept = false;
		c->keep_reason = "persist = on-failure and the command never started";
	} else if (c->cfg.persist == SBX_PERSIST_ON_FAILURE && failed) {
		c->kept = true;
		c->keep_reason = "persist = on-failure and the command failed";
	} else {
		c->kept = false;
		c->keep_reason = c->cfg.persist == SBX_PERSIST_NEVER
				     ? "persist = never"
				     : "persist = on-failure and the command succeeded";
	}
}

/*
 * A kept sandbox whose layers were in memory (an unprivileged [limits]
 * disk): their upper directories go to disk/ (the skeleton made before the
 * run), where inspect, export and exec find them.  What cannot be copied
 * is said in the run log; the sandbox is kept with the rest.
 */
static void keep_layers(struct run_ctx *c)
{
	struct sbx_err e = {0};

	if (!c->kept || !c->disk_memory)
		return;
	if (c->jail.layer_fd < 0) { /* the set-up failed first: its error is said */
		if (c->jail.init_pid > 0)
			run_log_warn(c, "the in-memory writable layer never reached sbx: "
					"nothing of it was kept");
		return;
	}
	if (sbx_jail_keep_layers_as(&c->jail, &c->ids, c->layer_dir, &c->cfg,
				    c->rootfs_dir && c->cfg.rootfs_writable, false, &e) < 0) {
		sbx_print_err(&e);
		run_log_warn(c, e.msg);
	}
}

/*
 * Removing an ephemeral sandbox is one synchronous discard per freed block
 * on a disk mounted -o discard (each directory is one, ~1-2 ms apiece here,
 * ~21 for the default profile: the overlay's work/work/incompat/volatile
 * chains are the longest).  So the trees go in parallel: a thread per
 * overlay (its upper/ in a second thread while it removes work/, then the
 * emptied overlays/N), one for upper/ and the logs, this thread the
 * rootfs's work/; sbx_sandbox_remove() then removes what is left.  Only a
 * speed-up: whatever a step could not remove, the final removal retries.
 */
struct rm_step {
	int dirfd;
	const char *name;
};

struct rm_job {
	struct rm_step steps[3];
	struct rm_job *sub; /* runs alongside, joined before the last step */
	pthread_t thread;
	bool started;
};

static void rm_job_start(struct rm_job *j);

static void *rm_job_run(void *arg)
{
	struct rm_job *j = arg;
	size_t n = 0;

	while (n < SBX_ARRAY_SIZE(j->steps) && j->steps[n].name)
		n++;
	if (j->sub)
		rm_job_start(j->sub);
	for (size_t i = 0; i < n; i++) {
		if (j->sub && j->sub->started && i + 1 == n)
			pthread_join(j->sub->thread, NULL);
		if (j->steps[i].dirfd >= 0)
			(void)sbx_rm_rf_at(j->steps[i].dirfd, j->steps[i].name);
	}
	return NULL;
}

/* In a thread, or right here if none can be had. */
static void rm_job_start(struct rm_job *j)
{
	j->started = pthread_create(&j->thread, NULL, rm_job_run, j) == 0;
	if (!j->started)
		rm_job_run(j);
}

static void remove_layers_parallel(struct run_ctx *c)
{
	const int dflags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
	size_t n = c->cfg.n_mounts;
	_cleanup_free_ struct rm_job *jobs = sbx_xcalloc(2 * n + 1, sizeof(*jobs));
	_cleanup_free_ int *fds = sbx_xcalloc(n + 1, sizeof(*fds));
	_cleanup_close_ int ov = -1;
	_cleanup_free_ char(*names)[24] = sbx_xcalloc(n + 1, sizeof(*names));
	struct rm_job *top = &jobs[2 * n], root_work = {.steps = {{c->sb.dirfd, "work"}}};

	if (c->disk_mounted)
		return; /* a tmpfs: nothing to wait for */
	*top = (struct rm_job){.steps = {{c->sb.dirfd, "upper"},
					 {c->sb.dirfd, "log.jsonl"},
					 {c->sb.dirfd, "record.json"}}};
	rm_job_start(top);
	ov = openat(c->sb.dirfd, "overlays", dflags);
	for (size_t i = 0; i < n; i++) {
		fds[i] = -1;
		if (ov < 0 || c->cfg.mounts[i].kind != SBX_MNT_OVERLAY)
			continue;
		snprintf(names[i], sizeof(names[i]), "%zu", i);
		fds[i] = openat(ov, names[i], dflags);
		jobs[n + i] = (struct rm_job){.steps = {{fds[i], "upper"}}};
		jobs[i] = (struct rm_job){.steps = {{fds[i], "work"}, {ov, names[i]}},
					  .sub = &jobs[n + i]};
		rm_job_start(&jobs[i]);
	}
	rm_job_run(&root_work);
	for (size_t i = 0; i <= 2 * n; i++)
		if (jobs[i].started && (i < n || i == 2 * n))
			pthread_join(jobs[i].thread, NULL);
	for (size_t i = 0; i < n; i++)
		sbx_closep(&fds[i]);
	(void)sbx_rm_rf_at(c->sb.dirfd, "overlays");
}

static void teardown(struct run_ctx *c)
{
	struct sbx_err e = {0};

	run_record_join(c);
	sbx_jail_free(&c->jail);
	run_extras_free(c);
	sbx_closep(&c->output_fd);
	if (c->cg.version > 0 && sbx_cgroup_destroy(&c->cg, &e) < 0)
		sbx_print_err(&e);
	sbx_cgroup_free(&c->cg);
	if (c->sb.dirfd >= 0 && c->sb.record) {
		/* The layers are on disk before a record says they were kept. */
		if (c->kept && c->layer_dir &&
		    sbx_jail_layers_settle(c->layer_dir, &c->cfg,
					   c->rootfs_dir && c->cfg.rootfs_writable, &e) < 0)
			sbx_print_err(&e);
		run_record_finish(c);
		/* An image stays a file when kept (sbx_disk_attach_kept mounts it
		 * for inspect, export and exec): no mount or loop device left. */
		if ((!c->kept || c->disk_loop) && c->disk_mounted &&
		    sbx_sandbox_unmount_all(&c->sb, NULL, &e) < 0)
			sbx_print_err(&e);
		if (!c->kept)
			remove_layers_parallel(c);
		if (!c->kept && sbx_sandbox_remove(&c->st, &c->sb, &e) < 0)
			sbx_print_err(&e);
	}
	sbx_closep(&c->jsonl_fd);
	sbx_closep(&c->log_json_fd);
	sbx_log_free(&c->log);
	sbx_sandbox_close(&c->sb);
	sbx_state_close(&c->st);
	sbx_config_free(&c->cfg);
	free(c->rootfs_dir);
	free(c->layer_dir);
	free(c->cwd);
	free(c->jail_path);
	free(c->exec_error);
	free(c->layer_note);
	free(c->error);
	run_args_free(&c->args);
}

static void ctx_init(struct run_ctx *c)
{
	memset(c, 0, sizeof(*c));
	sbx_config_init(&c->cfg);
	sbx_jail_init(&c->jail);
	c->sb.dirfd = c->sb.lockfd = -1;
	c->st.sandboxes_fd = -1;
	c->jsonl_fd = c->log_json_fd = c->output_fd = c->oom_fd = -1;
	c->cwd = getcwd(NULL, 0);
	c->reason = "error";
}

int cmd_run(int argc, char **argv)
{
	struct run_ctx c;
	struct sbx_err err = {0};
	int r;

	ctx_init(&c);
	signal(SIGPIPE, SIG_IGN);
	r = run_parse_args(argc, argv, &c.args, &err);
	if (r == 0)
		r = setup(&c, &err);
	if (r == 0)
		r = run_jail(&c, &err);
	if (r > 0) {
		c.exit_code = 0;
	} else if (r < 0) {
		/* Killed for memory before the command started. */
		if (c.jail.exec_ok == false && c.cg.version > 0 &&
		    sbx_cgroup_usage(&c.cg, &c.usage) == 0 && c.usage.oom_kills > 0) {
			sbx_err_set(&err, 0,
				    "the jail ran out of memory while it started: the memory limit "
				    "(%.1f MiB) is too small for it",
				    (double)c.cfg.memory / 1048576.0);
		}
		sbx_print_err(&err);
		c.error = sbx_xstrdup(err.msg);
		c.exit_code = SBX_EXIT_SBX;
		c.reason = "error";
		c.kept = c.args.keep;
		c.keep_reason = c.kept ? "--keep" : "sbx failed before the command ran";
	} else {
		finish(&c);
		explain_exec_failure(&c);
		check_image(&c);
		decide_keep(&c);
	}
	keep_layers(&c);
	r = c.exit_code;
	teardown(&c);
	return r;
}
