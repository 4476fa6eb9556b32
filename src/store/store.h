/*
 * store — the inbox tables behind one ops struct (OpenSMTPD queue backends):
 * `sqlite:PATH` (embedded default) and `postgresql://...` (libpq, production).
 * One struct store is one connection; use it from one thread at a time.
 * Migrations come from sql/<backend>/NNN_*.sql (embedded at build time) and
 * are applied under a lock: at open (serve) and by `as4gw migrate`.
 */
#ifndef AS4GW_STORE_H
#define AS4GW_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "../util/arena.h"
#include "../util/err.h"

#define STORE_HASH_LEN 32
#define STORE_MESSAGE_ID_MAX 255 /* bytes; the inbox key (ebMS3 5.2.2.1) */

struct store_part {
	int part_no;                  /* 0-based order of PartInfo */
	const char *content_id;       /* NULL for a payload in the SOAP Body */
	const char *mime_type;
	const char *properties;       /* PartProperties as JSON object text */
	const unsigned char *data;    /* final bytes */
	size_t len;
};

struct store_message {
	const char *message_id;       /* eb:MessageInfo/MessageId, the key */
	const char *from_party;       /* "type:value" of the first PartyId, or value */
	const char *to_party;
	const char *service;
	const char *action;
	const char *conversation_id;
	const char *agreement_ref;    /* may be NULL */
	const char *pmode_id;
	const char *source;           /* peer address */
	const char *partition_key;    /* YYYY-MM of received_at */
	unsigned char content_hash[STORE_HASH_LEN];
	const unsigned char *receipt; /* signed Receipt bytes to store and return */
	size_t receipt_len;
	int64_t received_at_ms;
	const struct store_part *parts;
	size_t n_parts;
};

enum store_outcome { STORE_NEW = 1, STORE_DUPLICATE, STORE_DRIFT };

struct store_result {
	enum store_outcome outcome;
	const unsigned char *receipt; /* NEW: m->receipt; DUPLICATE: the stored bytes (arena); DRIFT: NULL */
	size_t receipt_len;
	int64_t duplicates;           /* the row's duplicate counter after this call */
};

struct store;

struct store_ops {
	const char *name;
	int (*migrate)(struct store *s, struct err *err);
	int (*ping)(struct store *s, struct err *err);
	int (*accept)(struct store *s, const struct store_message *m,
	    struct arena *a, struct store_result *ret, struct err *err);
	void (*close)(struct store *s);
};

/* Every backend's handle starts with this. */
struct store {
	const struct store_ops *ops;
};

/*
 * Open one connection for dsn ("sqlite:PATH" or "postgresql://..." /
 * "postgres://..."); unknown scheme -> ERR_CONF.  Does not migrate.
 */
int store_open(const char *dsn, struct store **ret, struct err *err);

/* Apply pending migrations under a lock (idempotent). */
int store_migrate(struct store *s, struct err *err);

/* Cheap liveness check for /readyz; reconnects when the connection was lost. */
int store_ping(struct store *s, struct err *err);

/*
 * The accept transaction (DESIGN.md "inbox"), all in ONE database transaction:
 *  - MessageId new: insert inbox row (with receipt), payload rows and a
 *    delivery row (state 'ready'); COMMIT -> STORE_NEW.
 *  - MessageId present with the same content_hash: increment duplicates,
 *    set last_duplicate_at; COMMIT -> STORE_DUPLICATE with the stored receipt.
 *  - present with another hash: change nothing -> STORE_DRIFT.
 * Concurrent calls for one MessageId end in one row and one NEW, the rest
 * DUPLICATE.  Any database failure rolls back and is ERR_STORE (503).
 */
int store_accept(struct store *s, const struct store_message *m,
    struct arena *a, struct store_result *ret, struct err *err);
/*
 * (store_accept also refuses, as ERR_INTERNAL and before touching the
 * database, a message the caller built wrongly: message_id empty or longer
 * than STORE_MESSAGE_ID_MAX, a required field NULL (all but agreement_ref,
 * pmode_id, source, and a part's content_id, mime_type, properties), no
 * receipt, a part with len > 0 and data NULL, or a negative part_no.  A part
 * with properties NULL is stored as "{}".  *ret is written only when 0 is
 * returned; DRIFT is a 0 return.)
 */

/* Accepts NULL. */
void store_close(struct store *s);

/*
 * For the backends (store_sqlite.c, store_pg.c) only; callers use
 * store_open().  Both validate nothing about the DSN beyond what they need.
 */

/* How long a SQLite writer waits for the lock before ERR_STORE. */
#define STORE_SQLITE_BUSY_MS 10000

/* Open (creating the file if needed) the SQLite database at path. */
int store_sqlite_open(const char *path, struct store **ret, struct err *err);

/* Connect to PostgreSQL with the whole libpq DSN/URI. */
int store_pg_open(const char *dsn, struct store **ret, struct err *err);

/*
 * Iterate the embedded migrations of one backend ("sqlite", "postgresql") in
 * name order: start with *pos = 0; returns the next one and advances *pos, or
 * NULL after the last.  The returned struct is static.
 */
struct store_sql;
const struct store_sql *store_migration_next(const char *backend, size_t *pos);

#endif
