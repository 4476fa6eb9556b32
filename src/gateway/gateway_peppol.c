/*
 * gateway_peppol — the Peppol AS4 profile's receiving checks (README
 * "Peppol"), on a leg with <peppol>, after decryption and decompression
 * (the payload's final bytes) and before the inbox is touched, so a
 * refused message stores nothing.
 *
 * Peppol AS4 profile 2.x, 2.2.4-2.2.6 and the Peppol Business Message
 * Envelope 2.0: one payload, a Standard Business Document; the message
 * properties originalSender (C1) and finalRecipient (C4) with their types
 * equal the SBDH Sender and Receiver identifiers with their @Authority,
 * eb:Service with its @type is the SBDH process (PROCESSID) and eb:Action
 * is the document type identifier as "scheme::value" (DOCUMENTID).
 */
#include "gateway.h"

#include <string.h>

#include "../sbdh/sbdh.h"
#include "../spool/spool.h"

/* Peppol AS4 profile 2.x, on errors: EBMS:0004 with eb:ErrorDetail
 * PEPPOL:NOT_SERVICED for a document type or process this access point
 * does not serve (phase4 and Oxalis send the same); kept as the
 * eb:Description too, as before. */
#define GATEWAY_PEPPOL_NOT_SERVICED "PEPPOL:NOT_SERVICED"

/* ASCII case-insensitive equality (Peppol Policy for use of Identifiers
 * 4.x: participant identifiers are case-insensitive); NULL equals nothing. */
static int
gateway_peppol_ieq(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return 0;
	for (; *a != '\0' && *b != '\0'; a++, b++) {
		char ca = *a >= 'A' && *a <= 'Z' ? (char)(*a + 32) : *a;
		char cb = *b >= 'A' && *b <= 'Z' ? (char)(*b + 32) : *b;

		if (ca != cb)
			return 0;
	}
	return *a == *b;
}

