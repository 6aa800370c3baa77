/* SPDX-License-Identifier: MIT */
/* cmd/profile.c - sbx profile list | show NAME|FILE | check FILE... */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "profile.h"

static const char usage[] =
    "usage: sbx profile list [--json]\n"
    "       sbx profile show NAME|FILE\n"
    "       sbx profile check FILE|NAME...\n"
    "\n"
    "Isolation profiles are INI files (see sbx-profile(5)); the built-in ones\n"
    "are compiled into sbx.  A NAME is a built-in profile; a FILE is a path\n"
    "(anything with a '/' or ending in .ini).\n"
    "\n"
    "  list    the built-in profiles with a one-line summary\n"
    "  show    the resolved profile (after extends and variables) as INI\n"
    "  check   validate profiles: 'FILE: ok', or every error (exit 1)\n";

static const char usage_list[] = "usage: sbx profile list [--json]\n"
				 "\n"
				 "List the built-in profiles, one per line: name and summary.\n"
				 "\n"
				 "  --json   a JSON array of {\"name\", \"summary\"}\n";

static const char usage_show[] =
    "usage: sbx profile show NAME|FILE\n"
    "\n"
    "Print the resolved profile (extends applied, $PWD $HOME $USER $UID\n"
    "expanded, defaults filled in) as INI that 'sbx profile check' accepts.\n";

static const char usage_check[] =
    "usage: sbx profile check FILE|NAME...\n"
    "\n"
    "Validate each profile.  Prints 'FILE: ok' on stdout for a good one and\n"
    "every problem ('file:line', key and value) on stderr for a bad one.\n"
    "Exit status: 0 all good, 1 a profile has errors, 2 usage error.\n";

static const struct option help_only[] = {
    {"help", no_argument, NULL, 'h'},
    {"json", no_argument, NULL, 'j'},
    {NULL, 0, NULL, 0},
};

/* Parse the options of a profile subcommand: 0 go on, 1 done (help), <0 usage. */
static int parse_opts(int argc, char **argv, const char *text, bool allow_json, bool *json)
{
	int c;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+h", help_only, NULL)) != -1) {
		if (c == 'h') {
			fputs(text, stdout);
			return 1;
		}
		if (c == 'j' && allow_json) {
			*json = true;
			continue;
		}
		{
			struct sbx_err e = {0};
			char cmd[32];

			snprintf(cmd, sizeof(cmd), "profile %s", argv[0]);
			sbx_cmd_option_error(&e, cmd, cmd, argv[optind - 1], help_only, false);
			sbx_print_err(&e);
			fputs(text, stderr);
			return -1;
		}
	}
	return 0;
}

static void print_errors(const struct sbx_strv *errs)
{
	struct sbx_err e = {0};

	for (size_t i = 0; i < errs->n; i++) {
		snprintf(e.msg, sizeof(e.msg), "%s", errs->v[i]);
		sbx_print_err(&e);
	}
}

static int list_json(void)
{
	json_t *arr = json_array();
	char buf[256];
	int r;

	for (size_t i = 0; i < sbx_n_builtin_profiles; i++) {
		const struct sbx_builtin_profile *p = &sbx_builtin_profiles[i];

		json_array_append_new(arr,
				      json_pack("{s:s, s:s}", "name", p->name, "summary",
						sbx_profile_summary(p->text, buf, sizeof(buf))));
	}
	r = json_dumpf(arr, stdout, JSON_INDENT(2));
	json_decref(arr);
	fputc('\n', stdout);
	return r < 0 ? SBX_EXIT_FAIL : SBX_EXIT_OK;
}

static int profile_list(int argc, char **argv)
{
	bool json = false;
	char buf[256];
	int r = parse_opts(argc, argv, usage_list, true, &json);

	if (r)
		return r > 0 ? SBX_EXIT_OK : SBX_EXIT_USAGE;
	if (optind < argc) {
		sbx_errorf("profile list: unexpected argument '%s'", argv[optind]);
		return SBX_EXIT_USAGE;
	}
	if (json)
		return list_json();
	for (size_t i = 0; i < sbx_n_builtin_profiles; i++) {
		const struct sbx_builtin_profile *p = &sbx_builtin_profiles[i];

		printf("%-10s %s\n", p->name, sbx_profile_summary(p->text, buf, sizeof(buf)));
	}
	return SBX_EXIT_OK;
}

