#include "gateway.h"

#include <stdlib.h>
#include <string.h>

#include "../inbox/inbox.h"
#include "../mime/mime.h"
#include "../pmode/pmode.h"
#include "../receipt/receipt.h"
#include "../soap/soap.h"
#include "../xml/xml.h"

#define GATEWAY_CT_SOAP "application/soap+xml; charset=utf-8"
#define GATEWAY_CT_TEXT "text/plain; charset=utf-8"
#define GATEWAY_RETRY_AFTER_S 5

int
gateway_new(const struct conf *conf, struct gateway **ret, struct err *err)
{
	struct gateway *gw = calloc(1, sizeof(*gw));

	if (gw == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	gw->conf = conf;
	if (ebms_schema_load(&gw->schema, err) == -1 ||
	    wss_key_load(conf->sign_cert, conf->sign_key, &gw->key, err) == -1) {
		gateway_free(gw);
		return -1;
	}
	*ret = gw;
	return 0;
}

void
gateway_free(struct gateway *gw)
{
	if (gw == NULL)
		return;
	ebms_schema_free(gw->schema);
	wss_key_free(gw->key);
	free(gw);
}

/* Is this header block marked mustUnderstand (SOAP 1.2 Part 1, 5.2.3)? */
static int
gateway_must_understand(const xmlNode *block, const struct soap_env *env)
{
	const char *ns = env->version == SOAP_11 ? NS_SOAP11 : NS_SOAP12;
	xmlChar *v = xmlGetNsProp(block, (const xmlChar *)"mustUnderstand",
	    (const xmlChar *)ns);
	int yes;

	if (v == NULL)
		return 0;
	yes = strcmp((const char *)v, "true") == 0 || strcmp((const char *)v, "1") == 0;
	xmlFree(v);
	return yes;
}

/*
 * SOAP 1.2 Part 1, 5.2.3: a header block we are required to understand but
 * do not is a MustUnderstand fault.  We understand eb:Messaging and
 * wsse:Security (the latter is refused by policy until verification lands).
 */
static int
gateway_check_headers(const struct soap_env *env, struct err *err)
{
	xmlNodePtr h;

	if (env->header == NULL)
		return 0;
	for (h = xml_child(env->header, NULL, NULL); h != NULL;
	    h = xml_next(h, NULL, NULL)) {
		if (xml_is(h, NS_EB, "Messaging") || xml_is(h, NS_WSSE, "Security"))
			continue;
		if (gateway_must_understand(h, env)) {
			err_detail(err, "header block {%s}%s",
			    h->ns != NULL ? (const char *)h->ns->href : "",
			    (const char *)h->name);
			return err_soap(err, ERR_SOAP_MUST_UNDERSTAND, 500,
			    "a mandatory header block is not understood");
		}
	}
	return 0;
}

/*
 * The leg's security policy.  Verification of WS-Security signatures and
 * decryption arrive with issue 3; until then a message that carries a
 * wsse:Security header with content (a signature, a token, encrypted keys)
 * cannot be verified and is refused rather than accepted unverified, and a leg that requires signing refuses everything.
 */
static int
gateway_check_security(const struct soap_env *env,
    const struct pmode_leg *leg, struct err *err)
{
	xmlNodePtr sec = env->header != NULL ?
	    xml_child(env->header, NS_WSSE, "Security") : NULL;

	/* an empty wsse:Security (spec samples: "content omitted") asks nothing */
	if (sec != NULL && xml_child(sec, NULL, NULL) != NULL) {
		err_detail(err, "leg \"%s\": wsse:Security present", leg->id);
		return err_set(err, ERR_EBMS, "EBMS:0103",
		    "WS-Security processing is not enabled on this gateway");
	}
	if (leg->signing == CONF_REQUIRED || leg->encryption == CONF_REQUIRED) {
		err_detail(err, "leg \"%s\" requires %s", leg->id,
		    leg->signing == CONF_REQUIRED ? "signing" : "encryption");
		return err_set(err, ERR_EBMS, "EBMS:0103",
		    "message does not satisfy the security policy");
	}
	return 0;
}

/* The "type:value" form of the first From PartyId, for the log line. */
static const char *
gateway_from_party(struct arena *a, const struct ebms_user_message *um)
{
	const struct ebms_party_id *id;

	if (um->from.n_ids == 0)
		return NULL;
	id = &um->from.ids[0];
	if (id->type == NULL)
		return id->value;
	return arena_sprintf(a, "%s:%s", id->type, id->value);
}

/* Parse and validate up to a P-Mode-matched UserMessage. */
static int
gateway_parse(const struct gateway *gw, struct arena *a,
    const struct gateway_request *req, struct soap_env *env,
    struct ebms_user_message **ret_um, struct gateway_answer *ans)
{
	const struct conf_limits *lim = &gw->conf->limits;
	struct mime_limits mlim;
	struct xml_limits xlim;
	struct mime_message mime;
	const struct mime_part *root;
	xmlDocPtr doc;
	struct err *err = &ans->err;

	mime_limits_default(&mlim);
	mlim.max_parts = lim->max_parts;
	xml_limits_default(&xlim);
	xlim.max_depth = lim->max_xml_depth;
	xlim.max_nodes = lim->max_xml_nodes;
	if (mime_parse(a, req->content_type, req->body, req->len, &mlim, &mime,
	    err) == -1)
		return -1;
	root = &mime.parts[mime.root];
	if (xml_parse(a, (const char *)root->data, root->len, &xlim, &doc,
	    err) == -1 || soap_open(doc, env, err) == -1 ||
	    gateway_check_headers(env, err) == -1)
		return -1;
	if (ebms_parse(a, gw->schema, env, ret_um, &ans->message_id, err) == -1)
		return -1;
	ans->message_id = (*ret_um)->message_id;
	ans->from_party = gateway_from_party(a, *ret_um);
	if (env->version == SOAP_11)
		return err_soap(err, ERR_SOAP_VERSION_MISMATCH, 500,
		    "only SOAP 1.2 is supported (AS4 profile 2.1)");
	return ebms_bind_parts(a, *ret_um, &mime, env, err);
}

/* Accepted or duplicate: answer the Receipt (ours, or the stored bytes). */
static int
gateway_accept(const struct gateway *gw, struct store *s, struct arena *a,
    const struct gateway_request *req, struct ebms_user_message *um,
    const struct pmode_leg *leg, struct gateway_answer *ans)
{
	struct buf receipt = {0};
	struct store_result res = {0};
	int rc = -1;

	if (s == NULL) {
		err_set(&ans->err, ERR_STORE, NULL, "store not connected");
		goto out;
	}
	if (receipt_build(a, gw->key, um, NULL, 0, &receipt, NULL,
	    &ans->err) == -1)
		goto out;
	if (inbox_accept(s, a, um, leg, req->peer,
	    (const unsigned char *)receipt.data, receipt.len, &res,
	    &ans->err) == -1) {
		if (res.outcome == STORE_DRIFT)
			ans->outcome = "drift";
		goto out;
	}
	ans->outcome = res.outcome == STORE_NEW ? "new" : "duplicate";
	ans->status = 200;
	ans->content_type = GATEWAY_CT_SOAP;
	if (buf_append(&ans->body, res.receipt, res.receipt_len) == -1) {
		err_set(&ans->err, ERR_INTERNAL, NULL, "out of memory");
		goto out;
	}
	rc = 0;
out:
	buf_free(&receipt);
	return rc;
}

/* Turn ans->err into the answer the partner gets (DESIGN.md "Errors"). */
static int
gateway_answer_error(const struct gateway *gw, struct arena *a,
    struct gateway_answer *ans)
{
	const struct err *err = &ans->err;
	struct err berr = {0};

	buf_reset(&ans->body);
	ans->ebms_code = err->ebms_code;
	if (ans->outcome == NULL)
		ans->outcome = "error";
	switch (err->kind) {
	case ERR_EBMS:
		ans->status = 200;
		ans->content_type = GATEWAY_CT_SOAP;
		if (receipt_build_error(a, gw->key, ans->message_id,
		    err->ebms_code, err->msg, &ans->body, &berr) == 0)
			return 0;
		break;
	case ERR_SOAP:
		ans->status = err->http_status != 0 ? err->http_status : 400;
		ans->content_type = GATEWAY_CT_SOAP;
		if (soap_fault_write(err, &ans->body) == 0)
			return 0;
		break;
	case ERR_HTTP:
		ans->status = err->http_status != 0 ? err->http_status : 400;
		ans->content_type = GATEWAY_CT_TEXT;
		return buf_printf(&ans->body, "%s\n", err->msg);
	case ERR_STORE:
		ans->status = 503;
		ans->retry_after = GATEWAY_RETRY_AFTER_S;
		ans->content_type = GATEWAY_CT_TEXT;
		return buf_puts(&ans->body, "service temporarily unavailable\n");
	default:
		break;
	}
	buf_reset(&ans->body);
	ans->status = 500;
	ans->content_type = GATEWAY_CT_TEXT;
	if (berr.kind != ERR_NONE)
		err_detail(&ans->err, "answer: %s", berr.msg);
	return buf_puts(&ans->body, "internal error\n");
}

int
gateway_receive(const struct gateway *gw, struct store *s, struct arena *a,
    const struct gateway_request *req, struct gateway_answer *ans)
{
	struct ebms_user_message *um = NULL;
	const struct pmode_leg *leg = NULL;
	struct soap_env env;

	memset(ans, 0, sizeof(*ans));
	if (gateway_parse(gw, a, req, &env, &um, ans) == 0 &&
	    pmode_match(gw->conf, um, &leg, &ans->err) == 1) {
		ans->pmode = leg->id;
		if (gateway_check_security(&env, leg, &ans->err) == 0 &&
		    gateway_accept(gw, s, a, req, um, leg, ans) == 0)
			return 0;
	}
	if (ans->err.kind == ERR_NONE)
		err_set(&ans->err, ERR_INTERNAL, NULL, "request failed");
	if (gateway_answer_error(gw, a, ans) == -1) {
		ans->status = 500;
		return -1;
	}
	return 0;
}
