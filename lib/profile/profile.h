/* SPDX-License-Identifier: MIT */
/* lib/profile/profile.h - INI isolation profiles (inih) into struct sbx_config. */
#ifndef SBX_PROFILE_H
#define SBX_PROFILE_H

#include "config.h"

/* Variables a profile value may use ($PWD $HOME $USER $UID). */
struct sbx_profile_vars {
	const char *pwd, *home, *user;
	uid_t uid;
};
/* Fill from the process (getcwd, $HOME; the user name is looked up when
 * first used: user is NULL here).  Strings owned by a static buffer. */
void sbx_profile_vars_from_process(struct sbx_profile_vars *v);
/* Under sudo, should c (loaded with v) be the run of the user who ran
 * sudo (sbx_config_sudo_caller_check(), v->pwd)?  Then v takes that
 * user's home, name and uid (pointing into *who) for loading c again,
 * which sbx_config_act_for(c, who) then completes.  *declined: why not,
 * for the run log, or NULL (malloc'd). */
bool sbx_profile_vars_for_sudo_caller(const struct sbx_config *c, struct sbx_profile_vars *v,
				      struct sbx_sudo_caller *who, char **declined);

/*
 * Load NAME (a built-in profile name) or a FILE path (anything with a '/'
 * or ending in .ini, or an existing file) into cfg, which must have been
 * sbx_config_init()ed.  `extends` is followed (built-in name, or a path
 * relative to the including file), with cycle detection.  Errors name
 * "file:line", the key and a suggestion.
 */
int sbx_profile_load(struct sbx_config *cfg, const char *name_or_path,
		     const struct sbx_profile_vars *vars, struct sbx_err *err);

/*
 * Like sbx_profile_load(), but collect every problem (for `sbx profile
 * check`): returns 0, or -EINVAL with one message per problem appended to
 * errors (each naming 'file:line').
 */
int sbx_profile_load_all(struct sbx_config *cfg, const char *name_or_path,
			 const struct sbx_profile_vars *vars, struct sbx_strv *errors);

/*
 * Checks of the final config, after the command-line options were applied:
 * a profile with `rootfs = required` (strict) was given --rootfs, and
 * `no-new-privs = no` only with kept capabilities.  `sbx run` calls this.
 */
int sbx_profile_finish(const struct sbx_config *cfg, struct sbx_err *err);

/*
 * Expand $PWD $HOME $USER $UID (and ${NAME}), $$ (a literal '$') and a
 * leading ~/ in a profile value.  Any other $NAME is an error.
 */
int sbx_profile_expand(const char *in, const struct sbx_profile_vars *vars, char **out,
		       struct sbx_err *err);

/* Parse an in-memory INI text (used for built-ins and by the fuzzer). */
int sbx_profile_load_string(struct sbx_config *cfg, const char *text, const char *origin,
			    const struct sbx_profile_vars *vars, struct sbx_err *err);
/* The same for a text sbx_profile_write() wrote (a record's resolved
 * profile): no inline comments, so a value keeps a " #" or " ;" of a
 * path ("My Project #2"); full-line comments are still skipped. */
int sbx_profile_load_written(struct sbx_config *cfg, const char *text, const char *origin,
			     const struct sbx_profile_vars *vars, struct sbx_err *err);

/*
 * Apply one key as the profile parser would (used by `sbx run` options so
 * one code path validates both): section is "sandbox", "filesystem", ...
 * Repeated keys accumulate.  No variable expansion here.
 */
int sbx_profile_set(struct sbx_config *cfg, const char *section, const char *key, const char *value,
		    struct sbx_err *err);

/* Write the resolved profile back as INI (for `sbx profile show`). */
int sbx_profile_write(const struct sbx_config *cfg, FILE *out);

/* Built-in profiles compiled from the .ini files in profiles/. */
struct sbx_builtin_profile {
	const char *name;
	const char *text;
};
extern const struct sbx_builtin_profile sbx_builtin_profiles[];
extern const size_t sbx_n_builtin_profiles;
const char *sbx_profile_builtin(const char *name); /* text or NULL */
/* One-line summary of a built-in (first comment line of its file). */
const char *sbx_profile_summary(const char *text, char *buf, size_t len);

#endif
