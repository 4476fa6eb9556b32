/*
 * store_sqlite_writer — the writers of one process on one SQLite file: a
 * queue and group commit instead of SQLite's busy handler.
 *
 * SQLite allows one writer per database file.  Each HTTP worker has its own
 * connection; left alone, they collide on BEGIN IMMEDIATE and the loser's
 * busy handler sleeps (1, 2, 5 ... 100 ms), and every commit pays its own
 * fsync.  So every handle of this process on the same file (a registry
 * keyed by realpath, counted) shares one struct store_sqlite_writer:
 *
 *  - an accept queues a request and waits on a condition variable;
 *  - the first waiter that finds no leader becomes the leader: it takes up
 *    to STORE_SQLITE_BATCH_MAX requests (STORE_SQLITE_BATCH_BYTES) off the
 *    queue and, on the WRITER'S connection, first reads each one's row
 *    (store_sqlite_look, no lock in WAL mode): a drifted row and a probe of
 *    an absent one are answered there, as nothing would be written.  For
 *    the rest it runs BEGIN IMMEDIATE, decides each request again inside a
 *    SAVEPOINT (a failing one rolls back only itself and gets its own
 *    error), COMMITs once (one fsync for the batch), then marks the
 *    requests done and wakes their threads; it leads until its own request
 *    is done, then hands over to a waiter;
 *  - claim, finish, purge and migrate take the writer exclusively and run
 *    on its connection too.
 *
 * The writer's connection: every write of a connection invalidates the
 * page cache of the process's other connections on the file (SQLite sees
 * the WAL changed when their next transaction starts and drops its cache),
 * so batches led on whichever handle's connection started cold and re-read
 * their pages with pread.  One connection that does all of this process's
 * writes keeps its cache warm.  It is opened like a handle's
 * (store_sqlite_connect) at the first open of the file and closed with the
 * last handle.  It is NOMUTEX (SQLite's multi-thread mode: one thread at a
 * time per connection) although several threads use it, because they use
 * it one at a time: only the leader (w->busy set, under w->lock) or the
 * exclusive user (likewise) touches it, and the hand-over through w->lock
 * orders one user's accesses before the next one's.  A private writer
 * (":memory:", whose second connection would be another database) has none:
 * its only handle's connection does the writes.
 *
 * Other processes on the same file still meet this one through SQLite's
 * locks and the busy timeout (STORE_SQLITE_BUSY_MS) of the leader's BEGIN.
 *
 * Durability: a batch that may insert (the leader's read found no row for
 * a request that is not a probe) commits with synchronous=FULL, so every
 * NEW is on disk before its thread wakes.  A batch of duplicates only (the
 * read found every row; a probe never inserts) commits with
 * synchronous=NORMAL, which in WAL mode does not fsync at
 * COMMIT: its counters may be lost in a power cut, which store.h allows.
 * The receipts it returns are durable already: every row was inserted by a
 * FULL commit, and SQLite makes a WAL commit visible to other readers (it
 * writes the wal-index header) only after its fsync.  A later FULL commit's
 * fsync covers the earlier unsynced frames of the same WAL file, and the WAL
 * checksums keep a crash consistent (SQLite's documented NORMAL guarantee).
 * Should a request of a NORMAL batch turn out NEW after all (the row was
 * purged in between), it is rolled back to its savepoint and queued again,
 * for a FULL batch.
 */
#include "store.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store_sqlite_int.h"
#include "../spool/spool.h"
#include "../util/fault.h"

struct store_sqlite_writer {
	char *path;                   /* registry key; NULL: private */
	pid_t pid;                    /* the process that made it (fork) */
	struct store_sqlite *conn;    /* writes; NULL: private (see above) */
	struct store_sqlite_ckpt *ckpt; /* its checkpoints (with conn) */
	int refs;                     /* under store_sqlite_writers_lock */
	struct store_sqlite_writer *next;
	pthread_mutex_t lock;
	pthread_cond_t cond;          /* a batch ended or the writer is free */
	int busy;                     /* a leader or an exclusive user runs */
	struct store_sqlite_req *head, *tail; /* queued, not yet taken */
	uint64_t batches;             /* write transactions so far (tests) */
};

