/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_text.h - a fuzz input as a NUL-terminated copy (the
 * parsers take C strings), or NULL when it is over max bytes.
 */
#ifndef SBX_FUZZ_TEXT_H
#define SBX_FUZZ_TEXT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline char *fuzz_text(const uint8_t *data, size_t size, size_t max)
{
	char *text = size <= max ? malloc(size + 1) : NULL;

	if (text) {
		memcpy(text, data, size);
		text[size] = '\0';
	}
	return text;
}

#endif
