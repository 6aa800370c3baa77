/* SPDX-License-Identifier: MIT */
/*
 * lib/review/patch.c - `sbx diff`: the change set as a git-style patch.
 *
 * The host's and the sandbox's versions of the changed paths only (nothing
 * else is read) go into two trees of an in-memory repository (libgit2's
 * mempack object database); libgit2 diffs the trees and writes the patch,
 * --stat or --name-only, so the headers, modes, symlinks and binary
 * patches are git's own and `git apply` takes them.
 */
#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <git2/sys/mempack.h>
#include <git2/sys/repository.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "review_int.h"

/* Larger files are not read into the patch (a diff of a 1 GiB file is no
 * review); they are named as too large. */
#define PATCH_FILE_MAX (256u << 20)

char *sbx_review_read(int root, const char *rel, bool link, size_t *len)
{
	const char *name = NULL;
	_cleanup_close_ int dfd = sbx_review_dirfd(root, rel, true, &name);
	_cleanup_close_ int fd = -1;
	char *buf = NULL;
	int r;

	*len = 0;
	if (dfd < 0) {
		errno = -dfd;
		return NULL;
	}
	if (link) {
		char t[4096];
		ssize_t n = readlinkat(dfd, name, t, sizeof(t));

		if (n < 0)
			return NULL;
		*len = (size_t)n;
		buf = sbx_xmalloc((size_t)n + 1);
		memcpy(buf, t, (size_t)n);
		buf[n] = '\0';
		return buf;
	}
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	r = sbx_read_fd_string(fd, PATCH_FILE_MAX, &buf, len);
	if (r < 0) {
		errno = -r;
		return NULL;
	}
	return buf;
}

struct repo {
	git_repository *repo;
	git_odb *odb;
	git_index *old, *new;
};

static void repo_free(struct repo *g)
{
	if (g->old)
		git_index_free(g->old);
	if (g->new)
		git_index_free(g->new);
	if (g->repo)
		git_repository_free(g->repo);
	if (g->odb)
		git_odb_free(g->odb);
}

static int repo_open(struct repo *g, struct sbx_err *err)
{
	git_odb_backend *mem = NULL;

	memset(g, 0, sizeof(*g));
	if (git_libgit2_init() < 0 || git_odb_new(&g->odb) < 0 || git_mempack_new(&mem) < 0 ||
	    git_odb_add_backend(g->odb, mem, 1) < 0 || git_repository_new(&g->repo) < 0 ||
	    git_repository_set_odb(g->repo, g->odb) < 0 || git_index_new(&g->old) < 0 ||
	    git_index_new(&g->new) < 0)
		return sbx_err_set(err, 0, "cannot make the diff: %s", sbx_git_error());
	return 0;
}

static uint32_t git_mode(mode_t m)
{
	if (S_ISLNK(m))
		return GIT_FILEMODE_LINK;
	return m & 0111 ? GIT_FILEMODE_BLOB_EXECUTABLE : GIT_FILEMODE_BLOB;
}

/* One side of one path: its blob in the index. */
static int add_side(struct repo *g, git_index *idx, int root, const struct sbx_review_entry *e,
		    mode_t mode, struct sbx_err *err)
{
	git_index_entry ie;
	size_t len = 0;
	char *buf = sbx_review_read(root, e->rel, S_ISLNK(mode), &len);
	int rc;

	if (!buf)
		return sbx_err_set(err, errno, "cannot read '%s'%s", e->shown,
				   errno == EFBIG ? " (larger than 256 MiB)" : "");
	memset(&ie, 0, sizeof(ie));
	rc = git_blob_create_from_buffer(&ie.id, g->repo, buf, len);
	free(buf);
	ie.mode = git_mode(mode);
	ie.path = e->shown;
	ie.file_size = (uint32_t)len;
	if (rc == 0)
		rc = git_index_add(idx, &ie);
	if (rc < 0)
		return sbx_err_set(err, 0, "cannot add '%s' to the diff: %s", e->shown,
				   sbx_git_error());
	return 0;
}

