/* SPDX-License-Identifier: MIT */
/*
 * lib/util/proc.h - small readers of /proc/PID that several areas need to tell
 * whether a recorded pid is still the process they think it is (sbx exec
 * finding a jail's init, sbx destroy killing it, seccomp audit naming the
 * caller).
 */
#ifndef SBX_PROC_H
#define SBX_PROC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "util.h"

/*
 * The numbers on line "Key:" of /proc/PID/status (e.g. "NSpid", "PPid"):
 * returns how many there are (0 if the line or the process is missing) and
 * stores the last one in *last (-1 if none).  For NSpid the last number is
 * the pid inside the innermost pid namespace.
 */
int sbx_proc_status_nums(pid_t pid, const char *key, long *last);

/* Is pid the init of a pid namespace below its own (NSpid "... 1")? */
bool sbx_proc_is_ns_init(pid_t pid);

/* Does pid hold an fd open on the file *f (same st_dev and st_ino)? */
bool sbx_proc_holds_file(pid_t pid, const struct stat *f);

/* Append to out the mount points (of this process's mount namespace) equal
 * to or below the absolute, normalized dir; 0 or -errno. */
int sbx_proc_mounts_under(const char *dir, struct sbx_strv *out);

/*
 * Process identity, so a recorded pid is only signalled while it is still
 * the same process: start time in clock ticks since boot (/proc/PID/stat
 * field 22).  The run records it as init_start / supervisor_start.  It
 * counts 10 ms ticks: a pid reused within one tick has the same start
 * time, so a match is checked together with what the process must be (a
 * pid namespace's init, the holder of the sandbox's lock).
 */
int sbx_proc_starttime(pid_t pid, uint64_t *out);

/* State letter of /proc/PID/stat (R, S, D, Z...), 0 if the process is gone. */
char sbx_proc_state(pid_t pid);

/*
 * The argv strings' area, from argv[0] to the end of argv[argc - 1] as the
 * kernel lays them out: what /proc/PID/cmdline shows.  main() records it
 * once; a process of sbx's that must not show the caller's command line
 * (init and sbx exec's helper in the jail, the purger after sbx run has
 * returned) overwrites it.  sbx_proc_title_area(): NULL (and 0) when not
 * recorded or not laid out so.  sbx_proc_retitle(name): that area rewritten
 * to name, when every string in it is no longer used.
 */
void sbx_proc_title_init(int argc, char **argv);
char *sbx_proc_title_area(size_t *len);
void sbx_proc_retitle(const char *name);

/* Overwrite this process's argv strings (title, len bytes: all of them) with
 * name, so that /proc/self/cmdline reads just name.  Nothing when title is
 * NULL or too short. */
void sbx_proc_set_title(char *title, size_t len, const char *name);

#endif
