/*
 * fuzz_envelope — libFuzzer driver for the SOAP envelope and the ebMS3 header
 * (src/xml, src/soap, src/ebms), in the order gateway_parse() runs them:
 * the hardened XML parser, soap_open(), the mustUnderstand check of the
 * header blocks, ebms_parse() with schema validation, ebms_bind_parts().
 *
 * Input: one SOAP envelope (the root MIME part).  For binding, every cid:
 * PartInfo gets a small MIME part of its own, so the Body-payload and
 * compression rules are reached too.  Failures must carry an error that
 * the gateway can answer with: a SOAP Fault is serialised, an ebMS code
 * must be in the catalogue.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebms/ebms.h"
#include "mime/mime.h"
#include "soap/soap.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/err.h"
#include "xml/xml.h"

#define FUZZ_ENV_BUDGET (64u << 20)

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct ebms_schema *fuzz_env_schema;

/* A broken invariant: say which and abort (libFuzzer saves the input). */
static __attribute__((noreturn)) void
fuzz_env_die(const char *what, const struct err *err)
{
	fprintf(stderr, "fuzz_envelope: %s: kind %s code %s: %s (%s)\n", what,
	    err_kind_name(err->kind), err->ebms_code != NULL ?
	    err->ebms_code : "-", err->msg, err->detail);
	abort();
}

/* Once: libxml2 set-up and the ebMS3 header schema, as gateway_new(). */
int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct err err = { 0 };

	(void)argc;
	(void)argv;
	xml_global_init();
	if (ebms_schema_load(&fuzz_env_schema, &err) == -1)
		fuzz_env_die("schema", &err);
	return 0;
}

/* gateway_check_headers(): a mustUnderstand block other than ours faults. */
static int
fuzz_env_headers(const struct soap_env *env, struct err *err)
{
	const char *ns = env->version == SOAP_11 ? NS_SOAP11 : NS_SOAP12;
	xmlNodePtr h;
	xmlChar *v;
	int mu;

	for (h = xml_child(env->header, NULL, NULL); h != NULL;
	    h = xml_next(h, NULL, NULL)) {
		if (xml_is(h, NS_EB, "Messaging") ||
		    xml_is(h, NS_WSSE, "Security"))
			continue;
		v = xmlGetNsProp(h, (const xmlChar *)"mustUnderstand",
		    (const xmlChar *)ns);
		mu = v != NULL && (xmlStrEqual(v, (const xmlChar *)"true") ||
		    xmlStrEqual(v, (const xmlChar *)"1"));
		xmlFree(v);
		if (mu)
			return err_soap(err, ERR_SOAP_MUST_UNDERSTAND, 500,
			    "a mandatory header block is not understood");
	}
	return 0;
}

/* The envelope as root part plus one part per distinct cid: PartInfo. */
static int
fuzz_env_mime(struct arena *a, const struct ebms_user_message *um,
    const uint8_t *data, size_t size, struct mime_message *ret)
{
	size_t i, j, n = 1;

	ret->parts = arena_calloc(a, um->n_parts + 1, sizeof(*ret->parts));
	if (ret->parts == NULL)
		return -1;
	ret->parts[0].content_type = "application/soap+xml";
	ret->parts[0].media_type = "application/soap+xml";
	ret->parts[0].transfer_encoding = "binary";
	ret->parts[0].data = data;
	ret->parts[0].len = size;
	for (i = 0; i < um->n_parts; i++) {
		const char *cid = um->parts[i].content_id;

		for (j = 1; cid != NULL && j < n; j++)
			if (strcmp(ret->parts[j].content_id, cid) == 0)
				cid = NULL;
		if (cid == NULL)
			continue;
		ret->parts[n].content_id = cid;
		ret->parts[n].content_type = "application/octet-stream";
		ret->parts[n].media_type = "application/octet-stream";
		ret->parts[n].transfer_encoding = "binary";
		ret->parts[n].data = (const unsigned char *)cid;
		ret->parts[n].len = strlen(cid);
		n++;
	}
	ret->multipart = 1;
	ret->n_parts = n;
	ret->root = 0;
	return 0;
}

/* What the gateway does with a failure: a Fault or a known ebMS code. */
static void
fuzz_env_answer(const struct err *err)
{
	struct buf out = { 0 };

	switch (err->kind) {
	case ERR_SOAP:
		if (soap_fault_write(err, &out) == -1 || out.len == 0)
			fuzz_env_die("no SOAP Fault for the error", err);
		break;
	case ERR_EBMS:
		if (err->ebms_code == NULL || strcmp(ebms_error_find(
		    err->ebms_code)->code, err->ebms_code) != 0)
			fuzz_env_die("ebMS code not in the catalogue", err);
		break;
	case ERR_HTTP:
	case ERR_INTERNAL:
		break;
	default:
		fuzz_env_die("unexpected error kind", err);
	}
	buf_free(&out);
}

/* One input: an envelope through the gateway's parse sequence. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct arena *a = arena_new(FUZZ_ENV_BUDGET);
	struct ebms_user_message *um = NULL;
	struct mime_message mime = { 0 };
	struct xml_limits lim;
	struct soap_env env;
	struct err err = { 0 };
	const char *mid = NULL;
	xmlDocPtr doc;
	int rc = -1;

	if (a == NULL)
		return 0;
	xml_limits_default(&lim);
	/* as gateway_parse(): the parser's memory counted against the budget */
	lim.max_memory = arena_remaining(a);
	if (xml_parse(a, (const char *)data, size, &lim, &doc, &err) == -1 ||
	    soap_open(doc, &env, &err) == -1 ||
	    fuzz_env_headers(&env, &err) == -1 ||
	    ebms_parse(a, fuzz_env_schema, &env, &um, &mid, &err) == -1)
		goto out;
	if (um->message_id == NULL || um->messaging == NULL ||
	    um->node == NULL)
		fuzz_env_die("incomplete UserMessage", &err);
	if (fuzz_env_mime(a, um, data, size, &mime) == -1) {
		err_set(&err, ERR_INTERNAL, NULL, "out of memory");
		goto out;
	}
	if (ebms_bind_parts(a, um, &mime, &env, &err) == -1)
		goto out;
	rc = 0;
out:
	if (rc == -1 && err.kind == ERR_NONE)
		fuzz_env_die("failure without an error", &err);
	if (rc == -1 && err.kind != ERR_NONE)
		fuzz_env_answer(&err);
	/* AS4GW_FUZZ_VERBOSE=1: the outcome of each input, to check seeds */
	if (getenv("AS4GW_FUZZ_VERBOSE") != NULL)
		fprintf(stderr, "fuzz_envelope: %s%s %s\n", rc == 0 ?
		    "accepted" : "refused: ", err.msg, err.detail);
	arena_free(a);
	return 0;
}
