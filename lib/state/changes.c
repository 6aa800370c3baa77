/* SPDX-License-Identifier: MIT */
/* lib/state/changes.c - the change set of an overlay upper dir (see changes.h). */
#include "changes.h"

#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

#include "disk.h"
#include "log.h"

#define UDIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

/* dfd/path, never through a symlink nor out of dfd (sbx_open_beneath,
 * with its fallback where openat2 is missing): a directory, or -errno. */
static int openat2_beneath(int dfd, const char *path, int flags)
{
	int fd = sbx_open_beneath(dfd, path, flags | O_DIRECTORY);

	return fd < 0 ? -errno : fd;
}

int sbx_changes_open_dir(int dfd, const char *path)
{
	return openat2_beneath(dfd, path, O_RDONLY | O_DIRECTORY);
}

/* Read xattr `name` of dfd/entry without following it (a single component). */
static ssize_t xattr_at(int dfd, const char *entry, const char *name, char *buf, size_t len)
{
	char p[64 + 256];

	if (strlen(entry) > 255)
		return -1;
	snprintf(p, sizeof(p), "/proc/self/fd/%d/%s", dfd, entry);
	return lgetxattr(p, name, buf, len);
}

static bool xattr_check(ssize_t n, const char *buf, const char *want)
{

	if (n < 0)
		return false;
	return want == NULL || ((size_t)n == strlen(want) && memcmp(buf, want, (size_t)n) == 0);
}

static bool is_whiteout(int dfd, const char *name, const struct stat *st)
{
	if (S_ISCHR(st->st_mode) && st->st_rdev == makedev(0, 0))
		return true;
	if (S_ISDIR(st->st_mode) || S_ISLNK(st->st_mode) || !S_ISREG(st->st_mode) || st->st_size)
		return false;
	char buf[8];

	return xattr_check(xattr_at(dfd, name, "trusted.overlay.whiteout", buf, sizeof(buf)), buf,
			   NULL) ||
	       xattr_check(xattr_at(dfd, name, "user.overlay.whiteout", buf, sizeof(buf)), buf,
			   NULL);
}

static bool is_opaque(int fd)
{
	char buf[8];

	return xattr_check(fgetxattr(fd, "trusted.overlay.opaque", buf, sizeof(buf)), buf, "y") ||
	       xattr_check(fgetxattr(fd, "user.overlay.opaque", buf, sizeof(buf)), buf, "y");
}

struct wlevel {
	char *name; /* in the parent */
	dev_t udev;
	ino_t uino;
	int lfd; /* lower dir for this level, or -1 */
	struct sbx_strv names;
	size_t next;
	size_t path_len, rel_len;
};

