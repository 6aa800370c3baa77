/* SPDX-License-Identifier: MIT */
/*
 * lib/jail/exec_explain.c - why a command could not be started (exit 126/127),
 * in one line a user can act on.
 *
 * Two halves.  sbx_exec_diagnose() runs in the jail, right after execve
 * failed, and says what the jail sees: not on its PATH (shown), a file
 * without the execute bit, a directory, a noexec mount, a script whose
 * interpreter or a binary whose dynamic loader is missing.  sbx_exec_hint()
 * runs in the supervisor, on the host, for a command that was not found:
 * if the file exists on the host, which [filesystem] entry of the profile
 * hides it (a private tmpfs such as /tmp, a mask, an image root without
 * the host's files) and the option that would show it; under sudo, which
 * resets PATH, where the user's own copy is and to give its full path.
 */
#include "jail.h"

#include <elf.h>
#include <fcntl.h>
#include <glob.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

/* The interpreter a script's "#!" line or an ELF's PT_INTERP names. */
static bool read_interp(const char *path, char *out, size_t len)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	unsigned char buf[512];
	ssize_t n;

	if (fd < 0 || (n = pread(fd, buf, sizeof(buf) - 1, 0)) < 4)
		return false;
	buf[n] = '\0';
	if (buf[0] == '#' && buf[1] == '!') {
		const char *p = (const char *)buf + 2;
		size_t k;

		p += strspn(p, " \t");
		k = strcspn(p, " \t\r\n");
		if (k == 0 || k >= len)
			return false;
		memcpy(out, p, k);
		out[k] = '\0';
		return true;
	}
	if (memcmp(buf, ELFMAG, SELFMAG) == 0 && buf[EI_CLASS] == ELFCLASS64 &&
	    (size_t)n >= sizeof(Elf64_Ehdr)) {
		Elf64_Ehdr eh;

		memcpy(&eh, buf, sizeof(eh));
		for (unsigned i = 0; i < eh.e_phnum && i < 64; i++) {
			Elf64_Phdr ph;

			if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * eh.e_phentsize)) !=
			    (ssize_t)sizeof(ph))
				return false;
			if (ph.p_type != PT_INTERP || ph.p_filesz == 0 || ph.p_filesz >= len)
				continue;
			if (pread(fd, out, ph.p_filesz, (off_t)ph.p_offset) != (ssize_t)ph.p_filesz)
				return false;
			out[ph.p_filesz] = '\0';
			out[strcspn(out, "\n")] = '\0';
			return out[0] == '/';
		}
	}
	return false;
}

/* The first PATH entry holding `file`, into out (exists, executable or not). */
static bool path_find(const char *file, const char *path, char *out, size_t len)
{
	for (const char *p = path; p && *p;) {
		const char *end = strchrnul(p, ':');
		struct stat st;

		snprintf(out, len, "%.*s%s%s", (int)(end - p), p, end > p ? "/" : "", file);
		if (stat(out, &st) == 0)
			return true;
		p = *end ? end + 1 : end;
	}
	return false;
}

/* Why an existing file `path` would not run (EACCES). */
static void why_not_executable(const char *shown, const char *path, char *out, size_t len)
{
	struct stat st;
	struct statvfs v;

	if (stat(path, &st) < 0)
		snprintf(out, len, "'%s': cannot be executed (%s)", shown, strerror(EACCES));
	else if (S_ISDIR(st.st_mode))
		snprintf(out, len, "'%s': is a directory, not a program", path);
	else if (!S_ISREG(st.st_mode))
		snprintf(out, len, "'%s': is not a regular file", path);
	else if (statvfs(path, &v) == 0 && (v.f_flag & ST_NOEXEC))
		snprintf(out, len, "'%s': is on a mount that does not allow execution (noexec)",
			 path);
	else if (!(st.st_mode & 0111))
		snprintf(out, len, "'%s': is not executable (mode %04o; chmod +x it)", path,
			 (unsigned)(st.st_mode & 07777));
	else
		snprintf(out, len, "'%s': cannot be executed by the jail's user (mode %04o)", path,
			 (unsigned)(st.st_mode & 07777));
}

