/* SPDX-License-Identifier: MIT */
/*
 * lib/util/fault.h - fault injection for the reliability tests.
 *
 * sbx_fault_point(NAME) kills the calling process with SIGKILL when the
 * environment variable SBX_FAULT names that point (SBX_FAULT=NAME or a
 * comma list NAME,NAME...), as `kill -9` of sbx would at that moment.
 * NAME@N fires at the Nth time the point is reached (the hits of all the
 * listed points count together), e.g. during-unpack@50 after 50 entries.
 * The variable is read once; when it is unset a point costs one load and a
 * branch.  tests/integration/faults_kill.sh drives the points:
 *
 *   after-clone    supervisor, right after the jail's init is cloned
 *   during-mounts  supervisor, GO sent, init building the root
 *   during-disk    supervisor, as root: the layers' image mounted in its own
 *                  mount namespace after the clone, init waiting for it
 *   before-exec    supervisor, the command's EXEC message arrived
 *   after-record   the running record was saved (saver thread)
 *   during-run     supervisor, about to supervise the running command
 *   during-unpack  image unpack loop, after a few entries
 *   before-handoff-exit  sbx run's very end, its purger handed the memory
 *                  (lib/state/trash.c), before it marks a normal end
 *                  (tests/integration/run_trash.sh)
 */
#ifndef SBX_FAULT_H
#define SBX_FAULT_H

#include <stdbool.h>

void sbx_fault_point(const char *name);

/*
 * sbx_fault_pause(NAME) sleeps 1.5 s instead when SBX_FAULT names it: a
 * race window held open for a test.
 *
 *   destroy-after-read  destroy, between reading a record and trying the
 *                       lock (tests/integration/lifecycle_run.sh)
 *   open-after-read     any command opening a sandbox, between reading
 *                       its record and trying its lock (the same test)
 *   purger-start        a run's purger, before its work (lib/state/trash.c;
 *                       tests/integration/run_trash.sh)
 *   init-after-go       the jail's init, right after GO, while the
 *                       supervisor mounts the layers' image
 *                       (tests/integration/disk_ready.sh)
 *   before-forward      the supervisor, a signal read, before it forwards
 *                       it (tests/integration/run_tty.sh)
 */
void sbx_fault_pause(const char *name);

/*
 * sbx_fault_fails(NAME): true when SBX_FAULT names it, for a failure that
 * cannot be made from outside.
 *
 *   disk-no-image  as root, the layers' ext4 image cannot be mounted: the
 *                  layers go in memory (tests/integration/disk_ready.sh)
 *   purger-late    sbx run's purger sleeps 1 s before its first step
 *                  (tests/integration/lifecycle_run.sh)
 */
bool sbx_fault_fails(const char *name);

#endif
