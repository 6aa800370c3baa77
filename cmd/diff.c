/* SPDX-License-Identifier: MIT */
/*
 * cmd/diff.c - sbx diff and sbx apply: review a sandbox's changes to its
 * copy-on-write host directories as a patch, and write them back
 * (lib/review/review.h).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "lifecycle.h"
#include "log.h"
#include "review.h"
#include "review_ui.h"

const char sbx_usage_diff[] =
    "usage: sbx diff [--stat | --name-only | --json] [--binary] [--git-dir] [--relative]\n"
    "                SANDBOX [PATH...]\n"
    "\n"
    "What the sandbox changed in its copy-on-write host directories (the working\n"
    "directory and $HOME of the default profile, each --overlay), as a git-style\n"
    "patch against the host's current files: `sbx diff SANDBOX | git apply` in\n"
    "the directory applies it.  Paths are relative to that directory; when the\n"
    "changes span several, each path starts with its directory without the\n"
    "leading '/' (the patch applies from /).  With one directory as PATH\n"
    "(`sbx diff work .` in a project under a copy-on-write $HOME), paths are\n"
    "relative to it, as git diff --relative.\n"
    "\n"
    "  --stat        a summary per file, as git diff --stat\n"
    "  --name-only   the paths only\n"
    "  --json        one object per path: kind (A M D T), mode, size, flags\n"
    "  --binary      binary files as git binary patches (for git apply)\n"
    "  --git-dir     changes under .git/ as patch hunks too (listed otherwise)\n"
    "  --relative    only what is below the current directory, paths relative\n"
    "                to it (as git diff --relative)\n"
    "  PATH          only these host paths (files, or directories and below)\n"
    "\n"
    "Flagged on stderr: files that run code on the host later (git hooks and\n"
    "config, CI definitions, editor and agent settings, shell start-up files of\n"
    "a home directory, files that became executable).  Changes to a host\n"
    "directory that was moved or removed since are named there, not shown\n"
    "(exit 1).\n";

const char sbx_usage_apply[] =
    "usage: sbx apply [--dry-run] [--force] [--git-dir] SANDBOX [PATH...]\n"
    "\n"
    "Write what the sandbox changed in its copy-on-write host directories into\n"
    "them: new files, edits, deletions, modes, symlinks, directories (only PATH\n"
    "and below when given), each file written to a temporary name and renamed,\n"
    "owned as the file it replaces (or its directory).  Everything is checked\n"
    "first: a host file changed since the sandbox started is a conflict, and\n"
    "what the jail planted that cannot be applied safely (device nodes, fifos,\n"
    "sockets, hard links, symlinks pointing out) is refused; either writes\n"
    "nothing and exits 1, unless --force.\n"
    "\n"
    "  --dry-run   say what would be done, change nothing\n"
    "  --force     write conflicting paths too (the sandbox's version wins) and\n"
    "              the rest besides refused entries (never written), and\n"
    "              apply a sandbox that was applied before\n"
    "  --git-dir   changes under .git/ too (never otherwise)\n"
    "\n"
    "Exit status: 0 applied (or nothing to apply), 1 conflicts (without\n"
    "--force) or refused entries, 2 usage.\n";

struct review_args {
	bool stat, name_only, json, binary, git_dir, dry_run, force, relative;
	const char *ref;
	char **paths; /* absolute host paths */
	size_t n_paths;
};

static void args_free(struct review_args *a)
{
	for (size_t i = 0; i < a->n_paths; i++)
		free(a->paths[i]);
	free(a->paths);
}

/* PATH as an absolute host path (relative ones from the caller's cwd). */
static char *host_path(const char *p)
{
	_cleanup_free_ char *cwd = NULL;

	if (p[0] == '/')
		return sbx_xstrdup(p);
	cwd = getcwd(NULL, 0);
	if (!strcmp(p, "."))
		return sbx_xstrdup(cwd ? cwd : "/");
	return sbx_xasprintf("%s/%s", cwd ? cwd : "", p[0] == '.' && p[1] == '/' ? p + 2 : p);
}

