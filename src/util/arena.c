#include "arena.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_CHUNK 16384
#define ARENA_ALIGN 16

struct arena_chunk {
	struct arena_chunk *next;
	size_t size, used;
	_Alignas(ARENA_ALIGN) unsigned char data[];
};

struct arena_cleanup_rec {
	struct arena_cleanup_rec *next;
	arena_cleanup_fn fn;
	void *ptr;
};

struct arena {
	struct arena_chunk *chunks;
	struct arena_cleanup_rec *cleanups;
	size_t budget, used;
};

struct arena *
arena_new(size_t budget)
{
	struct arena *a = calloc(1, sizeof(*a));

	if (a != NULL)
		a->budget = budget;
	return a;
}

void
arena_free(struct arena *a)
{
	struct arena_cleanup_rec *c;
	struct arena_chunk *ch;

	if (a == NULL)
		return;
	/* last registered first: later objects may depend on earlier ones */
	while ((c = a->cleanups) != NULL) {
		a->cleanups = c->next;
		c->fn(c->ptr);
		free(c);
	}
	while ((ch = a->chunks) != NULL) {
		a->chunks = ch->next;
		free(ch);
	}
	free(a);
}

static struct arena_chunk *
arena_chunk_new(struct arena *a, size_t need)
{
	size_t size = need > ARENA_CHUNK ? need : ARENA_CHUNK;
	struct arena_chunk *ch;

	if (size > SIZE_MAX - sizeof(*ch))
		return NULL;
	ch = malloc(sizeof(*ch) + size);
	if (ch == NULL)
		return NULL;
	ch->size = size;
	ch->used = 0;
	/* big allocations get their own chunk behind the current one */
	if (need > ARENA_CHUNK / 4 && a->chunks != NULL) {
		ch->next = a->chunks->next;
		a->chunks->next = ch;
	} else {
		ch->next = a->chunks;
		a->chunks = ch;
	}
	return ch;
}

void *
arena_alloc(struct arena *a, size_t size)
{
	struct arena_chunk *ch;
	size_t rounded;
	void *p;

	if (a == NULL || size > SIZE_MAX - ARENA_ALIGN)
		return NULL;
	rounded = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	if (rounded == 0)
		rounded = ARENA_ALIGN;
	if (a->budget != 0 && (rounded > a->budget || a->used > a->budget - rounded))
		return NULL;
	ch = a->chunks;
	if (ch == NULL || ch->size - ch->used < rounded) {
		ch = arena_chunk_new(a, rounded);
		if (ch == NULL)
			return NULL;
	}
	p = ch->data + ch->used;
	ch->used += rounded;
	a->used += rounded;
	memset(p, 0, size);
	return p;
}

void *
arena_calloc(struct arena *a, size_t n, size_t sz)
{
	if (sz != 0 && n > SIZE_MAX / sz)
		return NULL;
	return arena_alloc(a, n * sz);
}

void *
arena_memdup(struct arena *a, const void *p, size_t len)
{
	void *q = arena_alloc(a, len);

	if (q != NULL && len > 0)
		memcpy(q, p, len);
	return q;
}

char *
arena_strndup(struct arena *a, const char *s, size_t len)
{
	char *q;

	if (s == NULL || len == SIZE_MAX)
		return NULL;
	q = arena_alloc(a, len + 1);
	if (q != NULL) {
		memcpy(q, s, len);
		q[len] = '\0';
	}
	return q;
}

char *
arena_strdup(struct arena *a, const char *s)
{
	if (s == NULL)
		return NULL;
	return arena_strndup(a, s, strlen(s));
}

char *
arena_sprintf(struct arena *a, const char *fmt, ...)
{
	va_list ap;
	char *q;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	q = arena_alloc(a, (size_t)n + 1);
	if (q == NULL)
		return NULL;
	va_start(ap, fmt);
	(void)vsnprintf(q, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return q;
}

int
arena_cleanup(struct arena *a, arena_cleanup_fn fn, void *ptr)
{
	struct arena_cleanup_rec *c;

	if (ptr == NULL)
		return 0;
	/* cleanup records do not count against the budget: never lose a free */
	if (a == NULL || (c = malloc(sizeof(*c))) == NULL) {
		fn(ptr);
		return -1;
	}
	c->fn = fn;
	c->ptr = ptr;
	c->next = a->cleanups;
	a->cleanups = c;
	return 0;
}

size_t
arena_used(const struct arena *a)
{
	return a == NULL ? 0 : a->used;
}

size_t
arena_remaining(const struct arena *a)
{
	if (a == NULL)
		return 0;
	if (a->budget == 0)
		return SIZE_MAX;
	return a->used < a->budget ? a->budget - a->used : 0;
}

int
arena_charge(struct arena *a, size_t n)
{
	if (a == NULL || n > arena_remaining(a))
		return -1;
	a->used = n > SIZE_MAX - a->used ? SIZE_MAX : a->used + n;
	return 0;
}
