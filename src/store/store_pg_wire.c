/*
 * store_pg_wire — the binary wire helpers of the PostgreSQL backend
 * (store_pg_int.h): network-order integers and the length-prefixed fields
 * of binary arrays and COPY rows (PostgreSQL docs, COPY "Binary Format";
 * array_recv).
 */
#include <stdint.h>
#include <string.h>

#include "store_pg_int.h"
#include "../util/buf.h"

/* v as 4 bytes in network order at p. */
void
store_pg_be32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

/* Append v as 4 bytes in network order. */
int
store_pg_put32(struct buf *b, uint32_t v)
{
	unsigned char x[4];

	store_pg_be32(x, v);
	return buf_append(b, x, sizeof(x));
}

/* An n-byte network-order integer of a binary result column. */
uint64_t
store_pg_get(const char *p, int n)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < n; i++)
		v = v << 8 | (unsigned char)p[i];
	return v;
}

/* A field of a binary array or COPY row: int32 length (-1 and no bytes
 * for NULL data), then the bytes. */
int
store_pg_field(struct buf *b, const void *data, size_t len)
{
	if (data == NULL)
		return store_pg_put32(b, UINT32_MAX);
	if (store_pg_put32(b, (uint32_t)len) == -1)
		return -1;
	return buf_append(b, data, len);
}

/* store_pg_field() of a string (NULL stays NULL). */
int
store_pg_str(struct buf *b, const char *s)
{
	return store_pg_field(b, s, s != NULL ? strlen(s) : 0);
}
