/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_profile.c - libFuzzer harness for profile parsing.
 *
 * Feeds arbitrary bytes to sbx_profile_load_string() (the INI parser, key
 * table, value validation and variable expansion) and, when the text
 * parses, writes it back with sbx_profile_write() and parses that again as
 * a kept sandbox's record is read (sbx_profile_load_written): the round
 * trip must succeed and write the same text.  Built and run by `make fuzz`.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fuzz_text.h"
#include "profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sbx_profile_vars vars = {
		.pwd = "/work/project", .home = "/home/dev", .user = "dev", .uid = 1000,
	};
	struct sbx_config cfg;
	struct sbx_err err = { 0 };
	char *text, *out = NULL;
	size_t outlen = 0;
	FILE *f;

	text = fuzz_text(data, size, 65536);
	if (!text)
		return 0;

	sbx_config_init(&cfg);
	if (sbx_profile_load_string(&cfg, text, "fuzz.ini", &vars, &err) == 0) {
		f = open_memstream(&out, &outlen);
		if (f) {
			sbx_profile_write(&cfg, f);
			fclose(f);
			struct sbx_config again;
			char *out2 = NULL;
			size_t out2len = 0;

			sbx_config_init(&again);
			sbx_err_clear(&err);
			/* as `sbx exec` reads a kept sandbox's profile: the same
			 * config again, so the same text written */
			if (sbx_profile_load_written(&again, out, "roundtrip.ini", &vars, &err) != 0) {
				fprintf(stderr, "round trip failed: %s\n--- input\n%s\n--- written\n%s\n",
					err.msg, text, out);
				abort();
			}
			f = open_memstream(&out2, &out2len);
			if (f) {
				sbx_profile_write(&again, f);
				fclose(f);
				if (strcmp(out, out2) != 0) {
					fprintf(stderr, "round trip differs\n--- input\n%s\n--- written\n%s\n--- again\n%s\n",
						text, out, out2);
					abort();
				}
				free(out2);
			}
			sbx_config_free(&again);
			free(out);
		}
	}
	sbx_config_free(&cfg);
	free(text);
	return 0;
}
