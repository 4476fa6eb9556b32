/*
 * testwriter — the fixture of the SQLite writer and checkpoint tests
 * (test_store_writer.c, test_store_writer_batch.c, test_store_ckpt.c) on
 * teststore's SQLite backend: a database file in a temp directory, migrated
 * before the test starts; handles opened on it without migrating; the
 * writer behind a handle; messages "w-<k>".  Helpers fail the running
 * cmocka test on error.
 */
#ifndef AS4GW_TESTWRITER_H
#define AS4GW_TESTWRITER_H

#include "teststore.h"
#include "store/store_sqlite_int.h"

#define RLEN 32                 /* room for a test receipt */

/* Per-test setup: tstore_setup on the SQLite backend, then migrate the
 * database (and close it again); tstore_teardown removes it. */
int twriter_setup(void **state);

/* One test on a fresh migrated SQLite database (state: &ctx_sqlite). */
#define WT(f) cmocka_unit_test_prestate_setup_teardown(f, twriter_setup, \
	tstore_teardown, &ctx_sqlite)

/* Open a store on the test's file (migrated already). */
struct store *wopen(const struct tctx *c);
/* The writer behind a store handle. */
struct store_sqlite_writer *wwriter(struct store *s);

struct wmsg {
	struct store_message m;
	struct store_part parts[2];
	char id[64];
	char receipt[RLEN];
	unsigned char data[2][16];
};

/* Message "w-<k>" with two parts; variant != 0 changes the content (hash);
 * receipt NULL: a probe. */
void wmsg_init(struct wmsg *t, int k, int variant, const char *receipt);

#endif