struct walk {
	int ufd;
	char *path, *rel;
	size_t path_cap, rel_cap;
	struct wlevel *lv;
	size_t depth, cap;
	size_t errors;
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int list_dir(int fd, struct sbx_strv *out)
{
	int dfd = openat(fd, ".", UDIR_FLAGS);
	struct dirent *de;
	DIR *d;

	if (dfd < 0)
		return -errno;
	d = fdopendir(dfd);
	if (!d) {
		int e = errno;
		close(dfd);
		return -e;
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			sbx_strv_push(out, de->d_name);
	closedir(d);
	if (out->n)
		qsort(out->v, out->n, sizeof(char *), cmp_str);
	return 0;
}

static void buf_set(char **buf, size_t *cap, size_t at, const char *sep, const char *name)
{
	size_t need = at + strlen(sep) + strlen(name) + 1;

	if (need > *cap) {
		*cap = need * 2;
		*buf = sbx_xrealloc(*buf, *cap);
	}
	(*buf)[at] = '\0';
	strcat(*buf + at, sep);
	strcat(*buf + at, name);
}

/* Enter directory cfd (already opened, identity st) as the next level. */
static void push_level(struct walk *w, int cfd, const struct stat *st, const char *name, int lfd)
{
	struct wlevel *l;

	if (w->depth + 1 >= w->cap) {
		w->cap = w->cap ? w->cap * 2 : 16;
		w->lv = sbx_xrealloc(w->lv, w->cap * sizeof(*w->lv));
	}
	if (w->ufd >= 0)
		close(w->ufd);
	w->ufd = cfd;
	l = &w->lv[name ? ++w->depth : 0];
	memset(l, 0, sizeof(*l));
	l->name = sbx_xstrdup(name);
	l->udev = st->st_dev;
	l->uino = st->st_ino;
	l->lfd = lfd;
	l->path_len = strlen(w->path);
	l->rel_len = strlen(w->rel);
	if (list_dir(cfd, &l->names) < 0)
		w->errors++;
}

/* Leave the current level: back to the parent through a verified "..". */
static int pop_level(struct walk *w)
{
	struct wlevel *l = &w->lv[w->depth], *p = &w->lv[w->depth - 1];
	struct stat st;
	int pfd = openat(w->ufd, "..", UDIR_FLAGS);

	if (pfd < 0 || fstat(pfd, &st) < 0 || st.st_dev != p->udev || st.st_ino != p->uino) {
		if (pfd >= 0)
			close(pfd);
		return -ESTALE; /* the tree moved under us */
	}
	close(w->ufd);
	w->ufd = pfd;
	free(l->name);
	sbx_strv_free(&l->names);
	if (l->lfd >= 0)
		close(l->lfd);
	w->depth--;
	w->path[p->path_len] = '\0';
	w->rel[p->rel_len] = '\0';
	return 0;
}

/* Visit one entry of the current level; maybe descend into it. */
static int visit(struct walk *w, const char *name, sbx_change_fn fn, void *data)
{
	struct wlevel *l = &w->lv[w->depth];
	struct sbx_change c = {0};
	struct stat st, lst;
	bool in_lower = false;
	int cfd = -1, r;

	if (fstatat(w->ufd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : (w->errors++, 0);
	buf_set(&w->path, &w->path_cap, l->path_len, "/", name);
	buf_set(&w->rel, &w->rel_cap, l->rel_len, l->rel_len ? "/" : "", name);
	if (l->lfd >= 0 && fstatat(l->lfd, name, &lst, AT_SYMLINK_NOFOLLOW) == 0)
		in_lower = true;
	c.path = w->path;
	c.rel = w->rel;
	c.dirfd = w->ufd;
	c.name = name;
	c.st = &st;
	if (S_ISDIR(st.st_mode)) {
		struct stat cst;

		cfd = openat(w->ufd, name, UDIR_FLAGS);
		if (cfd >= 0 &&
		    (fstat(cfd, &cst) < 0 || cst.st_ino != st.st_ino || cst.st_dev != st.st_dev)) {
			close(cfd);
			cfd = -1;
		}
		if (cfd < 0)
			w->errors++;
		c.opaque = cfd >= 0 && is_opaque(cfd);
		c.kind = in_lower ? 'C' : 'A';
	} else {
		c.kind = is_whiteout(w->ufd, name, &st) ? 'D' : in_lower ? 'C' : 'A';
	}
	r = fn(&c, data);
	if (r < 0 || cfd < 0) {
		if (cfd >= 0)
			close(cfd);
		return r;
	}
	int lfd = -1;
	if (in_lower && !c.opaque && S_ISDIR(lst.st_mode)) {
		lfd = openat2_beneath(l->lfd, name, O_RDONLY | O_DIRECTORY);
		if (lfd < 0)
			lfd = -1;
	}
	push_level(w, cfd, &st, name, lfd);
	return 0;
}

int sbx_changes_walk(int upper_fd, int lower_fd, const char *prefix, sbx_change_fn fn, void *data,
		     size_t *n_errors, struct sbx_err *err)
{
	struct walk w = {.ufd = -1};
	struct stat st;
	int top, ltop = -1, r = 0;

	top = openat(upper_fd, ".", UDIR_FLAGS);
	if (top < 0 || fstat(top, &st) < 0) {
		r = sbx_err_set(err, errno, "cannot open the writable layer");
		if (top >= 0)
			close(top);
		return r;
	}
	if (lower_fd >= 0)
		ltop = openat(lower_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (!prefix || strcmp(prefix, "/") == 0)
		prefix = "";
	w.path = sbx_xstrdup(prefix);
	w.path_cap = strlen(prefix) + 1;
	w.rel = sbx_xstrdup("");
	w.rel_cap = 1;
	push_level(&w, top, &st, NULL, ltop);
	for (;;) {
		struct wlevel *l = &w.lv[w.depth];

		if (l->next < l->names.n) {
			r = visit(&w, l->names.v[l->next++], fn, data);
			if (r < 0)
				break;
			continue;
		}
		if (w.depth == 0)
			break;
		r = pop_level(&w);
		if (r < 0) {
			sbx_err_set(err, -r, "the writable layer changed while it was read");
			break;
		}
	}
	for (size_t i = 0; i <= w.depth; i++) {
		free(w.lv[i].name);
		sbx_strv_free(&w.lv[i].names);
		if (w.lv[i].lfd >= 0)
			close(w.lv[i].lfd);
	}
	free(w.lv);
	free(w.path);
	free(w.rel);
	if (w.ufd >= 0)
		close(w.ufd);
	if (n_errors)
		*n_errors += w.errors;
	return r;
}

/* ---- layers of a sandbox ---- */

static void add_layer(const struct sbx_sandbox *sb, struct sbx_layer **ls, size_t *n,
		      const char *target, const char *upper, const char *lower)
{
	struct sbx_layer *l;
	int ufd;

	if (!upper || !target || target[0] != '/')
		return;
	ufd = openat2_beneath(sb->dirfd, upper, O_RDONLY | O_DIRECTORY);
	if (ufd < 0)
		return; /* no writable layer (read-only root, or removed) */
	*ls = sbx_xrealloc(*ls, (*n + 1) * sizeof(**ls));
	l = &(*ls)[(*n)++];
	memset(l, 0, sizeof(*l));
	l->target = sbx_xstrdup(target);
	l->upper_fd = ufd;
	l->lower_fd = -1;
	if (lower && lower[0] == '/') {
		l->lower = sbx_xstrdup(lower);
		l->lower_fd = open(lower, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		l->lower_missing = l->lower_fd < 0;
		l->lower_errno = l->lower_missing ? errno : 0;
	}
}

/* The supervisor's pid when the sandbox is running (its lock held, the
 * record's state "created" or "running"), with its recorded start time;
 * else 0. */
static pid_t running_supervisor(const struct sbx_sandbox *sb, uint64_t *start)
{
	const char *state = sb->rec.state;
	pid_t pid = sb->rec.supervisor_pid;

	*start = sb->rec.supervisor_start;
	if (!state || (strcmp(state, "running") != 0 && strcmp(state, "created") != 0) ||
	    pid <= 0 || !sbx_sandbox_lock_held(sb))
		return 0;
	return pid;
}

int sbx_changes_layers(const struct sbx_sandbox *sb, struct sbx_layer **layers, size_t *n,
		       struct sbx_err *err)
{
	const struct sbx_record_filesystem *fs = &sb->rec.policy.filesystem;
	uint64_t start;
	pid_t sup;

	*layers = NULL;
	*n = 0;
	if (!sb->record)
		return sbx_err_set(err, ENOENT, "sandbox '%s' has no record (%s)", sb->id,
				   sb->record_error ? sb->record_error : "unknown");
	/* Layers in the jail's memory (an unprivileged [limits] disk, --rm,
	 * persist = never) reach disk only when a run that ended is kept. */
	if (fs->layers_in_memory) {
		int code;
		const char *st = sbx_sandbox_state(sb, &code);

		if (!strcmp(st, "running"))
			return sbx_err_set(
			    err, 0,
			    "sandbox '%s' holds its writable layer in memory while "
			    "it runs ([limits] disk, a tmpfs in the jail): its changes "
			    "can be read once it has ended, if it is kept",
			    sb->id);
		if (!strcmp(st, "lost"))
			return sbx_err_set(
			    err, 0,
			    "sandbox '%s' held its writable layer in memory "
			    "([limits] disk, a tmpfs in the jail) and was lost: its changes "
			    "are gone",
			    sb->id);
	}
	/* A kept sandbox's layers in an image of their own: mounted for this
	 * process only. */
	sup = running_supervisor(sb, &start);
	if (sbx_disk_attach_kept(sb->dirfd, sb->dir, sup, start, false, err) < 0)
		return -EPERM;
	if (fs->has_layers) {
		for (size_t i = 0; i < fs->n_layers; i++)
			add_layer(sb, layers, n, fs->layers[i].target, fs->layers[i].upper,
				  fs->layers[i].lower);
		return 0;
	}
	/*
	 * No "layers": the run's layout.  The root layer "upper" over the
	 * image, and overlays/I/upper for policy.filesystem.mounts[I] of kind
	 * "overlay" (its src is the lower, its dst the target).
	 */
	const char *dir = sb->rec.rootfs.dir, *spec = sb->rec.rootfs.spec;

	if (!dir && (!spec || strcmp(spec, "host") == 0))
		dir = "/";
	add_layer(sb, layers, n, "/", "upper", dir);
	for (size_t i = 0; i < fs->n_mounts; i++) {
		const char *kind = fs->mounts[i].kind;
		char upper[64];

		if (!kind || strcmp(kind, "overlay") != 0)
			continue;
		snprintf(upper, sizeof(upper), "overlays/%zu/upper", i);
		add_layer(sb, layers, n, fs->mounts[i].dst, upper, fs->mounts[i].src);
	}
	return 0;
}

void sbx_changes_layers_free(struct sbx_layer *layers, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(layers[i].target);
		free(layers[i].lower);
		if (layers[i].upper_fd >= 0)
			close(layers[i].upper_fd);
		if (layers[i].lower_fd >= 0)
			close(layers[i].lower_fd);
	}
	free(layers);
}

int sbx_changes_walk_sandbox(const struct sbx_sandbox *sb, sbx_change_fn fn, void *data,
			     size_t *n_errors, struct sbx_err *err)
{
	struct sbx_layer *ls = NULL;
	size_t n = 0;
	int r = sbx_changes_layers(sb, &ls, &n, err);

	for (size_t i = 0; r >= 0 && i < n; i++)
		r = sbx_changes_walk(ls[i].upper_fd, ls[i].lower_fd, ls[i].target, fn, data,
				     n_errors, err);
	sbx_changes_layers_free(ls, n);
	return r;
}

/* ---- presentation ---- */

const char *sbx_change_type(const struct sbx_change *c)
{
	mode_t m = c->st->st_mode;

	if (c->kind == 'D')
		return "whiteout";
	return S_ISREG(m)    ? "file"
	       : S_ISDIR(m)  ? "dir"
	       : S_ISLNK(m)  ? "symlink"
	       : S_ISFIFO(m) ? "fifo"
	       : S_ISSOCK(m) ? "socket"
	       : S_ISCHR(m)  ? "chardev"
	       : S_ISBLK(m)  ? "blockdev"
			     : "unknown";
}

char *sbx_base64(const unsigned char *d, size_t len)
{
	static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *out = sbx_xmalloc((len + 2) / 3 * 4 + 1), *o = out;

	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)d[i] << 16;

		if (i + 1 < len)
			v |= (uint32_t)d[i + 1] << 8;
		if (i + 2 < len)
			v |= d[i + 2];
		*o++ = t[(v >> 18) & 63];
		*o++ = t[(v >> 12) & 63];
		*o++ = i + 1 < len ? t[(v >> 6) & 63] : '=';
		*o++ = i + 2 < len ? t[v & 63] : '=';
	}
	*o = '\0';
	return out;
}

json_t *sbx_change_json(const struct sbx_change *c)
{
	char kind[2] = {c->kind, '\0'};
	size_t len = strlen(c->path);
	json_t *j = json_object();

	json_object_set_new(j, "kind", json_string(kind));
	json_object_set_new(j, "path", sbx_json_string_lossy(c->path, len));
	if (!sbx_utf8_valid(c->path, len)) {
		char *b = sbx_base64((const unsigned char *)c->path, len);

		json_object_set_new(j, "path_b64", json_string(b));
		free(b);
	}
	json_object_set_new(j, "type", json_string(sbx_change_type(c)));
	if (c->kind != 'D') {
		char mode[8];

		snprintf(mode, sizeof(mode), "%04o", (unsigned)(c->st->st_mode & 07777));
		json_object_set_new(j, "mode", json_string(mode));
		if (S_ISREG(c->st->st_mode))
			json_object_set_new(j, "size", json_integer((json_int_t)c->st->st_size));
	}
	json_object_set_new(j, "opaque", json_boolean(c->opaque));
	return j;
}
