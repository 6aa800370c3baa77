/* SPDX-License-Identifier: MIT */
/*
 * lib/util/gitconfig.h - reading git's config files and .gitmodules for
 * the few variables sbx looks at (what git runs or reads later, on the
 * host).
 */
#ifndef SBX_GITCONFIG_H
#define SBX_GITCONFIG_H

#include <stddef.h>

#include "util.h"

/* Largest config file read; a longer one is read as far as this. */
#define SBX_GITCONFIG_MAX (1 << 20)

/*
 * Called for each variable: section and name in lower case (as git
 * compares them; section "" for a variable before any header), subsection as written (NULL when
 * none), value with git's quoting and escapes undone (NULL for a name with no '=', which git reads
 * as true).  Return 0 to stop.
 */
typedef int (*sbx_gitconfig_fn)(void *user, const char *section, const char *subsection,
				const char *name, const char *value);

/* What a variable names that git runs or reads later: the hooks
 * directory of core.hooksPath, or a file include.path or
 * includeIf.*.path names (relative to the including file). */
enum sbx_gitconfig_path {
	SBX_GITCONFIG_OTHER = 0,
	SBX_GITCONFIG_HOOKS,
	SBX_GITCONFIG_INCLUDE,
};
enum sbx_gitconfig_path sbx_gitconfig_path_kind(const char *section, const char *subsection,
						const char *name);

/*
 * Parse buf (len bytes, a git config file's syntax: `[section]`,
 * `[section "subsection"]`, the old `[section.subsection]`, a variable
 * after a header on the same line, `#` and `;` comments, values in
 * double quotes, backslash escapes and continuation lines).  Where git
 * would refuse the file (and so run nothing from it), reading stops.
 * Returns how many variables were passed to fn.
 */
size_t sbx_gitconfig_parse(const char *buf, size_t len, sbx_gitconfig_fn fn, void *user);

/*
 * The file open at fd (taken, closed): a regular file, read up to
 * SBX_GITCONFIG_MAX.  -errno when it is not one or cannot be read.
 */
int sbx_gitconfig_parse_fd(int fd, sbx_gitconfig_fn fn, void *user);

/*
 * The config files of the repository whose work tree is top and whose
 * .git is a file (a linked worktree's, a submodule's), as git finds them:
 * top/.git says "gitdir: DIR" (relative to top), DIR/commondir names the
 * common directory (relative to DIR; DIR itself without one).  Pushes
 * COMMON/config and DIR/config.worktree (each may be absent).  0, or
 * -errno when .git cannot be read or names no gitdir.
 */
int sbx_git_file_configs(const char *top, struct sbx_strv *out);

#endif
