/* as4gw — AS4/ebMS3 receiving gateway: subcommand dispatch. */
#include "cli.h"

#include <ctype.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "../util/log.h"
#include "../wss/wss.h"
#include "../xml/xml.h"

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} main_cmds[] = {
	{"serve", cli_serve, "serve -c FILE [--listen HOST:PORT] [--db DSN]   run the gateway"},
	{"push", cli_push, "push --url URL [options] --payload FILE...   send a UserMessage"},
	{"replay", cli_replay, "replay --url URL FILE...   post recorded messages unchanged"},
	{"pmode-check", cli_pmode_check, "pmode-check -c FILE   validate a config, list P-Mode legs"},
	{"migrate", cli_migrate, "migrate -c FILE [--db DSN]   apply database migrations"},
	{"deliver", cli_deliver, "deliver -c FILE (--to-dir DIR | --exec CMD) [--follow]   hand messages to a backend"},
	{"purge", cli_purge, "purge -c FILE [--db DSN] [--now INSTANT]   delete messages past retention"},
};

int
cli_global_init(void)
{
	struct err err = {0};

	xml_global_init();
	if (wss_global_init(&err) == -1) {
		fprintf(stderr, "as4gw: %s\n", err.msg);
		return -1;
	}
	return 0;
}

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

static void
main_usage(FILE *out)
{
	size_t i;

	fprintf(out, "usage: as4gw COMMAND [options]\n\ncommands:\n");
	for (i = 0; i < sizeof(main_cmds) / sizeof(main_cmds[0]); i++)
		fprintf(out, "  as4gw %s\n", main_cmds[i].help);
	fprintf(out, "\nas4gw COMMAND --help shows the options of a command\n");
}

int
main(int argc, char **argv)
{
	size_t i;
	int rc;

	(void)signal(SIGPIPE, SIG_IGN);
	log_init(stderr, LOG_INFO);
	if (argc < 2) {
		main_usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		main_usage(stdout);
		return 0;
	}
	for (i = 0; i < sizeof(main_cmds) / sizeof(main_cmds[0]); i++) {
		if (strcmp(argv[1], main_cmds[i].name) != 0)
			continue;
		if (cli_global_init() == -1)
			return 1;
		rc = main_cmds[i].fn(argc - 1, argv + 1);
		cli_global_shutdown();
		return rc;
	}
	fprintf(stderr, "as4gw: unknown command \"%s\"\n", argv[1]);
	main_usage(stderr);
	return 2;
}
