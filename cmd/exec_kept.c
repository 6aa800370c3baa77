/* SPDX-License-Identifier: MIT */
/*
 * cmd/exec_kept.c - sbx exec into a kept, exited sandbox: a new jail
 * (sbx_jail_start) over the same writable layer (the sandbox's upper/ and
 * work/, and overlays/N/) and the same resolved profile, so a postmortem
 * runs where the failure happened.  The sandbox's lock is held throughout;
 * the record, its exit and output.log stay the original run's.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "cmd.h"
#include "disk.h"
#include "exec.h"
#include "lifecycle.h"

/* Is NAME/SUB a directory below the sandbox dir (no symlink anywhere)? */
static bool layer_has(int dirfd, const char *name, const char *sub)
{
	_cleanup_close_ int fd = -1;
	struct stat st;

	fd = name ? openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
		  : fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	return fd >= 0 && fstatat(fd, sub, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

/*
 * The directory of the writable layers, from the record's policy.
 * filesystem.layers (every overlay whose upper is in the sandbox: the
 * image root's "upper", the copy-on-write directories' "overlays/N/upper";
 * the host root has none of its own), each below the sandbox dir or below
 * "NAME/" when [limits] disk put them on a tmpfs mounted there.
 */
static int layer_prefix(const struct exec_ctx *x, const char *up, char **name, struct sbx_err *err)
{
	const char *p = strstr(up, "upper");
	const char *ov = strstr(up, "overlays/");
	const char *end = ov && (!p || ov < p) ? ov : p;

	*name = NULL;
	if (!end || (end != up && end[-1] != '/') || strstr(up, ".."))
		return sbx_err_set(err, 0, "the record of sandbox '%s' names an odd layer '%s'",
				   x->sb.id, up);
	if (end == up)
		return 0;
	*name = sbx_xstrndup(up, (size_t)(end - up - 1));
	if (strchr(*name, '/') || !strcmp(*name, "."))
		return sbx_err_set(err, 0, "the record of sandbox '%s' names an odd layer '%s'",
				   x->sb.id, up);
	return 0;
}

static int check_layer(struct exec_ctx *x, struct sbx_err *err)
{
	const struct sbx_record_filesystem *fs = &x->sb.rec.policy.filesystem;
	const char *layer = fs->writable_layer;
	const char *up = fs->upper;
	_cleanup_free_ char *name = NULL;
	int r;

	if (!x->sb.rec.kept)
		return sbx_err_set(
		    err, 0, "sandbox '%s' has exited and was not kept: nothing to enter", x->sb.id);
	x->rootfs_layer = layer && strcmp(layer, "private") == 0;
	if (!x->rootfs_layer && fs->n_layers == 0)
		return sbx_err_set(
		    err, 0, "sandbox '%s' has exited and kept no writable layer: nothing to enter",
		    x->sb.id);
	if (!up && fs->n_layers > 0)
		up = fs->layers[0].upper;
	r = layer_prefix(x, up ? up : "upper", &name, err);
	if (r < 0)
		return r;
	if (x->rootfs_layer &&
	    (!layer_has(x->sb.dirfd, name, "upper") || !layer_has(x->sb.dirfd, name, "work")))
		return sbx_err_set(err, 0, "the writable layer of sandbox '%s' is gone", x->sb.id);
	for (size_t i = 0; i < fs->n_layers; i++) {
		const char *u = fs->layers[i].upper;
		char *base;
		bool ok;

		if (!u || strncmp(u, name ? name : "", name ? strlen(name) : 0) != 0)
			continue;
		if (!strchr(u, '/'))
			continue; /* "upper": the image root's, checked above */
		base = sbx_xstrdup(u);
		*strrchr(base, '/') = '\0';
		ok = layer_has(x->sb.dirfd, base, "upper") && layer_has(x->sb.dirfd, base, "work");
		free(base);
		if (!ok)
			return sbx_err_set(
			    err, 0, "the writable layer '%s' of sandbox '%s' is gone", u, x->sb.id);
	}
	x->layer_dir = name ? sbx_xasprintf("%s/%s", x->sb.dir, name) : sbx_xstrdup(x->sb.dir);
	return 0;
}

static int lock_it(struct exec_ctx *x, struct sbx_err *err)
{
	struct stat st;
	int r = sbx_sandbox_lock(&x->sb, false, err);

	if (r == -EWOULDBLOCK || r == -EAGAIN)
		return sbx_err_set(err, 0,
				   "sandbox '%s' is in use (another command holds "
				   "its lock)",
				   x->sb.id);
	if (r < 0)
		return r;
	/* Destroyed between finding and locking it? */
	if (fstatat(x->sb.dirfd, "record.json", &st, AT_SYMLINK_NOFOLLOW) < 0)
		return sbx_err_set(err, 0, "sandbox '%s' was removed", x->sb.id);
	return 0;
}

static int rootfs_dir(struct exec_ctx *x, const char **dir, struct sbx_err *err)
{
	const char *spec = x->sb.rec.rootfs.spec;
	struct stat st;

	*dir = NULL;
	if (!spec || !strcmp(spec, "host"))
		return 0;
	*dir = x->sb.rec.rootfs.dir;
	if (!*dir || (*dir)[0] != '/')
		return sbx_err_set(err, 0,
				   "the record of sandbox '%s' names no image "
				   "directory",
				   x->sb.id);
	if (stat(*dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return sbx_err_set(err, 0,
				   "the image of sandbox '%s' ('%s') is gone from "
				   "the cache",
				   x->sb.id, *dir);
	return 0;
}

static int prepare(struct exec_ctx *x, struct sbx_jail_opts *o, struct sbx_err *err)
{
	struct sbx_enter_record er;
	const struct sbx_config *cfg = &x->cfg;
	int r;

	sbx_record_enter(&x->sb.rec, &er);
	r = lock_it(x, err);
	/* Layers in an image of their own: mounted for this exec only. */
	if (r == 0)
		r = sbx_disk_attach_kept(x->sb.dirfd, x->sb.dir, 0, 0, true, err);
	if (r == 0)
		r = check_layer(x, err);
	/* A run whose overlays were "volatile" leaves a marker that forbids
	 * mounting them again until it is settled (it normally is). */
	if (r == 0)
		r = sbx_jail_layers_settle(x->layer_dir, cfg, x->rootfs_layer, err);
	o->sandbox_dir = x->layer_dir;
	/* An unprivileged [limits] disk: the new jail's layers are capped the
	 * same way, on a tmpfs filled from disk/ and copied back after. */
	if (r == 0 && x->sb.rec.policy.filesystem.layers_in_memory) {
		int64_t v = x->sb.rec.policy.disk;

		/* the cap the run had (the record's), else the profile's */
		o->layer_tmpfs = v > 0 ? (uint64_t)v
				 : cfg->disk != SBX_UNSET && cfg->disk != SBX_DISK_NO_CAP
				     ? cfg->disk
				     : SBX_LAYER_MEMORY_DEFAULT;
		o->layer_tmpfs_fill = true;
	}
	if (r == 0)
		r = rootfs_dir(x, &o->rootfs_dir, err);
	if (r == 0)
		r = sbx_enter_ids(cfg, &er, -1, &o->ids, err);
	if (r == 0 &&
	    (cfg->memory != SBX_UNSET || cfg->pids != SBX_UNSET || cfg->cpus_milli != SBX_UNSET))
		r = sbx_cgroup_create(&x->cg, x->sb.id, cfg, err);
	if (r < 0)
		return r;
	exec_build_env(cfg, &x->sb.rec, &o->ids, x->args.tty, false, &x->env);
	o->envp = x->env.v;
	exec_workdir(&x->args, cfg, &x->sb.rec, &o->workdir, &o->host_cwd);
	if (x->args.tty)
		sbx_jail_term_of_caller(&o->term);
	return 0;
}

/* The new jail's in-memory layer (layer_tmpfs) back over disk/. */
static void keep_memory_layer(struct exec_ctx *x, const struct sbx_jail_ids *ids)
{
	struct sbx_err e = {0};

	if (x->jail.layer_fd >= 0 && sbx_jail_keep_layers_as(&x->jail, ids, x->layer_dir, &x->cfg,
							     x->rootfs_layer, true, &e) < 0) {
		sbx_err_wrap(&e, "the changes of this exec were not kept");
		sbx_print_err(&e);
	}
}

int exec_kept(struct exec_ctx *x, struct sbx_err *err)
{
	struct sbx_jail_opts o = {.cfg = &x->cfg,
				  .id = x->sb.id,
				  .argv = x->args.argv,
				  .cg = &x->cg,
				  .out_fd = -1,
				  .err_fd = -1,
				  .tty = x->args.tty,
				  .seccomp = &x->filter};
	int out[2] = {-1, -1}, errp[2] = {-1, -1};
	struct sbx_err e2 = {0};
	int r;

	r = prepare(x, &o, err);
	if (r == 0)
		r = sbx_run_stdio_pipes(x->args.tty, out, errp, err);
	o.out_fd = out[1];
	o.err_fd = errp[1] >= 0 ? errp[1] : out[1];
	if (r == 0)
		r = sbx_jail_start(&x->jail, &o, err);
	if (r < 0) {
		sbx_closep(&out[0]);
		sbx_closep(&out[1]);
		sbx_closep(&errp[0]);
		sbx_closep(&errp[1]);
	} else {
		x->mode = "new jail";
		r = exec_run_supervised(&x->jail, out, errp, NULL, err);
		keep_memory_layer(x, &o.ids);
	}
	if (x->cg.version > 0 && sbx_cgroup_destroy(&x->cg, &e2) < 0)
		sbx_print_err(&e2);
	return r;
}
