/* SPDX-License-Identifier: MIT */
/* cmd/export.c - sbx export: a sandbox's change set as a tarball. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "export.h"
#include "lifecycle.h"

const char sbx_usage_export[] =
    "usage: sbx export [--oci] [--max-file SIZE] [--max-total SIZE] SANDBOX -o FILE\n"
    "\n"
    "Write what the sandbox changed (its writable layer) as a tarball, so a\n"
    "reviewer can apply or reject what the command did. Compression follows\n"
    "FILE's name: .tar, .tar.gz (.tgz), .tar.xz, .tar.zst, .tar.bz2; '-' is an\n"
    "uncompressed tar on stdout. Entries are owned by you (set-user-ID and\n"
    "set-group-ID bits dropped), and the paths it deleted are listed, NUL-\n"
    "terminated, in a last entry " SBX_EXPORT_DELETED ". To apply it in DIR:\n"
    "\n"
    "  cd DIR && tar -xOf FILE " SBX_EXPORT_DELETED " | xargs -0 -r rm -rf -- &&\n"
    "      tar -xf FILE --exclude=" SBX_EXPORT_DELETED "\n"
    "\n"
    "Fifos, sockets and device nodes are skipped with a warning; symlinks are\n"
    "stored, never followed; a file with holes is stored sparse (only its\n"
    "data is read and written).\n"
    "\n"
    "  -o, --output FILE   where to write the tarball\n"
    "      --oci           an OCI image layer instead: owners and modes as in\n"
    "                      the writable layer, deletions as .wh. whiteouts\n"
    "      --max-file SIZE   data of one file, at most (default 4G; unlimited)\n"
    "      --max-total SIZE  data of all files, at most (default 16G; unlimited):\n"
    "                      past either, nothing is written and the file is named\n";

/* SIZE or "unlimited" for --max-file / --max-total. */
static int cap_arg(struct sbx_cmd_ctx *ctx, const char *opt, const char *v, uint64_t *out)
{
	struct sbx_err err = {0};

	if (strcmp(v, "unlimited") == 0) {
		*out = UINT64_MAX;
		return 0;
	}
	if (sbx_parse_size(v, out, &err) < 0 || *out == 0) {
		return sbx_cmd_usage_error(ctx, "%s '%s': expected a size (512m, 8G) or unlimited",
					   opt, v);
	}
	return 0;
}

/* What was written, and what was left out. */
static void say_exported(const struct sbx_sandbox *sb, const char *file,
			 const struct sbx_export_opts *o, const struct sbx_export_stats *s)
{
	_cleanup_free_ char *f = NULL;
	char sp[96] = "";

	for (size_t i = 0; i < s->skipped.n && i < 20; i++)
		sbx_warnf("skipped %s", s->skipped.v[i]);
	if (s->skipped.n > 20)
		sbx_warnf("skipped %zu more", s->skipped.n - 20);
	if (s->errors)
		sbx_warnf("%zu entries of the writable layer could not be read", s->errors);
	if (strcmp(file, "-") == 0)
		return;
	f = sbx_escape_display(file);
	if (s->sparse)
		snprintf(sp, sizeof(sp), "; %zu sparse, %llu bytes with their holes", s->sparse,
			 (unsigned long long)s->sparse_apparent);
	fprintf(stderr,
		"sbx: exported %s to %s: %zu files (%llu bytes%s), %zu dirs, %zu "
		"symlinks, %zu deletions, %zu opaque dirs%s\n",
		sb->id, f, s->files, (unsigned long long)s->bytes, sp, s->dirs, s->symlinks,
		s->whiteouts, s->opaque,
		o->oci ? " (an OCI layer: .wh. whiteouts)"
		       : " (deletions listed in " SBX_EXPORT_DELETED ")");
	if (s->setid_dropped)
		sbx_warnf("dropped the set-user-ID or set-group-ID bit of %zu files "
			  "(--oci keeps them)",
			  s->setid_dropped);
}

int cmd_export(struct sbx_cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"oci", no_argument, NULL, 'O'},
	    {"max-file", required_argument, NULL, 'F'},
	    {"max-total", required_argument, NULL, 'T'},
	    {NULL, 0, NULL, 0},
	};
	struct sbx_state *st;
	struct sbx_sandbox sb;
	struct sbx_err err = {0};
	struct sbx_export_stats s;
	struct sbx_export_opts o = {.uid = getuid(), .gid = getgid()};
	const char *file = NULL;
	int c, rc = SBX_EXIT_OK;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:", longopts, NULL)) != -1) {
		if (c == 'o') {
			file = optarg;
		} else if (c == 'O') {
			o.oci = true;
		} else if (c == 'F' || c == 'T') {
			if (cap_arg(ctx, c == 'F' ? "--max-file" : "--max-total", optarg,
				    c == 'F' ? &o.max_file : &o.max_total) != 0)
				return SBX_EXIT_USAGE;
		} else {
			return sbx_cmd_bad_option(ctx, "export", c, argv[optind - 1], longopts);
		}
	}
	if (optind + 1 != argc || !file)
		return sbx_cmd_usage_error(ctx, "usage: sbx export [--oci] [--max-file SIZE] "
						"[--max-total SIZE] SANDBOX -o FILE");
	if (!sbx_export_compression(file, &err))
		return sbx_cmd_fail(ctx, &err, SBX_EXIT_USAGE);
	st = sbx_cmd_state(ctx, &err);
	if (!st || lc_open(st, argv[optind], false, &sb, &err) < 0)
		return sbx_cmd_fail(ctx, &err, SBX_EXIT_FAIL);
	if (sbx_export_write(&sb, file, &o, &s, &err) < 0) {
		rc = sbx_cmd_fail(ctx, &err, SBX_EXIT_FAIL);
	} else {
		say_exported(&sb, file, &o, &s);
	}
	sbx_strv_free(&s.skipped);
	sbx_sandbox_close(&sb);
	return rc;
}
