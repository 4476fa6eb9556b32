/* cli — the `as4gw` subcommands.  Each returns the process exit status
 * (0 ok, 1 failure, 2 usage error) and prints its own messages. */
#ifndef AS4GW_CLI_H
#define AS4GW_CLI_H

int cli_serve(int argc, char **argv);
int cli_push(int argc, char **argv);
int cli_replay(int argc, char **argv);
int cli_pmode_check(int argc, char **argv);
int cli_migrate(int argc, char **argv);

/* One-time library set-up shared by the subcommands (libxml2, xmlsec). */
int cli_global_init(void);
void cli_global_shutdown(void);

#endif
