/*
 * testdeliver — the fixture of the deliver tests (test_deliver*.c) over
 * teststore's two backends (STYLE.md 18): a delivery directory of the
 * test's own (c->out) beside the database; the leg and the messages whose
 * message.json the tests know byte for byte; checks of what a target
 * wrote; deliver_opts for the two targets; a report collector.  Helpers
 * fail the running cmocka test on error.
 */
#ifndef AS4GW_TESTDELIVER_H
#define AS4GW_TESTDELIVER_H

#include "teststore.h"
#include "conf/conf.h"
#include "deliver/deliver.h"
#include "deliver/deliver_int.h"

#define RECEIVED_ISO "2026-01-02T03:04:05.678Z" /* RECEIVED_MS */

/* A writable string (conf.h has char *; -Wwrite-strings). */
#define TS(x) ((char[]){ x })

/* Per-test setup / teardown: tstore_setup plus a fresh c->out. */
int tdeliver_setup(void **state);
int tdeliver_teardown(void **state);

/* One deliver test against the backend ctx. */
#define DT(f, ctx) cmocka_unit_test_prestate_setup_teardown(f, \
	tdeliver_setup, tdeliver_teardown, ctx)

/* Remove a directory tree with rm -rf (test scratch only). */
void rm_rf(const char *path);
/* A time column of id's row in table as ms since the epoch (not NULL). */
int64_t tq_ms(const struct tctx *c, const char *col, const char *table,
    const char *id);
/* The state of one delivery row, checked. */
void tstate(const struct tctx *c, const char *id, const char *state,
    int attempts);

/* The configuration of tdeliver_msg's leg (for message.json). */
extern struct conf tconf;
/* A message with three parts: XML, bytes with NULs, an empty Body
 * payload; on leg-1, received at RECEIVED_MS. */
void tdeliver_msg(struct tmsg *t, const char *id);
/* Accept a new tdeliver_msg with id into s. */
void tdeliver_accept(struct store *s, const char *id);
/* The message.json deliver must write for tdeliver_msg(id) (id_json: id
 * as a JSON string body; attempts only documents the call). */
char *texpected_json(const char *id_json, int attempts);
/* Assert dir/name holds exactly the files of tdeliver_msg with json. */
void tcheck_dir(const char *dir, const char *name, const char *json);
/* Entries of dir: total count; fails on leftovers (.tmp-*, .old-*). */
size_t tentries(const char *dir);
/* The directory name of id, checked for shape. */
void tname(const char *id, char name[65]);

/* deliver_opts for the directory target of c. */
struct deliver_opts tdir_opts(const struct tctx *c);
/* deliver_opts for a command. */
struct deliver_opts texec_opts(const char *cmd, unsigned timeout_s);

/* deliver_report_fn collecting what it is told. */
struct treports {
	int n, ok, attempts;
	int64_t retry_in_ms;
	char id[256], name[65], msg[256];
};
/* Record one report into the struct treports at arg. */
void treport(void *arg, const struct deliver_report *r);

#endif