/* Exact equality; NULL equals nothing. */
static int
gateway_peppol_eq(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

/* A mismatch between the ebMS header and the SBDH: EBMS:0004; the values
 * go to the log only. */
static int
gateway_peppol_mismatch(struct err *err, const char *what, const char *got,
    const char *want)
{
	err_detail(err, "%s: message \"%.160s\", SBDH \"%.160s\"", what,
	    got != NULL ? got : "(none)", want != NULL ? want : "(none)");
	return err_set(err, ERR_EBMS, SBDH_EBMS_CODE,
	    "Peppol: %s does not match the SBDH", what);
}

/*
 * The message property `name` must be there exactly once and equal id
 * (value and type against value and scheme).
 */
static int
gateway_peppol_party(const struct ebms_user_message *um, const char *name,
    const struct sbdh_id *id, struct err *err)
{
	const struct ebms_property *p = NULL;
	size_t i, n = 0;

	for (i = 0; i < um->n_props; i++)
		if (strcmp(um->props[i].name, name) == 0) {
			p = &um->props[i];
			n++;
		}
	if (n != 1) {
		err_detail(err, "%zu %s properties", n, name);
		return err_set(err, ERR_EBMS, SBDH_EBMS_CODE,
		    "Peppol: exactly one %s property is required", name);
	}
	if (!gateway_peppol_ieq(p->value, id->value))
		return gateway_peppol_mismatch(err, name, p->value, id->value);
	if (!gateway_peppol_ieq(p->type, id->scheme))
		return gateway_peppol_mismatch(err, "type of the property",
		    p->type, id->scheme);
	return 0;
}

/* eb:Action is "scheme::value" of the SBDH document type; eb:Service with
 * its type is the SBDH process (schemes default as in conf.h). */
static int
gateway_peppol_collab(const struct ebms_user_message *um,
    const struct sbdh *s, struct err *err)
{
	const char *ds = s->document_type.scheme != NULL ?
	    s->document_type.scheme : CONF_PEPPOL_DOCTYPE_SCHEME;
	const char *ps = s->process.scheme != NULL ? s->process.scheme :
	    CONF_PEPPOL_PROCESS_SCHEME;
	size_t dl = strlen(ds);

	if (s->document_type.value == NULL || s->process.value == NULL)
		return err_set(err, ERR_EBMS, SBDH_EBMS_CODE, "Peppol: the "
		    "SBDH needs a DOCUMENTID and a PROCESSID scope");
	if (strncmp(um->action, ds, dl) != 0 ||
	    strncmp(um->action + dl, "::", 2) != 0 ||
	    strcmp(um->action + dl + 2, s->document_type.value) != 0) {
		err_detail(err, "SBDH scheme \"%.60s\"", ds);
		return gateway_peppol_mismatch(err, "Action", um->action,
		    s->document_type.value);
	}
	if (!gateway_peppol_eq(um->service, s->process.value))
		return gateway_peppol_mismatch(err, "Service", um->service,
		    s->process.value);
	if (!gateway_peppol_eq(um->service_type, ps))
		return gateway_peppol_mismatch(err, "Service type",
		    um->service_type, ps);
	return 0;
}

/* Is (scheme, value) in the leg's list?  An empty list accepts all. */
static int
gateway_peppol_listed(const struct conf_peppol_id *ids, size_t n,
    const char *scheme, const char *value)
{
	size_t i;

	if (n == 0)
		return 1;
	for (i = 0; i < n; i++)
		if (strcmp(ids[i].scheme, scheme) == 0 &&
		    strcmp(ids[i].value, value) == 0)
			return 1;
	return 0;
}

/* The leg's lists of document types and processes it serves. */
static int
gateway_peppol_served(const struct conf_peppol *p, const struct sbdh *s,
    struct err *err)
{
	const struct sbdh_id *d = &s->document_type, *pr = &s->process;

	if (!gateway_peppol_listed(p->doc_types, p->n_doc_types,
	    d->scheme != NULL ? d->scheme : CONF_PEPPOL_DOCTYPE_SCHEME,
	    d->value)) {
		err_detail(err, "document type \"%.200s\" not served", d->value);
		return err_ebms(err, SBDH_EBMS_CODE,
		    GATEWAY_PEPPOL_NOT_SERVICED, "%s",
		    GATEWAY_PEPPOL_NOT_SERVICED);
	}
	if (!gateway_peppol_listed(p->processes, p->n_processes,
	    pr->scheme != NULL ? pr->scheme : CONF_PEPPOL_PROCESS_SCHEME,
	    pr->value)) {
		err_detail(err, "process \"%.200s\" not served", pr->value);
		return err_ebms(err, SBDH_EBMS_CODE,
		    GATEWAY_PEPPOL_NOT_SERVICED, "%s",
		    GATEWAY_PEPPOL_NOT_SERVICED);
	}
	return 0;
}

/* The SBDH limits from the gateway's (README "Configuration"): an XML
 * payload's, and what the request's arena has left (gateway.h). */
void
gateway_sbdh_limits(const struct conf_limits *lim, struct arena *a,
    struct sbdh_limits *ret)
{
	sbdh_limits_default(ret);
	ret->xml.max_depth = lim->max_xml_depth;
	ret->xml.max_nodes = lim->max_attachment_xml_nodes;
	ret->xml.max_attributes = lim->max_xml_attributes;
	ret->xml.max_memory = arena_remaining(a);
	ret->max_value_bytes = lim->max_sbdh_value_bytes;
}

int
gateway_peppol_check(const struct gateway *gw, struct arena *a,
    const struct ebms_user_message *um, const struct pmode_leg *leg,
    const struct sbdh **ret_sbdh, struct err *err)
{
	struct sbdh_limits lim;
	struct sbdh s, *copy;
	int r;

	*ret_sbdh = NULL;
	if (leg->peppol == NULL)
		return 0;
	/* Peppol AS4 profile 2.2.6: one payload, in its own MIME part */
	if (um->n_parts != 1 || um->parts[0].mime == NULL) {
		err_detail(err, "%zu payloads", um->n_parts);
		return err_set(err, ERR_EBMS, SBDH_EBMS_CODE, "Peppol: exactly "
		    "one payload, as an attachment, is required");
	}
	gateway_sbdh_limits(&gw->conf->limits, a, &lim);
	/* the whole document under the XML limits (README "Peppol"); the
	 * pages of a spooled payload it read are released after (issue 14) */
	r = sbdh_parse(a, um->parts[0].data, um->parts[0].len, &lim, &s, err);
	spool_done(um->parts[0].data, um->parts[0].len);
	if (r == -1 ||
	    gateway_peppol_party(um, "originalSender", &s.sender, err) == -1 ||
	    gateway_peppol_party(um, "finalRecipient", &s.receiver, err) == -1 ||
	    gateway_peppol_collab(um, &s, err) == -1 ||
	    gateway_peppol_served(leg->peppol, &s, err) == -1)
		return -1;
	/* for the business key (issue 12 item 4): not parsed twice */
	if ((copy = arena_memdup(a, &s, sizeof(s))) == NULL)
		return err_set(err, ERR_INTERNAL, NULL,
		    "out of request memory");
	*ret_sbdh = copy;
	return 0;
}
