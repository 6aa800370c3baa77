/* SPDX-License-Identifier: MIT */
/*
 * cmd/run_args.c - `sbx run`'s options: the table (the options that are
 * profile keys map to section and key), parsing without side effects, and
 * an option's error message in the option's own words.
 */
#include <getopt.h>
#include <string.h>

#include "cmd.h"
#include "run_cli.h"

static const char usage[] =
    "usage: sbx run [options] [--] CMD [ARG...]\n"
    "\n"
    "Run CMD in a new ephemeral sandbox built from a profile.\n"
    "\n"
    "  -p, --profile NAME|FILE   isolation profile (default: default)\n"
    "      --rootfs host|TARBALL|DIR  root filesystem\n"
    "  -n, --name NAME           name the sandbox\n"
    "      --keep                keep the sandbox's state after the run\n"
    "      --rm                  always remove it (overrides persist)\n"
    "  -d, --detach              return once the command has started, printing\n"
    "                            the sandbox's name or id; see sbx logs, stop, wait\n"
    "  -e, --env NAME[=VAL]      pass NAME from the caller, or set it\n"
    "      --bind SRC[:DST]      bind a host path read-write (nosuid,nodev)\n"
    "      --ro-bind SRC[:DST]   bind a host path read-only\n"
    "      --overlay SRC[:DST]   copy-on-write view of a host directory\n"
    "      --tmpfs DST[:SIZE]    a private tmpfs\n"
    "      --net MODE            none | loopback | proxy | host\n"
    "      --allow HOST[:PORT]   allow a destination through the proxy\n"
    "      --secret NAME=SOURCE[ as env|file][ inject HOST,...]  a secret, as\n"
    "                            [secrets] NAME = ... (inject: the proxy adds it)\n"
    "      --upstream-ca FILE    CAs the proxy trusts for upstream TLS\n"
    "      --publish [ADDR:]HOSTPORT:PORT[:open] | PORT[:open]\n"
    "                            forward a host port (loopback by default; PORT\n"
    "                            alone: a free one) to the jail's loopback PORT;\n"
    "                            a preview that needs its token unless ':open'\n"
    "      --memory SIZE         memory limit (e.g. 512m)\n"
    "      --pids N              process limit\n"
    "      --cpus N              cpu limit (e.g. 1.5)\n"
    "      --time DURATION       wall-clock limit (e.g. 90s): exit 124; it waits\n"
    "                            while Ctrl-Z holds the run stopped\n"
    "      --stop-timeout DURATION  after SIGTERM/SIGINT/SIGHUP reaches sbx, kill\n"
    "                            the jail if it has not ended (default 10s; a\n"
    "                            second SIGINT/SIGTERM kills at once)\n"
    "  -w, --workdir DIR         working directory inside\n"
    "  -u, --user UID[:GID]|root user inside (never root on the host)\n"
    "      --hostname NAME       hostname inside\n"
    "  -t, --tty                 give the command a pseudo-terminal (the default\n"
    "                            when stdin, stdout and stderr are this terminal)\n"
    "  -T, --no-tty              pipes, not a pseudo-terminal\n"
    "  -q, --quiet               no run log on stderr (errors, and the warnings\n"
    "                            that what the host runs later changed, still)\n"
    "      --log-json FILE       write the run log as JSON lines to FILE\n"
    "\n"
    "Exit status: the command's own, 128+N if killed by signal N, 124 on\n"
    "timeout, 125 if sbx failed, 126 not executable, 127 not found.\n";

enum {
	O_PROFILE = 'p',
	O_NAME = 'n',
	O_ENV = 'e',
	O_WORKDIR = 'w',
	O_USER = 'u',
	O_TTY = 't',
	O_NOTTY = 'T',
	O_QUIET = 'q',
	O_HELP = 'h',
	O_DETACH = 'd',
	O_ROOTFS = 256,
	O_KEEP,
	O_RM,
	O_BIND,
	O_ROBIND,
	O_OVERLAY,
	O_TMPFS,
	O_NET,
	O_ALLOW,
	O_MEMORY,
	O_PIDS,
	O_CPUS,
	O_TIME,
	O_HOSTNAME,
	O_LOGJSON,
	O_STOP_TIMEOUT,
	O_SECRET,
	O_UPSTREAM_CA,
	O_PUBLISH,
};

