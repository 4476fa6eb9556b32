/*
 * cli_replay_outcome — what an AS4 answer says (cli.h): split a multipart
 * answer to its root part, parse it with the hardened parser, and find the
 * eb:Receipt, the eb:Error signals (code, short description, description,
 * detail: ebMS3 Core 6.2) or the SOAP Fault.  Used by `push` and `replay`.
 */
#include "cli.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "../mime/mime.h"
#include "../xml/xml.h"

/* s on one line: every control character (newlines, tabs) becomes a
 * space, and surrounding space goes (an answer is another party's text). */
static const char *
cli_replay_oneline(struct arena *a, const char *s)
{
	char *out;
	size_t i, n;

	if (s == NULL)
		return NULL;
	while (*s == ' ' || (*s > 0 && *s < 0x20))
		s++;
	if ((out = arena_strdup(a, s)) == NULL)
		return NULL;
	for (i = 0; out[i] != '\0'; i++)
		if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f)
			out[i] = ' ';
	n = i;
	while (n > 0 && out[n - 1] == ' ')
		out[--n] = '\0';
	return *out != '\0' ? out : NULL;
}

/* One eb:Error for the replay line: "CODE SHORT: Description (detail:
 * ErrorDetail)" with what is there (ebMS3 Core 6.2.2-6.2.8). */
static const char *
cli_replay_error_text(struct arena *a, xmlNodePtr e, const char *code)
{
	const char *sd = cli_replay_oneline(a, xml_attr(a, e, NULL,
	    "shortDescription"));
	const char *desc = cli_replay_oneline(a, xml_text(a, xml_child(e,
	    NS_EB, "Description")));
	const char *detail = cli_replay_oneline(a, xml_text(a, xml_child(e,
	    NS_EB, "ErrorDetail")));

	return arena_sprintf(a, "%s%s%s%s%s%s%s", code,
	    sd != NULL ? " " : "", sd != NULL ? sd : "",
	    desc != NULL ? ": " : "", desc != NULL ? desc : "",
	    detail != NULL ? " (detail: " : "",
	    detail != NULL ? arena_sprintf(a, "%s)", detail) : "");
}

/* Collect the eb:Errors and the ref of one SignalMessage into ret. */
static void
cli_replay_signal(struct arena *a, xmlNodePtr sig,
		  struct cli_replay_outcome *ret)
{
	xmlNodePtr info = xml_child(sig, NS_EB, "MessageInfo");
	xmlNodePtr e;
	const char *ref = xml_text(a, xml_child(info, NS_EB, "RefToMessageId"));
	const char *one;

	for (e = xml_child(sig, NS_EB, "Error"); e != NULL;
	     e = xml_next(e, NS_EB, "Error")) {
		const char *code = xml_attr(a, e, NULL, "errorCode");
		const char *d = xml_text(a, xml_child(e, NS_EB, "ErrorDetail"));

		code = code != NULL ? cli_replay_oneline(a, code) : NULL;
		code = code != NULL ? code : "(no code)";
		ret->codes = ret->codes == NULL
				 ? code
				 : arena_sprintf(a, "%s,%s", ret->codes, code);
		one = cli_replay_error_text(a, e, code);
		ret->errors = ret->errors == NULL || one == NULL
				  ? one
				  : arena_sprintf(a, "%s; %s", ret->errors, one);
		if (d == NULL || *d == '\0')
			d = xml_attr(a, e, NULL, "shortDescription");
		if (ret->description == NULL)
			ret->description = d;
		if (ref == NULL)
			ref = xml_attr(a, e, NULL, "refToMessageInError");
		ret->kind = CLI_REPLAY_ERROR;
	}
	if (ret->ref == NULL)
		ret->ref = ref;
	if (ret->kind == CLI_REPLAY_NONE &&
	    xml_child(sig, NS_EB, "Receipt") != NULL)
		ret->kind = CLI_REPLAY_RECEIPT;
}

/* The local part of a QName ("env:Sender" -> "Sender"). */
static const char *
cli_replay_local(const char *qname)
{
	const char *colon = qname != NULL ? strrchr(qname, ':') : NULL;

	return colon != NULL ? colon + 1 : qname;
}

/* SOAP 1.2 (Code/Value, Reason/Text) or SOAP 1.1 (faultcode, faultstring). */
static void
cli_replay_fault(struct arena *a, xmlNodePtr body, const char *ns,
		 struct cli_replay_outcome *ret)
{
	xmlNodePtr f = xml_child(body, ns, "Fault");
	const char *code, *reason;

