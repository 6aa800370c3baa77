/* SPDX-License-Identifier: MIT */
/*
 * cmd/proxy.c - sbx proxy (hidden): the allowlist proxy of `--net proxy`,
 * run on the host for tests and benchmarks.  Prints one JSON line per
 * connection on stdout (and to --log-json FILE), runs until SIGINT/TERM.
 */
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "log.h"
#include "netpolicy.h"
#include "proxy.h"

const char sbx_usage_proxy[] =
    "usage: sbx proxy [--listen IP:PORT] [--allow ENTRY]... [--log-json FILE]\n"
    "\n"
    "Run the allowlist HTTP proxy of '--net proxy' on the host (for tests and\n"
    "benchmarks).  Plain HTTP (absolute URIs) and CONNECT; everything else gets\n"
    "403 with an X-Sbx-Deny header.  One JSON line per connection on stdout.\n"
    "\n"
    "  --listen IP:PORT   listen address (default 127.0.0.1:3128; port 0 picks one,\n"
    "                     printed on stderr as 'listening on IP:PORT')\n"
    "  --allow ENTRY      host, host:port, *.domain[:port], IP[:port], [v6]:port\n"
    "  --log-json FILE    also append the events to FILE\n"
    "  -q, --quiet        no events on stdout\n";

struct proxy_opts {
	const char *listen;
	const char *log_json;
	bool quiet;
	struct sbx_strv allow;
};

struct sink {
	FILE *out;  /* stdout or NULL */
	int log_fd; /* --log-json or -1 */
};

static int parse_opts(int argc, char **argv, struct proxy_opts *o)
{
	static const struct option longopts[] = {
	    {"listen", required_argument, NULL, 'l'},	{"allow", required_argument, NULL, 'a'},
	    {"log-json", required_argument, NULL, 'j'}, {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},		{0},
	};
	struct sbx_err err = {0};
	int ch;

	o->listen = "127.0.0.1:3128";
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+:qh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'l':
			o->listen = optarg;
			break;
		case 'j':
			if (!strcmp(optarg, "-")) {
				sbx_errorf("proxy: --log-json -: the events go to standard output "
					   "already (unless -q); give a file");
				return -1;
			}
			o->log_json = optarg;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'a':
			if (sbx_netpolicy_check_entry(optarg, &err) < 0) {
				sbx_print_err(&err);
				return -1;
			}
			sbx_strv_push(&o->allow, optarg);
			break;
		default:
			sbx_cmd_option_error(&err, NULL, "proxy", argv[optind - 1], longopts,
					     ch == ':');
			sbx_print_err(&err);
			return -1;
		}
	}
	if (optind != argc) {
		sbx_errorf("proxy: unexpected argument '%s'", argv[optind]);
		return -1;
	}
	return 0;
}

static void on_event(json_t *ev, void *data)
{
	struct sink *s = data;
	char *line = json_dumps(ev, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_PRESERVE_ORDER |
					JSON_REAL_PRECISION(9));

	if (!line)
		return;
	if (s->out) {
		fprintf(s->out, "%s\n", line);
		fflush(s->out);
	}
	if (s->log_fd >= 0) {
		size_t n = strlen(line);

		line[n] = '\n';
		sbx_write_all(s->log_fd, line, n + 1); /* best effort, like the run log */
	}
	free(line);
}

static int serve(struct proxy_opts *o, struct sink *s)
{
	struct sbx_proxy *p = NULL;
	struct sbx_proxy_stats st;
	struct sbx_err err = {0};
	sigset_t set;
	uint16_t port = 0;
	int fd, sig = 0;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	fd = sbx_proxy_listen(o->listen, &port, &err);
	if (fd < 0 || sbx_proxy_start(&p, fd, &o->allow, on_event, s, &err) < 0) {
		sbx_print_err(&err);
		return SBX_EXIT_FAIL;
	}
	fprintf(stderr, "listening on %.*s:%u\n", (int)(strrchr(o->listen, ':') - o->listen),
		o->listen, port);
	fflush(stderr);
	sigwait(&set, &sig);
	sbx_proxy_stop(p);
	sbx_proxy_get_stats(p, &st);
	sbx_proxy_free(p);
	fprintf(stderr, "%llu connections, %llu allowed, %llu failed, %llu denied\n",
		(unsigned long long)st.connections, (unsigned long long)st.allowed,
		(unsigned long long)st.failed, (unsigned long long)st.denied);
	return SBX_EXIT_OK;
}

int cmd_proxy(struct sbx_cmd_ctx *ctx, int argc, char **argv)
{
	struct proxy_opts o = {0};
	struct sink s = {.out = stdout, .log_fd = -1};
	int r;

	if (parse_opts(argc, argv, &o) < 0) {
		sbx_strv_free(&o.allow);
		return SBX_EXIT_USAGE;
	}
	if (o.quiet)
		s.out = NULL;
	if (o.log_json) {
		s.log_fd = open(o.log_json, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		if (s.log_fd < 0) {
			sbx_err_set(&ctx->err, errno, "cannot open '%s'", o.log_json);
			sbx_strv_free(&o.allow);
			return SBX_EXIT_FAIL;
		}
	}
	r = serve(&o, &s);
	sbx_closep(&s.log_fd);
	sbx_strv_free(&o.allow);
	return r;
}
