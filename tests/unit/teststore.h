/*
 * teststore — the two-backend store fixture shared by the test_store_*.c
 * programs and the tests of the store's users, deliver and retention
 * (testdeliver.h and testwriter.h build on it; STYLE.md 18): every test
 * runs against SQLite and, when AS4GW_TEST_PG_DSN is set, PostgreSQL; rows
 * are inspected with sqlite3 / libpq directly, never through the store
 * API.  Helpers fail the running cmocka test on error.
 */
#ifndef AS4GW_TESTSTORE_H
#define AS4GW_TESTSTORE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>

#include "store/store.h"
#include "testutil.h"

#define N_THREADS 16
#define TSENDER "urn:oasis:names:tc:ebcore:partyid-type:unregistered:sender"
#define BIG_LEN ((size_t)1 << 20)
/* The embedded migrations of the backend (numbers may have gaps: each
 * change adds its own). */
#define N_MIGRATIONS(c) tmigrations((c)->pg ? "postgresql" : "sqlite")
#define TBIZKEY "edifact:5790000000001:14/5790000000002:14/REF1"
#define RECEIVED_MS INT64_C(1767323045678)

long long tmigrations(const char *backend);

/* One backend under test; the state every test receives. */
struct tctx {
	int pg;
	int skip;               /* pg requested but AS4GW_TEST_PG_DSN unset */
	char dsn[2048];         /* what the store opens */
	char path[256];         /* sqlite: the database file */
	char dir[64];           /* sqlite: its temp directory */
	char base_dsn[1024];    /* pg: AS4GW_TEST_PG_DSN */
	char schema[64];        /* pg: the per-test schema */
	char app[64];           /* pg: application_name of store connections */
	char out[64];           /* testdeliver: the delivery directory */
};

/* The two backends under test: a test's prestate. */
extern struct tctx ctx_sqlite;
extern struct tctx ctx_pg;

/* Per-test setup / teardown for the backend in *state: a fresh temp
 * directory / schema, removed / dropped afterwards. */
int tstore_setup(void **state);
int tstore_teardown(void **state);

/* One test of the table against the backend ctx. */
#define BT(f, ctx) cmocka_unit_test_prestate_setup_teardown(f, \
	tstore_setup, tstore_teardown, ctx)

#define NEED(c) do { \
	if ((c)->skip) \
		testutil_skip("AS4GW_TEST_PG_DSN not set: postgresql store test"); \
} while (0)

/* Run sql over a fresh admin connection to the base DSN (pg only). */
void pg_admin(const struct tctx *c, const char *sql);

/* ---- inspection through the backend library ------------------------- */

/* One row, one column of sql as bytes (malloc'd; NULL for SQL NULL). */
unsigned char *tq_value(const struct tctx *c, const char *sql,
    size_t *ret_len);
