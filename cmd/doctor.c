/* SPDX-License-Identifier: MIT */
/* cmd/doctor.c - sbx doctor [--json]: what this host gives sbx (lib/jail/doctor.c). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "doctor.h"

const char sbx_usage_doctor[] =
    "usage: sbx doctor [--json]\n"
    "\n"
    "Probe, for real, the isolation layers this host gives sbx, as the calling\n"
    "user (and, as root, also as an ordinary user): user, mount, pid and network\n"
    "namespaces, overlayfs, a fresh /proc, seccomp, idmapped mounts or\n"
    "subordinate ids, cgroups; and what sbx uses or falls back to for each, with\n"
    "the fix where one is missing.  Exit status 1 when a run could not be\n"
    "isolated here (sbx run then refuses to run: it never runs a command\n"
    "unsandboxed).\n"
    "\n"
    "  --json   the report as one JSON object on stdout\n";

int cmd_doctor(struct sbx_cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"json", no_argument, NULL, 'j'},
	    {NULL, 0, NULL, 0},
	};
	struct sbx_doctor d;
	bool json = false;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
		if (c == 'j') {
			json = true;
		} else {
			return sbx_cmd_bad_option(ctx, "doctor", c, argv[optind - 1], longopts);
		}
	}
	if (optind != argc) {
		return sbx_cmd_usage_error(ctx,
					   "doctor takes no arguments (see 'sbx doctor --help')");
	}
	{
		struct sbx_err e = {0};
		/* Where sandboxes would go (not created: the doctor changes nothing). */
		const struct sbx_state *st = sbx_cmd_state(ctx, &e);

		sbx_doctor_run(&d, st ? st->state_dir : NULL);
	}
	if (json) {
		json_t *j = sbx_doctor_json(&d);

		json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
		json_decref(j);
	} else {
		printf("sbx doctor: %s, %s (uid %u)%s%s\n", d.kernel,
		       geteuid() == 0 ? "as root" : "as an ordinary user", (unsigned)geteuid(),
		       d.where[0] ? ", inside " : "", d.where);
		for (size_t i = 0; i < d.n; i++) {
			const struct sbx_doctor_check *k = &d.c[i];

			printf("  %-9s %-22s %s\n", sbx_doctor_status_name(k->status), k->title,
			       k->detail);
			if (k->fix[0])
				printf("  %-9s %-22s fix: %s\n", "", "", k->fix);
		}
		if (d.isolated)
			printf("sbx can isolate a run here.\n");
		else
			printf("sbx cannot isolate a run here: sbx run will refuse (see above).\n");
	}
	fflush(stdout);
	return d.isolated ? SBX_EXIT_OK : SBX_EXIT_FAIL;
}
