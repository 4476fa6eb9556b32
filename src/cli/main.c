/* as4gw — AS4/ebMS3 receiving gateway: subcommand dispatch. */
#include "cli.h"

#include <signal.h>

static const struct cli_cmd main_cmds[] = {
	{"serve", cli_serve, "serve -c FILE [--listen HOST:PORT] [--db DSN] [--verify-at INSTANT]   run the gateway\n"
	    "        --verify-at: judge certificates and timestamps as of INSTANT, to replay recorded traffic (never in production)", CLI_CMD_DAEMON},
	{"push", cli_client_exec, "push --url URL [options] --payload FILE...   send a UserMessage", CLI_CMD_BARE},
	{"replay", cli_client_exec, "replay --url URL FILE...   post recorded messages unchanged", CLI_CMD_BARE},
	{"pmode-check", cli_pmode_check, "pmode-check -c FILE   validate a config, list P-Mode legs", 0},
	{"migrate", cli_migrate, "migrate -c FILE [--db DSN]   apply database migrations", 0},
	{"deliver", cli_deliver, "deliver -c FILE (--to-dir DIR | --exec CMD) [--follow]   hand messages to a backend", CLI_CMD_DAEMON},
	{"inbox", cli_inbox, "inbox show|export -c FILE [--db DSN] [--from PARTY] [--json] [--to-dir DIR] [--part N] ID   find a message: inbox row, payloads, delivery; export a payload to stdout", 0},
	{"purge", cli_purge, "purge -c FILE [--db DSN] [--now INSTANT]   delete messages past retention", 0},
	{"copy", cli_copy, "copy --from sqlite:FILE --to postgresql://... [--merge] [--dry-run]   move an inbox (Receipts, payloads, queue, purge log) from SQLite into PostgreSQL", 0},
};

int
main(int argc, char **argv)
{
	(void)signal(SIGPIPE, SIG_IGN);
	return cli_dispatch("as4gw", main_cmds,
	    sizeof(main_cmds) / sizeof(main_cmds[0]), argc, argv);
}
