/* SPDX-License-Identifier: MIT */
/*
 * lib/jail/capture.c - egress capture in the jail's own network namespace
 * (proxy mode), set up by init from the clone on, while the supervisor
 * writes the id maps.
 *
 * The namespace has only lo.  Capture adds a default route through lo (IPv4
 * and IPv6) so that a connect() to any address does not fail with
 * ENETUNREACH, and an nftables table in that namespace only (libnftnl,
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
#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/table.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_nat.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "jail_int.h"

/*
 * Send a netlink request (or a batch of them) on a new socket of proto and
 * read an answer for each of its n_acks messages (NLM_F_ACK): 0, or the
 * first error (-errno; -ETIMEDOUT after 5 s without an answer).
 */
static int nl_talk(int proto, const void *req, size_t len, int n_acks)
{
	_cleanup_close_ int s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, proto);
	const struct timeval tv = {.tv_sec = 5};
	char buf[4096];
	int acks = 0;

	if (s < 0)
		return -errno;
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (send(s, req, len, 0) < 0)
		return -errno;
	while (acks < n_acks) {
		ssize_t n = recv(s, buf, sizeof(buf), 0);
		struct nlmsghdr *nh = (struct nlmsghdr *)buf;

		if (n < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		for (; NLMSG_OK(nh, (size_t)n); nh = NLMSG_NEXT(nh, n)) {
			const struct nlmsgerr *e = NLMSG_DATA(nh);

			if (nh->nlmsg_type != NLMSG_ERROR)
				continue;
			if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
				return -EIO;
			if (e->error != 0)
				return e->error;
			acks++;
		}
	}
	return 0;
}

/* A default route through lo for family; 0 or -errno. */
static int route_via_lo(int family)
{
	struct {
		struct nlmsghdr nh;
		struct rtmsg rt;
		char attrs[64];
	} req = {0};
	struct rtattr *a = (struct rtattr *)req.attrs, *src;
	unsigned int lo = if_nametoindex("lo");
	/* An explicit source: without it, a datagram's source stays unset
	 * until NAT, and conntrack does not map the DNS reply back. */
	const struct in_addr src4 = {htonl(INADDR_LOOPBACK)};

	if (!lo)
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
	return nl_talk(NETLINK_ROUTE, &req, req.nh.nlmsg_len, 1);
}

/*
 * libnftnl, loaded here (it has libmnl and its own C library with it): the
 * rules go to the kernel as one netlink batch built from its objects,
 * without libnftables' parser, evaluation and cache, and the libraries
 * these need (libnftables' load, context and run took ~6.5 ms on a VM with
 * costly page faults; libnftnl's load ~1.2 ms, the batch ~1.4 ms of kernel
 * work).  Each function is declared by the libnftnl headers; the pointers
 * take their types from them.
 */
#define NFTNL_FNS(X)                                                                               \
	X(nftnl_nlmsg_build_hdr)                                                                   \
	X(nftnl_batch_begin)                                                                       \
	X(nftnl_batch_end)                                                                         \
	X(nftnl_table_alloc)                                                                       \
	X(nftnl_table_free)                                                                        \
	X(nftnl_table_set_str)                                                                     \
	X(nftnl_table_nlmsg_build_payload)                                                         \
	X(nftnl_chain_alloc)                                                                       \
	X(nftnl_chain_free)                                                                        \
	X(nftnl_chain_set_str)                                                                     \
	X(nftnl_chain_set_u32)                                                                     \
	X(nftnl_chain_set_s32)                                                                     \
	X(nftnl_chain_nlmsg_build_payload)                                                         \
	X(nftnl_rule_alloc)                                                                        \
	X(nftnl_rule_free)                                                                         \
	X(nftnl_rule_set_str)                                                                      \
	X(nftnl_rule_add_expr)                                                                     \
	X(nftnl_rule_nlmsg_build_payload)                                                          \
	X(nftnl_expr_alloc)                                                                        \
	X(nftnl_expr_set)                                                                          \
	X(nftnl_expr_set_u8)                                                                       \
	X(nftnl_expr_set_u32)

#define NFTNL_PTR(f) __typeof__(f) *f;
static struct {
	NFTNL_FNS(NFTNL_PTR)
} nl;

#define TABLE	   "sbx_capture"
#define BATCH_SIZE 8192

