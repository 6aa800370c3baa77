/* SPDX-License-Identifier: MIT */
/*
 * lib/run/control.h - a running sandbox's control socket.
 *
 * Every run's supervisor listens on STATE/sandboxes/ID/control (a
 * SEQPACKET Unix socket in the sandbox's 0700 directory, which the jail
 * never sees; the supervisor also checks that the peer is its own user or
 * root).  A client sends one request:
 *
 *   wait    the reply comes when the sandbox has ended, after the persist
 *           policy was applied (it is kept or gone by then)
 *   stop    SIGTERM to the command now, the whole jail killed after ms;
 *           then as wait
 *   output  the fds sent along (a `sbx exec`'s output pipes or pty, still
 *           held by its background processes) are read by the supervisor
 *           into output.log until their end; the reply comes at once
 *
 * `sbx stop`, `sbx wait`, `sbx logs -f` and `sbx exec` are its clients.
 */
#ifndef SBX_CONTROL_H
#define SBX_CONTROL_H

#include <stdbool.h>
#include <stdint.h>

#include "state.h"

#define SBX_CONTROL_SOCK "control"

enum sbx_control_op {
	SBX_CONTROL_WAIT = 1,
	SBX_CONTROL_STOP = 2,
	SBX_CONTROL_OUTPUT = 3,
};

struct sbx_control_reply {
	bool ok;	   /* the request was taken (output), or the sandbox ended */
	int exit_code;	   /* the run's exit status (ended) */
	bool kept;	   /* its state was kept (ended) */
	char reason[32];   /* exited | signaled | stopped | timeout | ... */
	char message[200]; /* why a request was refused; once ended, what
			    * the host runs later that changed (run_later.c) */
};

/*
 * Connect to sb's control socket and send op (with ms for stop, fds for
 * output): the connected socket, or -errno with err set (-ENOENT or
 * -ECONNREFUSED: no supervisor listens, the sandbox is not running).
 */
int sbx_control_request(const struct sbx_sandbox *sb, enum sbx_control_op op, uint64_t ms,
			const int *fds, size_t nfds, struct sbx_err *err);
/* Wait for the reply on fd (timeout_ms < 0: forever): 0, -ETIMEDOUT, or
 * -EPIPE when the supervisor went away without one. */
int sbx_control_reply(int fd, int timeout_ms, struct sbx_control_reply *r);

#endif
