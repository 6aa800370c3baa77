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
 */
void sbx_fault_pause(const char *name);

#endif
