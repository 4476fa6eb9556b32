/*
 * store_sqlite_ckpt — WAL checkpoints of one SQLite file, off the path of
 * the Receipt.
 *
 * Left to SQLite, the connection that commits runs the checkpoint once the
 * WAL holds 1000 frames (wal_autocheckpoint), inside its COMMIT: the
 * thread whose request made the WAL long copies it into the database file
 * and fsyncs it before its Receipt can go out.  For a large payload that
 * is a second write of every byte (1 GiB: ~20 % of the request's time),
 * paid by the sender.  So the writer's connection (store_sqlite_writer.c,
 * the only one of this process that writes the file) has no
 * autocheckpoint; its WAL hook (sqlite3_wal_hook, run after each commit
 * with the WAL's length in frames) wakes this thread once the WAL is
 * STORE_SQLITE_CKPT_FRAMES long, and the thread runs a PASSIVE checkpoint
 * on a connection of its own (SQLite: a checkpoint never blocks writers
 * or readers, and the WAL stays correct whatever a crash interrupts).
 *
 * journal_size_limit (STORE_SQLITE_WAL_LIMIT_SQL, set on every connection by
 * store_sqlite_connect) truncates a WAL that a large transaction grew to
 * that size at the next commit after a checkpoint restarted it, so a 5 GiB
 * message does not leave a 5 GiB WAL file behind.
 *
 * The durability of a commit is unchanged: it is the WAL's fsync at COMMIT
 * (synchronous=FULL); the checkpoint only moves committed pages.
 */
#include "store.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "store_sqlite_int.h"

struct store_sqlite_ckpt {
	struct store_sqlite *conn;    /* the checkpoints' own connection */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int want;                     /* a commit left a long WAL */
	int stop;                     /* end the thread */
	uint64_t runs;                /* checkpoints run (tests) */
};

/* Wait for a request (or the stop); 0 to stop.  Takes and drops c->lock. */
static int
store_sqlite_ckpt_wait(struct store_sqlite_ckpt *c)
{
	int go;

	(void)pthread_mutex_lock(&c->lock);
	while (!c->want && !c->stop)
		(void)pthread_cond_wait(&c->cond, &c->lock);
	go = !c->stop;
	c->want = 0;
	(void)pthread_mutex_unlock(&c->lock);
	return go;
}

/* The thread: one PASSIVE checkpoint per wake-up.  A failure (SQLITE_BUSY
 * while another process checkpoints) is left to the next commit's wake. */
static void *
store_sqlite_ckpt_main(void *arg)
{
	struct store_sqlite_ckpt *c = arg;

	while (store_sqlite_ckpt_wait(c)) {
		(void)sqlite3_wal_checkpoint_v2(c->conn->db, NULL,
		    SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
		(void)pthread_mutex_lock(&c->lock);
		c->runs++;
		(void)pthread_cond_broadcast(&c->cond);
		(void)pthread_mutex_unlock(&c->lock);
	}
	return NULL;
}

/* sqlite3_wal_hook: after a commit of the writer's connection. */
static int
store_sqlite_ckpt_hook(void *arg, sqlite3 *db, const char *name, int frames)
{
	struct store_sqlite_ckpt *c = arg;

	(void)db;
	(void)name;
	if (frames >= STORE_SQLITE_CKPT_FRAMES) {
		(void)pthread_mutex_lock(&c->lock);
		c->want = 1;
		(void)pthread_cond_signal(&c->cond);
		(void)pthread_mutex_unlock(&c->lock);
	}
	return SQLITE_OK;
}

/* Start the checkpoints of path for writer connection w (store_sqlite_int.h). */
int
store_sqlite_ckpt_start(const char *path, struct store_sqlite *w,
    struct store_sqlite_ckpt **ret, struct err *err)
{
	struct store_sqlite_ckpt *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	if (store_sqlite_connect(path, &c->conn, err) == -1) {
		free(c);
		return -1;
	}
	(void)pthread_mutex_init(&c->lock, NULL);
	(void)pthread_cond_init(&c->cond, NULL);
	if (pthread_create(&c->thread, NULL, store_sqlite_ckpt_main, c) != 0) {
		store_sqlite_disconnect(c->conn);
		(void)pthread_cond_destroy(&c->cond);
		(void)pthread_mutex_destroy(&c->lock);
		free(c);
		return err_set(err, ERR_INTERNAL, NULL,
		    "could not start the checkpoint thread");
	}
	/* from here on, commits of w no longer checkpoint themselves */
	(void)sqlite3_wal_hook(w->db, store_sqlite_ckpt_hook, c);
	*ret = c;
	return 0;
}

/* Stop the thread (after the one running), close its connection, free;
 * accepts NULL (store_sqlite_int.h). */
void
store_sqlite_ckpt_stop(struct store_sqlite_ckpt *c, struct store_sqlite *w)
{
	if (c == NULL)
		return;
	if (w != NULL)
		(void)sqlite3_wal_hook(w->db, NULL, NULL);
	(void)pthread_mutex_lock(&c->lock);
	c->stop = 1;
	(void)pthread_cond_signal(&c->cond);
	(void)pthread_mutex_unlock(&c->lock);
	(void)pthread_join(c->thread, NULL);
	store_sqlite_disconnect(c->conn);
	(void)pthread_cond_destroy(&c->cond);
	(void)pthread_mutex_destroy(&c->lock);
	free(c);
}

/* Checkpoints run so far (store_sqlite_int.h). */
uint64_t
store_sqlite_ckpt_runs(struct store_sqlite_ckpt *c)
{
	uint64_t n;

	if (c == NULL)
		return 0;
	(void)pthread_mutex_lock(&c->lock);
	n = c->runs;
	(void)pthread_mutex_unlock(&c->lock);
	return n;
}
