/* SPDX-License-Identifier: MIT */
/* cmd/inspect.c - sbx inspect: what a sandbox ran, reached, changed and why it ended. */
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "changes.h"
#include "cmd.h"
#include "lifecycle.h"
#include "review_ui.h"
#include "report.h"

const char sbx_usage_inspect[] =
    "usage: sbx inspect [--json] [--changes | --output] [--html FILE] SANDBOX\n"
    "       sbx inspect (--json | --summary [--json]) (SANDBOX... | --all)\n"
    "\n"
    "Show what a sandbox ran, as whom, what it could reach, which secrets went\n"
    "in, what it changed and how it ended. SANDBOX is an id, a unique id\n"
    "prefix or a name.\n"
    "\n"
    "  --json        the record as JSON (with \"derived\": the state now); of\n"
    "                several sandboxes, one JSON array of their records\n"
    "  --summary     one row per sandbox: state, wall time, peak memory,\n"
    "                connections denied and allowed, seccomp denials, then\n"
    "                the totals; with --json, one report object (see sbx(1))\n"
    "  --all         with --summary or --json: every sandbox of the state\n"
    "                directory\n"
    "  --changes     the change set against the image, like docker diff:\n"
    "                A (added), C (changed), D (deleted) per path; with\n"
    "                --json, an array of objects (see sbx(1))\n"
    "  --output      the command's captured stdout+stderr, raw\n"
    "  --html FILE   write a self-contained HTML report to FILE\n";

struct inspect_opts {
	bool json, changes, output, summary, all;
	const char *html;
	char **refs; /* the SANDBOX arguments */
	int n_refs;
};

static int parse_opts(struct sbx_cmd_ctx *ctx, int argc, char **argv, struct inspect_opts *o)
{
	static const struct option longopts[] = {
	    {"json", no_argument, NULL, 'J'},
	    {"changes", no_argument, NULL, 'C'},
	    {"output", no_argument, NULL, 'O'},
	    {"html", required_argument, NULL, 'H'},
	    {"summary", no_argument, NULL, 'S'},
	    {"all", no_argument, NULL, 'A'},
	    {NULL, 0, NULL, 0},
	};
	int c;

	memset(o, 0, sizeof(*o));
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
		switch (c) {
		case 'J':
			o->json = true;
			break;
		case 'C':
			o->changes = true;
			break;
		case 'O':
			o->output = true;
			break;
		case 'H':
			o->html = optarg;
			break;
		case 'S':
			o->summary = true;
			break;
		case 'A':
			o->all = true;
			break;
		default:
			return sbx_cmd_bad_option(ctx, "inspect", c, argv[optind - 1], longopts);
		}
	}
	o->refs = argv + optind;
	o->n_refs = argc - optind;
	if (o->summary && (o->changes || o->output || o->html))
		return sbx_cmd_usage_error(
		    ctx, "--summary goes with --json only (see 'sbx inspect --help')");
	if (o->all && !o->summary && !o->json)
		return sbx_cmd_usage_error(
		    ctx, "--all goes with --summary or --json (see 'sbx inspect --help')");
	if (o->all && o->n_refs)
		return sbx_cmd_usage_error(
		    ctx, "--all or sandboxes, not both (see 'sbx inspect --help')");
	if (!o->all && o->n_refs == 0)
		return sbx_cmd_usage_error(ctx, "which sandbox? (see 'sbx inspect --help')");
	if (o->n_refs > 1 && (!(o->json || o->summary) || o->changes || o->output || o->html))
		return sbx_cmd_usage_error(ctx, "one sandbox at a time, except with --json or "
						"--summary (see 'sbx inspect --help')");
	if (o->changes && o->output) {
		return sbx_cmd_usage_error(ctx, "--changes and --output do not go together");
	}
	return 0;
}

/* --output: output.log to stdout, raw (it is the command's own output). */
static int print_output(struct sbx_cmd_ctx *ctx, const struct sbx_sandbox *sb)
{
	_cleanup_close_ int fd =
	    openat(sb->dirfd, "output.log", O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	char buf[65536];
	ssize_t n;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		sbx_err_set(&ctx->err, 0, "sandbox '%s' has no captured output", sb->id);
		return SBX_EXIT_FAIL;
	}
	fflush(stdout);
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		int r = sbx_write_all(STDOUT_FILENO, buf, (size_t)n);

		if (r < 0) {
			sbx_err_set(&ctx->err, -r, "cannot write to standard output");
			return SBX_EXIT_FAIL;
		}
	}
	if (sb->rec.resources.output_truncated)
		sbx_warnf("the run truncated the captured output: %lld bytes kept",
			  (long long)st.st_size);
	return n < 0 ? SBX_EXIT_FAIL : SBX_EXIT_OK;
}

