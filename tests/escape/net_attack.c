/* SPDX-License-Identifier: MIT */
/*
 * tests/escape/net_attack.c - network attacks from inside a jail.
 *
 *	net_attack sockets               raw, packet and vsock sockets
 *	net_attack netlink               rtnetlink: add an address and a route,
 *	                                 set lo down (the driver checks the
 *	                                 host's links and routes afterwards)
 *	net_attack tcp NAME ADDR PORT    connect to a host listener
 *	net_attack abstract NAME SOCK    connect to a host abstract Unix socket
 *	net_attack unixpath NAME PATH    connect to a host Unix socket by path
 *	net_attack proxyflood NAME PROXYPORT TARGET N
 *	                                 open N idle connections to sbx's proxy
 *	                                 (in several processes when one may not
 *	                                 hold that many), then make 60 CONNECT
 *	                                 requests to TARGET (allowed): contained
 *	                                 when every one is answered 200
 *
 * Prints "contained net/NAME" or "ESCAPED net/NAME: ..." (see esc.h).
 */
#include "esc.h"

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/vm_sockets.h>
#include <net/if.h>
#include <stddef.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>

static void sockets(void)
{
	int s1 = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP), e1 = errno;
	int s2 = socket(AF_INET6, SOCK_RAW, IPPROTO_ICMPV6), e2 = errno;
	int s3 = socket(AF_INET, SOCK_RAW, IPPROTO_RAW), e3 = errno;
	verdict(s1 < 0 && s2 < 0 && s3 < 0, "net/raw-socket", "inet icmp: %s; inet6: %s; raw: %s",
		s1 < 0 ? strerror(e1) : "made", s2 < 0 ? strerror(e2) : "made",
		s3 < 0 ? strerror(e3) : "made");
	int p1 = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL)), f1 = errno;
	int p2 = socket(AF_PACKET, SOCK_DGRAM, htons(ETH_P_ALL)), f2 = errno;
	verdict(p1 < 0 && p2 < 0, "net/packet-socket", "raw: %s; dgram: %s",
		p1 < 0 ? strerror(f1) : "made", p2 < 0 ? strerror(f2) : "made");
	int v = socket(AF_VSOCK, SOCK_STREAM, 0), g = errno, c = -1;
	if (v >= 0) {
		struct sockaddr_vm a = {
		    .svm_family = AF_VSOCK, .svm_cid = VMADDR_CID_HOST, .svm_port = 22};
		c = connect(v, (struct sockaddr *)&a, sizeof(a));
	}
	verdict(v < 0, "net/vsock-socket", "socket: %s%s", v < 0 ? strerror(g) : "made",
		c == 0 ? "; connected to the host" : "");
}

