/* SPDX-License-Identifier: MIT */
/*
 * lib/jail/doctor.h - `sbx doctor`: which isolation layers this host gives sbx,
 * probed for real (each in a child of its own), and what sbx uses or falls
 * back to for each.  Also the explanation `sbx run` gives when it cannot
 * create a jail at all.
 *
 * Probes, as the calling user:
 *   userns    a user namespace with an id mapping (root: sbx's range)
 *   mountns   a mount namespace in it; a tmpfs mounted there
 *   overlay   an overlayfs (userxattr) there: copy-on-write layers
 *   pidns     a pid namespace and a fresh /proc for it (a container that
 *             masks /proc refuses this)
 *   netns     a network namespace with its lo up
 *   seccomp   a filter loads; user notification (audit of blocked calls)
 *   idmap     (root) idmapped mounts: a user's project written as its owner
 *   subid     (not root) a range in /etc/subuid and newuidmap
 *   cgroup    how memory, pids and cpu limits are enforced (v2, v1, rlimits)
 *   hostname  a UTS namespace whose name can be set (a container's seccomp
 *             may refuse sethostname: the name then stays the container's)
 *   statedir  the state directory's filesystem (on an overlayfs, a
 *             container's root, the writable layers go in memory)
 *   tun       present (not needed by the network modes)
 *   nftables  proxy mode's capture, set up in a new user and network
 *             namespace as init does it (capture.c); without it, only
 *             programs that use the proxy variables reach the allowlist
 * Run as root, the user namespace, mount and overlay probes are also made
 * as an ordinary user (nobody), for what `sudo`-less use would get.
 */
#ifndef SBX_DOCTOR_H
#define SBX_DOCTOR_H

#include <jansson.h>
#include <stdbool.h>

#include "util.h"

enum sbx_doctor_status {
	SBX_DOC_OK = 0,
	SBX_DOC_FALLBACK, /* not there, sbx works without it (said how) */
	SBX_DOC_MISSING,  /* not there: runs cannot be isolated */
	SBX_DOC_INFO,	  /* not needed by sbx today; said for what */
};

struct sbx_doctor_check {
	const char *name;  /* "userns", ... */
	const char *title; /* "user namespaces" */
	enum sbx_doctor_status status;
	char detail[640]; /* what was found, and what sbx does about it */
	char fix[256];	  /* what to do, or "" */
};

#define SBX_DOCTOR_MAX 16

struct sbx_doctor {
	struct sbx_doctor_check c[SBX_DOCTOR_MAX];
	size_t n;
	bool isolated;	 /* a run can be isolated for the calling user */
	char where[128]; /* "a podman container", "" on a plain host */
	char kernel[400];
};

/* Probe everything (state_dir: where sandboxes would live, or NULL).  Never
 * fails: what cannot be probed is a check. */
void sbx_doctor_run(struct sbx_doctor *d, const char *state_dir);
/* The report as JSON: {"kernel", "uid", "container", "isolated",
 * "host_base" (as root: the first host id of a jail's range, else null),
 * "checks": [{"name", "title", "status", "detail", "fix"}]}. */
json_t *sbx_doctor_json(const struct sbx_doctor *d);
const char *sbx_doctor_status_name(enum sbx_doctor_status s);

/*
 * Why clone() into new namespaces failed with errnum, for the calling
 * user: the sysctl that forbids user namespaces and the exact fix (Ubuntu's
 * kernel.apparmor_restrict_unprivileged_userns, Debian's
 * kernel.unprivileged_userns_clone, user.max_user_namespaces), or a
 * container's seccomp or nesting limit.  One line into out.
 */
void sbx_doctor_explain_clone(int errnum, char *out, size_t len);

#endif