/* The paths a patch holds: files and symlinks; what apply refuses is
 * named there, not here; .git/ only with --git-dir. */
static bool in_patch(const struct sbx_review_entry *e, const struct sbx_diff_opts *o)
{
	if (e->refused || ((e->flags & SBX_FLAG_GIT_DIR) && !o->git_dir))
		return false;
	return S_ISREG(e->old_mode) || S_ISLNK(e->old_mode) || S_ISREG(e->new_mode) ||
	       S_ISLNK(e->new_mode);
}

static int build(const struct sbx_review *r, const struct sbx_diff_opts *o, struct repo *g,
		 struct sbx_err *err)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct sbx_review_entry *e = &r->e[i];
		const struct sbx_review_overlay *ov = &r->ov[e->ov];
		int rc = 0;

		if (!in_patch(e, o))
			continue;
		if (S_ISREG(e->old_mode) || S_ISLNK(e->old_mode))
			rc = add_side(g, g->old, ov->host_fd, e, e->old_mode, err);
		if (rc == 0 && e->kind != 'D' && (S_ISREG(e->new_mode) || S_ISLNK(e->new_mode)))
			rc = add_side(g, g->new, ov->upper_fd, e, e->new_mode, err);
		if (rc < 0)
			return rc;
	}
	return 0;
}

struct printer {
	FILE *out;
	bool color, shown;
	int rc;
};

/*
 * s[0..n) on out; with shown (out is the reviewer's terminal) what the jail
 * wrote cannot act on the terminal: every control character but tab and
 * newline (escape sequences: a title set, a screen clear, a status request
 * the terminal answers by typing into the reviewer's input), DEL, C1
 * controls and bytes that are not UTF-8 are written as \xNN.  Into a pipe
 * the patch stays exact.
 */
static void put_shown(FILE *out, const char *s, size_t n, bool shown)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t run = 0;

	if (!shown) {
		fwrite(s, 1, n, out);
		return;
	}
	for (size_t i = 0; i < n;) {
		size_t k = 1;
		bool ok;

		if (p[i] >= 0x80) {
			k = (p[i] & 0xe0) == 0xc0   ? 2
			    : (p[i] & 0xf0) == 0xe0 ? 3
			    : (p[i] & 0xf8) == 0xf0 ? 4
						    : 1;
			ok = k > 1 && i + k <= n && sbx_utf8_valid(s + i, k) &&
			     !(k == 2 && p[i] == 0xc2 && p[i + 1] < 0xa0);
			if (!ok)
				k = 1;
		} else {
			ok = p[i] == '\n' || p[i] == '\t' || (p[i] >= 0x20 && p[i] != 0x7f);
		}
		if (ok) {
			run += k;
			i += k;
			continue;
		}
		fwrite(s + i - run, 1, run, out);
		run = 0;
		fprintf(out, "\\x%02x", p[i]);
		i++;
	}
	fwrite(s + n - run, 1, run, out);
}

/*
 * A file header as git writes it: a "--- a/NAME" or "+++ b/NAME" line whose
 * name has a space ends with a tab, so that GNU patch, which takes a name
 * up to the first space otherwise, reads all of it (git apply ignores it).
 */
static void put_header(FILE *out, const char *s, size_t len, bool shown)
{
	const char *end = s + len;

	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
		bool name = n > 4 && (!strncmp(s, "--- ", 4) || !strncmp(s, "+++ ", 4)) &&
			    s[4] != '"' && memchr(s + 4, ' ', n - 4);

		put_shown(out, s, n, shown);
		if (name)
			fputc('\t', out);
		if (nl)
			fputc('\n', out);
		s += n + (nl != NULL);
	}
}

