/* SPDX-License-Identifier: MIT */
/* cmd/ps.c - sbx ps: list sandboxes. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "lifecycle.h"
#include "log.h"

const char sbx_usage_ps[] =
    "usage: sbx ps [-a] [-q | --json]\n"
    "\n"
    "List sandboxes: running ones and lost ones (sbx was killed while they\n"
    "ran: clean up with 'sbx destroy --stale'); with -a, also kept sandboxes\n"
    "whose command has ended.\n"
    "\n"
    "  -a, --all    also list ended (kept) sandboxes\n"
    "  -q, --quiet  only their ids, one per line (sbx destroy $(sbx ps -aq))\n"
    "      --json   one JSON array of objects instead of a table\n"
    "\n"
    "STATE is running, exited N, killed (SIGNAL), timeout, oom, error, or\n"
    "lost. A running sandbox's published ports follow its line, each with\n"
    "the URL to open (with its preview token).\n";

struct ps_opts {
	bool all, json, quiet;
};

static int parse_opts(struct sbx_cmd_ctx *ctx, int argc, char **argv, struct ps_opts *o)
{
	static const struct option longopts[] = {
	    {"all", no_argument, NULL, 'a'},
	    {"json", no_argument, NULL, 'J'},
	    {"quiet", no_argument, NULL, 'q'},
	    {NULL, 0, NULL, 0},
	};
	int c;

	memset(o, 0, sizeof(*o));
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":aq", longopts, NULL)) != -1) {
		switch (c) {
		case 'a':
			o->all = true;
			break;
		case 'J':
			o->json = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		default:
			return sbx_cmd_bad_option(ctx, "ps", c, argv[optind - 1], longopts);
		}
	}
	if (o->quiet && o->json)
		return sbx_cmd_usage_error(ctx,
					   "ps: -q and --json: give one (see 'sbx ps --help')");
	if (optind < argc) {
		return sbx_cmd_usage_error(ctx, "unexpected argument '%s' (see 'sbx ps --help')",
					   argv[optind]);
	}
	return 0;
}

static bool shown(const char *state, bool all)
{
	return all || strcmp(state, "running") == 0 || strcmp(state, "created") == 0 ||
	       strcmp(state, "lost") == 0;
}

static json_t *ps_json(const struct sbx_sandbox *sb)
{
	const struct sbx_record *r = &sb->rec;
	json_t *j = lc_state_json(sb);

	json_object_set_new(j, "id", json_string(sb->id));
	json_object_set_new(j, "name", sbx_json_str(sb->name));
	json_object_set_new(j, "created", sbx_json_str(r->created));
	json_object_set_new(j, "age_s", json_real(lc_age_seconds(r->created)));
	json_object_set_new(j, "profile", sbx_json_str(r->profile.name));
	json_object_set_new(j, "command", sbx_json_strv(&r->command));
	json_object_set_new(j, "dir", json_string(sb->dir));
	json_object_set_new(j, "detached", json_boolean(r->detached));
	json_object_set_new(j, "publish", r->publish ? json_incref(r->publish) : json_array());
	return j;
}

static void ps_row(const struct sbx_sandbox *sb, bool tty)
{
	char state[64], age[32];
	const char *prof = sb->rec.profile.name;
	_cleanup_free_ char *cmd = lc_command_display(&sb->rec.command);
	_cleanup_free_ char *name = sbx_escape_display(sb->name ? sb->name : "-");
	_cleanup_free_ char *profe = sbx_escape_display(prof ? prof : "-");

	if (tty && strlen(cmd) > 60)
		strcpy(cmd + 57, "...");
	printf("%-12s  %-16s  %-18s  %-5s  %-10s  %s\n", sb->id, name,
	       lc_state_label(sb, state, sizeof(state)), lc_age(sb->rec.created, age, sizeof(age)),
	       profe, cmd);
	/* a running sandbox's published ports: the URL to click */
	if (!strcmp(state, "running")) {
		const json_t *pt;
		size_t i;

		json_array_foreach(sb->rec.publish, i, pt)
		{
			const char *url = json_string_value(json_object_get(pt, "url"));
			bool open =
			    !strcmp(json_string_value(json_object_get(pt, "auth")) ?: "", "open");

			printf("%-12s  └ %s %s -> jail port %d%s\n", "", open ? "open" : "preview",
			       url ? url : "?",
			       (int)json_integer_value(json_object_get(pt, "port")),
			       open ? " (no token)" : "");
		}
	}
}

int cmd_ps(struct sbx_cmd_ctx *ctx, int argc, char **argv)
{
	struct sbx_state *st;
	struct sbx_err err = {0};
	struct sbx_strv ids = {0};
	struct ps_opts o;
	json_t *arr;
	bool tty = isatty(STDOUT_FILENO);
	int rc;

	rc = parse_opts(ctx, argc, argv, &o);
	if (rc != 0)
		return rc;
	st = sbx_cmd_state(ctx, &err);
	if (!st || sbx_sandbox_list(st, &ids, &err) < 0)
		return sbx_cmd_fail(ctx, &err, SBX_EXIT_FAIL);
	arr = json_array();
	if (!o.json && !o.quiet)
		printf("%-12s  %-16s  %-18s  %-5s  %-10s  %s\n", "ID", "NAME", "STATE", "AGE",
		       "PROFILE", "COMMAND");
	for (size_t i = 0; i < ids.n; i++) {
		struct sbx_sandbox sb;
		int code;

		if (sbx_sandbox_open(st, ids.v[i], false, &sb, NULL) < 0)
			continue; /* removed meanwhile */
		if (shown(sbx_sandbox_state(&sb, &code), o.all)) {
			if (o.json)
				json_array_append_new(arr, ps_json(&sb));
			else if (o.quiet)
				printf("%s\n", sb.id);
			else
				ps_row(&sb, tty);
		}
		sbx_sandbox_close(&sb);
	}
	if (o.json) {
		if (json_dumpf(arr, stdout, JSON_INDENT(2) | JSON_ENSURE_ASCII) < 0)
			rc = SBX_EXIT_FAIL;
		putchar('\n');
	}
	if (fflush(stdout) != 0)
		rc = SBX_EXIT_FAIL;
	json_decref(arr);
	sbx_strv_free(&ids);
	return rc;
}
