/* SPDX-License-Identifier: MIT */
/* lib/state/state_find.c - listing sandboxes and resolving SANDBOX (id, prefix, name). */
#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "state.h"
#include "state_int.h"

/* ---- lookup ---- */

struct entry {
	char id[SBX_ID_LEN + 1];
	struct timespec t;
};

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->t.tv_sec != y->t.tv_sec)
		return x->t.tv_sec < y->t.tv_sec ? -1 : 1;
	if (x->t.tv_nsec != y->t.tv_nsec)
		return x->t.tv_nsec < y->t.tv_nsec ? -1 : 1;
	return strcmp(x->id, y->id);
}

/* Creation time of a sandbox: its lock file's birth (or change) time. */
static void sandbox_time(int sfd, const char *id, struct timespec *t)
{
	struct statx sx;
	_cleanup_free_ char *p = sbx_xasprintf("%s/lock", id);

	memset(t, 0, sizeof(*t));
	if (statx(sfd, p, AT_SYMLINK_NOFOLLOW, STATX_BTIME | STATX_CTIME, &sx) < 0 &&
	    statx(sfd, id, AT_SYMLINK_NOFOLLOW, STATX_BTIME | STATX_CTIME, &sx) < 0)
		return;
	if (sx.stx_mask & STATX_BTIME) {
		t->tv_sec = sx.stx_btime.tv_sec;
		t->tv_nsec = sx.stx_btime.tv_nsec;
	} else {
		t->tv_sec = sx.stx_ctime.tv_sec;
		t->tv_nsec = sx.stx_ctime.tv_nsec;
	}
}

int sbx_sandbox_list(struct sbx_state *st, struct sbx_strv *ids, struct sbx_err *err)
{
	struct entry *e = NULL;
	size_t n = 0;
	DIR *d;
	struct dirent *de;
	int fd;

	if (st->sandboxes_fd < 0)
		return 0;
	fd = openat(st->sandboxes_fd, ".", SBX_DIR_FLAGS);
	if (fd < 0 || !(d = fdopendir(fd))) {
		int r = sbx_err_set(err, errno, "cannot list '%s/sandboxes'", st->state_dir);
		if (fd >= 0)
			close(fd);
		return r;
	}
	while ((de = readdir(d))) {
		if (!sbx_state_valid_id(de->d_name))
			continue;
		e = sbx_xrealloc(e, (n + 1) * sizeof(*e));
		memcpy(e[n].id, de->d_name, SBX_ID_LEN + 1);
		sandbox_time(st->sandboxes_fd, de->d_name, &e[n].t);
		n++;
	}
	closedir(d);
	if (n)
		qsort(e, n, sizeof(*e), cmp_entry);
	for (size_t i = 0; i < n; i++)
		sbx_strv_push(ids, e[i].id);
	free(e);
	return 0;
}

/* A name whose names/ file is missing: the records say (slow path). */
static bool find_name_in_records(struct sbx_state *st, const struct sbx_strv *ids, const char *name,
				 char id_out[SBX_ID_LEN + 1])
{
	for (size_t i = 0; i < ids->n; i++) {
		struct sbx_sandbox sb;
		bool hit;

		if (sbx_sandbox_open(st, ids->v[i], false, &sb, NULL) < 0)
			continue;
		hit = sb.name && strcmp(sb.name, name) == 0;
		sbx_sandbox_close(&sb);
		if (hit) {
			memcpy(id_out, ids->v[i], SBX_ID_LEN + 1);
			return true;
		}
	}
	return false;
}

int sbx_sandbox_find(struct sbx_state *st, const char *ref, char id_out[SBX_ID_LEN + 1],
		     struct sbx_err *err)
{
	struct sbx_strv ids = {0}, hits = {0};
	_cleanup_free_ char *esc = sbx_escape_display(ref);
	size_t rl = strlen(ref);
	int r;

	if (!*ref) {
		sbx_err_set(err, 0, "empty sandbox reference");
		return -ENOENT;
	}
	if (sbx_state_valid_id(ref) && sbx_state_sandbox_exists(st, ref)) {
		memcpy(id_out, ref, SBX_ID_LEN + 1);
		return 0;
	}
	if (sbx_state_check_name(ref, NULL) == 0 && sbx_state_read_name(st, ref, id_out) == 0 &&
	    sbx_state_sandbox_exists(st, id_out))
		return 0;
	r = sbx_sandbox_list(st, &ids, err);
	if (r < 0)
		return r;
	if (sbx_state_check_name(ref, NULL) == 0 && find_name_in_records(st, &ids, ref, id_out)) {
		sbx_strv_free(&ids);
		return 0;
	}
	for (size_t i = 0; i < ids.n && rl < SBX_ID_LEN; i++)
		if (strncmp(ids.v[i], ref, rl) == 0)
			sbx_strv_push(&hits, ids.v[i]);
	sbx_strv_free(&ids);
	if (hits.n == 1) {
		memcpy(id_out, hits.v[0], SBX_ID_LEN + 1);
		sbx_strv_free(&hits);
		return 0;
	}
	if (hits.n == 0) {
		sbx_err_set(err, 0, "no such sandbox '%s'", esc);
		return -ENOENT; /* errnum 0: the message says it all */
	}
	char list[512] = "";
	size_t o = 0;
	for (size_t i = 0; i < hits.n && o + SBX_ID_LEN + 8 < sizeof(list); i++)
		o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s", i ? ", " : "", hits.v[i]);
	if (o + SBX_ID_LEN + 8 >= sizeof(list))
		snprintf(list + o, sizeof(list) - o, ", ...");
	sbx_err_set(err, 0, "sandbox prefix '%s' is ambiguous: %zu sandboxes match (%s)", esc,
		    hits.n, list);
	sbx_strv_free(&hits);
	return -ENOTUNIQ;
}