struct batch {
	char buf[BATCH_SIZE];
	size_t len;
	uint32_t seq;
	int n_acks; /* messages that the kernel answers (NLM_F_ACK) */
	bool full;
};

static char *next_msg(struct batch *b)
{
	/* the largest message here is a rule of ~400 bytes */
	if (b->len + 1024 > sizeof(b->buf)) {
		b->full = true;
		b->len = 0;
	}
	return b->buf + b->len;
}

static void add_msg(struct batch *b, struct nlmsghdr *nh)
{
	b->len += NLMSG_ALIGN(nh->nlmsg_len);
}

static struct nlmsghdr *obj_hdr(struct batch *b, uint16_t type, uint16_t flags)
{
	b->n_acks++;
	return nl.nftnl_nlmsg_build_hdr(next_msg(b), type, NFPROTO_INET, flags | NLM_F_ACK,
					b->seq++);
}

static void add_chain(struct batch *b, const char *name, const char *type, int prio,
		      uint32_t policy)
{
	struct nftnl_chain *c = nl.nftnl_chain_alloc();
	struct nlmsghdr *nh;

	if (!c) {
		b->full = true;
		return;
	}
	nl.nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, TABLE);
	nl.nftnl_chain_set_str(c, NFTNL_CHAIN_NAME, name);
	nl.nftnl_chain_set_str(c, NFTNL_CHAIN_TYPE, type);
	nl.nftnl_chain_set_u32(c, NFTNL_CHAIN_HOOKNUM, NF_INET_LOCAL_OUT);
	nl.nftnl_chain_set_s32(c, NFTNL_CHAIN_PRIO, prio);
	nl.nftnl_chain_set_u32(c, NFTNL_CHAIN_POLICY, policy);
	nh = obj_hdr(b, NFT_MSG_NEWCHAIN, NLM_F_CREATE | NLM_F_EXCL);
	nl.nftnl_chain_nlmsg_build_payload(nh, c);
	add_msg(b, nh);
	nl.nftnl_chain_free(c);
}

/* One rule's expressions, each loading into or reading register 1. */
static struct nftnl_expr *expr(struct nftnl_rule *r, const char *name)
{
	struct nftnl_expr *e = nl.nftnl_expr_alloc(name);

	if (e)
		nl.nftnl_rule_add_expr(r, e);
	return e;
}

/* An expression of two u32 attributes. */
static bool expr2(struct nftnl_rule *r, const char *name, uint16_t a, uint32_t av, uint16_t b,
		  uint32_t bv)
{
	struct nftnl_expr *e = expr(r, name);

	if (e) {
		nl.nftnl_expr_set_u32(e, a, av);
		nl.nftnl_expr_set_u32(e, b, bv);
	}
	return e;
}

static bool meta(struct nftnl_rule *r, uint32_t key)
{
	return expr2(r, "meta", NFTNL_EXPR_META_KEY, key, NFTNL_EXPR_META_DREG, NFT_REG_1);
}

static bool payload(struct nftnl_rule *r, uint32_t base, uint32_t offset, uint32_t len)
{
	struct nftnl_expr *e = expr(r, "payload");

	if (e) {
		nl.nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_DREG, NFT_REG_1);
		nl.nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_BASE, base);
		nl.nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET, offset);
		nl.nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_LEN, len);
	}
	return e;
}

static bool cmp(struct nftnl_rule *r, uint32_t op, const void *data, uint32_t len)
{
	struct nftnl_expr *e = expr(r, "cmp");

	if (!e)
		return false;
	nl.nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_SREG, NFT_REG_1);
	nl.nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_OP, op);
	return nl.nftnl_expr_set(e, NFTNL_EXPR_CMP_DATA, data, len) == 0;
}

static bool cmp_u8(struct nftnl_rule *r, uint8_t v)
{
	return cmp(r, NFT_CMP_EQ, &v, 1);
}

/* ip daddr 127.0.0.0/8 (its first byte), ip6 daddr ::1, udp dport 53 */
static bool ip4_loopback(struct nftnl_rule *r)
{
	return meta(r, NFT_META_NFPROTO) && cmp_u8(r, NFPROTO_IPV4) &&
	       payload(r, NFT_PAYLOAD_NETWORK_HEADER, 16, 1) && cmp_u8(r, 127);
}

static bool ip6_loopback(struct nftnl_rule *r)
{
	return meta(r, NFT_META_NFPROTO) && cmp_u8(r, NFPROTO_IPV6) &&
	       payload(r, NFT_PAYLOAD_NETWORK_HEADER, 24, 16) &&
	       cmp(r, NFT_CMP_EQ, &in6addr_loopback, 16);
}

