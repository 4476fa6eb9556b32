/*
 * arena — per-request memory with a hard byte budget and cleanup callbacks
 * (nginx pools, Varnish workspaces).
 *
 * Everything a request creates is either allocated here or registered with
 * arena_cleanup() (xmlDoc, xmlsec contexts, PGresult, temp files) and is
 * released by arena_free() in reverse order of registration.  When the budget
 * is exhausted, allocation returns NULL: the request fails, never the daemon.
 */
#ifndef AS4GW_ARENA_H
#define AS4GW_ARENA_H

#include <stddef.h>

struct arena;

typedef void (*arena_cleanup_fn)(void *ptr);

/* New arena that may hand out at most `budget` bytes (0 = unlimited). */
struct arena *arena_new(size_t budget);

/* Run cleanups (last registered first) and free all memory. Accepts NULL. */
void arena_free(struct arena *a);

/* Zeroed memory owned by the arena, 16-byte aligned; NULL when over budget. */
void *arena_alloc(struct arena *a, size_t size);

/* Zeroed array of n elements of size sz, overflow-checked. */
void *arena_calloc(struct arena *a, size_t n, size_t sz);

/* Copies owned by the arena; the string copies are NUL-terminated. */
void *arena_memdup(struct arena *a, const void *p, size_t len);
char *arena_strdup(struct arena *a, const char *s);
char *arena_strndup(struct arena *a, const char *s, size_t len);
char *arena_sprintf(struct arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * Register fn(ptr) to run at arena_free().  Returns 0, or -1 (and runs
 * fn(ptr) at once) when the registration itself cannot be allocated, so the
 * caller never leaks.  ptr == NULL is accepted and ignored.
 */
int arena_cleanup(struct arena *a, arena_cleanup_fn fn, void *ptr);

/* Bytes the arena may still hand out or be charged (SIZE_MAX: no budget). */
size_t arena_remaining(const struct arena *a);

/*
 * Count n bytes held outside the arena (a libxml2 tree it owns through a
 * cleanup) against its budget, as if allocated here: 0, or -1 (nothing
 * counted) when that would exceed the budget.
 */
int arena_charge(struct arena *a, size_t n);

/* Bytes handed out (or charged) so far (for metrics and tests). */
size_t arena_used(const struct arena *a);

#endif
