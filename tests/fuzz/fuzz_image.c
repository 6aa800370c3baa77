/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_image.c - libFuzzer harness for the image unpacker
 * (lib/image/image_unpack.c, lib/image/image_read.c): each input is an archive unpacked
 * into a fresh scratch directory, which is removed again: from memory by
 * sbx_image_unpack_mem(), or, when it starts like a compressed file, from a
 * memfd by sbx_image_unpack_fd() so the decompressor thread and its ring
 * are fuzzed too.  Besides ASan/UBSan findings, it aborts when an input makes the
 * unpacker touch anything next to the scratch directory (a sentinel file
 * and the listing of the parent are checked after every input).
 *
 * Build and run (clang from Debian; lib/profile/builtin_profiles.c is not needed):
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
 *       -D_GNU_SOURCE -Ilib \
 *       tests/fuzz/fuzz_image.c lib/image/image_unpack.c lib/image/image_read.c \
 *       lib/util/util.c lib/util/rmtree.c lib/util/fault.c \
 *       $(pkg-config --cflags --libs libarchive libcrypto) -o fuzz_image
 *   mkdir -p /tmp/fuzz-image-corpus
 *   ./fuzz_image -max_total_time=120 -rss_limit_mb=2048 -timeout=20 \
 *       /tmp/fuzz-image-corpus tests/fuzz/corpus/image
 *
 * (the first directory collects new inputs, the seeds stay untouched).
 * The whole of lib/ (lib/ *.c) also links, with the other libraries of the
 * Makefile's PKGS.  Scratch space: $TMPDIR or /tmp.
 */
#include <dirent.h>
#include <stdbool.h>
#include <fcntl.h>
#include <linux/limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image.h"
#include "util.h"
#include "rmtree.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int base_fd = -1;
static char base_path[PATH_MAX];
static unsigned long iter;
static const char sentinel_text[] = "sentinel\n";

/* libFuzzer exits through exit(): remove the scratch directory then. */
static void remove_scratch(void)
{
	if (base_path[0])
		(void)sbx_rm_rf_at(AT_FDCWD, base_path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");
	char base[PATH_MAX];
	int fd;

	(void)argc;
	(void)argv;
	snprintf(base, sizeof(base), "%s/sbx-fuzz-image-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(base))
		abort();
	base_fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	fd = openat(base_fd, "sentinel", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (base_fd < 0 || fd < 0 || write(fd, sentinel_text, strlen(sentinel_text)) < 0)
		abort();
	close(fd);
	snprintf(base_path, sizeof(base_path), "%s", base);
	atexit(remove_scratch);
	fprintf(stderr, "fuzz_image: scratch directory %s\n", base);
	return 0;
}

/* Only "sentinel" (unchanged) and nothing else may be next to the scratch dir. */
static void check_outside(void)
{
	char buf[64] = "";
	int fd = openat(base_fd, "sentinel", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	int dfd = openat(base_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *de;
	DIR *d;

	if (fd < 0 || read(fd, buf, sizeof(buf) - 1) < 0 || strcmp(buf, sentinel_text) != 0)
		abort();
	close(fd);
	d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d)
		abort();
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    strcmp(de->d_name, "sentinel"))
			abort(); /* the unpacker wrote next to its target */
	closedir(d);
}

/* Compressed-looking inputs go through a file, as the cache reads them. */
static bool looks_compressed(const uint8_t *d, size_t n)
{
	return (n >= 2 && d[0] == 0x1f && d[1] == 0x8b) || (n >= 3 && !memcmp(d, "BZh", 3)) ||
	       (n >= 4 && !memcmp(d, "\xfd" "7zX", 4)) || (n >= 4 && !memcmp(d, "\x28\xb5\x2f\xfd", 4)) ||
	       (n >= 4 && !memcmp(d, "\x04\x22\x4d\x18", 4)) || (n >= 4 && !memcmp(d, "LZIP", 4));
}

static int unpack_via_fd(const uint8_t *data, size_t size, int dfd,
			 const struct sbx_image_opts *o, struct sbx_image_stats *st,
			 struct sbx_err *err)
{
	int fd = memfd_create("fuzz-image", MFD_CLOEXEC);
	int r;

	if (fd < 0 || sbx_write_all(fd, data, size) < 0 || lseek(fd, 0, SEEK_SET) != 0)
		abort();
	r = sbx_image_unpack_fd(fd, dfd, o, st, err);
	close(fd);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sbx_image_opts o = { .max_bytes = 64ULL << 20, .max_entries = 20000 };
	struct sbx_image_stats st;
	struct sbx_err err = { 0 };
	char name[32];
	int dfd;

	snprintf(name, sizeof(name), "t%lu", iter++);
	if (mkdirat(base_fd, name, 0700) < 0)
		abort();
	dfd = openat(base_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		abort();
	if (looks_compressed(data, size))
		(void)unpack_via_fd(data, size, dfd, &o, &st, &err);
	else
		(void)sbx_image_unpack_mem(data, size, dfd, &o, &st, &err);
	close(dfd);
	/* sbx_rm_rf_at copes with the read-only directories an archive makes. */
	if (sbx_rm_rf_at(base_fd, name) < 0)
		abort();
	check_outside();
	return 0;
}
