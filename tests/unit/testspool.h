/*
 * testspool — the spool fixture of the unit tests of spooled paths
 * (test_payload_spool.c, test_wss_cipher_stream.c, test_spool.c; issue 14): a fresh
 * spool directory for the group, and a part's bytes in a mapped spool
 * file as the MIME parser of a spooled request leaves them.
 */
#ifndef AS4GW_TESTSPOOL_H
#define AS4GW_TESTSPOOL_H

#include <stddef.h>

#include "spool/spool.h"

/* The group's spool directory, made by testspool_setup. */
extern char testspool_dir[64];

/* cmocka group setup: a fresh empty directory testspool_dir; 0 or -1. */
int testspool_setup(void **state);

/* cmocka group teardown: no spool bound, testspool_dir removed. */
int testspool_teardown(void **state);

/* Copy p[0..n) into a new file of sp and map it (asserts on failure);
 * the mapping belongs to sp. */
const unsigned char *testspool_mapped(struct spool *sp, const void *p,
    size_t n);

/* Rss (KiB) of this process's mapping that starts at addr (smaps); -1
 * when there is none. */
long testspool_rss_kib(const void *addr);

#endif