/* A count or integer column (SQL must cast to a 64-bit integer on pg). */
int64_t tq_int(const struct tctx *c, const char *sql);
/* Run sql without looking at results (test set-up of rows). */
void tq_exec(const struct tctx *c, const char *sql);
/* Assert that the integer sql yields is want. */
void tcount(const struct tctx *c, const char *sql, int64_t want);
/* tcount() with a printf-built query. */
void tcountf(const struct tctx *c, int64_t want, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- messages --------------------------------------------------------- */

struct tmsg {
	struct store_message m;
	struct store_part parts[4];
	unsigned char *big;
	unsigned char fields[2 * STORE_HASH_LEN]; /* its field digests */
};

/* 'a', 0, 'b', 0, 0, 'c', 0: the bytes of tmsg_init's part 1 */
extern const unsigned char nul_bytes[7];

/* A message with two parts (one full of NULs); hash_byte picks the content. */
void tmsg_init(struct tmsg *t, const char *id, unsigned char hash_byte,
    const char *receipt);
/* Add a 1 MiB part (t->big, the caller frees it) and an empty Body payload
 * without content id. */
void tmsg_add_big(struct tmsg *t);
/* Open and migrate, failing the test on error. */
struct store *topen(const struct tctx *c);
/* Accept t and check the outcome; returns the result (receipt in a). */
struct store_result taccept(struct store *s, struct arena *a,
    const struct tmsg *t, enum store_outcome want);
/* Accept t with business key key (NULL: none) under mode: the outcome's
 * business_duplicate_of ("" for NULL) must be want_of. */
void tbiz(struct store *s, struct arena *a, struct tmsg *t, const char *key,
    enum store_business mode, enum store_outcome want, const char *want_of);

/* ---- the delivery queue and wait (issue 4) ----------------------------- */

#define T0 RECEIVED_MS  /* queue times are T0 + an offset in ms */
/* A time column in ms, as SQL text for either backend. */
#define MS(c, col) ((c)->pg ? "round(extract(epoch FROM " col ") * 1000)" : col)

/* Accept message id, received at T0 + off_ms on leg pmode (NULL: none). */
void tput(struct store *s, struct arena *a, const char *id, int64_t off_ms,
    const char *pmode);
/* Claim at T0 + now_off; expect want's id (NULL: nothing to claim). */
struct store_delivery tclaim(struct store *s, struct arena *a,
    int64_t now_off, int64_t stale_ms, const char *want);
/* Finish id at T0 + now_off (retry at T0 + retry_off), expecting 0. */
void tfinish(struct store *s, const char *id, int ok, int64_t now_off,
    int64_t retry_off);
/* Milliseconds store_wait(s, timeout_ms) took (it must succeed). */
int64_t twait(struct store *s, int timeout_ms);
/* Fail unless lo <= ms <= hi. */
void tbetween(const char *what, int64_t ms, int64_t lo, int64_t hi);

/* ---- concurrency ------------------------------------------------------ */

struct tthread {
	const struct tctx *c;
	pthread_barrier_t *bar;
	int migrate_only;
	enum store_business business; /* OFF: all accept one MessageId; else
	                               * each its own, with one business key */
	char id[64];
	char dup_of[64];
	char receipt[64];
	int rc;
	enum store_outcome outcome;
	unsigned char got[64];
	size_t got_len;
	char msg[256];
};

/* Start n threads on one barrier, join them; every one must succeed. */
void trun_threads_biz(const struct tctx *c, struct tthread *th, int n,
    int migrate_only, enum store_business business);
/* trun_threads_biz() of one MessageId (no business key). */
void trun_threads(const struct tctx *c, struct tthread *th, int n,
    int migrate_only);

/* postgresql: kill the store's server processes and wait until they are
 * gone. */
void tpg_terminate(const struct tctx *c);

/* ---- databases of earlier versions ------------------------------------ */

/* Run the file sql/<backend>/<name> of the source tree on c's database and
 * record it as the migration runner would. */
void told_migration(const struct tctx *c, const char *name);
/* Rows of the previous schema: old-1 from A (two parts, ready), old-2
 * from B (no part, done), both keyed by MessageId alone. */
void told_rows(const struct tctx *c);
/* The database of the previous version bb574aa (migrations up to sqlite
 * 002 / postgresql 003) with told_rows in it. */
void told_database(const struct tctx *c);

#ifdef AS4GW_FAULT_INJECTION
/* Run this program as a child with AS4GW_FAULT=fault, accepting f-1 (and,
 * with TSTORE_CHILD_BIG set, a chunked part); it must die by SIGKILL. */
void tfault_child(const struct tctx *c, const char *fault);
#endif

/* The tests of a store test program: common ones need no backend. */
struct tstore_groups {
	const char *name;                  /* "store accept" */
	const struct CMUnitTest *common, *sqlite, *pg;
	size_t n_common, n_sqlite, n_pg;
};
#define TSTORE_N(tests) (sizeof(tests) / sizeof((tests)[0]))
/* The groups of a program without common tests, for tstore_main. */
#define TSTORE_GROUPS(nm, sq, pgt) (&(const struct tstore_groups){ 	.name = (nm), .sqlite = (sq), .n_sqlite = TSTORE_N(sq), 	.pg = (pgt), .n_pg = TSTORE_N(pgt) })

/* main() of a store test program: the fault child (AS4GW_FAULT_INJECTION)
 * or its groups; the number of failed tests. */
int tstore_main(int argc, char **argv, const struct tstore_groups *g);

/* The tables and main() of a store test program named name: TESTS(ctx)
 * lists the tests of both backends, SQLITE_ONLY and PG_ONLY (maybe
 * TSTORE_NONE) those of one backend alone, so neither group lists a test
 * that can only skip there. */
#define TSTORE_MAIN3(name, TESTS, SQLITE_ONLY, PG_ONLY) static const struct CMUnitTest sqlite_tests[] = { TESTS(&ctx_sqlite), SQLITE_ONLY }; static const struct CMUnitTest pg_tests[] = { TESTS(&ctx_pg), PG_ONLY }; int main(int argc, char **argv) { 	return tstore_main(argc, argv, TSTORE_GROUPS(name, sqlite_tests, 	    pg_tests)); }
#define TSTORE_NONE
/* TSTORE_MAIN3 without SQLite-only tests (its own body: a PG_ONLY macro
 * expands to several arguments before it could be passed on). */
#define TSTORE_MAIN(name, TESTS, PG_ONLY) static const struct CMUnitTest sqlite_tests[] = { TESTS(&ctx_sqlite) }; static const struct CMUnitTest pg_tests[] = { TESTS(&ctx_pg), PG_ONLY }; int main(int argc, char **argv) { 	return tstore_main(argc, argv, TSTORE_GROUPS(name, sqlite_tests, 	    pg_tests)); }
#define TSTORE_PG_NONE

#endif
