/*
 * spool.c — anonymous spool files for one request, written front to back,
 * mapped read-only and released behind their readers (spool.h).
 */
#include "spool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* What spool_write() collects before it writes. */
#define SPOOL_WBUF ((size_t)256 << 10)

struct spool_file {
	struct spool *sp;
	int fd;
	uint64_t size;                /* written, buffered bytes included */
	unsigned char *wbuf;          /* SPOOL_WBUF bytes, until mapped */
	size_t wlen;
	void *map;                    /* NULL until spool_map() */
	size_t map_len;               /* the mmap() length (0: empty file) */
	struct spool_file *next;
};

struct spool {
	char *dir;
	uint64_t max_bytes, written;
	size_t threshold;
	struct spool_file *files;
};

static _Thread_local struct spool *spool_tls;

/* An empty file maps to this. */
static unsigned char spool_empty[1];

int
spool_new(const char *dir, uint64_t max_bytes, size_t threshold,
    struct spool **ret, struct err *err)
{
	struct spool *sp = calloc(1, sizeof(*sp));

	*ret = NULL;
	if (sp == NULL || (sp->dir = strdup(dir)) == NULL) {
		free(sp);
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	}
	sp->max_bytes = max_bytes;
	sp->threshold = threshold;
	*ret = sp;
	return 0;
}

void
spool_free(struct spool *sp)
{
	struct spool_file *f, *next;

	if (sp == NULL)
		return;
	if (spool_tls == sp)
		spool_tls = NULL;
	for (f = sp->files; f != NULL; f = next) {
		next = f->next;
		if (f->map != NULL && f->map_len != 0)
			(void)munmap(f->map, f->map_len);
		if (f->fd != -1)
			(void)close(f->fd);
		free(f->wbuf);
		free(f);
	}
	free(sp->dir);
	free(sp);
}

int
spool_want(const struct spool *sp, uint64_t len)
{
	return sp != NULL && len >= sp->threshold;
}

/* An I/O failure as spool.h says: no space is a 503, the rest a 500. */
static int
spool_io_err(struct err *err, int e, const char *what)
{
	if (e == ENOSPC || e == EDQUOT)
		return err_set(err, ERR_STORE, NULL, "spool: no space left");
	err_set(err, ERR_INTERNAL, NULL, "spool: %s failed", what);
	(void)snprintf(err->detail, sizeof(err->detail), "%s", strerror(e));
	return -1;
}

