/*
 * soap — the SOAP envelope (SOAP 1.2 Part 1; SOAP 1.1 recognised so that its
 * ebMS header can still be checked) and SOAP 1.2 Faults.
 */
#ifndef AS4GW_SOAP_H
#define AS4GW_SOAP_H

#include <libxml/tree.h>

#include "../util/buf.h"
#include "../util/err.h"

enum soap_version { SOAP_12 = 12, SOAP_11 = 11 };

/* Borrowed pointers into a document owned elsewhere (the request arena). */
struct soap_env {
	xmlDocPtr doc;
	xmlNodePtr envelope;
	xmlNodePtr header;  /* NULL if the envelope has no Header */
	xmlNodePtr body;    /* never NULL after soap_open succeeded */
	enum soap_version version;
};

/*
 * Locate Envelope/Header/Body.  Root not an Envelope of SOAP 1.2 or 1.1, a
 * missing Body, elements after Body, or Header after Body -> ERR_SOAP Sender
 * 400.  SOAP 1.1 is reported through ret->version, not refused here.
 */
int soap_open(xmlDocPtr doc, struct soap_env *ret, struct err *err);

/*
 * Serialise a SOAP 1.2 Fault envelope (SOAP 1.2 Part 1, 5.4) for err (kind
 * ERR_SOAP: its soap_code and msg become Code/Value and Reason/Text) into out.
 * Never includes err.detail.
 */
int soap_fault_write(const struct err *err, struct buf *out);

#endif
