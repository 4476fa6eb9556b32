/*
 * xml_mem — libxml2's allocations counted against the budget of the parse
 * running on this thread (xml_int.h).  The hooks are thin wrappers of the C
 * library's allocator, so blocks allocated before they were installed, or
 * by code that calls free() directly, mix freely with them.
 */
#include "xml_int.h"

#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/xmlmemory.h>

/* The counter of the parse running on this thread, or NULL. */
static _Thread_local struct xml_mem *xml_mem_cur;

/* Add a new block of n usable bytes to the current counter. */
static void
xml_mem_add(size_t n)
{
	struct xml_mem *m = xml_mem_cur;

	m->used = n > SIZE_MAX - m->used ? SIZE_MAX : m->used + n;
	if (m->used > m->peak)
		m->peak = m->used;
	if (m->limit != 0 && m->used > m->limit)
		m->over = 1;
}

/* Take a freed block of n usable bytes off the current counter (a block
 * allocated before counting began cannot take it below zero). */
static void
xml_mem_sub(size_t n)
{
	struct xml_mem *m = xml_mem_cur;

	m->used = n > m->used ? 0 : m->used - n;
}

/* xmlMalloc / xmlMallocAtomic */
static void *
xml_mem_malloc(size_t n)
{
	void *p = malloc(n);

	if (p != NULL && xml_mem_cur != NULL)
		xml_mem_add(malloc_usable_size(p));
	return p;
}

/* xmlRealloc: the old block's size leaves, the new block's arrives. */
static void *
xml_mem_realloc(void *p, size_t n)
{
	size_t old = p != NULL && xml_mem_cur != NULL ?
	    malloc_usable_size(p) : 0;
	void *q = realloc(p, n);

	if (q != NULL && xml_mem_cur != NULL) {
		xml_mem_sub(old);
		xml_mem_add(malloc_usable_size(q));
	}
	return q;
}

/* xmlFree */
static void
xml_mem_free(void *p)
{
	if (p != NULL && xml_mem_cur != NULL)
		xml_mem_sub(malloc_usable_size(p));
	free(p);
}

/* xmlMemStrdup */
static char *
xml_mem_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = xml_mem_malloc(n);

	if (d != NULL)
		memcpy(d, s, n);
	return d;
}

/* Install the hooks (xml_global_init, before xmlInitParser). */
void
xml_mem_install(void)
{
	(void)xmlMemSetup(xml_mem_free, xml_mem_malloc, xml_mem_realloc,
	    xml_mem_strdup);
}

/* Count this thread's libxml2 allocations into m. */
void
xml_mem_begin(struct xml_mem *m, size_t limit)
{
	memset(m, 0, sizeof(*m));
	m->limit = limit;
	xml_mem_cur = m;
}

/* Stop counting on this thread. */
void
xml_mem_end(void)
{
	xml_mem_cur = NULL;
}