static int parse(struct sbx_cmd_ctx *ctx, const char *cmd, int argc, char **argv,
		 struct review_args *a)
{
	static const struct option diff_opts[] = {
	    {"stat", no_argument, NULL, 's'},
	    {"name-only", no_argument, NULL, 'n'},
	    {"json", no_argument, NULL, 'j'},
	    {"binary", no_argument, NULL, 'b'},
	    {"git-dir", no_argument, NULL, 'g'},
	    {"relative", no_argument, NULL, 'r'},
	    {NULL, 0, NULL, 0},
	};
	static const struct option apply_opts[] = {
	    {"dry-run", no_argument, NULL, 'd'},
	    {"force", no_argument, NULL, 'f'},
	    {"git-dir", no_argument, NULL, 'g'},
	    {NULL, 0, NULL, 0},
	};
	const struct option *opts = !strcmp(cmd, "diff") ? diff_opts : apply_opts;
	int c;

	memset(a, 0, sizeof(*a));
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			a->stat = true;
			break;
		case 'n':
			a->name_only = true;
			break;
		case 'j':
			a->json = true;
			break;
		case 'b':
			a->binary = true;
			break;
		case 'g':
			a->git_dir = true;
			break;
		case 'r':
			a->relative = true;
			break;
		case 'd':
			a->dry_run = true;
			break;
		case 'f':
			a->force = true;
			break;
		default:
			return sbx_cmd_bad_option(ctx, cmd, c, argv[optind - 1], opts);
		}
	}
	if ((int)a->stat + (int)a->name_only + (int)a->json > 1)
		return sbx_cmd_usage_error(ctx, "--stat, --name-only and --json go one at a time");
	if (optind >= argc)
		return sbx_cmd_usage_error(ctx, "which sandbox? (see 'sbx %s --help')", cmd);
	a->ref = argv[optind++];
	a->paths = sbx_xcalloc((size_t)(argc - optind) + 1, sizeof(*a->paths));
	for (; optind < argc; optind++)
		a->paths[a->n_paths++] = host_path(argv[optind]);
	return 0;
}

static int open_review(struct sbx_cmd_ctx *ctx, const struct review_args *a, bool lock,
		       struct sbx_sandbox *sb, struct sbx_review *r, struct sbx_err *err)
{
	struct sbx_state *st = sbx_cmd_state(ctx, err);
	int code;

	if (!st || lc_open(st, a->ref, false, sb, err) < 0)
		return -1;
	if (!sb->record) {
		sbx_err_set(err, 0, "sandbox '%s' has no usable record: %s", sb->id,
			    sb->record_error ? sb->record_error : "missing");
		return -1;
	}
	if (lock) {
		if (sbx_sandbox_lock(sb, false, err) < 0) {
			sbx_err_set(err, 0,
				    "sandbox '%s' is running or in use: apply it once it "
				    "has ended",
				    sb->id);
			return -1;
		}
		sbx_sandbox_reload(sb);
		if (strcmp(sbx_sandbox_state(sb, &code), "running") == 0) {
			sbx_err_set(err, 0, "sandbox '%s' is running", sb->id);
			return -1;
		}
	}
	_cleanup_free_ char *cwd = a->relative ? host_path(".") : NULL;

	return sbx_review_open(sb, a->paths, a->n_paths, cwd, r, err);
}

static const char *flags_of(const struct sbx_review_entry *e, char *buf, size_t len)
{
	return sbx_review_flags_text(e->flags, buf, len);
}

/* On stderr: what runs code later, what is not in the patch and why.
 * Plain .git/ contents (objects, refs: a commit the agent made) are one
 * line; hooks and config each have theirs. */
