/*
 * xml_int.h — internal to src/xml: what xml.c (parsing), xml_enc.c
 * (encodings), xml_mem.c (allocation accounting) and xml_schema.c (the
 * embedded schemas) share.  Nothing here is for other modules.
 */
#ifndef AS4GW_XML_INT_H
#define AS4GW_XML_INT_H

#include <stddef.h>

#include <libxml/parser.h>
#include <libxml/xmlerror.h>

#include "../util/err.h"

/* xml.c: "FILE:LINE: message" / "line N: message" of a libxml2 error,
 * without the trailing newline. */
void xml_format_error(char *out, size_t size, const xmlError *e);

/* xml_schema.c: the process-wide external entity loader (embedded schemas
 * by base name; everything else refused). */
xmlParserInputPtr xml_schema_loader(const char *url, const char *id,
    xmlParserCtxtPtr ctxt);

/*
 * xml_mem.c: libxml2's allocations counted per thread.  libxml2's
 * allocation hooks are process-wide (xmlMemSetup); the counter they feed is
 * the calling thread's, set by xml_mem_begin() and cleared by
 * xml_mem_end(), so only the parse running on this thread is counted.
 * Sizes are malloc_usable_size() of each block, so a block allocated while
 * counting and freed later (also on another thread, uncounted) never
 * unbalances anything: only what is allocated and freed while counting
 * moves the counter.  The limit is soft: past it, `over` is set and the
 * parser is stopped at its next read (xml.c), never by failing an
 * allocation (libxml2 2.9's out-of-memory paths are not to be trusted).
 */
struct xml_mem {
	size_t limit;   /* 0: count only */
	size_t used;    /* bytes held of what was allocated while counting */
	size_t peak;    /* highest `used` */
	int over;       /* used went past limit */
};

/* Once per process, before libxml2 allocates: install the hooks. */
void xml_mem_install(void);

/* Count this thread's libxml2 allocations into m from now on. */
void xml_mem_begin(struct xml_mem *m, size_t limit);

/* Stop counting on this thread (m keeps its totals). */
void xml_mem_end(void);

/*
 * xml_enc.c: the document as the parser will see it (SOAP 1.2 Part 1, 5:
 * UTF-8 or UTF-16; XML 1.0 4.3.3 and Appendix F).  Detects the encoding
 * from the first bytes (BOM or "<?"), refuses anything but UTF-8 and
 * UTF-16, refuses an XML declaration naming another encoding or one
 * inconsistent with the bytes, converts UTF-16 to UTF-8 (xmlMalloc'd, so a
 * counting parse counts it) and checks that the UTF-8 is well-formed with
 * no U+0000.  With `legacy`, a declaration naming an encoding in which
 * the markup bytes (< > = " ', all below 0x40) only stand for themselves
 * (US-ASCII, ISO-8859-n, windows-125n, KOI8, Shift_JIS, EUC-JP/KR, GB2312,
 * GBK, GB18030, Big5) is also accepted and left to libxml2 to decode
 * (native): the markup the pre-scan counts is the markup libxml2 sees.
 * Failures are ERR_SOAP Sender 400.
 */
struct xml_text {
	const char *p;      /* what libxml2 reads: into data (BOM skipped) or owned */
	size_t len;
	char *owned;        /* converted text (caller xmlFree()s), or NULL */
	int native;         /* 1: libxml2 decodes a legacy encoding itself */
};

int xml_enc_text(const char *data, size_t len, int legacy,
    struct xml_text *ret, struct err *err);

#endif
