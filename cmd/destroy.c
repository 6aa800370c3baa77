/* SPDX-License-Identifier: MIT */
/* cmd/destroy.c - sbx destroy: kill and remove sandboxes. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "fault.h"
#include "lifecycle.h"

const char sbx_usage_destroy[] =
    "usage: sbx destroy SANDBOX...\n"
    "       sbx destroy --all | --stale\n"
    "\n"
    "Kill and remove sandboxes: a running sandbox's whole pid namespace and\n"
    "cgroup are killed, whatever is still mounted under its directory is\n"
    "unmounted, its cgroup, name and state directory are removed (never\n"
    "following a symlink its jail planted). Prints one line per sandbox.\n"
    "Destroying a sandbox id that is already gone succeeds.\n"
    "\n"
    "  --all     every sandbox, running or not\n"
    "  --stale   lost sandboxes only (sbx was killed while they ran), plus\n"
    "            leftovers without a valid record\n";

struct destroy_opts {
	bool all, stale;
	char **refs;
	int n_refs;
};

static int parse_opts(struct sbx_cmd_ctx *ctx, int argc, char **argv, struct destroy_opts *o)
{
	static const struct option longopts[] = {
	    {"all", no_argument, NULL, 'A'},
	    {"stale", no_argument, NULL, 'S'},
	    {NULL, 0, NULL, 0},
	};
	int c;

	memset(o, 0, sizeof(*o));
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
		switch (c) {
		case 'A':
			o->all = true;
			break;
		case 'S':
			o->stale = true;
			break;
		default:
			return sbx_cmd_bad_option(ctx, "destroy", c, argv[optind - 1], longopts);
		}
	}
	o->refs = argv + optind;
	o->n_refs = argc - optind;
	if ((o->all || o->stale) == (o->n_refs > 0) || (o->all && o->stale)) {
		sbx_err_set(&ctx->err, 0,
			    "give sandboxes, or --all, or --stale (see 'sbx destroy --help')");
		return SBX_EXIT_USAGE;
	}
	return 0;
}

static void say(const struct sbx_sandbox *sb, const char *state, const struct sbx_teardown *t)
{
	_cleanup_free_ char *name = sb->name ? sbx_escape_display(sb->name) : NULL;

	printf("removed %s%s%s%s (%s", sb->id, name ? " (" : "", name ? name : "", name ? ")" : "",
	       state);
	if (t->killed_init)
		printf(", jail killed");
	if (t->killed_supervisor)
		printf(", supervisor killed");
	if (t->n_unmounted)
		printf(", %zu mount%s detached", t->n_unmounted, t->n_unmounted == 1 ? "" : "s");
	if (t->cgroup_removed)
		printf(", cgroup removed");
	printf(")\n");
}

/*
 * "lost" comes from the record read first and the lock tried after: a run
 * that ended in between (its last record written, then its lock let go)
 * looks lost, and --stale would remove a sandbox just kept.  Under the
 * lock the record, read again, says what the sandbox is.
 */
static bool still_lost(struct sbx_sandbox *sb)
{
	const char *s;

	if (sbx_sandbox_lock(sb, false, NULL) < 0)
		return false; /* held again: someone is at it */
	sbx_sandbox_reload(sb);
	if (!sb->record)
		return true; /* died before its first record */
	s = sb->rec.state;
	return !s || strcmp(s, "running") == 0 || strcmp(s, "created") == 0 ||
	       strcmp(s, "lost") == 0;
}

static int destroy_id(struct sbx_state *st, const char *id, bool only_stale)
{
	struct sbx_sandbox sb;
	struct sbx_teardown t;
	struct sbx_err err = {0};
	char state[64];
	int r;

	r = sbx_sandbox_open(st, id, false, &sb, &err);
	if (r == -ENOENT) {
		printf("%s: already gone\n", id);
		return 0;
	}
	if (r < 0) {
		sbx_print_err(&err);
		return -1;
	}
	sbx_fault_pause("destroy-after-read");
	lc_state_label(&sb, state, sizeof(state));
	if (only_stale && strcmp(state, "lost") != 0 && strcmp(state, "unknown") != 0) {
		sbx_sandbox_close(&sb);
		return 1; /* not stale: left alone */
	}
	if (only_stale && strcmp(state, "unknown") == 0 && sbx_sandbox_lock_held(&sb)) {
		sbx_sandbox_close(&sb);
		return 1; /* no record yet but someone holds it: being set up */
	}
	if (only_stale && strcmp(state, "lost") == 0 && !still_lost(&sb)) {
		sbx_sandbox_close(&sb);
		return 1; /* it ended while we looked: kept, not lost */
	}
	r = sbx_sandbox_destroy(st, &sb, &t, &err);
	if (r < 0)
		sbx_print_err(&err);
	else
		say(&sb, state, &t);
	sbx_sandbox_close(&sb);
	return r < 0 ? -1 : 0;
}

int cmd_destroy(struct sbx_cmd_ctx *ctx, int argc, char **argv)
{
	struct sbx_state *st;
	struct sbx_err err = {0};
	struct sbx_strv ids = {0}, gone = {0};
	struct destroy_opts o;
	int failed = 0, removed = 0, rc;

	rc = parse_opts(ctx, argc, argv, &o);
	if (rc != 0)
		return rc;
	st = sbx_cmd_state(ctx, &err);
	if (!st)
		return sbx_cmd_fail(ctx, &err, SBX_EXIT_FAIL);

	if (o.all || o.stale)
		sbx_state_purgers_wait(st); /* nothing at work behind them after */
	if (o.n_refs) {
		for (int i = 0; i < o.n_refs; i++) {
			char id[SBX_ID_LEN + 1];

			int r = sbx_sandbox_find(st, o.refs[i], id, &err);

			if (r < 0) {
				/* Idempotent: a full id that no longer exists was
				 * destroyed already; a name or prefix that matches
				 * nothing has nothing to destroy (said, exit 0). */
				if (r == -ENOENT) {
					_cleanup_free_ char *e = sbx_escape_display(o.refs[i]);

					if (sbx_state_valid_id(o.refs[i]))
						printf("%s: already gone\n", e);
					else
						printf("%s: no such sandbox, nothing to destroy\n",
						       e);
					continue;
				}
				sbx_print_err(&err);
				failed++;
				continue;
			}
			if (sbx_strv_contains(&ids, id))
				continue;
			sbx_strv_push(&ids, id);
		}
	} else if (sbx_sandbox_list(st, &ids, &err) < 0) {
		sbx_print_err(&err);
		failed++;
	}
	for (size_t i = 0; i < ids.n; i++) {
		int r = destroy_id(st, ids.v[i], o.stale);

		if (r < 0)
			failed++;
		else if (r == 0)
			removed++;
	}
	if (o.all)
		sbx_state_ready_clear(st);
	if (o.all || o.stale) {
		sbx_state_gc(st, &gone, &err);
		for (size_t i = 0; i < gone.n; i++) {
			_cleanup_free_ char *e = sbx_escape_display(gone.v[i]);

			printf("removed %s\n", e);
		}
		if (!removed && !gone.n && !failed)
			printf("nothing to remove\n");
	}
	sbx_strv_free(&ids);
	sbx_strv_free(&gone);
	fflush(stdout);
	return failed ? SBX_EXIT_FAIL : SBX_EXIT_OK;
}