static void warn_flagged(const struct sbx_review *r, bool git_dir, bool applying, bool dry)
{
	char f[160];
	size_t git_plain = 0;
	const char *first = NULL;

	for (size_t i = 0; i < r->n; i++) {
		const struct sbx_review_entry *e = &r->e[i];

		if (e->flags == SBX_FLAG_GIT_DIR && !e->refused && !e->setid && !git_dir) {
			if (!git_plain++)
				first = e->shown;
		}
	}
	if (git_plain) {
		_cleanup_free_ char *p = sbx_escape_display(first);

		sbx_warnf("%zu path%s under .git/ (%s%s): %s (--git-dir)", git_plain,
			  git_plain == 1 ? "" : "s", p, git_plain > 1 ? ", ..." : "",
			  applying ? "not applied" : "not in the patch");
	}
	for (size_t i = 0; i < r->n; i++) {
		const struct sbx_review_entry *e = &r->e[i];
		_cleanup_free_ char *p = sbx_escape_display(e->shown);

		if (e->flags == SBX_FLAG_GIT_DIR && !e->refused && !e->setid && !git_dir)
			continue;

		if (e->setid && !e->refused)
			sbx_warnf("%s: its set-user-ID or set-group-ID bit is dropped%s", p,
				  applying ? "" : " by apply");
		if (e->refused)
			sbx_warnf("%s: %s: %s", p, e->refused,
				  applying ? "refused" : "not in the patch, apply refuses it");
		else if ((e->flags & SBX_FLAG_GIT_DIR) && !git_dir)
			sbx_warnf(
			    "%s: runs code on the host later (%s): under .git/, %s (--git-dir)", p,
			    flags_of(e, f, sizeof(f)),
			    applying ? "not applied" : "not in the patch");
		else if (e->flags)
			sbx_warnf("%s: runs code on the host later (%s)%s", p,
				  flags_of(e, f, sizeof(f)),
				  !applying ? ""
				  : dry	    ? ": would be applied, review it"
					    : ": applied, review it");
	}
}

static json_t *entry_json(const struct sbx_review_entry *e)
{
	json_t *o = json_object(), *flags = json_array();
	char buf[160], mode[16];

	sbx_review_flags_text(e->flags, buf, sizeof(buf));
	for (char *save = NULL, *t = strtok_r(buf, ", ", &save); t; t = strtok_r(NULL, ", ", &save))
		json_array_append_new(flags, json_string(t));
	json_object_set_new(o, "path", sbx_json_str(e->shown));
	json_object_set_new(o, "kind", json_stringn(&e->kind, 1));
	snprintf(mode, sizeof(mode), "%06o", (unsigned)e->new_mode);
	json_object_set_new(o, "mode", e->new_mode ? json_string(mode) : json_null());
	snprintf(mode, sizeof(mode), "%06o", (unsigned)e->old_mode);
	json_object_set_new(o, "old_mode", e->old_mode ? json_string(mode) : json_null());
	json_object_set_new(o, "size",
			    S_ISREG(e->new_mode) ? json_integer((json_int_t)e->size) : json_null());
	json_object_set_new(o, "flags", flags);
	json_object_set_new(o, "refused", sbx_json_str(e->refused));
	json_object_set_new(o, "conflict", json_boolean(e->conflict));
	return o;
}

static int print_json(const struct sbx_review *r)
{
	json_t *a = json_array();
	int rc;

	for (size_t i = 0; i < r->n; i++)
		json_array_append_new(a, entry_json(&r->e[i]));
	rc = json_dumpf(a, stdout, JSON_INDENT(2) | JSON_ENSURE_ASCII);
	putchar('\n');
	json_decref(a);
	return rc < 0 ? SBX_EXIT_FAIL : SBX_EXIT_OK;
}

/* The changes diff cannot show (sbx_review.gone), each in a line; any? */
static bool say_gone(const struct sbx_review *r, const char *ref)
{
	for (size_t i = 0; i < r->gone.n; i++) {
		_cleanup_free_ char *d = sbx_escape_display(r->gone.v[i]);

		sbx_errorf("its changes to %s are not shown: that host directory cannot be opened "
			   "(%s); 'sbx export %s -o FILE.tar.gz' writes them as a tarball, and "
			   "they show here again once the directory is back",
			   d, r->gone_why.v[i], ref);
	}
	return r->gone.n > 0;
}

