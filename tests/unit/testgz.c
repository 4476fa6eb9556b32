/* testgz — compressed test input (testgz.h). */
#include "testgz.h"

#include <stdarg.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

unsigned char *
testgz_deflate(const void *data, size_t len, int level, int wbits,
    gz_header *hdr, size_t *ret_len)
{
	z_stream zs;
	size_t cap = len + len / 100 + 1024;
	unsigned char *out = malloc(cap);

	assert_non_null(out);
	memset(&zs, 0, sizeof(zs));
	assert_int_equal(deflateInit2(&zs, level, Z_DEFLATED, wbits, 8,
	    Z_DEFAULT_STRATEGY), Z_OK);
	if (hdr != NULL)
		assert_int_equal(deflateSetHeader(&zs, hdr), Z_OK);
	zs.next_in = (Bytef *)(uintptr_t)data;
	zs.avail_in = (uInt)len;
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
	*ret_len = zs.total_out;
	(void)deflateEnd(&zs);
	return out;
}
