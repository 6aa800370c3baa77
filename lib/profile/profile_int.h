/* SPDX-License-Identifier: MIT */
/*
 * lib/profile/profile_int.h - private interface between the profile parser
 * (lib/profile/profile.c) and the key table with its setters (lib/profile/profile_keys.c).
 */
#ifndef SBX_PROFILE_INT_H
#define SBX_PROFILE_INT_H

#include <stdio.h>

#include "profile.h"

/* How a value is being applied. */
struct sbx_profile_setctx {
	const char *base_dir; /* relative rootfs/seccomp paths resolve here */
	bool cli;	      /* from the command line: relative SRC uses the cwd */
	/* the profile's text ended in " when host" (sbx_profile_key_when_host),
	 * before any variable was expanded: a path is never taken for it */
	bool host_only;
	/* watch = [KEY ...] PATH: the keys between the brackets, from the
	 * profile's text (NULL: none) */
	const char *keys;
};

struct sbx_profile_key;
typedef int (*sbx_profile_setter)(struct sbx_config *c, const char *key, const char *val,
				  const struct sbx_profile_setctx *sc, struct sbx_err *err);
typedef void (*sbx_profile_writer)(const struct sbx_config *c, FILE *out);

/* One row of the table that drives parsing, suggestions and `profile show`. */
struct sbx_profile_key {
	const char *section;
	const char *name; /* "*" in [secrets]: any NAME */
	bool repeat;	  /* repeated keys accumulate */
	sbx_profile_setter set;
	sbx_profile_writer write; /* NULL: written with another key */
	const char *syntax;	  /* value syntax, for messages and docs */
};

extern const struct sbx_profile_key sbx_profile_keys[];
extern const size_t sbx_profile_n_keys;
extern const char *const sbx_profile_sections[];
extern const size_t sbx_profile_n_sections;

bool sbx_profile_section_known(const char *section);
const struct sbx_profile_key *sbx_profile_key_find(const char *section, const char *name);
/* "unknown section [x] (did you mean [y]?)" into err. */
int sbx_profile_err_section(const char *section, struct sbx_err *err);
/* "unknown key 'k' in [s] (did you mean 'x'?)" into err. */
int sbx_profile_err_key(const char *section, const char *name, struct sbx_err *err);
/* Apply a known key; errors carry the key (or the secret's name). */
int sbx_profile_key_apply(struct sbx_config *c, const struct sbx_profile_key *k, const char *name,
			  const char *val, const struct sbx_profile_setctx *sc,
			  struct sbx_err *err);

/*
 * Keys whose value holds paths split at ':' (bind, ro-bind, overlay:
 * SRC:DST; tmpfs: DST:SIZE).  A ':' that belongs to a path is written
 * "\:" (and a backslash "\\"); a variable's value ($PWD, $HOME, ~) is
 * escaped so when it is expanded in them.
 */
bool sbx_profile_key_splits_paths(const struct sbx_profile_key *k);
/* Keys that take a trailing " when host" (bind, ro-bind, overlay). */
bool sbx_profile_key_when_host(const struct sbx_profile_key *k);
/*
 * How the writer puts a value after "key = " so that the reader gives it
 * back as it was: '$' doubled; a value with a control character (a
 * newline would end the line: the rest would read as keys of its own), a
 * blank at either end (the reader strips them), or that ends in " when
 * host" is quoted whole, $'...', with \\, \', \n, \t, \r and \xHH
 * inside ('#' and ';' as \x23 and \x3b).  A new string.
 */
char *sbx_profile_value_text(const char *val);
/* A path of such a value with ':' and '\' escaped, as the writer puts it
 * (a new string). */
char *sbx_profile_path_escape(const char *path);

/* The field of a [limits] key. */
uint64_t *sbx_profile_limit_field(struct sbx_config *c, const char *key);

/* Writers of each section (lib/profile/profile_write.c). */
void sbx_profile_write_sandbox(const struct sbx_config *c, FILE *out);
void sbx_profile_write_mounts(const struct sbx_config *c, FILE *out);
void sbx_profile_write_env(const struct sbx_config *c, FILE *out);
void sbx_profile_write_secrets(const struct sbx_config *c, FILE *out);
void sbx_profile_write_network(const struct sbx_config *c, FILE *out);
void sbx_profile_write_limits(const struct sbx_config *c, FILE *out);
void sbx_profile_write_security(const struct sbx_config *c, FILE *out);

/* Value formatting shared by the writer and tests. */
void sbx_profile_fmt_size(uint64_t v, char *buf, size_t len);

#endif