/* Options that are profile keys: option -> section, key. */
static const struct {
	int opt;
	const char *section, *key;
} key_opts[] = {
    {O_ROOTFS, "sandbox", "rootfs"},
    {O_WORKDIR, "sandbox", "workdir"},
    {O_USER, "sandbox", "user"},
    {O_HOSTNAME, "sandbox", "hostname"},
    {O_TTY, "sandbox", "tty"},
    {O_BIND, "filesystem", "bind"},
    {O_ROBIND, "filesystem", "ro-bind"},
    {O_OVERLAY, "filesystem", "overlay"},
    {O_TMPFS, "filesystem", "tmpfs"},
    {O_NET, "network", "mode"},
    {O_ALLOW, "network", "allow"},
    {O_MEMORY, "limits", "memory"},
    {O_PIDS, "limits", "pids"},
    {O_CPUS, "limits", "cpus"},
    {O_TIME, "limits", "time"},
    {O_STOP_TIMEOUT, "sandbox", "stop-timeout"},
    {O_UPSTREAM_CA, "network", "upstream-ca"},
    {O_PUBLISH, "network", "publish"},
};

static const struct option long_opts[] = {
    {"profile", required_argument, NULL, O_PROFILE},
    {"rootfs", required_argument, NULL, O_ROOTFS},
    {"name", required_argument, NULL, O_NAME},
    {"keep", no_argument, NULL, O_KEEP},
    {"rm", no_argument, NULL, O_RM},
    {"env", required_argument, NULL, O_ENV},
    {"bind", required_argument, NULL, O_BIND},
    {"ro-bind", required_argument, NULL, O_ROBIND},
    {"overlay", required_argument, NULL, O_OVERLAY},
    {"tmpfs", required_argument, NULL, O_TMPFS},
    {"net", required_argument, NULL, O_NET},
    {"allow", required_argument, NULL, O_ALLOW},
    {"secret", required_argument, NULL, O_SECRET},
    {"upstream-ca", required_argument, NULL, O_UPSTREAM_CA},
    {"publish", required_argument, NULL, O_PUBLISH},
    {"detach", no_argument, NULL, O_DETACH},
    {"memory", required_argument, NULL, O_MEMORY},
    {"pids", required_argument, NULL, O_PIDS},
    {"cpus", required_argument, NULL, O_CPUS},
    {"time", required_argument, NULL, O_TIME},
    {"stop-timeout", required_argument, NULL, O_STOP_TIMEOUT},
    {"workdir", required_argument, NULL, O_WORKDIR},
    {"user", required_argument, NULL, O_USER},
    {"hostname", required_argument, NULL, O_HOSTNAME},
    {"tty", no_argument, NULL, O_TTY},
    {"no-tty", no_argument, NULL, O_NOTTY},
    {"quiet", no_argument, NULL, O_QUIET},
    {"log-json", required_argument, NULL, O_LOGJSON},
    {"help", no_argument, NULL, O_HELP},
    {NULL, 0, NULL, 0},
};

static void add_set(struct run_args *a, const char *section, const char *key, const char *value)
{
	a->sets = sbx_xrealloc(a->sets, (a->n_sets + 1) * sizeof(*a->sets));
	a->sets[a->n_sets++] = (struct run_set){section, key, sbx_xstrdup(value), NULL};
}

static bool key_opt(struct run_args *a, int opt, const char *arg)
{
	for (size_t i = 0; i < SBX_ARRAY_SIZE(key_opts); i++) {
		if (key_opts[i].opt == opt) {
			add_set(a, key_opts[i].section, key_opts[i].key, arg ? arg : "yes");
			return true;
		}
	}
	return false;
}

/* -e NAME=VAL sets, -e NAME passes the caller's value. */
static void env_opt(struct run_args *a, const char *arg)
{
	add_set(a, "env", strchr(arg, '=') ? "set" : "pass", arg);
}

