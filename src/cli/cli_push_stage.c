/*
 * cli_push_stage — a large `as4gw push` payload from disk into a spool file
 * in one pass (issue 14 item 5): read in SPOOL_CHUNK pieces and written as
 * it is (the octets xmlsec signs must be a mapping the spool releases
 * behind its reader) or, with --compress, as one gzip member made on the
 * way (AS4 profile 3.1; RFC 1952 by zlib's gzip wrapper: no name, mtime 0,
 * as cli_push_gzip makes it in memory).  The file is then mapped: the
 * staged payload is a pointer + length like a payload read into memory,
 * and memory stays at two chunks whatever the payload's size.
 */
#include "cli_push_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "../spool/spool.h"

/* The state of one cli_push_stage() call. */
struct cli_push_stage {
	struct spool_file *f;
	z_stream z;
	int gzip, zinit;
	unsigned char *out;  /* SPOOL_CHUNK bytes: deflate's output */
	struct err *err;
};

/* Deflate what z holds (flush: Z_NO_FLUSH or Z_FINISH) into the spool
 * file.  0, or -1 (err set). */
static int
cli_push_stage_deflate(struct cli_push_stage *s, int flush)
{
	int zrc;

	do {
		s->z.next_out = s->out;
		s->z.avail_out = (uInt)SPOOL_CHUNK;
		zrc = deflate(&s->z, flush);
		if (zrc == Z_STREAM_ERROR)
			return err_set(s->err, ERR_INTERNAL, NULL,
			    "could not compress a payload");
		if (spool_write(s->f, s->out, SPOOL_CHUNK - s->z.avail_out,
		    s->err) == -1)
			return -1;
	} while (s->z.avail_out == 0 || (flush == Z_FINISH &&
	    zrc != Z_STREAM_END));
	return 0;
}

/* One piece read from the payload file: to the spool, or through zlib. */
static int
cli_push_stage_piece(struct cli_push_stage *s, const unsigned char *p,
    size_t n)
{
	if (!s->gzip)
		return spool_write(s->f, p, n, s->err);
	s->z.next_in = (Bytef *)(uintptr_t)p;
	s->z.avail_in = (uInt)n; /* n <= SPOOL_CHUNK */
	return cli_push_stage_deflate(s, Z_NO_FLUSH);
}

/* Copy (or compress) the open file fd into s->f, front to back. */
static int
cli_push_stage_copy(struct cli_push_stage *s, int fd, const char *path)
{
	unsigned char *in = malloc(SPOOL_CHUNK);
	ssize_t r;
	int rc = -1;

	if (in == NULL) {
		(void)err_set(s->err, ERR_INTERNAL, NULL, "out of memory");
		goto out;
	}
	for (;;) {
		r = read(fd, in, SPOOL_CHUNK);
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1) {
			(void)err_set(s->err, ERR_IO, NULL,
			    "could not read file \"%s\": %m", path);
			goto out;
		}
		if (r == 0)
			break;
		if (cli_push_stage_piece(s, in, (size_t)r) == -1)
			goto out;
	}
	rc = s->gzip ? cli_push_stage_deflate(s, Z_FINISH) : 0;
out:
	free(in);
	return rc;
}

/* Stage the payload file at path into a new file of sp; see
 * cli_push_int.h. */
int
cli_push_stage(struct spool *sp, const char *path, int gzip,
    const unsigned char **ret, size_t *ret_len, struct err *err)
{
	struct cli_push_stage s;
	int fd = -1, rc = -1;

	memset(&s, 0, sizeof(s));
	s.gzip = gzip;
	s.err = err;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		(void)err_set(err, ERR_IO, NULL, "could not open file \"%s\": %m",
		    path);
		goto out;
	}
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	if (gzip) {
		if ((s.out = malloc(SPOOL_CHUNK)) == NULL ||
		    deflateInit2(&s.z, Z_DEFAULT_COMPRESSION, Z_DEFLATED,
		    15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
			(void)err_set(err, ERR_INTERNAL, NULL,
			    "could not compress a payload");
			goto out;
		}
		s.zinit = 1;
	}
	if (spool_file(sp, &s.f, err) == -1 ||
	    cli_push_stage_copy(&s, fd, path) == -1 ||
	    spool_map(s.f, ret, err) == -1)
		goto out;
	*ret_len = (size_t)spool_size(s.f);
	rc = 0;
out:
	if (s.zinit)
		(void)deflateEnd(&s.z);
	free(s.out);
	if (fd != -1)
		(void)close(fd);
	return rc;
}
