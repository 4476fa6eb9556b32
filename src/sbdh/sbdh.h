/*
 * sbdh — the UN/CEFACT Standard Business Document Header (SBDH 1.3,
 * namespace NS_SBDH) of a payload, as Peppol uses it (Peppol Business
 * Message Envelope (SBDH) 2.0): the sender and receiver participant
 * identifiers (Identifier/@Authority = the identifier scheme), the
 * DocumentIdentification fields and the BusinessScope scopes DOCUMENTID,
 * PROCESSID and COUNTRY_C1 (Scope/Identifier = the identifier scheme).
 *
 * The payload is parsed by xml_parse() under the caller's limits (no DTD,
 * no network, depth, node, attribute and memory caps).  The structure is
 * checked strictly: the root is {NS_SBDH}StandardBusinessDocument, its
 * first element child the header and exactly one element (the business
 * document) follows it; the header has exactly one HeaderVersion, Sender,
 * Receiver and DocumentIdentification, at most one BusinessScope; each
 * field read is present exactly once, has no child elements, is not empty,
 * holds no control character and is at most max_id_bytes long.
 * Depends on util and xml only; never logs.
 *
 * Every failure is ERR_EBMS with code SBDH_EBMS_CODE, a short partner-safe
 * msg ("payload is not an SBDH document", "SBDH field missing: Sender" ...)
 * and the specifics in err.detail.
 */
#ifndef AS4GW_SBDH_H
#define AS4GW_SBDH_H

#include <stddef.h>

#include <libxml/tree.h>

#include "../util/arena.h"
#include "../util/err.h"
#include "../xml/xml.h"

#define NS_SBDH \
	"http://www.unece.org/cefact/namespaces/StandardBusinessDocumentHeader"

/* ebMS3 Core 6.7.1 "Other": what phase4's Peppol receiver answers for every
 * SBDH problem (README "Peppol"). */
#define SBDH_EBMS_CODE "EBMS:0004"

/* Default longest value of any field read (bytes, maxSbdhValueBytes). */
#define SBDH_MAX_VALUE_DEFAULT 1024u

/* An identifier with its scheme. */
struct sbdh_id {
	const char *scheme;  /* @Authority / Scope/Identifier; NULL if absent */
	const char *value;   /* never NULL once parsed (except absent scopes) */
};

struct sbdh_limits {
	struct xml_limits xml;   /* for xml_parse() */
	size_t max_value_bytes;  /* every field; default SBDH_MAX_VALUE_DEFAULT */
};

/*
 * A parsed header.  Every string is an arena copy, trimmed of XML white
 * space; fields marked "or NULL" are optional in the SBDH.
 */
struct sbdh {
	const char *header_version;
	struct sbdh_id sender;       /* Sender/Identifier (C1) */
	struct sbdh_id receiver;     /* Receiver/Identifier (C4) */
	/* DocumentIdentification */
	const char *standard;
	const char *type_version;
	const char *instance_id;     /* InstanceIdentifier */
	const char *type;
	const char *creation;        /* CreationDateAndTime, as written */
	/* BusinessScope/Scope by Type: value NULL when that scope is absent;
	 * scheme NULL when the Scope has no Identifier */
	struct sbdh_id document_type;  /* DOCUMENTID */
	struct sbdh_id process;        /* PROCESSID */
	const char *country_c1;        /* COUNTRY_C1's InstanceIdentifier, or NULL */
	/* the business document after the header: namespace (NULL = none)
	 * and local name */
	const char *document_ns;
	const char *document_name;
};

/* Defaults: xml_limits_default(), no byte cap, SBDH_MAX_VALUE_DEFAULT. */
void sbdh_limits_default(struct sbdh_limits *lim);

/*
 * Parse data (a payload's final bytes: decrypted, decompressed) as a
 * Standard Business Document and read its header into *ret (written only
 * on success).  The document belongs to the arena.  0 ok, -1 error (see
 * above; a payload that is not well-formed XML, has a DTD or passes an XML
 * limit is "payload is not an SBDH document" with the reason in detail).
 */
int sbdh_parse(struct arena *a, const unsigned char *data, size_t len,
    const struct sbdh_limits *lim, struct sbdh *ret, struct err *err);

/* The same on a parsed document's root element. */
int sbdh_read(struct arena *a, const xmlNode *root, size_t max_value_bytes,
    struct sbdh *ret, struct err *err);

#endif