static int print_line(const git_diff_delta *d, const git_diff_hunk *h, const git_diff_line *l,
		      void *data)
{
	struct printer *p = data;
	const char *c = NULL;

	(void)d;
	(void)h;
	if (p->color) {
		switch (l->origin) {
		case GIT_DIFF_LINE_ADDITION:
			c = "\033[32m";
			break;
		case GIT_DIFF_LINE_DELETION:
			c = "\033[31m";
			break;
		case GIT_DIFF_LINE_HUNK_HDR:
			c = "\033[36m";
			break;
		case GIT_DIFF_LINE_FILE_HDR:
			c = "\033[1m";
			break;
		default:
			break;
		}
	}
	if (c)
		fputs(c, p->out);
	if (l->origin == GIT_DIFF_LINE_FILE_HDR) {
		put_header(p->out, l->content, l->content_len, p->shown);
		if (c)
			fputs("\033[m", p->out);
		return ferror(p->out) ? (p->rc = -EIO, -1) : 0;
	}
	if (l->origin == GIT_DIFF_LINE_CONTEXT || l->origin == GIT_DIFF_LINE_ADDITION ||
	    l->origin == GIT_DIFF_LINE_DELETION)
		fputc(l->origin, p->out);
	put_shown(p->out, l->content, l->content_len, p->shown);
	if (c)
		fputs("\033[m", p->out);
	if (ferror(p->out)) {
		p->rc = -EIO;
		return -1;
	}
	return 0;
}

static int diff_trees(struct repo *g, const struct sbx_diff_opts *o, FILE *out, struct sbx_err *err)
{
	git_oid a, b;
	git_tree *ta = NULL, *tb = NULL;
	git_diff *d = NULL;
	git_diff_options dopts;
	struct printer p = {.out = out, .color = o->color, .shown = o->shown};
	int rc = -1;

	if (git_index_write_tree_to(&a, g->old, g->repo) < 0 ||
	    git_index_write_tree_to(&b, g->new, g->repo) < 0 ||
	    git_tree_lookup(&ta, g->repo, &a) < 0 || git_tree_lookup(&tb, g->repo, &b) < 0 ||
	    git_diff_options_init(&dopts, GIT_DIFF_OPTIONS_VERSION) < 0)
		goto fail;
	if (o->binary)
		dopts.flags |= GIT_DIFF_SHOW_BINARY;
	if (git_diff_tree_to_tree(&d, g->repo, ta, tb, &dopts) < 0)
		goto fail;
	if (o->format == SBX_DIFF_STAT) {
		git_diff_stats *st = NULL;
		git_buf buf = {0};

		if (git_diff_get_stats(&st, d) < 0 ||
		    git_diff_stats_to_buf(&buf, st, GIT_DIFF_STATS_FULL, 80) < 0) {
			if (st)
				git_diff_stats_free(st);
			goto fail;
		}
		put_shown(out, buf.ptr, buf.size, o->shown);
		git_buf_dispose(&buf);
		git_diff_stats_free(st);
		rc = 0;
	} else {
		rc = git_diff_print(d,
				    o->format == SBX_DIFF_NAME_ONLY ? GIT_DIFF_FORMAT_NAME_ONLY
								    : GIT_DIFF_FORMAT_PATCH,
				    print_line, &p);
		if (p.rc < 0)
			rc = sbx_err_set(err, EIO, "cannot write the diff");
		else if (rc < 0)
			goto fail;
	}
	git_diff_free(d);
	git_tree_free(ta);
	git_tree_free(tb);
	return rc;
fail:
	if (d)
		git_diff_free(d);
	if (ta)
		git_tree_free(ta);
	if (tb)
		git_tree_free(tb);
	return sbx_err_set(err, 0, "cannot make the diff: %s", sbx_git_error());
}

int sbx_review_diff(const struct sbx_review *r, const struct sbx_diff_opts *o, FILE *out,
		    struct sbx_err *err)
{
	struct repo g;
	int rc = repo_open(&g, err);

	if (rc == 0)
		rc = build(r, o, &g, err);
	if (rc == 0)
		rc = diff_trees(&g, o, out, err);
	repo_free(&g);
	if (rc == 0 && fflush(out) != 0)
		rc = sbx_err_set(err, errno, "cannot write the diff");
	return rc;
}