static bool l4proto(struct nftnl_rule *r, uint8_t proto)
{
	return meta(r, NFT_META_L4PROTO) && cmp_u8(r, proto);
}

static bool udp_dns(struct nftnl_rule *r)
{
	const uint16_t port = htons(53);

	return l4proto(r, IPPROTO_UDP) && payload(r, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2) &&
	       cmp(r, NFT_CMP_EQ, &port, 2);
}

static bool verdict(struct nftnl_rule *r, uint32_t v)
{
	return expr2(r, "immediate", NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT, NFTNL_EXPR_IMM_VERDICT,
		     v);
}

/* redirect to :port (the local address, the packet's family) */
static bool redirect(struct nftnl_rule *r, uint16_t port)
{
	const uint16_t p = htons(port);
	struct nftnl_expr *e = expr(r, "immediate");
	struct nftnl_expr *d;

	if (!e)
		return false;
	nl.nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_1);
	if (nl.nftnl_expr_set(e, NFTNL_EXPR_IMM_DATA, &p, sizeof(p)) < 0)
		return false;
	d = expr(r, "redir");
	if (d) {
		nl.nftnl_expr_set_u32(d, NFTNL_EXPR_REDIR_REG_PROTO_MIN, NFT_REG_1);
		nl.nftnl_expr_set_u32(d, NFTNL_EXPR_REDIR_FLAGS, NF_NAT_RANGE_PROTO_SPECIFIED);
	}
	return d;
}

static bool reject_port_unreachable(struct nftnl_rule *r)
{
	struct nftnl_expr *e = expr(r, "reject");

	if (e) {
		nl.nftnl_expr_set_u32(e, NFTNL_EXPR_REJECT_TYPE, NFT_REJECT_ICMPX_UNREACH);
		nl.nftnl_expr_set_u8(e, NFTNL_EXPR_REJECT_CODE, NFT_REJECT_ICMPX_PORT_UNREACH);
	}
	return e;
}

/* Rule `which` of chain, appended to the batch (b->full if it could not be
 * made). */
static void add_rule(struct batch *b, const char *chain, int which, uint16_t port)
{
	struct nftnl_rule *r = nl.nftnl_rule_alloc();
	const uint32_t lo4 = htonl(INADDR_LOOPBACK);
	struct nlmsghdr *nh;
	bool ok;

	if (!r) {
		b->full = true;
		return;
	}
	nl.nftnl_rule_set_str(r, NFTNL_RULE_TABLE, TABLE);
	nl.nftnl_rule_set_str(r, NFTNL_RULE_CHAIN, chain);
	switch (which) {
	case 0: /* ip daddr 127.0.0.0/8 udp dport 53 ip daddr != 127.0.0.1 redirect to :53 */
		ok = ip4_loopback(r) && udp_dns(r) &&
		     payload(r, NFT_PAYLOAD_NETWORK_HEADER, 16, 4) &&
		     cmp(r, NFT_CMP_NEQ, &lo4, 4) && redirect(r, 53);
		break;
	case 1: /* ip daddr 127.0.0.0/8 accept */
		ok = ip4_loopback(r) && verdict(r, NF_ACCEPT);
		break;
	case 2: /* ip6 daddr ::1 accept */
		ok = ip6_loopback(r) && verdict(r, NF_ACCEPT);
		break;
	case 3: /* udp dport 53 redirect to :53 */
		ok = udp_dns(r) && redirect(r, 53);
		break;
	case 4: /* meta l4proto tcp redirect to :PORT */
		ok = l4proto(r, IPPROTO_TCP) && redirect(r, port);
		break;
	case 5: /* meta l4proto tcp accept */
		ok = l4proto(r, IPPROTO_TCP) && verdict(r, NF_ACCEPT);
		break;
	default: /* meta l4proto udp reject */
		ok = l4proto(r, IPPROTO_UDP) && reject_port_unreachable(r);
		break;
	}
	if (ok) {
		nh = obj_hdr(b, NFT_MSG_NEWRULE, NLM_F_CREATE | NLM_F_APPEND);
		nl.nftnl_rule_nlmsg_build_payload(nh, r);
		add_msg(b, nh);
	} else {
		b->full = true;
	}
	nl.nftnl_rule_free(r);
}

