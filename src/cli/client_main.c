/*
 * as4gw-client — the sending tools: `push` (build, sign, encrypt, compress
 * and send a UserMessage) and `replay` (post recorded messages).  Run by
 * `as4gw push|replay` (cli_exec.c) or directly; the serving daemon as4gw
 * carries none of this code.
 */
#include "cli.h"

#include <signal.h>

static const struct cli_cmd client_cmds[] = {
	{"push", cli_push, "push --url URL [options] --payload FILE...   send a UserMessage", 0},
	{"replay", cli_replay, "replay --url URL FILE...   post recorded messages unchanged", 0},
};

int
main(int argc, char **argv)
{
	(void)signal(SIGPIPE, SIG_IGN);
	return cli_dispatch("as4gw-client", client_cmds,
	    sizeof(client_cmds) / sizeof(client_cmds[0]), argc, argv);
}