static pthread_mutex_t store_sqlite_writers_lock = PTHREAD_MUTEX_INITIALIZER;
static struct store_sqlite_writer *store_sqlite_writers;
static pthread_once_t store_sqlite_writers_once = PTHREAD_ONCE_INIT;

/* fork(): hold the registry lock across it, so the child's copy is sane. */
static void
store_sqlite_writers_prefork(void)
{
	(void)pthread_mutex_lock(&store_sqlite_writers_lock);
}

/* fork(): let go of the registry lock in parent and child. */
static void
store_sqlite_writers_postfork(void)
{
	(void)pthread_mutex_unlock(&store_sqlite_writers_lock);
}

/* Once per process: the fork handlers of the registry lock. */
static void
store_sqlite_writers_init(void)
{
	(void)pthread_atfork(store_sqlite_writers_prefork,
	    store_sqlite_writers_postfork, store_sqlite_writers_postfork);
}

/* A new writer with one reference (not yet in the registry); NULL: ENOMEM. */
static struct store_sqlite_writer *
store_sqlite_writer_new(const char *path)
{
	struct store_sqlite_writer *w = calloc(1, sizeof(*w));

	if (w == NULL)
		return NULL;
	if (path != NULL && (w->path = strdup(path)) == NULL) {
		free(w);
		return NULL;
	}
	w->pid = getpid();
	w->refs = 1;
	(void)pthread_mutex_init(&w->lock, NULL);
	(void)pthread_cond_init(&w->cond, NULL);
	return w;
}

/* The registered writer of canonical path in this process, or NULL. */
static struct store_sqlite_writer *
store_sqlite_writer_find(const char *path)
{
	struct store_sqlite_writer *w;
	pid_t pid = getpid();

	/* an entry inherited over fork() belongs to the parent: its lock and
	 * queue state are a snapshot of another process */
	for (w = store_sqlite_writers; w != NULL; w = w->next)
		if (w->pid == pid && strcmp(w->path, path) == 0)
			return w;
	return NULL;
}

/*
 * Give a registered writer its connection, once: at the first open of the
 * file in this process (a failed attempt leaves it to the next open).
 * Under w->lock, so two first opens do not both connect.  No batch can be
 * using it meanwhile: a handle holds the writer only once it is connected.
 */
static int
store_sqlite_writer_connect(struct store_sqlite_writer *w, struct err *err)
{
	int rc = 0;

	if (w->path == NULL)
		return 0;
	(void)pthread_mutex_lock(&w->lock);
	if (w->conn == NULL) {
		rc = store_sqlite_connect(w->path, &w->conn, err);
		if (rc == 0 && (rc = store_sqlite_ckpt_start(w->path, w->conn,
		    &w->ckpt, err)) == -1) {
			store_sqlite_disconnect(w->conn);
			w->conn = NULL;
		}
	}
	(void)pthread_mutex_unlock(&w->lock);
	return rc;
}

/* The shared writer of path (store_sqlite_int.h), created on first use. */
int
store_sqlite_writer_get(const char *path, struct store_sqlite_writer **ret,
    struct err *err)
{
	struct store_sqlite_writer *w = NULL;
	char *canon = NULL;

