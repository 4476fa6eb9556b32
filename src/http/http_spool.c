/*
 * http_spool — where a push's body lives while it arrives (issue 14,
 * DESIGN.md "spool/"): small bodies in memory (r->body, as before), large
 * ones in an anonymous spool file in spoolDir, written as the chunks come
 * and mapped at the end, so that the pipeline reads them like memory and
 * releases them behind itself (spool.h).  A body is large when its
 * declared Content-Length is spoolThresholdBytes or more, or when one
 * without (chunked) grows to that.  Spooled bytes never count against
 * requestMemoryBytes: that budget is the arena's.
 */
#include "http_int.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "../metrics/metrics.h"
#include "../spool/spool.h"

/*
 * A new spool for r with its body file.  The spool's own byte budget is
 * left off (0): the body is capped by maxBodyBytes as it arrives
 * (http_post.c), what the pipeline derives from it (decoded, decrypted,
 * decompressed parts) by its own caps, and the disk by ENOSPC (ERR_STORE).
 */
static int
http_spool_open(struct http_req *r, struct err *err)
{
	if (spool_new(r->srv->spool_dir, 0,
	    r->srv->limits.spool_threshold_bytes, &r->spool, err) == -1)
		return -1;
	if (spool_file(r->spool, &r->spool_f, err) == -1) {
		http_spool_free(r);
		return -1;
	}
	metrics_spooled(1, 0);
	return 0;
}

/*
 * Is there room for need more bytes beyond spoolReserveBytes?  0 yes, -1
 * no (ERR_STORE: the 503 + Retry-After a partner retries after) or the
 * directory cannot be examined (ERR_INTERNAL).
 */
static int
http_spool_room(const struct http_req *r, uint64_t need, struct err *err)
{
	int room = spool_room(r->srv->spool_dir, need,
	    r->srv->limits.spool_reserve_bytes, err);

	if (room == 0)
		err_set(err, ERR_STORE, NULL, "spool: no room for %llu bytes",
		    (unsigned long long)need);
	return room == 1 ? 0 : -1;
}

/* At the head of a push; see http_int.h. */
int
http_spool_begin(struct http_req *r, uint64_t declared, struct err *err)
{
	if (declared < r->srv->limits.spool_threshold_bytes)
		return 0;
	if (http_spool_room(r, declared, err) == -1)
		return -1;
	return http_spool_open(r, err);
}

/* Move a body that grew to the threshold from memory to a spool file. */
static int
http_spool_move(struct http_req *r, size_t more, struct err *err)
{
	if (http_spool_room(r, (uint64_t)r->body.len + more, err) == -1 ||
	    http_spool_open(r, err) == -1)
		return -1;
	if (r->body.len > 0 &&
	    spool_write(r->spool_f, r->body.data, r->body.len, err) == -1)
		return -1;
	metrics_spooled(0, r->body.len);
	buf_free(&r->body);
	return 0;
}

/* Keep a piece of body; see http_int.h. */
int
http_spool_append(struct http_req *r, const char *data, size_t len,
    struct err *err)
{
	if (r->spool_f == NULL &&
	    (uint64_t)r->body.len + len >= r->srv->limits.spool_threshold_bytes &&
	    http_spool_move(r, len, err) == -1)
		return -1;
	if (r->spool_f == NULL) {
		if (buf_append(&r->body, data, len) == -1)
			return err_set(err, ERR_INTERNAL, NULL, "out of memory");
		return 0;
	}
	if (spool_write(r->spool_f, data, len, err) == -1)
		return -1;
	metrics_spooled(0, len);
	return 0;
}

/* The whole body; see http_int.h. */
int
http_spool_body(struct http_req *r, const unsigned char **ret_body,
    size_t *ret_len, struct err *err)
{
	static const unsigned char empty[1];
	uint64_t n;

	if (r->spool_f == NULL) {
		*ret_body = r->body.data != NULL ?
		    (const unsigned char *)r->body.data : empty;
		*ret_len = r->body.len;
		return 0;
	}
	n = spool_size(r->spool_f);
	if (n > SIZE_MAX)
		return err_set(err, ERR_INTERNAL, NULL, "body too large to map");
	if (spool_map(r->spool_f, ret_body, err) == -1)
		return -1;
	*ret_len = (size_t)n;
	return 0;
}

/* Free the request's spool; see http_int.h. */
void
http_spool_free(struct http_req *r)
{
	spool_free(r->spool);
	r->spool = NULL;
	r->spool_f = NULL;
}

/* spoolDir at start: a directory the gateway can create files in; see
 * http_int.h. */
int
http_spool_check(const char *dir, struct err *err)
{
	struct spool *sp = NULL;
	struct spool_file *f;
	struct err ferr = {0};
	struct stat st;
	int rc = -1;

	if (stat(dir, &st) == -1)
		return err_set(err, ERR_CONF, NULL, "spoolDir \"%s\": %s", dir,
		    strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return err_set(err, ERR_CONF, NULL, "spoolDir \"%s\": not a "
		    "directory", dir);
	if (spool_new(dir, 0, 0, &sp, &ferr) == 0 &&
	    spool_file(sp, &f, &ferr) == 0)
		rc = 0;
	else
		err_set(err, ERR_CONF, NULL, "spoolDir \"%s\": cannot create "
		    "a spool file in it (%s%s%s)", dir, ferr.msg,
		    ferr.detail[0] != '\0' ? ": " : "", ferr.detail);
	spool_free(sp);
	return rc;
}
