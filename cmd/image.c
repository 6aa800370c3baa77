/* SPDX-License-Identifier: MIT */
/*
 * cmd/image.c - sbx image: the hidden entry point to the image cache that
 * `run --rootfs` uses, for tests and benchmarks (the progress bar and
 * warnings it shares with `run` are cmd/image_ui.c's).
 */
#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"
#include "image_ui.h"

const char sbx_usage_image[] =
    "usage: sbx image unpack [--json] [--no-cache] [LIMITS] TARBALL|DIR\n"
    "       sbx image unpack-to [--json] [LIMITS] TARBALL DIR\n"
    "\n"
    "unpack     resolve a rootfs as 'run --rootfs' does: a tarball is unpacked\n"
    "           once into CACHE/images/ (keyed by its SHA-256) and reused; prints\n"
    "           the image directory\n"
    "unpack-to  unpack a tarball into DIR (created if missing, must be empty)\n"
    "           with the same unpacker, bypassing the cache (benchmarks)\n"
    "\n"
    "  --json             print the directory and unpack statistics as JSON\n"
    "  --no-cache         hash and unpack even if the tarball is known\n"
    "  --max-size SIZE    cap on unpacked bytes (default 16G)\n"
    "  --max-entries N    cap on the number of entries (default 1000000)\n"
    "\n"
    "As root, files keep the tarball's owners; otherwise they belong to you.\n"
    "Hostile entries (absolute paths, '..', paths through symlinks, devices,\n"
    "fifos) are skipped with a warning; setuid/setgid bits are cleared.\n";

struct image_args {
	const char *sub;
	bool json, no_cache;
	uint64_t max_bytes, max_entries;
	const char *src, *dest;
};

/* Parse argv (argv[0] "image", argv[1] the subcommand): 0, an exit status,
 * or -1 when --help was printed. */
static int parse_args(int argc, char **argv, struct image_args *a)
{
	static const struct option longopts[] = {
	    {"json", no_argument, NULL, 'j'},
	    {"no-cache", no_argument, NULL, 'n'},
	    {"max-size", required_argument, NULL, 's'},
	    {"max-entries", required_argument, NULL, 'e'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct sbx_err err = {0};
	int c, nargs;

	*a = (struct image_args){0};
	if (argc < 2) {
		fputs(sbx_usage_image, stderr);
		return SBX_EXIT_USAGE;
	}
	a->sub = argv[1];
	if (strcmp(a->sub, "unpack") && strcmp(a->sub, "unpack-to")) {
		sbx_errorf("unknown image command '%s' (expected unpack or unpack-to)", a->sub);
		return SBX_EXIT_USAGE;
	}
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc - 1, argv + 1, "+:", longopts, NULL)) != -1) {
		int r = 0;

		switch (c) {
		case 'j':
			a->json = true;
			break;
		case 'n':
			a->no_cache = true;
			break;
		case 's':
			r = sbx_parse_size(optarg, &a->max_bytes, &err);
			break;
		case 'e':
			r = sbx_parse_u64(optarg, &a->max_entries, &err);
			break;
		case 'h':
			fputs(sbx_usage_image, stdout);
			return -1;
		default:
			sbx_cmd_option_error(&err, NULL, "image", argv[optind], longopts, c == ':');
			sbx_print_err(&err);
			return SBX_EXIT_USAGE;
		}
		if (r < 0) {
			sbx_print_err(&err);
			return SBX_EXIT_USAGE;
		}
	}
	nargs = argc - 1 - optind;
	if (nargs != (strcmp(a->sub, "unpack") == 0 ? 1 : 2)) {
		sbx_errorf("'image %s' needs %s", a->sub,
			   strcmp(a->sub, "unpack") == 0 ? "a TARBALL or DIR"
							 : "a TARBALL and a DIR");
		return SBX_EXIT_USAGE;
	}
	a->src = argv[1 + optind];
	a->dest = nargs == 2 ? argv[2 + optind] : NULL;
	return 0;
}

static void print_result(const struct image_args *a, const char *dir,
			 const struct sbx_image_stats *s)
{
	json_t *j;

	if (!a->json) {
		printf("%s\n", dir);
		return;
	}
	j = json_pack("{s:s, s:s, s:b, s:b, s:I, s:I, s:I, s:I, s:f, s:f}", "dir", dir, "sha256",
		      s->sha256, "cached", s->cached, "is_dir", s->is_dir, "bytes",
		      (json_int_t)s->bytes, "entries", (json_int_t)s->entries, "skipped",
		      (json_int_t)s->skipped, "cleared", (json_int_t)s->cleared, "hash_ms",
		      s->hash_ms, "unpack_ms", s->unpack_ms);
	json_dumpf(j, stdout, JSON_COMPACT);
	putchar('\n');
	json_decref(j);
}

static int open_empty_dir(const char *dir, struct sbx_err *err)
{
	DIR *d;
	struct dirent *de;
	int fd;

	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return sbx_err_set(err, errno, "cannot create '%s'", dir);
	d = opendir(dir);
	if (!d)
		return sbx_err_set(err, errno, "cannot open '%s'", dir);
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			closedir(d);
			return sbx_err_set(err, ENOTEMPTY, "'%s' is not empty", dir);
		}
	fd = fcntl(dirfd(d), F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		fd = sbx_err_set(err, errno, "cannot open '%s'", dir);
	closedir(d);
	return fd;
}

static int unpack_to(const struct image_args *a, struct sbx_image_opts *o,
		     struct sbx_image_stats *s, struct sbx_err *err)
{
	_cleanup_close_ int in = open(a->src, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	_cleanup_close_ int dfd = -1;

	if (in < 0)
		return sbx_err_set(err, errno, "cannot open '%s'", a->src);
	dfd = open_empty_dir(a->dest, err);
	if (dfd < 0)
		return dfd;
	return sbx_image_unpack_fd(in, dfd, o, s, err) < 0
		   ? sbx_err_wrap(err, "cannot unpack '%s'", a->src)
		   : 0;
}

int cmd_image(struct sbx_cmd_ctx *ctx, int argc, char **argv)
{
	struct image_args a;
	struct sbx_image_opts o = {0};
	struct sbx_image_stats s = {0};
	struct sbx_cmd_image_ui ui;
	struct sbx_state *st;
	struct sbx_err err = {0};
	_cleanup_free_ char *dir = NULL;
	int r;

	r = parse_args(argc, argv, &a);
	if (r)
		return r < 0 ? SBX_EXIT_OK : r;
	o.max_bytes = a.max_bytes;
	o.max_entries = a.max_entries;
	o.no_cache = a.no_cache;
	o.preserve_owner = geteuid() == 0;
	sbx_cmd_image_ui_setup(&ui, &o, a.src, ctx->color);
	if (a.dest) {
		r = unpack_to(&a, &o, &s, &err);
	} else {
		st = sbx_cmd_state(ctx, &err);
		r = st ? 0 : -1;
		if (st) {
			o.cache_dir = st->cache_dir;
			r = sbx_image_prepare(a.src, &o, &dir, &s, &err);
		}
	}
	sbx_cmd_image_ui_finish(&ui);
	if (r != 0)
		return sbx_cmd_fail(ctx, &err, SBX_EXIT_FAIL);
	print_result(&a, a.dest ? a.dest : dir, &s);
	return SBX_EXIT_OK;
}
