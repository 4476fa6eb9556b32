/*
 * cli_curl — libcurl loaded at run time (issue 5: idle RSS).
 *
 * Only `push` and `replay` speak HTTP as a client.  Linking libcurl made
 * every process, `serve` included, map and relocate libcurl and its
 * dependency tree (nghttp2, ssh2, rtmp, ldap, gssapi, psl, brotli, idn2 ...)
 * for nothing.  The binary now carries curl's headers only (types and
 * constants); the functions come from dlopen("libcurl.so.4") the first time
 * a client is made.  The table is filled once and stays valid until exit.
 */
#include "cli.h"

#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

#define CLI_CURL_SONAME "libcurl.so.4" /* the ABI of libcurl 7.16 and later */

/* dlsym() hands out a void *; POSIX makes it convertible to a function
 * pointer, which the table below relies on (memcpy of the pointer). */
_Static_assert(sizeof(void *) == sizeof(void (*)(void)),
	       "function pointers must be as wide as void *");

/* Every symbol the table needs: its name in libcurl, its slot in the table. */
static const struct {
	const char *name;
	size_t offset;
} cli_curl_syms[] = {
    {"curl_global_init", offsetof(struct cli_curl, global_init)},
    {"curl_global_cleanup", offsetof(struct cli_curl, global_cleanup)},
    {"curl_easy_init", offsetof(struct cli_curl, easy_init)},
    {"curl_easy_setopt", offsetof(struct cli_curl, easy_setopt)},
    {"curl_easy_perform", offsetof(struct cli_curl, easy_perform)},
    {"curl_easy_getinfo", offsetof(struct cli_curl, easy_getinfo)},
    {"curl_easy_cleanup", offsetof(struct cli_curl, easy_cleanup)},
    {"curl_easy_strerror", offsetof(struct cli_curl, easy_strerror)},
    {"curl_slist_append", offsetof(struct cli_curl, slist_append)},
    {"curl_slist_free_all", offsetof(struct cli_curl, slist_free_all)},
};

static struct cli_curl cli_curl_table;
static void *cli_curl_handle; /* dlopen handle; never closed (see below) */
static int cli_curl_global;   /* curl_global_init() done, no cleanup yet */

/*
 * Open libcurl and resolve every symbol into a scratch table, which is
 * copied to cli_curl_table only when all were found.  A failed attempt
 * leaves nothing behind, so the next call tries again.
 */
static int
cli_curl_load(struct err *err)
{
	struct cli_curl t;
	const char *missing = NULL;
	void *h, *sym;
	size_t i;
	int rc = -1;

	(void)dlerror(); /* clear a stale message */
	if ((h = dlopen(CLI_CURL_SONAME, RTLD_NOW | RTLD_LOCAL)) == NULL)
		goto out;
	for (i = 0; i < sizeof(cli_curl_syms) / sizeof(cli_curl_syms[0]); i++) {
		if ((sym = dlsym(h, cli_curl_syms[i].name)) == NULL) {
			missing = cli_curl_syms[i].name;
			goto out;
		}
		memcpy((char *)&t + cli_curl_syms[i].offset, &sym, sizeof(sym));
	}
	cli_curl_table = t;
	cli_curl_handle = h;
	h = NULL;
	rc = 0;
out:
	if (rc == -1) {
		const char *why = dlerror();

		if (why == NULL) /* a symbol that resolved to NULL */
			why = missing != NULL ? missing : "unknown error";
		(void)err_set(err, ERR_INTERNAL, NULL,
			      "could not load libcurl (%s): %s",
			      CLI_CURL_SONAME, why);
	}
	if (h != NULL)
		(void)dlclose(h);
	return rc;
}

/* Load libcurl and run curl_global_init() once; see cli.h. */
int
cli_curl_init(const struct cli_curl **ret_curl, struct err *err)
{
	CURLcode cc;

	if (cli_curl_handle == NULL && cli_curl_load(err) == -1)
		return -1;
	if (!cli_curl_global) {
		if ((cc = cli_curl_table.global_init(CURL_GLOBAL_DEFAULT)) !=
		    CURLE_OK)
			return err_set(err, ERR_INTERNAL, NULL,
				       "could not initialise libcurl: %s",
				       cli_curl_table.easy_strerror(cc));
		cli_curl_global = 1;
	}
	*ret_curl = &cli_curl_table;
	return 0;
}

/*
 * Undo curl_global_init(); a no-op when libcurl was never loaded.  The
 * library itself stays mapped: unloading libcurl's dependency tree (TLS,
 * LDAP, GSSAPI) under a process that still runs buys nothing and risks
 * handlers those libraries registered, and the process is about to exit.
 */
void
cli_curl_shutdown(void)
{
	if (!cli_curl_global)
		return;
	cli_curl_table.global_cleanup();
	cli_curl_global = 0;
}