static int change_text(const struct sbx_change *c, void *data)
{
	_cleanup_free_ char *p = sbx_escape_display(c->path);

	(void)data;
	printf("%c %s%s\n", c->kind, p, c->opaque ? "\t(opaque: old contents hidden)" : "");
	return 0;
}

static int change_json(const struct sbx_change *c, void *data)
{
	json_array_append_new(data, sbx_change_json(c));
	return 0;
}

static int print_changes(struct sbx_cmd_ctx *ctx, const struct sbx_sandbox *sb, bool json)
{
	struct sbx_err err = {0};
	json_t *arr = json_array();
	size_t n_err = 0;
	int r;

	r = sbx_changes_walk_sandbox(sb, json ? change_json : change_text, arr, &n_err, &err);
	if (r >= 0 && json) {
		json_dumpf(arr, stdout, JSON_INDENT(2) | JSON_ENSURE_ASCII);
		putchar('\n');
	}
	json_decref(arr);
	if (r < 0)
		return sbx_cmd_fail(ctx, &err, SBX_EXIT_FAIL);
	if (n_err)
		sbx_warnf("%zu entries of the writable layer could not be read", n_err);
	return SBX_EXIT_OK;
}

/* Has the sandbox copy-on-write host directories, and is it over?  (A
 * running one's change set is still moving: `sbx diff` shows it.) */
static bool reviewable(const struct sbx_sandbox *sb)
{
	int code;
	bool overlay = false;
	const char *st;

	for (size_t i = 0; i < sb->rec.policy.filesystem.n_mounts; i++)
		overlay |= sb->rec.policy.filesystem.mounts[i].kind &&
			   !strcmp(sb->rec.policy.filesystem.mounts[i].kind, "overlay");
	if (!sb->record || !overlay)
		return false;
	st = sbx_sandbox_state(sb, &code);
	return strcmp(st, "running") != 0 && strcmp(st, "created") != 0;
}

static json_t *review_json(const struct sbx_sandbox *sb)
{
	struct review_view v;
	json_t *j;

	review_view_make(sb, false, &v);
	j = json_pack("{s:O?, s:s?}", "paths", v.json, "error", v.error);
	review_view_free(&v);
	return j;
}

/* The text report's last section: what `sbx diff` and `sbx apply` would
 * take out. */
static void print_review(const struct sbx_sandbox *sb)
{
	struct review_view v;

	printf("\nChanges to the host directories (sbx diff, sbx apply)\n");
	review_view_make(sb, false, &v);
	if (v.error) {
		_cleanup_free_ char *e = sbx_escape_display(v.error);

		printf("  %s\n", e);
	}
	for (size_t i = 0; i < v.lines.n; i++) {
		_cleanup_free_ char *l = sbx_escape_display(v.lines.v[i]);

		printf("  %s\n", l);
	}
	if (!v.error && !v.lines.n)
		printf("  none\n");
	for (size_t i = 0; i < v.flagged.n; i++) {
		_cleanup_free_ char *l = sbx_escape_display(v.flagged.v[i]);

		printf("  FLAGGED  %s\n", l);
	}
	if (sb->rec.applied.set)
		printf("  applied  %s, %zu paths\n", sb->rec.applied.at ? sb->rec.applied.at : "?",
		       sb->rec.applied.paths.n);
	review_view_free(&v);
}

/* The record with "derived" (a new reference). */
static json_t *record_json(const struct sbx_sandbox *sb)
{
	json_t *j = sb->record ? json_deep_copy(sb->record) : json_object();

	json_object_set_new(j, "derived", lc_state_json(sb));
	json_object_set_new(json_object_get(j, "derived"), "dir", json_string(sb->dir));
	if (reviewable(sb))
		json_object_set_new(json_object_get(j, "derived"), "review", review_json(sb));
	return j;
}

static int dump_json(json_t *j)
{
	int r = json_dumpf(j, stdout,
			   JSON_INDENT(2) | JSON_ENSURE_ASCII | JSON_PRESERVE_ORDER |
			       JSON_REAL_PRECISION(9));

	putchar('\n');
	json_decref(j);
	return r < 0 ? SBX_EXIT_FAIL : SBX_EXIT_OK;
}