	if (f == NULL)
		return;
	if (strcmp(ns, NS_SOAP12) == 0) {
		code = xml_text(
		    a, xml_child(xml_child(f, ns, "Code"), ns, "Value"));
		reason = xml_text(
		    a, xml_child(xml_child(f, ns, "Reason"), ns, "Text"));
	} else {
		code = xml_text(a, xml_child(f, NULL, "faultcode"));
		reason = xml_text(a, xml_child(f, NULL, "faultstring"));
	}
	ret->fault = cli_replay_local(
	    code != NULL && *code != '\0' ? code : "(no code)");
	if (ret->description == NULL)
		ret->description = reason;
	if (ret->kind == CLI_REPLAY_NONE)
		ret->kind = CLI_REPLAY_FAULT;
}

/* The bytes of the SOAP envelope: the root part of a multipart answer. */
static int
cli_replay_envelope_bytes(struct arena *a, const struct cli_replay_answer *ans,
			  const char **ret, size_t *ret_len, struct err *err)
{
	struct mime_limits lim;
	struct mime_message m;
	const char *ct = ans->content_type;

	if (ct == NULL || strncasecmp(ct, "multipart/", 10) != 0) {
		*ret = ans->body.data;
		*ret_len = ans->body.len;
		return 0;
	}
	mime_limits_default(&lim);
	if (mime_parse(a, ct, (const unsigned char *)ans->body.data,
		       ans->body.len, &lim, &m, err) == -1)
		return -1;
	*ret = (const char *)m.parts[m.root].data;
	*ret_len = m.parts[m.root].len;
	return 0;
}

/* Classify an answer; see cli.h. */
void
cli_replay_outcome_parse(struct arena *a, const struct cli_replay_answer *ans,
			 struct cli_replay_outcome *ret)
{
	struct xml_limits lim;
	struct err err;
	xmlNodePtr env, sig;
	const char *data, *ns;
	size_t len;

	memset(ret, 0, sizeof(*ret));
	err_clear(&err);
	xml_limits_default(&lim);
	if (ans->body.len == 0) {
		ret->why = "empty answer";
		return;
	}
	if (ans->content_type != NULL &&
	    strstr(ans->content_type, "xml") == NULL &&
	    strncasecmp(ans->content_type, "multipart/", 10) != 0) {
		ret->why = arena_sprintf(a, "answer is %s, not SOAP",
					 ans->content_type);
		return;
	}
	if (cli_replay_envelope_bytes(a, ans, &data, &len, &err) == -1 ||
	    xml_parse(a, data, len, &lim, &ret->doc, &err) == -1) {
		ret->why = arena_sprintf(a, "unparsable answer (%s)", err.msg);
		return;
	}
	env = xmlDocGetRootElement(ret->doc);
	ns = xml_is(env, NS_SOAP12, "Envelope")	  ? NS_SOAP12
	     : xml_is(env, NS_SOAP11, "Envelope") ? NS_SOAP11
						  : NULL;
	if (ns == NULL) {
		ret->why = "answer is not a SOAP envelope";
		return;
	}
	sig = xml_child(
	    xml_child(xml_child(env, ns, "Header"), NS_EB, "Messaging"), NS_EB,
	    "SignalMessage");
	for (; sig != NULL; sig = xml_next(sig, NS_EB, "SignalMessage"))
		cli_replay_signal(a, sig, ret);
	cli_replay_fault(a, xml_child(env, ns, "Body"), ns, ret);
	if (ret->kind == CLI_REPLAY_NONE)
		ret->why = "no receipt, error or fault in the answer";
}

/* One line for an outcome; see cli.h. */
const char *
cli_replay_outcome_str(struct arena *a, const struct cli_replay_outcome *o)
{
	const char *s;

	switch (o->kind) {
	case CLI_REPLAY_RECEIPT:
		s = arena_sprintf(a, "receipt ref=%s",
				  o->ref != NULL ? o->ref : "(none)");
		break;
	case CLI_REPLAY_ERROR:
		s = arena_sprintf(a, "error %s", o->codes);
		break;
	case CLI_REPLAY_FAULT:
		s = arena_sprintf(a, "fault %s", o->fault);
		break;
	default: s = o->why != NULL ? o->why : "no signal"; break;
	}
	return s != NULL ? s : "out of memory";
}

