/*
 * spool — where the bytes of a large request live instead of memory
 * (issue 14; DESIGN.md "spool/"): one struct spool per request holds
 * anonymous files in the spool directory (O_TMPFILE, or a name unlinked at
 * once where the filesystem has no O_TMPFILE), so a crashed or killed
 * process leaves no spool file behind: the kernel frees them with the last
 * descriptor.
 *
 * A file is written front to back (spool_write), then mapped read-only
 * (spool_map): the mapping is a pointer + length like any request memory,
 * so every consumer that takes (data, len) works on spooled bytes as they
 * are.  Bounded memory comes from reading a mapping in order and calling
 * spool_done() behind the reader: the pages already read leave the
 * process's resident set (they stay in the page cache, which the kernel
 * may drop at will; read again, they fault back in).  A consumer that
 * never calls spool_done() is still correct, it only keeps the pages it
 * touched resident.
 *
 * Errors: no space or quota on the spool filesystem (ENOSPC, EDQUOT) is
 * ERR_STORE, the 503 + Retry-After a partner retries after; writing more
 * than the spool's byte budget is ERR_HTTP 413; any other I/O failure is
 * ERR_INTERNAL.  Library code: never logs.
 */
#ifndef AS4GW_SPOOL_H
#define AS4GW_SPOOL_H

#include <stddef.h>
#include <stdint.h>

#include "../util/err.h"

/* What a consumer reads of a mapping between two spool_done() calls. */
#define SPOOL_CHUNK ((size_t)1 << 20)

struct spool;
struct spool_file;

/*
 * A spool for one request: files go into dir (which must exist), at most
 * max_bytes written over all its files (0: no budget).  threshold is what
 * spool_want() compares with.  0, or -1 (ERR_INTERNAL: out of memory).
 */
int spool_new(const char *dir, uint64_t max_bytes, size_t threshold,
    struct spool **ret, struct err *err);

/* Unmap and close every file (the kernel frees them); accepts NULL. */
void spool_free(struct spool *sp);

/*
 * 1 when output of len bytes (a decrypted or decompressed payload, a
 * body) should go to a spool file rather than memory: sp is not NULL and
 * len >= its threshold.  A threshold of 0 spools everything (tests).
 */
int spool_want(const struct spool *sp, uint64_t len);

/* An empty anonymous file in the spool's directory.  0, or -1. */
int spool_file(struct spool *sp, struct spool_file **ret, struct err *err);

/*
 * Append n bytes (buffered; the file system sees them in pieces of up to
 * 256 KiB, but n of 256 KiB and more with nothing buffered goes to the
 * file at once, without a copy).  0, or -1: ENOSPC/EDQUOT -> ERR_STORE
 * "spool: no space left", over the budget -> ERR_HTTP 413.  A file that
 * is mapped takes no more.
 */
int spool_write(struct spool_file *f, const void *p, size_t n,
    struct err *err);

/* Bytes written to f so far. */
uint64_t spool_size(const struct spool_file *f);

/*
 * Map the whole file read-only (after flushing what spool_write buffered):
 * *ret points at spool_size() bytes that stay valid until spool_free().
 * An empty file maps to a valid pointer with 0 bytes.  Idempotent.  0, or
 * -1 (ERR_INTERNAL; a failed flush as spool_write).
 */
int spool_map(struct spool_file *f, const unsigned char **ret,
    struct err *err);

/*
 * The reader is done with [p, p + n) for now: the whole pages inside it
 * that lie in a mapping of the spool bound to this thread leave the
 * resident set.  Anything else (memory that is not a mapping, no spool
 * bound) is left alone, so it is safe to call on any request bytes.
 */
void spool_done(const void *p, size_t n);

/*
 * [p, p + n) will never be read again in this request (the ciphertext of a
 * part that was decrypted, the gzip bytes of a part that was inflated):
 * the whole pages inside it that lie in a mapped spool file bound to this
 * thread are punched out of the file (FALLOC_FL_PUNCH_HOLE) and leave the
 * resident set, so their page-cache pages are free again -- the next
 * spool_write() or store write takes recently used pages in place of
 * fresh ones (in a virtual machine a page touched for the first time costs
 * the host a fault) and the spool holds less disk meanwhile.  Reading the
 * range afterwards gives zeros: call it only for bytes nothing points at
 * any more.  Anything that is not spool (memory) is left alone; best
 * effort (a file system without hole punching keeps the pages).
 */
void spool_drop(const void *p, size_t n);

/*
 * A reader moving front to back, now at p, released up to *rel: once
 * [*rel, p) reaches SPOOL_CHUNK bytes it is spool_done() and *rel moves
 * to p (the one way every scanner releases what it has passed).
 */
void spool_done_behind(const unsigned char **rel, const unsigned char *p);

/*
 * Bind sp to the calling thread for spool_done() and spool_bound() (the
 * request's worker binds its spool for the length of the request and
 * unbinds with NULL).  Returns the previous binding.
 */
struct spool *spool_bind(struct spool *sp);
struct spool *spool_bound(void);

/*
 * Is there room for need more bytes in dir?  statvfs(): 1 room (the
 * space available to unprivileged users, less reserve), 0 not enough,
 * -1 the directory cannot be examined (err: ERR_INTERNAL).
 */
int spool_room(const char *dir, uint64_t need, uint64_t reserve,
    struct err *err);

#endif
