/* SPDX-License-Identifier: MIT */
/*
 * lib/jail/capture.c - egress capture in the jail's own network namespace
 * (proxy mode), set up by a child of init from the clone on, while the
 * supervisor writes the id maps and init builds the root (joined before
 * the pivot).
 *
 * The namespace has only lo.  Capture adds a default route through lo (IPv4
 * and IPv6) so that a connect() to any address does not fail with
 * ENETUNREACH, and an nftables table in that namespace only (libnftables,
 * loaded here, while the host's files are still visible):
 *
 *   nat output:    to 127.0.0.0/8 or ::1: untouched (the jail's own
 *                  loopback), except UDP port 53 to another 127.x address
 *                  (a stub resolver's 127.0.0.53);
 *                  UDP port 53 to anywhere: redirected to sbx's DNS
 *                  socket on 127.0.0.1:53 / [::1]:53;
 *                  TCP to anywhere: redirected to the proxy's listener on
 *                  127.0.0.1:PORT / [::1]:PORT, where the supervisor reads
 *                  the original destination (SO_ORIGINAL_DST);
 *   filter output: loopback and TCP pass; other UDP is rejected (port
 *                  unreachable: fails at once); everything else (ICMP,
 *                  SCTP, raw IP) is dropped (EPERM).
 *
 * Nothing leaves the namespace in any case (it has no other interface);
 * the rules make every attempt fail fast or reach sbx.  A jail without
 * CAP_NET_ADMIN cannot change them (the command runs without it).
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <signal.h>
#include <nftables/libnftables.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "jail_int.h"

static const char ruleset[] =
    "table inet sbx_capture {\n"
    " chain nat_out {\n"
    "  type nat hook output priority -100; policy accept;\n"
    "  ip daddr 127.0.0.0/8 udp dport 53 ip daddr != 127.0.0.1 redirect to :53\n"
    "  ip daddr 127.0.0.0/8 accept\n"
    "  ip6 daddr ::1 accept\n"
    "  udp dport 53 redirect to :53\n"
    "  meta l4proto tcp redirect to :%d\n"
    " }\n"
    " chain filter_out {\n"
    "  type filter hook output priority 0; policy drop;\n"
    "  ip daddr 127.0.0.0/8 accept\n"
    "  ip6 daddr ::1 accept\n"
    "  meta l4proto tcp accept\n"
    "  meta l4proto udp reject\n"
    " }\n"
    "}\n";

/* A default route through lo for family; 0 or -errno. */
static int route_via_lo(int family)
{
	struct {
		struct nlmsghdr nh;
		struct rtmsg rt;
		char attrs[64];
	} req = {0};
	struct {
		struct nlmsghdr nh;
		struct nlmsgerr e;
	} ack;
	struct rtattr *a = (struct rtattr *)req.attrs, *src;
	unsigned int lo = if_nametoindex("lo");
	/* An explicit source: without it, a datagram's source stays unset
	 * until NAT, and conntrack does not map the DNS reply back. */
	const struct in_addr src4 = {htonl(INADDR_LOOPBACK)};
	_cleanup_close_ int s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);

	if (s < 0 || !lo)
		return -errno;
	req.nh.nlmsg_type = RTM_NEWROUTE;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK;
	req.rt.rtm_family = (unsigned char)family;
	req.rt.rtm_table = RT_TABLE_MAIN;
	req.rt.rtm_protocol = RTPROT_BOOT;
	req.rt.rtm_scope = family == AF_INET ? RT_SCOPE_LINK : RT_SCOPE_UNIVERSE;
	req.rt.rtm_type = RTN_UNICAST;
	a->rta_type = RTA_OIF;
	a->rta_len = RTA_LENGTH(sizeof(lo));
	memcpy(RTA_DATA(a), &lo, sizeof(lo));
	src = (struct rtattr *)(req.attrs + RTA_ALIGN(a->rta_len));
	src->rta_type = RTA_PREFSRC;
	if (family == AF_INET) {
		src->rta_len = RTA_LENGTH(sizeof(src4));
		memcpy(RTA_DATA(src), &src4, sizeof(src4));
	} else {
		src->rta_len = RTA_LENGTH(sizeof(in6addr_loopback));
		memcpy(RTA_DATA(src), &in6addr_loopback, sizeof(in6addr_loopback));
	}
	req.nh.nlmsg_len =
	    NLMSG_LENGTH(sizeof(req.rt)) + RTA_ALIGN(a->rta_len) + RTA_ALIGN(src->rta_len);
	if (send(s, &req, req.nh.nlmsg_len, 0) < 0)
		return -errno;
	if (recv(s, &ack, sizeof(ack), 0) < (ssize_t)sizeof(ack))
		return -EIO;
	return ack.nh.nlmsg_type == NLMSG_ERROR ? ack.e.error : 0;
}