static int nl_req(int fd, struct nlmsghdr *n)
{
	char buf[4096];
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK};

	n->nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
	if (sendto(fd, n, n->nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	ssize_t r = recv(fd, buf, sizeof(buf), 0);
	if (r < (ssize_t)sizeof(struct nlmsghdr))
		return -EIO;
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	if (h->nlmsg_type == NLMSG_ERROR)
		return ((struct nlmsgerr *)NLMSG_DATA(h))->error;
	return 0;
}

static void add_attr(struct nlmsghdr *n, int type, const void *d, int len)
{
	struct rtattr *rta = (struct rtattr *)((char *)n + NLMSG_ALIGN(n->nlmsg_len));
	rta->rta_type = (unsigned short)type;
	rta->rta_len = (unsigned short)RTA_LENGTH(len);
	memcpy(RTA_DATA(rta), d, (size_t)len);
	n->nlmsg_len = NLMSG_ALIGN(n->nlmsg_len) + RTA_ALIGN(rta->rta_len);
}

static void netlink(void)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	int lo = (int)if_nametoindex("lo");
	struct {
		struct nlmsghdr n;
		union {
			struct ifinfomsg i;
			struct ifaddrmsg a;
			struct rtmsg r;
		};
		char buf[256];
	} req;
	int up, addr, route, down;
	unsigned int ip = htonl(0x0a4d0001), dst = htonl(0x0a4e0000);

	if (fd < 0) {
		verdict(1, "net/netlink-route-link", "netlink socket: %s", strerror(errno));
		return;
	}
	memset(&req, 0, sizeof(req));
	req.n.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg));
	req.n.nlmsg_type = RTM_NEWLINK;
	req.i.ifi_index = lo;
	req.i.ifi_flags = IFF_UP;
	req.i.ifi_change = IFF_UP;
	up = nl_req(fd, &req.n);

	memset(&req, 0, sizeof(req));
	req.n.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifaddrmsg));
	req.n.nlmsg_type = RTM_NEWADDR;
	req.n.nlmsg_flags = NLM_F_CREATE | NLM_F_EXCL;
	req.a.ifa_family = AF_INET;
	req.a.ifa_prefixlen = 16;
	req.a.ifa_index = (unsigned)lo;
	add_attr(&req.n, IFA_LOCAL, &ip, 4);
	add_attr(&req.n, IFA_ADDRESS, &ip, 4);
	addr = nl_req(fd, &req.n);

	memset(&req, 0, sizeof(req));
	req.n.nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg));
	req.n.nlmsg_type = RTM_NEWROUTE;
	req.n.nlmsg_flags = NLM_F_CREATE | NLM_F_EXCL;
	req.r.rtm_family = AF_INET;
	req.r.rtm_dst_len = 16;
	req.r.rtm_table = RT_TABLE_MAIN;
	req.r.rtm_protocol = RTPROT_BOOT;
	req.r.rtm_scope = RT_SCOPE_LINK;
	req.r.rtm_type = RTN_UNICAST;
	add_attr(&req.n, RTA_DST, &dst, 4);
	add_attr(&req.n, RTA_OIF, &lo, 4);
	route = nl_req(fd, &req.n);

	memset(&req, 0, sizeof(req));
	req.n.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg));
	req.n.nlmsg_type = RTM_NEWLINK;
	req.i.ifi_index = lo;
	req.i.ifi_flags = 0;
	req.i.ifi_change = IFF_UP;
	down = nl_req(fd, &req.n);
	close(fd);
	/* Whatever happened, it happened in the jail's own netns: the host
	 * half of this check is the driver's (links and routes unchanged). */
	verdict(1, "net/netlink-route-link", "own netns: lo up %s, addr %s, route %s, lo down %s",
		err_name(up), err_name(addr), err_name(route), err_name(down));
}

static void tcp(const char *name, const char *host, const char *port)
{
	char full[128];
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port))};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), r = -1, e;

	snprintf(full, sizeof(full), "net/%s", name);
	inet_pton(AF_INET, host, &a.sin_addr);
	if (fd >= 0)
		r = connect(fd, (struct sockaddr *)&a, sizeof(a));
	e = errno;
	verdict(r < 0, full, "connect %s:%s: %s", host, port, r < 0 ? strerror(e) : "connected");
	if (fd >= 0)
		close(fd);
}

static void unixsock(const char *name, const char *path, int abstract)
{
	char full[128];
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), r = -1, e;
	socklen_t len;

	snprintf(full, sizeof(full), "net/%s", name);
	if (abstract) {
		snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, "%s", path);
		len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(path));
	} else {
		snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
		len = sizeof(a);
	}
	if (fd >= 0)
		r = connect(fd, (struct sockaddr *)&a, len);
	e = errno;
	verdict(r < 0, full, "connect %s%s: %s", abstract ? "@" : "", path,
		r < 0 ? strerror(e) : "connected");
	if (fd >= 0)
		close(fd);
}

static int dial_loopback(int port, int nonblock)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0), 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 && errno != EINPROGRESS) {
		close(fd);
		return -1;
	}
	return fd;
}

