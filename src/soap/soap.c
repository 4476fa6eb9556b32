/*
 * soap — locate Envelope/Header/Body (SOAP 1.2 Part 1, 5; SOAP 1.1 is
 * recognised so that its ebMS header can still be checked) and write SOAP
 * 1.2 Fault envelopes (SOAP 1.2 Part 1, 5.4).
 */
#include "soap.h"

#include <string.h>

#include "../xml/xml.h"

/* Is node white-space-only text, a comment, or an element (allowed in an
 * Envelope)?  SOAP 1.2 Part 1, 5: processing instructions and character
 * content are not allowed among the Envelope's children. */
static int
soap_ignorable(const xmlNode *node)
{
	const xmlChar *c;

	if (node->type == XML_COMMENT_NODE)
		return 1;
	if (node->type != XML_TEXT_NODE)
		return 0;
	for (c = node->content; c != NULL && *c != '\0'; c++)
		if (*c != ' ' && *c != '\t' && *c != '\r' && *c != '\n')
			return 0;
	return 1;
}

/* Check the root: an Envelope of SOAP 1.2 or 1.1; sets ret->version. */
static int
soap_check_root(xmlNodePtr root, struct soap_env *ret, struct err *err)
{
	if (root == NULL)
		return err_soap(err, ERR_SOAP_SENDER, 400,
		    "root element is not a SOAP Envelope");
	if (xml_is(root, NS_SOAP12, "Envelope")) {
		ret->version = SOAP_12;
		return 0;
	}
	if (xml_is(root, NS_SOAP11, "Envelope")) {
		ret->version = SOAP_11;
		return 0;
	}
	if (root->type == XML_ELEMENT_NODE &&
	    strcmp((const char *)root->name, "Envelope") == 0)
		/* SOAP 1.2 Part 1, 5.4.7: an Envelope of an unknown version */
		return err_soap(err, ERR_SOAP_VERSION_MISMATCH, 400,
		    "envelope of an unsupported SOAP version");
	return err_soap(err, ERR_SOAP_SENDER, 400,
	    "root element is not a SOAP Envelope");
}

/* Walk the Envelope's children: optional Header, then Body, then nothing. */
static int
soap_walk_envelope(struct soap_env *ret, const char *ns, struct err *err)
{
	xmlNodePtr n;

	for (n = ret->envelope->children; n != NULL; n = n->next) {
		if (n->type != XML_ELEMENT_NODE) {
			if (!soap_ignorable(n))
				return err_soap(err, ERR_SOAP_SENDER, 400,
				    "unexpected content in the SOAP Envelope");
			continue;
		}
		if (ret->body != NULL)
			return err_soap(err, ERR_SOAP_SENDER, 400,
			    "element after the SOAP Body");
		if (xml_is(n, ns, "Header") && ret->header == NULL)
			ret->header = n;
		else if (xml_is(n, ns, "Body"))
			ret->body = n;
		else
			return err_soap(err, ERR_SOAP_SENDER, 400,
			    "unexpected element %s in the SOAP Envelope",
			    xml_is(n, ns, "Header") ? "second Header" :
			    (const char *)n->name);
	}
	if (ret->body == NULL)
		return err_soap(err, ERR_SOAP_SENDER, 400, "SOAP Body missing");
	return 0;
}

/* Locate Envelope/Header/Body; *ret is written only on success. */
int
soap_open(xmlDocPtr doc, struct soap_env *ret, struct err *err)
{
	struct soap_env env;

	memset(&env, 0, sizeof(env));
	env.doc = doc;
	env.envelope = doc != NULL ? xmlDocGetRootElement(doc) : NULL;
	if (soap_check_root(env.envelope, &env, err) == -1 ||
	    soap_walk_envelope(&env, env.version == SOAP_12 ? NS_SOAP12 :
	    NS_SOAP11, err) == -1)
		return -1;
	*ret = env;
	return 0;
}

/* The env:Value text for a fault (SOAP 1.2 Part 1, 5.4.6). */
static const char *
soap_code_name(const struct err *err)
{
	if (err == NULL)
		return "env:Receiver";
	if (err->kind == ERR_SOAP) {
		switch (err->soap_code) {
		case ERR_SOAP_VERSION_MISMATCH:
			return "env:VersionMismatch";
		case ERR_SOAP_MUST_UNDERSTAND:
			return "env:MustUnderstand";
		case ERR_SOAP_RECEIVER:
			return "env:Receiver";
		case ERR_SOAP_SENDER:
		default:
			return "env:Sender";
		}
	}
	switch (err->kind) {
	case ERR_STORE:
	case ERR_UNAVAILABLE:
	case ERR_INTERNAL:
	case ERR_IO:
	case ERR_CONF:
	case ERR_NONE:
		return "env:Receiver";
	default:
		return "env:Sender";
	}
}

/* The Reason text: err.msg for request errors, a generic text for our own
 * failures (their msg may name files or hosts). */
static const char *
soap_reason(const struct err *err)
{
	if (err == NULL)
		return "internal error";
	switch (err->kind) {
	case ERR_SOAP:
	case ERR_HTTP:
	case ERR_EBMS:
		return err->msg[0] != '\0' ? err->msg : "invalid message";
	case ERR_STORE:
		return "storage temporarily unavailable";
	default:
		return "internal error";
	}
}

/* Serialise a SOAP 1.2 Fault envelope for err into out (never err.detail). */
int
soap_fault_write(const struct err *err, struct buf *out)
{
	if (buf_puts(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	    "<env:Envelope xmlns:env=\"" NS_SOAP12 "\"><env:Body><env:Fault>"
	    "<env:Code><env:Value>") == -1 ||
	    buf_puts(out, soap_code_name(err)) == -1 ||
	    buf_puts(out, "</env:Value></env:Code><env:Reason>"
	    "<env:Text xml:lang=\"en\">") == -1 ||
	    buf_xml_escape(out, soap_reason(err)) == -1 ||
	    buf_puts(out, "</env:Text></env:Reason></env:Fault></env:Body>"
	    "</env:Envelope>\n") == -1)
		return -1;
	return 0;
}
