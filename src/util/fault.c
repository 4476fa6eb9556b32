/*
 * fault — named fault points (see fault.h).  The whole file is empty unless
 * the build defines AS4GW_FAULT_INJECTION.
 */
#include "fault.h"

#ifdef AS4GW_FAULT_INJECTION

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_once_t fault_once = PTHREAD_ONCE_INIT;
static char fault_name[64];
static long fault_nth = 1;
static atomic_long fault_hits;

/* Read AS4GW_FAULT once: "NAME" or "NAME@N". */
static void
fault_init(void)
{
	const char *v = getenv("AS4GW_FAULT");
	const char *at;
	size_t len;

	if (v == NULL || *v == '\0')
		return;
	at = strchr(v, '@');
	len = at != NULL ? (size_t)(at - v) : strlen(v);
	if (len >= sizeof(fault_name))
		return;
	memcpy(fault_name, v, len);
	fault_name[len] = '\0';
	if (at != NULL && (fault_nth = strtol(at + 1, NULL, 10)) < 1)
		fault_nth = 1;
	atomic_init(&fault_hits, 0);
}

/* 1 when AS4GW_FAULT names this point. */
int
fault_armed(const char *name)
{
	(void)pthread_once(&fault_once, fault_init);
	return fault_name[0] != '\0' && strcmp(fault_name, name) == 0;
}

/* SIGKILL ourselves on the selected pass; say so on stderr first (one
 * write(2), unbuffered) so the harness can tell an injected death. */
void
fault_point(const char *name)
{
	char line[128];
	int n;

	if (!fault_armed(name) || atomic_fetch_add(&fault_hits, 1) + 1 != fault_nth)
		return;
	n = snprintf(line, sizeof(line), "as4gw: FAULT %s: SIGKILL\n", name);
	if (n > 0)
		(void)write(STDERR_FILENO, line, (size_t)n);
	(void)raise(SIGKILL);
}

#else
/* ISO C forbids an empty translation unit: one declaration. */
extern int fault_unused;
#endif