	(void)pthread_once(&store_sqlite_writers_once,
	    store_sqlite_writers_init);
	if (path != NULL && *path != '\0') {
		/* the file exists (open created it); a failure keeps the name */
		canon = realpath(path, NULL);
		if (canon == NULL && (canon = strdup(path)) == NULL)
			goto out;
	}
	if (canon == NULL) {
		w = store_sqlite_writer_new(NULL);
		goto out;
	}
	(void)pthread_mutex_lock(&store_sqlite_writers_lock);
	w = store_sqlite_writer_find(canon);
	if (w != NULL)
		w->refs++;
	else if ((w = store_sqlite_writer_new(canon)) != NULL) {
		w->next = store_sqlite_writers;
		store_sqlite_writers = w;
	}
	(void)pthread_mutex_unlock(&store_sqlite_writers_lock);
out:
	free(canon);
	if (w == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	if (store_sqlite_writer_connect(w, err) == -1) {
		store_sqlite_writer_put(w);
		return -1;
	}
	*ret = w;
	return 0;
}

/* Free an unreferenced writer (its queue is empty: nobody waits). */
static void
store_sqlite_writer_free(struct store_sqlite_writer *w)
{
	/* a parent's writer copied into a child may hold a locked mutex, and
	 * its connection is the parent's (SQLite: a connection must not be
	 * used across fork()): both are left alone */
	if (w->pid == getpid()) {
		store_sqlite_ckpt_stop(w->ckpt, w->conn);
		store_sqlite_disconnect(w->conn);
		(void)pthread_cond_destroy(&w->cond);
		(void)pthread_mutex_destroy(&w->lock);
	}
	free(w->path);
	free(w);
}

/* Drop one reference; the last one unregisters and frees it. */
void
store_sqlite_writer_put(struct store_sqlite_writer *w)
{
	struct store_sqlite_writer **pp;
	int last;

	if (w == NULL)
		return;
	(void)pthread_mutex_lock(&store_sqlite_writers_lock);
	last = --w->refs == 0;
	if (last && w->path != NULL) {
		for (pp = &store_sqlite_writers; *pp != NULL; pp = &(*pp)->next)
			if (*pp == w) {
				*pp = w->next;
				break;
			}
	}
	(void)pthread_mutex_unlock(&store_sqlite_writers_lock);
	if (last)
		store_sqlite_writer_free(w);
}

/* The connection that writes for s (store_sqlite_int.h).  w->conn is set
 * before s got the writer and stays until the last handle is gone. */
struct store_sqlite *
store_sqlite_writer_conn(struct store_sqlite *s)
{
	return s->w->conn != NULL ? s->w->conn : s;
}

/* Wait until no batch or exclusive user runs, then be the exclusive user. */
void
store_sqlite_writer_lock(struct store_sqlite_writer *w)
{
	(void)pthread_mutex_lock(&w->lock);
	while (w->busy)
		(void)pthread_cond_wait(&w->cond, &w->lock);
	w->busy = 1;
	(void)pthread_mutex_unlock(&w->lock);
}

/* End exclusive use; a queued accept (or another user) may go on. */
void
store_sqlite_writer_unlock(struct store_sqlite_writer *w)
{
	(void)pthread_mutex_lock(&w->lock);
	w->busy = 0;
	(void)pthread_cond_broadcast(&w->cond);
	(void)pthread_mutex_unlock(&w->lock);
}

/*
 * Take the next batch off the queue head (w->lock held): requests in queue
 * order while within STORE_SQLITE_BATCH_MAX and STORE_SQLITE_BATCH_BYTES,
 * at least one.
 */
static struct store_sqlite_req *
store_sqlite_writer_take(struct store_sqlite_writer *w)
{
	struct store_sqlite_req *batch = w->head, *last = NULL, *r;
	size_t n = 0, bytes = 0;

	for (r = w->head; r != NULL; r = r->next) {
		if (n > 0 && (n == STORE_SQLITE_BATCH_MAX ||
		    r->bytes > STORE_SQLITE_BATCH_BYTES - bytes))
			break;
		bytes += r->bytes < STORE_SQLITE_BATCH_BYTES ? r->bytes :
		    STORE_SQLITE_BATCH_BYTES;
		last = r;
		n++;
	}
	w->head = r;
	if (r == NULL)
		w->tail = NULL;
	if (last != NULL)
		last->next = NULL;
	return batch;
}

/*
 * Decide one request inside the batch transaction, in its own savepoint.
 * A failure of the request alone is rolled back to the savepoint and stays
 * its own (r->rc -1, r->err); 0 then.  -1 (berr set) when the batch as a
 * whole cannot go on (savepoint control failed, or SQLite rolled the whole
 * transaction back, as it may on SQLITE_FULL or an I/O error).
 */
static int
store_sqlite_writer_one(struct store_sqlite *s, struct store_sqlite_req *r,
    int normal, int *wrote, struct err *berr)
{
	struct spool *prev;

	if (store_sqlite_txn(s, STORE_SQLITE_SAVEPOINT, berr) == -1)
		return -1;
	prev = spool_bind(r->spool);  /* r's thread may not be this one */
	r->rc = store_sqlite_decide(s, r->m, r->a, r->ret, r->err);
	(void)spool_bind(prev);
	if (r->rc == 0 && normal && r->ret->outcome == STORE_NEW)
		r->retry = 1;  /* NORMAL would not fsync it: undo, queue again */
	if (r->rc == -1 || r->retry) {
		if (sqlite3_get_autocommit(s->db) != 0)
			return err_set(berr, ERR_STORE, NULL,
			    "could not accept: the transaction was rolled back");
		return store_sqlite_txn(s, STORE_SQLITE_ROLLBACK_TO, berr) ==
		    -1 ? -1 : store_sqlite_txn(s, STORE_SQLITE_RELEASE, berr);
	}
	if (r->ret->outcome == STORE_NEW || r->ret->outcome == STORE_DUPLICATE)
		*wrote = 1;
	return store_sqlite_txn(s, STORE_SQLITE_RELEASE, berr);
}

/* The batch failed as a whole: every request not retried gets berr. */
static void
store_sqlite_writer_fail(struct store_sqlite_req *batch,
    const struct err *berr)
{
	struct store_sqlite_req *r;

	for (r = batch; r != NULL; r = r->next) {
		if (r->retry || r->answered)
			continue;
		/* keep a request's own first failure (err_set semantics) */
		if (r->err != NULL && (r->rc == 0 || r->err->kind == ERR_NONE))
			*r->err = *berr;
		r->rc = -1;
	}
}

/*
 * Before the write transaction, on the writer's connection: answer the
 * requests that need no write (r->answered) and find whether the others
 * may insert (*normal 0) or only count duplicates (*normal 1: no fsync at
 * COMMIT).  Returns how many need the write transaction.
 */
static size_t
store_sqlite_writer_look(struct store_sqlite *s,
    struct store_sqlite_req *batch, int *normal)
{
	struct store_sqlite_req *r;
	size_t n = 0;
	int may_insert;