static int profile_show(int argc, char **argv)
{
	struct sbx_config cfg;
	struct sbx_strv errs = {0};
	struct sbx_profile_vars vars;
	struct sbx_sudo_caller who;
	_cleanup_free_ char *declined = NULL;
	int r = parse_opts(argc, argv, usage_show, false, NULL);

	if (r)
		return r > 0 ? SBX_EXIT_OK : SBX_EXIT_USAGE;
	if (argc - optind != 1) {
		sbx_errorf("profile show: expected one profile NAME or FILE");
		fputs(usage_show, stderr);
		return SBX_EXIT_USAGE;
	}
	sbx_config_init(&cfg);
	sbx_profile_vars_from_process(&vars);
	r = sbx_profile_load_all(&cfg, argv[optind], &vars, &errs);
	/* As `sbx run` here would have it: under sudo, in a directory of the
	 * user who ran it, that user's ~ and ids (lib/profile/README.md). */
	if (r == 0 && sbx_profile_vars_for_sudo_caller(&cfg, &vars, &who, &declined)) {
		sbx_config_free(&cfg);
		sbx_config_init(&cfg);
		r = sbx_profile_load_all(&cfg, argv[optind], &vars, &errs);
		if (r == 0)
			sbx_config_act_for(&cfg, &who);
	}
	if (r < 0) {
		print_errors(&errs);
		r = SBX_EXIT_FAIL;
	} else {
		printf("# sbx profile '%s', resolved from:", argv[optind]);
		for (size_t i = 0; i < cfg.sources.n; i++)
			printf(" %s", cfg.sources.v[i]);
		printf("\n");
		if (cfg.sudo_user)
			printf(
			    "# for %s, who ran sudo in a directory of theirs (-u root for root)\n",
			    cfg.sudo_user);
		else if (declined)
			printf("# %s\n", declined);
		r = sbx_profile_write(&cfg, stdout) < 0 ? SBX_EXIT_FAIL : SBX_EXIT_OK;
	}
	sbx_strv_free(&errs);
	sbx_config_free(&cfg);
	return r;
}

static int profile_check(int argc, char **argv)
{
	int r = parse_opts(argc, argv, usage_check, false, NULL), status = SBX_EXIT_OK;

	if (r)
		return r > 0 ? SBX_EXIT_OK : SBX_EXIT_USAGE;
	if (optind >= argc) {
		sbx_errorf("profile check: expected at least one profile FILE or NAME");
		fputs(usage_check, stderr);
		return SBX_EXIT_USAGE;
	}
	for (int i = optind; i < argc; i++) {
		struct sbx_config cfg;
		struct sbx_strv errs = {0};

		sbx_config_init(&cfg);
		if (sbx_profile_load_all(&cfg, argv[i], NULL, &errs) < 0) {
			print_errors(&errs);
			status = SBX_EXIT_FAIL;
		} else {
			printf("%s: ok\n", argv[i]);
		}
		sbx_strv_free(&errs);
		sbx_config_free(&cfg);
	}
	return status;
}

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} subs[] = {
    {"check", profile_check},
    {"list", profile_list},
    {"show", profile_show},
};

int cmd_profile(struct sbx_cmd_ctx *ctx, int argc, char **argv)
{
	const char *names[SBX_ARRAY_SIZE(subs)];
	const char *near;

	if (argc < 2) {
		fputs(usage, stderr);
		return SBX_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		fputs(usage, stdout);
		return SBX_EXIT_OK;
	}
	for (size_t i = 0; i < SBX_ARRAY_SIZE(subs); i++) {
		if (strcmp(argv[1], subs[i].name) == 0)
			return subs[i].fn(argc - 1, argv + 1);
		names[i] = subs[i].name;
	}
	near = sbx_closest(argv[1], names, SBX_ARRAY_SIZE(names));
	if (near)
		return sbx_cmd_usage_error(ctx, "unknown profile command '%s' (did you mean '%s'?)",
					   argv[1], near);
	return sbx_cmd_usage_error(
	    ctx, "unknown profile command '%s' (expected list, show or check)", argv[1]);
}