static int other_opt(struct run_args *a, int opt, const char *arg, struct sbx_err *err)
{
	switch (opt) {
	case O_PROFILE:
		a->profile = arg;
		return 0;
	case O_NAME:
		a->name = arg;
		return 0;
	case O_KEEP:
		a->keep = true;
		return 0;
	case O_RM:
		a->rm = true;
		return 0;
	case O_QUIET:
		a->quiet = true;
		return 0;
	case O_NOTTY:
		add_set(a, "sandbox", "tty", "no");
		return 0;
	case O_DETACH:
		a->detach = true;
		return 0;
	case O_LOGJSON:
		/* "-" would be a file of that name, or the command's own stdout */
		if (!strcmp(arg, "-"))
			return sbx_err_set(
			    err, 0,
			    "--log-json -: standard output is the command's; give a "
			    "file, or /dev/stderr for the JSON run log there (with -q "
			    "it is alone)");
		a->log_json = arg;
		return 0;
	case O_ENV:
		env_opt(a, arg);
		return 0;
	case O_SECRET: {
		const char *eq = strchr(arg, '=');

		if (!eq || eq == arg)
			return sbx_err_set(err, 0,
					   "--secret '%s': expected NAME=SOURCE [as env|as file] "
					   "[inject HOST[,HOST...]]",
					   arg);
		add_set(a, "secrets", "", eq + 1);
		a->sets[a->n_sets - 1].key_owned = sbx_xstrndup(arg, (size_t)(eq - arg));
		a->sets[a->n_sets - 1].key = a->sets[a->n_sets - 1].key_owned;
		return 0;
	}
	case O_HELP:
		fputs(usage, stdout);
		return 1;
	default:
		return sbx_err_set(err, 0, "run: unknown option (see 'sbx run --help')");
	}
}

int run_parse_args(int argc, char **argv, struct run_args *a, struct sbx_err *err)
{
	int opt;

	memset(a, 0, sizeof(*a));
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+:p:n:e:w:u:tTqdh", long_opts, NULL)) != -1) {
		int r;

		if (opt == '?' || opt == ':')
			return sbx_cmd_option_error(err, "run", "run", argv[optind - 1], long_opts,
						    opt == ':');
		if (key_opt(a, opt, optarg))
			continue;
		r = other_opt(a, opt, optarg, err);
		if (r != 0)
			return r;
	}
	if (a->keep && a->rm)
		return sbx_err_set(err, 0, "run: --keep and --rm contradict each other");

	if (optind >= argc)
		return sbx_err_set(
		    err, 0, "run: no command given (usage: sbx run [options] [--] CMD [ARG...])");
	a->argv = argv + optind;
	a->title = sbx_cmd_title(argc, argv, optind, &a->title_len, &a->argv_owned);
	if (a->argv_owned)
		a->argv = a->argv_owned;
	return 0;
}

void run_args_free(struct run_args *a)
{
	for (size_t i = 0; i < a->n_sets; i++) {
		free(a->sets[i].value);
		free(a->sets[i].key_owned);
	}
	free(a->sets);
	a->sets = NULL;
	a->n_sets = 0;
	sbx_cmd_argv_free(a->argv_owned);
	a->argv_owned = NULL;
}

/* "--memory '1': memory limit '1' is too small ...": the option as typed,
 * not the profile key it sets. */
void run_option_error(const struct run_set *s, struct sbx_err *err)
{
	_cleanup_free_ char *key = sbx_xasprintf("key '%s': ", s->key);
	char msg[SBX_ERR_MSG_MAX];
	const char *name = NULL, *m = err->msg;

	for (size_t i = 0; i < SBX_ARRAY_SIZE(key_opts) && !name; i++)
		if (!strcmp(key_opts[i].section, s->section) && !strcmp(key_opts[i].key, s->key))
			for (size_t k = 0; long_opts[k].name && !name; k++)
				if (long_opts[k].val == key_opts[i].opt)
					name = long_opts[k].name;
	_cleanup_free_ char *quoted = sbx_xasprintf("'%s' ", s->value);

	if (strncmp(m, key, strlen(key)) == 0)
		m += strlen(key);
	if (strncmp(m, quoted, strlen(quoted)) == 0) /* "'/x.tar' does not exist" */
		m += strlen(quoted);
	snprintf(msg, sizeof(msg), "%s", m);
	if (s->key_owned)
		sbx_err_set(err, err->errnum, "--secret '%s=%s': %s", s->key, s->value, msg);
	else if (name)
		sbx_err_set(err, err->errnum, "--%s '%s': %s", name, s->value, msg);
	else
		sbx_err_set(err, err->errnum, "-e '%s': %s", s->value, msg);
}
