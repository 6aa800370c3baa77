/* SPDX-License-Identifier: MIT */
/* sbx.c - main: global options and the command table. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "util.h"

struct sbx_command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
	bool hidden;
};

/* Sorted by name; matched exactly (no prefix matching). */
static const struct sbx_command commands[] = {
    {"destroy", cmd_destroy, "kill and remove sandboxes", false},
    {"doctor", cmd_doctor, "check which isolation layers this host gives sbx", false},
    {"exec", cmd_exec, "run a command in an existing sandbox", false},
    {"export", cmd_export, "write a sandbox's change set as a tarball", false},
    {"image", cmd_image, "unpack a rootfs tarball into the image cache", true},
    {"inspect", cmd_inspect, "show what a sandbox ran, reached, changed and why it ended", false},
    {"profile", cmd_profile, "list, show and check isolation profiles", false},
    {"proxy", cmd_proxy, "run the allowlist proxy on the host (testing)", true},
    {"ps", cmd_ps, "list sandboxes", false},
    {"run", cmd_run, "run a command in a new sandbox", false},
};

static const char usage_text[] =
    "usage: sbx [--state-dir DIR] COMMAND [ARGS...]\n"
    "\n"
    "Run commands in ephemeral, namespaced jails built from isolation profiles.\n"
    "\n"
    "Commands:\n";

static void usage(FILE *out)
{
	fputs(usage_text, out);
	for (size_t i = 0; i < SBX_ARRAY_SIZE(commands); i++)
		if (!commands[i].hidden)
			fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fputs("\nGlobal options:\n"
	      "  --state-dir DIR  sandbox state (default /var/lib/sbx as root,\n"
	      "                   $XDG_STATE_HOME/sbx otherwise; env SBX_STATE_DIR)\n"
	      "  --version        print the version\n"
	      "  --help           this text; 'sbx help COMMAND' for a command\n"
	      "\nEnvironment: SBX_STATE_DIR, SBX_CACHE_DIR, NO_COLOR.\n"
	      "See sbx(1) and sbx-profile(5).\n",
	      out);
}

static const struct sbx_command *find_command(const char *name)
{
	for (size_t i = 0; i < SBX_ARRAY_SIZE(commands); i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

static int unknown_command(const char *name)
{
	const char *names[SBX_ARRAY_SIZE(commands)];
	size_t n = 0;
	const char *near;

	for (size_t i = 0; i < SBX_ARRAY_SIZE(commands); i++)
		if (!commands[i].hidden)
			names[n++] = commands[i].name;
	near = sbx_closest(name, names, n);
	if (near)
		fprintf(stderr, "sbx: unknown command '%s' (did you mean '%s'?)\n", name, near);
	else
		fprintf(stderr, "sbx: unknown command '%s' (see 'sbx --help')\n", name);
	return SBX_EXIT_USAGE;
}

static int run_command(const struct sbx_command *c, int argc, char **argv)
{
	/* getopt state is shared: reset it for the subcommand. */
	optind = 0;
	return c->fn(argc, argv);
}

int main(int argc, char **argv)
{
	int i = 1;

	sbx_globals.state_dir = getenv("SBX_STATE_DIR");
	sbx_globals.cache_dir = getenv("SBX_CACHE_DIR");
	sbx_globals.color = isatty(STDERR_FILENO) && !getenv("NO_COLOR");

	for (; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			usage(stdout);
			return 0;
		} else if (strcmp(a, "--version") == 0) {
			printf("sbx %s\n", SBX_VERSION);
			return 0;
		} else if (strcmp(a, "--list-commands") == 0) {
			for (size_t k = 0; k < SBX_ARRAY_SIZE(commands); k++)
				if (!commands[k].hidden)
					printf("%s\n", commands[k].name);
			return 0;
		} else if (strcmp(a, "--state-dir") == 0) {
			if (i + 1 >= argc) {
				fprintf(stderr, "sbx: option '--state-dir' needs a directory\n");
				return SBX_EXIT_USAGE;
			}
			sbx_globals.state_dir = argv[++i];
		} else if (strncmp(a, "--state-dir=", 12) == 0) {
			sbx_globals.state_dir = a + 12;
		} else {
			fprintf(stderr, "sbx: unknown option '%s' (see 'sbx --help')\n", a);
			return SBX_EXIT_USAGE;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return SBX_EXIT_USAGE;
	}
	if (strcmp(argv[i], "help") == 0) {
		const struct sbx_command *c;
		char *hargv[] = {NULL, (char *)"--help", NULL};

		if (i + 1 >= argc) {
			usage(stdout);
			return 0;
		}
		c = find_command(argv[i + 1]);
		if (!c)
			return unknown_command(argv[i + 1]);
		hargv[0] = argv[i + 1];
		return run_command(c, 2, hargv);
	}
	const struct sbx_command *c = find_command(argv[i]);

	if (!c)
		return unknown_command(argv[i]);
	return run_command(c, argc - i, argv + i);
}