int cmd_diff(struct sbx_cmd_ctx *ctx, int argc, char **argv)
{
	struct review_args a;
	struct sbx_sandbox sb = {.dirfd = -1, .lockfd = -1};
	struct sbx_review r = {0};
	struct sbx_err err = {0};
	struct sbx_diff_opts o = {0};
	int rc = parse(ctx, "diff", argc, argv, &a);

	if (rc != 0)
		goto out;
	if (open_review(ctx, &a, false, &sb, &r, &err) < 0) {
		rc = sbx_cmd_fail(ctx, &err, SBX_EXIT_FAIL);
		goto out;
	}
	if (a.json) {
		rc = print_json(&r);
		goto out;
	}
	o.format = a.stat ? SBX_DIFF_STAT : a.name_only ? SBX_DIFF_NAME_ONLY : SBX_DIFF_PATCH;
	o.binary = a.binary;
	o.git_dir = a.git_dir;
	o.shown = isatty(STDOUT_FILENO);
	o.color = o.shown && !getenv("NO_COLOR");
	rc = sbx_review_diff(&r, &o, stdout, &err) < 0 ? sbx_cmd_fail(ctx, &err, SBX_EXIT_FAIL)
						       : SBX_EXIT_OK;
	warn_flagged(&r, a.git_dir, false, false);
	if (r.n_errors)
		sbx_warnf("%zu entries of the writable layer could not be read", r.n_errors);
out:
	if (say_gone(&r, a.ref) && rc == SBX_EXIT_OK)
		rc = SBX_EXIT_FAIL;
	sbx_review_free(&r);
	sbx_sandbox_close(&sb);
	args_free(&a);
	return rc;
}

static void record_applied(struct sbx_sandbox *sb, const struct sbx_apply_stats *st)
{
	struct sbx_err e = {0};
	char ts[40];

	free(sb->rec.applied.at);
	sbx_strv_free(&sb->rec.applied.paths);
	sb->rec.applied.set = true;
	sb->rec.applied.at = sbx_xstrdup(sbx_rfc3339_now(ts, sizeof(ts)));
	for (size_t i = 0; i < st->paths.n; i++)
		sbx_strv_push(&sb->rec.applied.paths, st->paths.v[i]);
	if (sbx_sandbox_save_record(sb, &e) < 0)
		sbx_print_err(&e);
}

static void print_plan(const struct sbx_review *r, const struct review_args *a)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct sbx_review_entry *e = &r->e[i];
		_cleanup_free_ char *p = sbx_escape_display(e->shown);

		if (e->refused || (e->conflict && !a->force) ||
		    ((e->flags & SBX_FLAG_GIT_DIR) && !a->git_dir))
			continue;
		printf("%c %s%s\n", e->kind, p, S_ISDIR(e->new_mode) ? "/" : "");
	}
}