static int load_rules(int port, char *why, size_t len)
{
	void *h = dlopen("libnftables.so.1", RTLD_NOW | RTLD_LOCAL);
	struct nft_ctx *(*ctx_new)(uint32_t);
	void (*ctx_free)(struct nft_ctx *);
	int (*buffer_error)(struct nft_ctx *);
	const char *(*get_error)(struct nft_ctx *);
	int (*run)(struct nft_ctx *, const char *);
	struct nft_ctx *ctx;
	char rules[sizeof(ruleset) + 16];
	int r;

	if (!h) {
		snprintf(why, len, "libnftables.so.1 cannot be loaded (install libnftables1)");
		return -1;
	}
	*(void **)&ctx_new = dlsym(h, "nft_ctx_new");
	*(void **)&ctx_free = dlsym(h, "nft_ctx_free");
	*(void **)&buffer_error = dlsym(h, "nft_ctx_buffer_error");
	*(void **)&get_error = dlsym(h, "nft_ctx_get_error_buffer");
	*(void **)&run = dlsym(h, "nft_run_cmd_from_buffer");
	ctx = ctx_new && ctx_free && buffer_error && get_error && run ? ctx_new(NFT_CTX_DEFAULT)
								      : NULL;
	if (!ctx) {
		snprintf(why, len, "libnftables.so.1 has no usable nft_ctx_new");
		return -1;
	}
	buffer_error(ctx);
	snprintf(rules, sizeof(rules), ruleset, port);
	r = run(ctx, rules);
	if (r != 0) {
		const char *e = get_error(ctx);
		size_t l;

		snprintf(why, len, "nftables refused the capture rules: %s",
			 e && *e ? e : "no reason given (nf_tables or NAT missing in the kernel?)");
		l = strlen(why);
		while (l && (why[l - 1] == '\n' || why[l - 1] == ' '))
			why[--l] = '\0';
	}
	ctx_free(ctx);
	return r == 0 ? 0 : -1;
}

int sbx_jail_capture(int port, bool *v6, char *why, size_t len)
{
	int r;

	if (load_rules(port, why, len) < 0)
		return -1;
	r = route_via_lo(AF_INET);
	if (r < 0) {
		snprintf(why, len, "cannot add a route through lo: %s", strerror(-r));
		return -1;
	}
	*v6 = route_via_lo(AF_INET6) == 0; /* IPv6 may be off in this kernel */
	return 0;
}

/*
 * Loading libnftables (with its own copy of libc) and applying the rules
 * take ~1.5 ms, as long as init's building of the root: a child of init
 * does it meanwhile, in the same network namespace and with the same
 * capabilities, and reports through a pipe.
 */
struct capture_result {
	int ok;
	int v6;
	char why[SBX_MSG_TEXT];
};

void sbx_jail_capture_start(struct sbx_jail_child *c, int port)
{
	struct sbx_jail_capture *cap = &c->capture;
	int p[2];

	cap->started = true;
	cap->pid = 0;
	cap->fd = -1;
	if (pipe2(p, O_CLOEXEC) == 0) {
		cap->pid = fork();
		if (cap->pid == 0) {
			struct capture_result res = {0};
			bool v6 = false;

			/* only the result pipe: not the supervisor's socket,
			 * whose end tells it when the jail is gone */
			if (dup3(p[1], 3, O_CLOEXEC) < 0)
				_exit(1);
			close_range(4, ~0U, 0);
			prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
			if (getppid() != 1)
				_exit(1); /* init died before the prctl */
			res.ok = sbx_jail_capture(port, &v6, res.why, sizeof(res.why)) == 0;
			res.v6 = v6;
			(void)sbx_write_all(3, &res, sizeof(res));
			_exit(0);
		}
		close(p[1]);
		if (cap->pid > 0) {
			cap->fd = p[0];
			return;
		}
		close(p[0]);
		cap->pid = 0;
	}
	/* no child: here and now */
	cap->on = sbx_jail_capture(port, &cap->v6, cap->why, sizeof(cap->why)) == 0;
}

void sbx_jail_capture_join(struct sbx_jail_child *c)
{
	struct sbx_jail_capture *cap = &c->capture;
	struct capture_result res = {0};
	ssize_t got;

	if (cap->pid <= 0)
		return;
	got = sbx_read_all(cap->fd, &res, sizeof(res));
	close(cap->fd);
	cap->fd = -1;
	while (waitpid(cap->pid, NULL, 0) < 0 && errno == EINTR)
		;
	cap->pid = 0;
	if (got != (ssize_t)sizeof(res)) {
		cap->on = cap->v6 = false;
		snprintf(cap->why, sizeof(cap->why), "the capture helper ended without a result");
		return;
	}
	res.why[sizeof(res.why) - 1] = '\0';
	cap->on = res.ok != 0;
	cap->v6 = res.v6 != 0;
	snprintf(cap->why, sizeof(cap->why), "%s", res.why);
}