/* open() an anonymous file in dir: O_TMPFILE, else a name unlinked at once. */
static int
spool_open_fd(const char *dir)
{
	char path[4096];
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

	if (fd != -1 || (errno != EOPNOTSUPP && errno != EISDIR &&
	    errno != EINVAL))
		return fd;
	if ((size_t)snprintf(path, sizeof(path), "%s/as4gw-spool-XXXXXX", dir) >=
	    sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = mkostemp(path, O_CLOEXEC);
	if (fd != -1)
		(void)unlink(path);
	return fd;
}

int
spool_file(struct spool *sp, struct spool_file **ret, struct err *err)
{
	struct spool_file *f = calloc(1, sizeof(*f));

	*ret = NULL;
	if (f == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	f->fd = spool_open_fd(sp->dir);
	if (f->fd == -1) {
		int e = errno;

		free(f);
		return spool_io_err(err, e, "open");
	}
	f->sp = sp;
	f->next = sp->files;
	sp->files = f;
	*ret = f;
	return 0;
}

/* write() all of p[0, n) to f's file. */
static int
spool_put(struct spool_file *f, const unsigned char *p, size_t n,
    struct err *err)
{
	size_t off = 0;
	ssize_t w;

	while (off < n) {
		w = write(f->fd, p + off, n - off);
		if (w == -1 && errno == EINTR)
			continue;
		if (w <= 0)
			return spool_io_err(err, w == 0 ? ENOSPC : errno,
			    "write");
		off += (size_t)w;
	}
	return 0;
}

/* Write out what spool_write() collected. */
static int
spool_flush(struct spool_file *f, struct err *err)
{
	if (spool_put(f, f->wbuf, f->wlen, err) == -1)
		return -1;
	f->wlen = 0;
	return 0;
}

int
spool_write(struct spool_file *f, const void *p, size_t n, struct err *err)
{
	const unsigned char *s = p;
	size_t k;

	if (f->map != NULL)
		return err_set(err, ERR_INTERNAL, NULL, "spool: write after map");
	if (f->sp->max_bytes != 0 && n > f->sp->max_bytes - f->sp->written)
		return err_http(err, 413, "request body too large");
	if (f->wlen == 0 && n >= SPOOL_WBUF) {
		/* a whole buffer's worth: straight from the caller's memory */
		if (spool_put(f, s, n, err) == -1)
			return -1;
		f->size += n;
		f->sp->written += n;
		return 0;
	}
	if (f->wbuf == NULL && (f->wbuf = malloc(SPOOL_WBUF)) == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	while (n > 0) {
		k = SPOOL_WBUF - f->wlen;
		if (k > n)
			k = n;
		memcpy(f->wbuf + f->wlen, s, k);
		f->wlen += k;
		s += k;
		n -= k;
		f->size += k;
		f->sp->written += k;
		if (f->wlen == SPOOL_WBUF && spool_flush(f, err) == -1)
			return -1;
	}
	return 0;
}

uint64_t
spool_size(const struct spool_file *f)
{
	return f->size;
}

int
spool_map(struct spool_file *f, const unsigned char **ret, struct err *err)
{
	void *m;

	*ret = NULL;
	if (f->map == NULL) {
		if (spool_flush(f, err) == -1)
			return -1;
		free(f->wbuf);
		f->wbuf = NULL;
		if (f->size > (uint64_t)SIZE_MAX)
			return err_set(err, ERR_INTERNAL, NULL,
			    "spool: file too large to map");
		if (f->size == 0) {
			f->map = spool_empty;
		} else {
			m = mmap(NULL, (size_t)f->size, PROT_READ, MAP_SHARED,
			    f->fd, 0);
			if (m == MAP_FAILED)
				return spool_io_err(err, errno, "mmap");
			(void)madvise(m, (size_t)f->size, MADV_SEQUENTIAL);
			f->map = m;
			f->map_len = (size_t)f->size;
		}
	}
	*ret = f->map;
	return 0;
}

/*
 * Map the SPOOL_CHUNK after from (page-aligned) in one call, ahead of the
 * reader: the readers go front to back, and one MADV_POPULATE_READ costs
 * less than the page faults it saves (a fault per 16 pages, expensive in a
 * virtual machine).  Best effort: an older kernel's EINVAL changes nothing.
 */
static void
spool_ahead(const struct spool_file *f, uintptr_t from)
{
#ifdef MADV_POPULATE_READ
	uintptr_t end = (uintptr_t)f->map + f->map_len;
	size_t n;

	if (from >= end)
		return;
	n = end - from < SPOOL_CHUNK ? (size_t)(end - from) : SPOOL_CHUNK;
	(void)madvise((void *)from, n, MADV_POPULATE_READ);
#else
	(void)f;
	(void)from;
#endif
}

/*
 * The mapped file of the spool bound to this thread that holds all of
 * [p, p + n), and the whole pages inside that range, [*a, *b) (*b is the
 * end of the file when the range reaches it; *b <= *a: none); NULL when
 * no mapping holds it (memory, no spool bound, nothing to do).
 */
static const struct spool_file *
spool_pages(const void *p, size_t n, uintptr_t *a, uintptr_t *b)
{
	const struct spool_file *f;
	uintptr_t lo = (uintptr_t)p, hi = lo + n, page, base;

	if (spool_tls == NULL || p == NULL || n == 0)
		return NULL;
	page = (uintptr_t)sysconf(_SC_PAGESIZE);
	for (f = spool_tls->files; f != NULL; f = f->next) {
		base = (uintptr_t)f->map;
		if (f->map_len == 0 || lo < base || hi > base + f->map_len)
			continue;
		*a = (lo + page - 1) & ~(page - 1);
		*b = hi == base + f->map_len ? hi : hi & ~(page - 1);
		return f;
	}
	return NULL;
}

void
spool_done(const void *p, size_t n)
{
	const struct spool_file *f;
	uintptr_t a, b;

	if ((f = spool_pages(p, n, &a, &b)) == NULL)
		return;
	if (b > a)
		(void)madvise((void *)a, b - a, MADV_DONTNEED);
	spool_ahead(f, b);
}

void
spool_drop(const void *p, size_t n)
{
	const struct spool_file *f;
	uintptr_t a, b;

	if ((f = spool_pages(p, n, &a, &b)) == NULL || b <= a)
		return;
	(void)fallocate(f->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
	    (off_t)(a - (uintptr_t)f->map), (off_t)(b - a));
	(void)madvise((void *)a, b - a, MADV_DONTNEED);
}

void
spool_done_behind(const unsigned char **rel, const unsigned char *p)
{
	if ((size_t)(p - *rel) >= SPOOL_CHUNK) {
		spool_done(*rel, (size_t)(p - *rel));
		*rel = p;
	}
}

struct spool *
spool_bind(struct spool *sp)
{
	struct spool *old = spool_tls;

	spool_tls = sp;
	return old;
}

struct spool *
spool_bound(void)
{
	return spool_tls;
}

int
spool_room(const char *dir, uint64_t need, uint64_t reserve, struct err *err)
{
	struct statvfs v;
	uint64_t avail;

	if (statvfs(dir, &v) == -1)
		return spool_io_err(err, errno, "statvfs");
	avail = (uint64_t)v.f_bavail * (uint64_t)v.f_frsize;
	return avail >= reserve && avail - reserve >= need ? 1 : 0;
}