	*normal = 1;
	for (r = batch; r != NULL; r = r->next) {
		r->answered = store_sqlite_look(s, r->m, r->a, r->ret,
		    &may_insert);
		if (r->answered) {
			r->rc = 0;
			continue;
		}
		n++;
		if (may_insert)
			*normal = 0;
	}
	return n;
}

/*
 * Run one batch on the writer's connection s (w->lock NOT held): the
 * reads of store_sqlite_writer_look, then, unless they answered every
 * request, one write transaction.  The requesters are blocked in
 * store_sqlite_writer_accept until the leader marks them done under
 * w->lock, so writing into their struct store_result, struct err and arena
 * here (arenas are not thread-safe) never races with them, and the mutex
 * hand-over makes those writes visible to them when they wake.  Returns 1
 * when a write transaction was begun (or tried), else 0.
 */
static int
store_sqlite_writer_run(struct store_sqlite *s, struct store_sqlite_req *batch)
{
	struct store_sqlite_req *r;
	struct err berr;
	int rc, wrote = 0, normal = 0;

	err_clear(&berr);
	rc = store_sqlite_prepare(s, &berr);
	if (rc == 0 && store_sqlite_writer_look(s, batch, &normal) == 0)
		return 0;
	if (rc == 0)
		rc = store_sqlite_sync(s, normal, &berr);
	if (rc == 0)
		rc = store_sqlite_txn(s, STORE_SQLITE_BEGIN, &berr);
	for (r = batch; rc == 0 && r != NULL; r = r->next)
		if (!r->answered)
			rc = store_sqlite_writer_one(s, r, normal, &wrote,
			    &berr);
	if (rc == 0 && wrote)
		fault_point("store.before-commit");
	if (rc == 0)
		rc = store_sqlite_txn(s, STORE_SQLITE_COMMIT, &berr);
	if (sqlite3_get_autocommit(s->db) == 0)
		(void)store_sqlite_txn(s, STORE_SQLITE_ROLLBACK, NULL);
	/* back to FULL for the next use; on failure the next one retries */
	(void)store_sqlite_sync(s, 0, NULL);
	if (rc == -1)
		store_sqlite_writer_fail(batch, &berr);
	return 1;
}

/*
 * One round of leadership (w->lock held, w->busy set): take a batch, run it
 * unlocked, then mark its requests done (those to retry go back to the
 * queue head, in order) and wake the waiters.  When own is done, leadership
 * ends here, in the same critical section as the wake-up.
 */
static void
store_sqlite_writer_lead(struct store_sqlite_writer *w, struct store_sqlite *s,
    struct store_sqlite_req *own)
{
	struct store_sqlite_req *batch, *r, *next, *again = NULL, *last = NULL;
	int wrote;