bool sbx_exec_diagnose(const char *file, const char *path, int errnum, char *out, size_t len)
{
	struct stat st;
	char found[4096], interp[256];
	bool slash = strchr(file, '/') != NULL;
	const char *p = file;

	if (!slash && path_find(file, path, found, sizeof(found)))
		p = found;
	else if (!slash && (errnum == ENOENT || errnum == ENOTDIR)) {
		snprintf(out, len, "'%s': not found on the jail's PATH (%s)", file,
			 path && *path ? path : "empty");
		return true;
	}
	switch (errnum) {
	case ENOENT:
		if (access(p, F_OK) < 0) {
			snprintf(out, len, "'%s': no such file in the jail", file);
			return true;
		} else if (read_interp(p, interp, sizeof(interp)) && access(interp, F_OK) < 0)
			snprintf(out, len, "'%s': its interpreter '%s' is not in the jail", p,
				 interp);
		else
			snprintf(out, len, "'%s': cannot be executed (%s)", p, strerror(errnum));
		return false;
	case ENOTDIR:
		snprintf(out, len, "'%s': a directory in that path is not a directory", file);
		return true;
	case EACCES:
		why_not_executable(file, p, out, len);
		/* a masked file is /dev/null: as good as absent */
		return stat(p, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
	case ENOEXEC:
		snprintf(out, len,
			 "'%s': not a program this kernel can run (no '#!' line, not an ELF "
			 "binary for this machine)",
			 p);
		return false;
	default:
		snprintf(out, len, "'%s': cannot be executed (%s)", p, strerror(errnum));
		return false;
	}
}

/* The directory to bind so that `file` (a host path) works in the jail: its
 * own directory, or, when it is a symlink into a sibling tree (npm's
 * bin/claude -> ../lib/node_modules/...), the directory holding both. */
static void bind_dir(const char *file, char *out, size_t len)
{
	_cleanup_free_ char *real = realpath(file, NULL);
	_cleanup_free_ char *rdir = NULL;
	char *slash;
	size_t common = 0, i;

	snprintf(out, len, "%s", file);
	slash = strrchr(out, '/');
	if (slash)
		slash[slash == out ? 1 : 0] = '\0';
	rdir = realpath(out, NULL);
	if (!real || !rdir || sbx_path_under(real, rdir))
		return;
	for (i = 0; rdir[i] && rdir[i] == real[i]; i++)
		if (rdir[i] == '/')
			common = i;
	snprintf(out, len, "%.*s", common ? (int)common : 1, rdir);
}

/* A file on the host that the jail would have run: found through `path`
 * (or the caller's own PATH), or file itself when it names a path. */
static bool host_candidate(const char *file, const char *path, const char *cwd, char *out,
			   size_t len)
{
	const char *own = getenv("PATH");

	if (strchr(file, '/')) {
		if (file[0] == '/')
			snprintf(out, len, "%s", file);
		else if (cwd)
			snprintf(out, len, "%s/%s", cwd, file);
		else
			return false;
		return access(out, X_OK) == 0;
	}
	if (path_find(file, path, out, len) && access(out, X_OK) == 0)
		return true;
	return own && path_find(file, own, out, len) && access(out, X_OK) == 0;
}

/* The HOME the profile sets: the sudo caller's home when it acts for them. */
static const char *set_home(const struct sbx_config *cfg)
{
	const char *home = NULL;

	for (size_t i = 0; i < cfg->env_set.n; i++)
		if (strncmp(cfg->env_set.v[i], "HOME=", 5) == 0)
			home = cfg->env_set.v[i] + 5;
	return home;
}

/*
 * sudo resets PATH to its secure_path: a command the user installed in a
 * bin directory of their own (npm's prefix, ~/.local/bin, nvm's node) is
 * on their PATH, not on sudo's.  Where it is, if in one of those, and to
 * give its full path.
 */
static bool sudo_hint(const struct sbx_config *cfg, const char *file, char *out, size_t len)
{
	static const char *const dirs[] = {
	    ".local/bin",
	    "bin",
	    ".npm-global/bin",
	    ".npm-packages/bin",
	    ".nvm/versions/node/*/bin",
	    ".volta/bin",
	    ".bun/bin",
	    ".deno/bin",
	    ".cargo/bin",
	    "go/bin",
	    ".yarn/bin",
	};
	const char *home = set_home(cfg);
	char pat[4096];

	if (!cfg->sudo_user || strchr(file, '/'))
		return false;
	for (size_t i = 0; home && i < SBX_ARRAY_SIZE(dirs); i++) {
		glob_t g;
		bool found = false;

		snprintf(pat, sizeof(pat), "%s/%s/%s", home, dirs[i], file);
		if (glob(pat, GLOB_NOESCAPE, NULL, &g) == 0) {
			/* nvm: the last (newest-named) version that has it */
			for (size_t k = g.gl_pathc; k-- > 0 && !found;)
				if (access(g.gl_pathv[k], X_OK) == 0) {
					snprintf(
					    out, len,
					    "'%s' is in a bin directory of %s's, on their PATH "
					    "but not on sudo's (sudo resets PATH to its "
					    "secure_path): give its full path, sudo sbx run ... "
					    "-- %s",
					    g.gl_pathv[k], cfg->sudo_user, g.gl_pathv[k]);
					found = true;
				}
		}
		globfree(&g);
		if (found)
			return true;
	}
	snprintf(out, len,
		 "sudo resets PATH to its secure_path: a command on %s's own PATH needs its full "
		 "path, sudo sbx run ... -- \"$(command -v %s)\"",
		 cfg->sudo_user, file);
	return true;
}

bool sbx_exec_hint(const struct sbx_config *cfg, bool image, const char *file, const char *path,
		   const char *cwd, char *out, size_t len)
{
	char host[4096], dir[4096];
	const char *prof = cfg->profile_name ? cfg->profile_name : "?";

	if (!host_candidate(file, path, cwd, host, sizeof(host)))
		return sudo_hint(cfg, file, out, len);
	bind_dir(host, dir, sizeof(dir));
	/* Masks are mounted last, on top of everything. */
	for (size_t i = 0; i < cfg->n_mounts; i++) {
		const struct sbx_mount *m = &cfg->mounts[i];

		if (m->kind == SBX_MNT_MASK && m->dst && sbx_path_under(host, m->dst)) {
			snprintf(out, len,
				 "'%s' is on the host, but the profile hides it (mask = %s)", host,
				 m->dst);
			return true;
		}
	}
	/* Of the others, the last one that covers it decides. */
	for (size_t i = cfg->n_mounts; i-- > 0;) {
		const struct sbx_mount *m = &cfg->mounts[i];

		if (m->kind == SBX_MNT_MASK || !m->dst || !sbx_path_under(host, m->dst))
			continue;
		if (m->kind != SBX_MNT_TMPFS)
			return false; /* shown from elsewhere: the file is not there */
		snprintf(out, len,
			 "'%s' is on the host, but %s is a private tmpfs in the jail (profile %s); "
			 "--ro-bind %s shows it",
			 host, m->dst, prof, dir);
		return true;
	}
	if (!image)
		return false;
	snprintf(out, len,
		 "'%s' is on the host, but the jail's root is the image %s; --ro-bind %s "
		 "shows it",
		 host, cfg->rootfs ? cfg->rootfs : "", dir);
	return true;
}
