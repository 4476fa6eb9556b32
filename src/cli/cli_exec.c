/*
 * cli_exec.c — `as4gw push` and `as4gw replay` hand over to the
 * as4gw-client program (STYLE.md 17: sender and tooling code is linked into
 * the commands that use it, not into the partner-facing daemon), the way
 * git runs its git-* programs.
 */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef AS4GW_LIBEXECDIR
#define AS4GW_LIBEXECDIR "/usr/local/libexec/as4gw"
#endif

#define CLI_EXEC_CLIENT "as4gw-client"

/* DIR/as4gw-client for the directory of this executable; 0 or -1. */
static int
cli_exec_sibling(char *out, size_t size)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n <= 0)
		return -1;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (slash == NULL)
		return -1;
	*slash = '\0';
	n = snprintf(out, size, "%s/%s", self, CLI_EXEC_CLIENT);
	return n > 0 && (size_t)n < size ? 0 : -1;
}

/* Run the command line in as4gw-client; see cli.h. */
int
cli_client_exec(int argc, char **argv)
{
	static char name[] = CLI_EXEC_CLIENT;
	char path[PATH_MAX + 32];
	char **args = calloc((size_t)argc + 2, sizeof(*args));
	int i;

	if (args == NULL) {
		cli_fail("", "out of memory");
		return 1;
	}
	args[0] = name;
	for (i = 0; i < argc; i++)
		args[i + 1] = argv[i];
	if (cli_exec_sibling(path, sizeof(path)) == 0 &&
	    access(path, X_OK) == 0)
		(void)execv(path, args);
	(void)execv(AS4GW_LIBEXECDIR "/" CLI_EXEC_CLIENT, args);
	(void)fprintf(stderr, "as4gw: could not run %s (next to as4gw or in "
	    "%s): %s\n", CLI_EXEC_CLIENT, AS4GW_LIBEXECDIR, strerror(errno));
	free(args);
	return 1;
}