/*
 * Several sandboxes (--json of more than one, --summary, --all): the
 * records (or summary rows) in the order named, or the state directory's
 * order with --all.  A name that resolves to nothing is an error line and
 * exit 1, the others are still reported: a dashboard of an array job
 * should not lose nineteen rows to one typo.
 */
static int inspect_many(struct sbx_cmd_ctx *ctx, struct sbx_state *st, const struct inspect_opts *o)
{
	struct sbx_strv ids = {0};
	struct sbx_err err = {0};
	json_t *arr = json_array();
	int rc = SBX_EXIT_OK;
	size_t n;

	if (o->all && sbx_sandbox_list(st, &ids, &err) < 0) {
		json_decref(arr);
		return sbx_cmd_fail(ctx, &err, SBX_EXIT_FAIL);
	}
	n = o->all ? ids.n : (size_t)o->n_refs;
	for (size_t i = 0; i < n; i++) {
		struct sbx_sandbox sb;
		int r;

		sbx_err_clear(&err);
		if (o->all)
			r = sbx_sandbox_open(st, ids.v[i], false, &sb, &err);
		else
			r = lc_open(st, o->refs[i], false, &sb, &err);
		if (r < 0) {
			/* --all: removed since it was listed; a name: an error. */
			if (!o->all) {
				sbx_print_err(&err);
				rc = SBX_EXIT_FAIL;
			}
			sbx_sandbox_close(&sb);
			continue;
		}
		if (o->summary) {
			json_t *events = lc_read_log(&sb);

			json_array_append_new(arr, lc_summary_json(&sb, events));
			json_decref(events);
		} else {
			json_array_append_new(arr, record_json(&sb));
		}
		sbx_sandbox_close(&sb);
	}
	sbx_strv_free(&ids);
	if (o->summary) {
		json_t *report = lc_summary_report(arr);

		json_decref(arr);
		if (o->json) {
			if (dump_json(report) != SBX_EXIT_OK)
				rc = SBX_EXIT_FAIL;
		} else {
			lc_print_summary(report, stdout);
			json_decref(report);
		}
	} else if (dump_json(arr) != SBX_EXIT_OK) {
		rc = SBX_EXIT_FAIL;
	}
	if (fflush(stdout) != 0)
		rc = SBX_EXIT_FAIL;
	return rc;
}

static int write_html(struct sbx_cmd_ctx *ctx, const struct sbx_sandbox *sb, const json_t *events,
		      const char *file)
{
	struct sbx_err err = {0};
	struct review_view v = {0};
	struct sbx_report_review rv = {0};
	char state[64];
	int rc = SBX_EXIT_OK;
	bool review = reviewable(sb);

	if (review) {
		review_view_make(sb, true, &v);
		rv = (struct sbx_report_review){
		    .diff = v.diff, .flagged = &v.flagged, .error = v.error};
	}
	if (sbx_report_write(sb, events, lc_state_label(sb, state, sizeof(state)),
			     review ? &rv : NULL, file, &err) < 0)
		rc = sbx_cmd_fail(ctx, &err, SBX_EXIT_FAIL);
	review_view_free(&v);
	return rc;
}

int cmd_inspect(struct sbx_cmd_ctx *ctx, int argc, char **argv)
{
	struct sbx_state *st;
	struct sbx_sandbox sb;
	struct sbx_err err = {0};
	struct inspect_opts o;
	json_t *events = NULL;
	int rc = SBX_EXIT_OK;

	rc = parse_opts(ctx, argc, argv, &o);
	if (rc != 0)
		return rc;
	st = sbx_cmd_state(ctx, &err);
	if (st && (o.summary || o.all || o.n_refs > 1))
		return inspect_many(ctx, st, &o);
	if (!st || lc_open(st, o.refs[0], false, &sb, &err) < 0)
		return sbx_cmd_fail(ctx, &err, SBX_EXIT_FAIL);
	events = lc_read_log(&sb);
	if (o.html)
		rc = write_html(ctx, &sb, events, o.html);
	if (rc == SBX_EXIT_OK) {
		if (o.output)
			rc = print_output(ctx, &sb);
		else if (o.changes)
			rc = print_changes(ctx, &sb, o.json);
		else if (o.json)
			rc = dump_json(record_json(&sb));
		else if (!o.html) {
			lc_print_inspect(&sb, events, stdout);
			if (reviewable(&sb))
				print_review(&sb);
		}
	}
	if (fflush(stdout) != 0)
		rc = SBX_EXIT_FAIL;
	json_decref(events);
	sbx_sandbox_close(&sb);
	return rc;
}