int cmd_apply(struct sbx_cmd_ctx *ctx, int argc, char **argv)
{
	struct review_args a;
	struct sbx_sandbox sb = {.dirfd = -1, .lockfd = -1};
	struct sbx_review r = {0};
	struct sbx_err err = {0};
	struct sbx_apply_stats st = {0};
	struct sbx_apply_opts o;
	int rc = parse(ctx, "apply", argc, argv, &a);

	if (rc != 0)
		goto out;
	if (open_review(ctx, &a, !a.dry_run, &sb, &r, &err) < 0) {
		rc = sbx_cmd_fail(ctx, &err, SBX_EXIT_FAIL);
		goto out;
	}
	if (sb.rec.applied.set && !a.force && !a.dry_run) {
		sbx_err_set(&err, 0,
			    "sandbox '%s' was applied already (%s): --force applies it again",
			    sb.id, sb.rec.applied.at ? sb.rec.applied.at : "?");
		rc = sbx_cmd_fail(ctx, &err, SBX_EXIT_FAIL);
		goto out;
	}
	/* Nowhere to write them: nothing is written, as for a conflict. */
	for (size_t i = 0; i < r.gone.n; i++) {
		_cleanup_free_ char *d = sbx_escape_display(r.gone.v[i]);

		sbx_errorf("its changes to %s are not applied: that host directory cannot be "
			   "opened (%s); nothing written",
			   d, r.gone_why.v[i]);
	}
	if (r.gone.n) {
		rc = SBX_EXIT_FAIL;
		goto out;
	}
	o = (struct sbx_apply_opts){.dry_run = a.dry_run, .force = a.force, .git_dir = a.git_dir};
	rc = sbx_review_apply(&r, &o, &st, &err);
	for (size_t i = 0; i < st.problems.n; i++) {
		_cleanup_free_ char *p = sbx_escape_display(st.problems.v[i]);

		sbx_errorf("%s", p);
	}
	if (rc < 0) {
		rc = sbx_cmd_fail(ctx, &err, SBX_EXIT_FAIL);
		goto out;
	}
	print_plan(&r, &a);
	warn_flagged(&r, a.git_dir, true, a.dry_run);
	if (a.dry_run) {
		fprintf(stderr, "sbx: dry run: nothing written\n");
	} else {
		fprintf(
		    stderr,
		    "sbx: applied sandbox %s: %zu written, %zu removed, %zu directories made%s\n",
		    sb.id, st.written, st.removed, st.dirs,
		    st.skipped_git ? "; .git/ left out (--git-dir)" : "");
		record_applied(&sb, &st);
	}
	rc = st.refused || (st.conflicts && !a.force) ? SBX_EXIT_FAIL : SBX_EXIT_OK;
out:
	sbx_apply_stats_free(&st);
	sbx_review_free(&r);
	sbx_sandbox_close(&sb);
	args_free(&a);
	return rc;
}

/* ---- for sbx inspect ---- */

void review_view_make(const struct sbx_sandbox *sb, bool want_diff, struct review_view *v)
{
	struct sbx_review r;
	struct sbx_err err = {0};
	struct sbx_diff_opts o = {.format = SBX_DIFF_PATCH};
	char f[160];

	memset(v, 0, sizeof(*v));
	if (sbx_review_open(sb, NULL, 0, NULL, &r, &err) < 0) {
		v->error = sbx_xstrdup(err.msg);
		sbx_review_free(&r);
		return;
	}
	v->json = json_array();
	for (size_t i = 0; i < r.n; i++) {
		const struct sbx_review_entry *e = &r.e[i];

		json_array_append_new(v->json, entry_json(e));
		sbx_review_flags_text(e->flags, f, sizeof(f));
		sbx_strv_push_take(&v->lines, sbx_xasprintf("%c %s%s%s%s%s", e->kind, e->shown,
							    S_ISDIR(e->new_mode) ? "/" : "",
							    *f ? "  (" : "", f, *f ? ")" : ""));
		if (e->refused)
			sbx_strv_push_take(&v->flagged, sbx_xasprintf("%s: %s: apply refuses it",
								      e->shown, e->refused));
		else if (e->flags)
			sbx_strv_push_take(
			    &v->flagged,
			    sbx_xasprintf("%s: runs code on the host later (%s)%s", e->shown, f,
					  (e->flags & SBX_FLAG_GIT_DIR)
					      ? ", under .git/: applied only with --git-dir"
					      : ""));
	}
	if (want_diff) {
		size_t len = 0;
		FILE *m = open_memstream(&v->diff, &len);

		if (m && sbx_review_diff(&r, &o, m, &err) < 0) {
			fclose(m);
			m = NULL;
			free(v->diff);
			v->diff = NULL;
			v->error = sbx_xstrdup(err.msg);
		}
		if (m)
			fclose(m);
	}
	sbx_review_free(&r);
}

void review_view_free(struct review_view *v)
{
	free(v->diff);
	sbx_strv_free(&v->lines);
	sbx_strv_free(&v->flagged);
	json_decref(v->json);
	free(v->error);
	memset(v, 0, sizeof(*v));
}
