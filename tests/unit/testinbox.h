/*
 * testinbox — the fixture shared by the test_inbox_*.c programs
 * (src/inbox): a temp directory with a migrated SQLite inbox and an arena
 * per test, the matched leg, UserMessages built by hand from a spec and
 * its mutations, and reading the database file with sqlite3 directly
 * (never through the store API, so what is checked is what a backend
 * reading the inbox sees).  Helpers fail the running cmocka test on
 * error.
 */
#ifndef AS4GW_TESTINBOX_H
#define AS4GW_TESTINBOX_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sqlite3.h>

#include "testutil.h"
#include "inbox/inbox.h"
#include "payload/payload.h"
#include "util/clock.h"

#define ROLE_INIT "http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/initiator"
#define ROLE_RESP "http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/responder"
#define PTYPE "urn:oasis:names:tc:ebcore:partyid-type:unregistered"

/* The Receipt most accepts store. */
extern const unsigned char RECEIPT_A[31];

/* Per-test state: the database file, an open migrated store, an arena. */
struct tstate {
	char dir[64];
	char path[256];     /* the migrated database */
	char raw[256];      /* a second database, never migrated */
	struct store *s;
	struct arena *a;
};

/*
 * The leg every accept runs under (the gateway passes the one pmode_match
 * chose): its parties' canonical names are what the row records, whatever
 * PartyIds the message names (issue 10).
 */
extern char t_leg_id[];
extern const struct pmode_leg T_LEG;

/* A message spec, turned into an arena UserMessage by t_build(). */
struct tparty {
	struct ebms_party_id ids[2];
	size_t n_ids;
};

struct tpart {
	const char *content_id;     /* NULL: payload in the SOAP Body */
	const char *media_type;
	const char *mime_type;
	unsigned char data[32];
	size_t len;
	struct ebms_property props[3];
	size_t n_props;
};

struct tmsg {
	char message_id[300];
	const char *timestamp;
	struct tparty from, to;
	const char *service, *service_type, *action, *conversation_id;
	const char *agreement;
	struct tpart parts[3];
	size_t n_parts;
};

/* The UserMessage of spec t, every byte of it in arena a. */
struct ebms_user_message *t_build(struct arena *a, const struct tmsg *t);

/*
 * The base message "<id>@as4gw.test": From with two PartyIds (the first
 * typed), To untyped; three parts: a cid: payload with its media type, a
 * binary cid: payload whose properties need JSON escaping and whose media
 * type comes from the MimeType property only, and a SOAP Body payload with
 * neither media type nor properties.
 */
void t_base(struct tmsg *t, const char *id);

/* A temp directory with a migrated SQLite inbox and an arena. */
int setup(void **state);

/* Close the store, free the arena, remove the directory. */
int teardown(void **state);

/* The first column of the first row as malloc'd bytes (NUL-terminated);
 * NULL for SQL NULL. */
char *db_value(const struct tstate *t, const char *sql, const char *a1,
    const char *a2, size_t *ret_len);

/* An integer column (SQL NULL reads as -1). */
int64_t db_int(const struct tstate *t, const char *sql, const char *a1,
    const char *a2);

/* Assert that sql(a1, a2) reads exactly the bytes want[0..len). */
void db_bytes_eq(const struct tstate *t, const char *sql, const char *a1,
    const char *a2, const void *want, size_t len);

/* Queries for one column of a message's inbox row, payload row (?2 =
 * part_no) and delivery row. */
#define ROW(col) "SELECT " col " FROM inbox WHERE message_id = ?1"
#define DUPS_SQL ROW("duplicates")
#define LAST_DUP_SQL ROW("last_duplicate_at")
#define COUNT_INBOX_SQL ROW("count(*)")

/* Accept t (built in arena a) with receipt r; assert it is new. */
void accept_new(struct tstate *t, struct arena *a, const struct tmsg *m,
    const unsigned char *r, size_t rlen);

/* Mutations of the base message (t_mutate()). */
enum mut {
	MUT_NONE = 0,
	/* covered by the content hash: drift */
	MUT_PAYLOAD_BYTE, MUT_LAST_BYTE, MUT_PROPERTY, MUT_SERVICE,
	MUT_TO_TYPE, MUT_DROP_PART, MUT_FROM_TYPE,
	/* not covered (version 2): a duplicate */
	MUT_CONTENT_IDS,
	/* refused before any decision */
	MUT_NO_LEG, MUT_EMPTY_ID, MUT_LONG_ID, MUT_NO_CONVERSATION,
};

/* Apply mutation k to the spec m. */
void t_mutate(struct tmsg *m, enum mut k);

#endif
