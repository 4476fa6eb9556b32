/*
 * cli_common.c — what the two programs share: the one-line error printer,
 * library set-up, number options and the subcommand dispatcher.  as4gw
 * (serve, deliver, purge, migrate, pmode-check) and as4gw-client (push,
 * replay: the sender and tooling code the daemon does not carry).
 */
#include "cli.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/log.h"
#include "../wss/wss.h"
#include "../xml/xml.h"

/* Set up libxml2 and xmlsec once per process; see cli.h.  A daemon says
 * why it cannot start in its JSON log format. */
static int
cli_global_init_for(int daemon)
{
	struct err err = {0};

	xml_global_init();
	if (wss_global_init(&err) == -1) {
		if (daemon)
			cli_start_failed("", err.msg);
		else
			cli_fail("", err.msg);
		return -1;
	}
	return 0;
}

int
cli_global_init(void)
{
	return cli_global_init_for(0);
}

/* Undo cli_global_init. */
void
cli_global_shutdown(void)
{
	wss_global_shutdown();
}

/*
 * Print "as4gw: " PREFIX MSG on stderr as ONE line: messages from libpq and
 * friends carry newlines and tabs ("...refused\n\tIs the server running"),
 * and a refusal is one line naming the problem.
 */
void
cli_fail(const char *prefix, const char *msg)
{
	const char *p;
	int gap = 0, any = 0;

	(void)fprintf(stderr, "as4gw: %s", prefix);
	for (p = msg; *p != '\0'; p++) {
		if (isspace((unsigned char)*p)) {
			gap = 1;
			continue;
		}
		if (gap && any)
			(void)fputc(' ', stderr);
		(void)fputc(*p, stderr);
		gap = 0;
		any = 1;
	}
	(void)fputc('\n', stderr);
}

/* The daemons' start-up error as one JSON line; see cli.h. */
void
cli_start_failed(const char *prefix, const char *msg)
{
	struct buf line = {0};
	const char *p;
	int gap = 0, any = 0, bad;

	bad = buf_puts(&line, prefix);
	for (p = msg; bad == 0 && *p != '\0'; p++) {
		if (isspace((unsigned char)*p)) {
			gap = 1;
			continue;
		}
		if (gap && any)
			bad = buf_puts(&line, " ");
		bad |= buf_append(&line, p, 1);
		gap = 0;
		any = 1;
	}
	log_event(LOG_ERROR, "start-failed", bad == 0 && line.data != NULL ?
	    line.data : msg, NULL, 0);
	buf_free(&line);
}

/* Parse a decimal number in [min, max]; see cli.h. */
int
cli_number(const char *s, long min, long max, long *ret)
{
	char *end;
	long v;

	if (s == NULL || *s == '\0')
		return -1;
	v = strtol(s, &end, 10);
	if (*end != '\0' || v < min || v > max)
		return -1;
	*ret = v;
	return 0;
}

/* The usage text: one line per command. */
static void
cli_usage(FILE *out, const char *prog, const struct cli_cmd *cmds, size_t n)
{
	size_t i;

	(void)fprintf(out, "usage: %s COMMAND [options]\n\ncommands:\n", prog);
	for (i = 0; i < n; i++)
		(void)fprintf(out, "  as4gw %s\n", cmds[i].help);
	(void)fprintf(out, "\nas4gw COMMAND --help shows the options of a command\n");
}

/* Run argv[1] from cmds; see cli.h. */
int
cli_dispatch(const char *prog, const struct cli_cmd *cmds, size_t n,
    int argc, char **argv)
{
	size_t i;
	int rc;

	log_init(stderr, LOG_INFO);
	if (argc < 2) {
		cli_usage(stderr, prog, cmds, n);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		cli_usage(stdout, prog, cmds, n);
		return 0;
	}
	for (i = 0; i < n; i++) {
		if (strcmp(argv[1], cmds[i].name) != 0)
			continue;
		if (cmds[i].flags & CLI_CMD_BARE)
			return cmds[i].fn(argc - 1, argv + 1);
		if (cli_global_init_for(cmds[i].flags & CLI_CMD_DAEMON) == -1)
			return 1;
		rc = cmds[i].fn(argc - 1, argv + 1);
		cli_global_shutdown();
		return rc;
	}
	(void)fprintf(stderr, "%s: unknown command \"%s\"\n", prog, argv[1]);
	cli_usage(stderr, prog, cmds, n);
	return 2;
}
