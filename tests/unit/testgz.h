/*
 * testgz — compressed test input for the payload unit tests
 * (test_payload_gzip.c, test_payload_spool.c): zlib's deflate of a buffer in
 * one of its three framings.
 */
#ifndef AS4GW_TESTGZ_H
#define AS4GW_TESTGZ_H

#include <stddef.h>

#include <zlib.h>

/*
 * data[0..len) deflated at level (1 fast ... 9 a bomb's best ratio) with
 * windowBits wbits: 16 + MAX_WBITS gzip (hdr, if not NULL, its header),
 * MAX_WBITS zlib, -MAX_WBITS raw deflate.  malloc'd (caller frees), its
 * length in *ret_len; asserts on failure.
 */
unsigned char *testgz_deflate(const void *data, size_t len, int level,
    int wbits, gz_header *hdr, size_t *ret_len);

#endif