/*
 * The batch: the table, its two chains and their rules, what nft(8) would
 * make of
 *
 *   table inet sbx_capture {
 *    chain nat_out {
 *     type nat hook output priority -100; policy accept;
 *     ip daddr 127.0.0.0/8 udp dport 53 ip daddr != 127.0.0.1 redirect to :53
 *     ip daddr 127.0.0.0/8 accept
 *     ip6 daddr ::1 accept
 *     udp dport 53 redirect to :53
 *     meta l4proto tcp redirect to :PORT
 *    }
 *    chain filter_out {
 *     type filter hook output priority 0; policy drop;
 *     ip daddr 127.0.0.0/8 accept
 *     ip6 daddr ::1 accept
 *     meta l4proto tcp accept
 *     meta l4proto udp reject
 *    }
 *   }
 *
 * (`nft --debug=netlink` shows the same expressions for it).
 */
static bool build(struct batch *b, uint16_t port)
{
	static const struct {
		const char *chain;
		int which;
	} rules[] = {{"nat_out", 0},	{"nat_out", 1},	   {"nat_out", 2},
		     {"nat_out", 3},	{"nat_out", 4},	   {"filter_out", 1},
		     {"filter_out", 2}, {"filter_out", 5}, {"filter_out", 6}};
	struct nftnl_table *t = nl.nftnl_table_alloc();
	struct nlmsghdr *nh;

	if (!t)
		return false;
	add_msg(b, nl.nftnl_batch_begin(next_msg(b), b->seq++));
	nl.nftnl_table_set_str(t, NFTNL_TABLE_NAME, TABLE);
	nh = obj_hdr(b, NFT_MSG_NEWTABLE, NLM_F_CREATE | NLM_F_EXCL);
	nl.nftnl_table_nlmsg_build_payload(nh, t);
	add_msg(b, nh);
	nl.nftnl_table_free(t);
	add_chain(b, "nat_out", "nat", -100, NF_ACCEPT);
	add_chain(b, "filter_out", "filter", 0, NF_DROP);
	for (size_t i = 0; i < SBX_ARRAY_SIZE(rules); i++)
		add_rule(b, rules[i].chain, rules[i].which, port);
	add_msg(b, nl.nftnl_batch_end(next_msg(b), b->seq++));
	return !b->full;
}

static int load_rules(int port, char *why, size_t len)
{
	void *h = dlopen("libnftnl.so.11", RTLD_NOW | RTLD_LOCAL);
	static struct batch b; /* 8 KiB, off init's stack */
	const char *missing = NULL;
	int r;

	if (!h) {
		snprintf(why, len, "libnftnl.so.11 cannot be loaded (install libnftnl11)");
		return -1;
	}
#define NFTNL_SYM(f)                                                                               \
	if (!missing && !(*(void **)&nl.f = dlsym(h, #f)))                                         \
		missing = #f;
	NFTNL_FNS(NFTNL_SYM)
	if (missing) {
		snprintf(why, len, "libnftnl.so.11 has no %s", missing);
		dlclose(h);
		return -1;
	}
	memset(&b, 0, sizeof(b));
	if (!build(&b, (uint16_t)port)) {
		snprintf(why, len, "cannot build the capture rules (out of memory)");
		dlclose(h);
		return -1;
	}
	r = nl_talk(NETLINK_NETFILTER, b.buf, b.len, b.n_acks);
	dlclose(h); /* init's memory, for the rest of the run */
	if (r < 0)
		snprintf(why, len, "nftables refused the capture rules: %s%s", strerror(-r),
			 r == -ENOENT || r == -EOPNOTSUPP || r == -EPROTONOSUPPORT
			     ? " (nf_tables or NAT missing in the kernel?)"
			     : "");
	return r < 0 ? -1 : 0;
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
 * In init itself, not in a child: a fork of init makes each page init
 * writes afterwards a copy-on-write fault, and on a VM where a fault costs
 * tens of microseconds a child cost more than it overlapped (a
 * proxy-mode run 1.7 ms slower, 31 alternating runs).  Init does it
 * before GO, while the supervisor writes the id maps.
 */
void sbx_jail_capture_start(struct sbx_jail_child *c, int port)
{
	struct sbx_jail_capture *cap = &c->capture;

	cap->started = true;
	cap->on = sbx_jail_capture(port, &cap->v6, cap->why, sizeof(cap->why)) == 0;
}
