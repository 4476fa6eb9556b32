/*
 * deliver_part — one payload file of a message directory (issue 14 item
 * 3): part-<n>.bin written and hashed as it is written.  A payload the
 * store keeps in chunks (store.h "STORE_CHUNK_THRESHOLD") is streamed from
 * the store one chunk at a time (store_payload_read), so `as4gw deliver
 * --to-dir` and `--exec` hand over a payload of any size in bounded
 * memory; a smaller one is written from the claim's memory as before.
 */
#include "deliver_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* What the store's reader writes into (store_read_fn's ctx). */
struct deliver_sink {
	int fd;
	struct codec_sha256 *h;
	int hash_failed;
	int saved_errno;              /* write(2) failed: why */
};

/* Write n bytes at p to fd, whole; 0, or -1 with errno. */
static int
deliver_part_put(int fd, const unsigned char *p, size_t n)
{
	ssize_t k;

	while (n > 0) {
		if ((k = write(fd, p, n)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* store_read_fn: hash and write one piece; -1 stops the read. */
static int
deliver_part_sink(void *ctx, const unsigned char *p, size_t n)
{
	struct deliver_sink *k = ctx;

	if (codec_sha256_update(k->h, p, n) == -1)
		k->hash_failed = 1;
	if (k->hash_failed)
		return -1;
	if (deliver_part_put(k->fd, p, n) == -1) {
		k->saved_errno = errno;
		return -1;
	}
	return 0;
}

/* The bytes of part p into the sink: from memory, or from the store. */
static int
deliver_part_fill(const struct deliver_job *j, const struct store_part *p,
    struct deliver_sink *k, struct err *err)
{
	struct store_payload_key key;
	struct err serr = { 0 };
	int r;

	if (!store_part_streamed(p))
		return deliver_part_sink(k, p->data != NULL ? p->data :
		    (const unsigned char *)"", p->len) == 0 ? 0 : -1;
	key.from_party = j->d->from_party;
	key.message_id = j->d->message_id;
	key.part_no = p->part_no;
	r = store_payload_read(j->s, &key, deliver_part_sink, k, &serr);
	/* the sink's own failure (write, hash) is reported by the caller */
	if (r == -1 && k->saved_errno == 0 && !k->hash_failed && err != NULL)
		*err = serr;
	if (r == 0)
		return err_set(err, ERR_STORE, NULL, "could not read payload"
		    " %d: no longer stored", p->part_no);
	return r == 1 ? 0 : -1;
}

/* Part i of j->d as part-<n>.bin under dfd, hashed into j->md[i]. */
int
deliver_part_write(int dfd, const struct deliver_job *j, size_t i,
    struct err *err)
{
	const struct store_part *p = &j->d->parts[i];
	struct deliver_sink k = { .fd = -1 };
	char name[32];
	int rc = -1;

	(void)snprintf(name, sizeof(name), "part-%d.bin", p->part_no);
	if ((k.h = codec_sha256_new()) == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	k.fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    DELIVER_FILE_MODE);
	if (k.fd == -1)
		k.saved_errno = errno;
	else if (deliver_part_fill(j, p, &k, err) == 0) {
		if (j->sync && fsync(k.fd) == -1)
			k.saved_errno = errno;
		else
			rc = 0;
	}
	if (k.fd != -1 && close(k.fd) == -1 && rc == 0) {
		k.saved_errno = errno;
		rc = -1;
	}
	if (codec_sha256_final(k.h, j->md[i].md) == -1 && rc == 0)
		rc = err_set(err, ERR_INTERNAL, NULL, "could not hash \"%s\"",
		    name);
	if (rc == -1 && k.saved_errno != 0)
		(void)err_set(err, ERR_IO, NULL, "could not write \"%s\": %s",
		    name, strerror(k.saved_errno));
	else if (rc == -1 && k.hash_failed)
		(void)err_set(err, ERR_INTERNAL, NULL, "could not hash \"%s\"",
		    name);
	return rc;
}