	batch = store_sqlite_writer_take(w);
	(void)pthread_mutex_unlock(&w->lock);
	wrote = store_sqlite_writer_run(s, batch);
	(void)pthread_mutex_lock(&w->lock);
	w->batches += (uint64_t)wrote;
	for (r = batch; r != NULL; r = next) {
		next = r->next;
		r->next = NULL;
		if (!r->retry) {
			r->done = 1;
			continue;
		}
		r->retry = 0;
		if (last != NULL)
			last->next = r;
		else
			again = r;
		last = r;
	}
	if (again != NULL) {
		last->next = w->head;
		if (w->head == NULL)
			w->tail = last;
		w->head = again;
	}
	if (own->done)
		w->busy = 0;
	(void)pthread_cond_broadcast(&w->cond);
}

/* Queue r and wait for it, leading batches when no one else does. */
int
store_sqlite_writer_accept(struct store_sqlite *s, struct store_sqlite_req *r)
{
	struct store_sqlite_writer *w = s->w;
	struct store_sqlite *c = store_sqlite_writer_conn(s);

	r->next = NULL;
	(void)pthread_mutex_lock(&w->lock);
	if (w->tail != NULL)
		w->tail->next = r;
	else
		w->head = r;
	w->tail = r;
	while (!r->done) {
		if (w->busy) {
			(void)pthread_cond_wait(&w->cond, &w->lock);
			continue;
		}
		w->busy = 1;
		while (!r->done)
			store_sqlite_writer_lead(w, c, r);
	}
	(void)pthread_mutex_unlock(&w->lock);
	return r->rc;
}

/* Queue length and batch count (store_sqlite_int.h), read under the lock. */
void
store_sqlite_writer_counts(struct store_sqlite_writer *w, size_t *queued,
    uint64_t *batches)
{
	const struct store_sqlite_req *r;
	size_t n = 0;

	(void)pthread_mutex_lock(&w->lock);
	for (r = w->head; r != NULL; r = r->next)
		n++;
	*queued = n;
	*batches = w->batches;
	(void)pthread_mutex_unlock(&w->lock);
}

/* The checkpoints run for w's file (store_sqlite_int.h). */
uint64_t
store_sqlite_writer_ckpt_runs(struct store_sqlite_writer *w)
{
	return store_sqlite_ckpt_runs(w->ckpt);
}