/* One CONNECT through the proxy: 1 when answered 200 within 5 s. */
static int connect_once(int proxy, const char *target)
{
	char req[256], buf[512];
	struct timeval tv = {.tv_sec = 5};
	int fd = dial_loopback(proxy, 0), n, ok;

	if (fd < 0)
		return 0;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	n = snprintf(req, sizeof(req), "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target);
	ok = write(fd, req, (size_t)n) == n && (n = (int)read(fd, buf, sizeof(buf) - 1)) > 0;
	if (ok) {
		buf[n] = '\0';
		ok = strncmp(buf, "HTTP/1.1 200", 12) == 0;
	}
	close(fd);
	return ok;
}

/* One report of a holder on the pipe: how many it connected (once), then
 * how many more the proxy has closed. */
struct flood_msg {
	int held, closed;
};

/* Hold `count` idle connections to the proxy until told to go (the `go`
 * pipe closes); report on `out` how many connected, then each batch the
 * proxy closed (end of file or reset: room made, or a head timeout). */
static void holder(int proxy, int count, int go, int out)
{
	struct pollfd *pf = calloc((size_t)count + 1, sizeof(*pf));
	struct flood_msg m = {0};

	if (!pf)
		_exit(1);
	pf[0] = (struct pollfd){.fd = go, .events = POLLIN};
	for (int i = 1; i <= count; i++) {
		pf[i] = (struct pollfd){.fd = dial_loopback(proxy, 1), .events = POLLIN};
		m.held += pf[i].fd >= 0;
	}
	if (write(out, &m, sizeof(m)) < 0)
		_exit(1);
	for (;;) {
		char buf[64];

		if (poll(pf, (nfds_t)count + 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		if (pf[0].revents)
			_exit(0);
		m = (struct flood_msg){0};
		for (int i = 1; i <= count; i++)
			if (pf[i].fd >= 0 && pf[i].revents && read(pf[i].fd, buf, sizeof(buf)) <= 0) {
				close(pf[i].fd);
				pf[i].fd = -1;
				m.closed++;
			}
		if (m.closed && write(out, &m, sizeof(m)) < 0)
			_exit(1);
	}
}

/* Milliseconds since some fixed point. */
static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * N idle connections (more than the proxy serves at once), then, while they
 * are still held, 60 CONNECT requests.  Before the requests the flood waits
 * until the proxy has closed 1,000 of the idle ones to make room (or 20 s
 * went by): how fast the proxy takes in a flood depends on the machine,
 * and the requests must meet a proxy that is full.  The line says how many
 * the jail saw closed, which the record's counts must cover.
 */
static void proxyflood(const char *name, const char *port_s, const char *target, const char *n_s)
{
	char full[128];
	struct rlimit rl;
	struct flood_msg m;
	int proxy = atoi(port_s), n = atoi(n_s), per, procs, held = 0, closed = 0, ok = 0,
	    reported = 0, go[2], rep[2];
	long long t0, waited;

	snprintf(full, sizeof(full), "net/%s", name);
	getrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	per = rl.rlim_cur > 4096 ? 4000 : (int)rl.rlim_cur - 32;
	procs = (n + per - 1) / per;
	if (pipe(go) < 0 || pipe(rep) < 0) {
		verdict(0, full, "pipe: %s", strerror(errno));
		return;
	}
	for (int i = 0; i < procs; i++) {
		int mine = i == procs - 1 ? n - per * i : per;

		if (fork() == 0) {
			close(go[1]);
			close(rep[0]);
			holder(proxy, mine, go[0], rep[1]);
		}
	}
	close(go[0]);
	close(rep[1]);
	t0 = now_ms();
	while (reported < procs || (closed < 1000 && now_ms() - t0 < 20000)) {
		struct pollfd pf = {.fd = rep[0], .events = POLLIN};

		if (poll(&pf, 1, 100) <= 0)
			continue;
		if (read(rep[0], &m, sizeof(m)) != sizeof(m))
			break;
		reported += m.closed == 0; /* a holder's first report */
		held += m.held;
		closed += m.closed;
	}
	waited = now_ms() - t0;
	for (int i = 0; i < 60; i++)
		ok += connect_once(proxy, target);
	/* unread reports must not hold a holder in write(): it ends on EPIPE */
	close(rep[0]);
	close(go[1]);
	while (wait(NULL) > 0)
		;
	verdict(ok == 60, full,
		"%d idle connections opened, %d closed by the proxy within %lld ms, then %d of 60 "
		"CONNECT requests answered 200",
		held, closed, waited, ok);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 2 && !strcmp(argv[1], "sockets"))
		sockets();
	else if (argc >= 2 && !strcmp(argv[1], "netlink"))
		netlink();
	else if (argc == 5 && !strcmp(argv[1], "tcp"))
		tcp(argv[2], argv[3], argv[4]);
	else if (argc == 4 && !strcmp(argv[1], "abstract"))
		unixsock(argv[2], argv[3], 1);
	else if (argc == 4 && !strcmp(argv[1], "unixpath"))
		unixsock(argv[2], argv[3], 0);
	else if (argc == 6 && !strcmp(argv[1], "proxyflood"))
		proxyflood(argv[2], argv[3], argv[4], argv[5]);
	else {
		fprintf(stderr, "net_attack: bad usage\n");
		return 2;
	}
	return 0;
}
