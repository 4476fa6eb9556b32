/*
 * testswa — the fixture shared by the test_wss_swa_*.c programs (see
 * testswa.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "testswa.h"

static xmlSecKeyPtr test_key; /* RSA 2048, made once */

/* The envelope the round trips sign (the Body is referenced by Id). */
static const char envelope[] =
    "<S:Envelope xmlns:S=\"" NS_SOAP12 "\"><S:Header/>"
    "<S:Body Id=\"body\"><x:P xmlns:x=\"urn:x\">hi</x:P></S:Body>"
    "</S:Envelope>";

/* Attachments for the round trips: XML, text with LF line ends, binary. */
const char xml_att[] =
    "<?xml version=\"1.0\"?>\n<a:doc xmlns:a=\"urn:a\" xmlns:u=\"urn:u\">"
    "<a:x c='2'   b=\"1\"/><!-- c --></a:doc>\n";
const char xml_att_same[] = /* the same XML, canonically */
    "<a:doc xmlns:a=\"urn:a\"><a:x b=\"1\" c=\"2\"></a:x></a:doc>";
const char text_att[] = "line 1\nline 2\n";
const char text_att_crlf[] = "line 1\r\nline 2\r\n";
const unsigned char bin_att[] = { 0x1f, 0x8b, 0x00, '\r', '\n', 0xff };

/* Make the signing key and initialise libxml2 and xmlsec. */
int
group_setup(void **state)
{
	EVP_PKEY *pkey;
	xmlSecKeyDataPtr data;
	struct err err;

	(void)state;
	err_clear(&err);
	xml_global_init();
	if (wss_global_init(&err) < 0 || (pkey = EVP_RSA_gen(2048)) == NULL)
		return -1;
	data = xmlSecOpenSSLEvpKeyAdopt(pkey);
	test_key = data != NULL ? xmlSecKeyCreate() : NULL;
	if (test_key == NULL || xmlSecKeySetValue(test_key, data) < 0)
		return -1;
	return 0;
}

/* Free the key and shut xmlsec down. */
int
group_teardown(void **state)
{
	(void)state;
	xmlSecKeyDestroy(test_key);
	wss_global_shutdown();
	return 0;
}

/* Unbind after every test so no binding leaks into the next. */
int
unbind(void **state)
{
	(void)state;
	wss_swa_unbind();
	return 0;
}

/* A dsig context as wss_inbound makes one: cid: references, the SwA
 * transforms and the pre-execute check; signKey is a copy of key. */
static xmlSecDSigCtxPtr
swa_ctx(int verify, xmlSecKeyPtr key)
{
	xmlSecDSigCtxPtr ctx = wss_dsig_ctx_new(verify);

	assert_non_null(ctx);
	ctx->enabledReferenceUris |= xmlSecTransformUriTypeRemote;
	ctx->referencePreExecuteCallback = wss_swa_pre_exec;
	assert_int_equal(xmlSecDSigCtxEnableReferenceTransform(ctx,
	    wss_swa_content_sig_id()), 0);
	assert_int_equal(xmlSecDSigCtxEnableReferenceTransform(ctx,
	    wss_swa_complete_sig_id()), 0);
	ctx->signKey = xmlSecKeyDuplicate(key);
	assert_non_null(ctx->signKey);
	return ctx;
}

/* The ds:Signature of doc's wsse:Security header (or of its Header). */
static xmlNodePtr
signature_of(xmlDocPtr doc)
{
	xmlNodePtr hdr = xml_child(xmlDocGetRootElement(doc), NS_SOAP12,
	    "Header"), sec = xml_child(hdr, NS_WSSE, "Security");

	return xml_child(sec != NULL ? sec : hdr, NS_DS, "Signature");
}

/*
 * Verify doc's signature with key: -1 not processable, 0 valid with every
 * reference valid, 1 invalid.  *ret_refs (if not NULL) gets a bit per
 * reference that failed.
 */
int
verify(xmlDocPtr doc, xmlSecKeyPtr key, unsigned *ret_refs)
{
	xmlSecDSigCtxPtr ctx = swa_ctx(1, key);
	xmlSecDSigReferenceCtxPtr ref;
	xmlSecSize i, n;
	unsigned bad = 0;
	int rc;

	rc = xmlSecDSigCtxVerify(ctx, signature_of(doc)) < 0 ? -1 :
	    ctx->status == xmlSecDSigStatusSucceeded ? 0 : 1;
	n = xmlSecPtrListGetSize(&ctx->signedInfoReferences);
	for (i = 0; i < n && i < 32; i++) {
		ref = xmlSecPtrListGetItem(&ctx->signedInfoReferences, i);
		if (ref->status != xmlSecDSigStatusSucceeded)
			bad |= 1u << i;
	}
	if (rc == 0 && bad != 0)
		rc = 1;
	if (ret_refs != NULL)
		*ret_refs = bad;
	xmlSecDSigCtxDestroy(ctx);
	return rc;
}

/* ---- round trips ---- */

/* The three round-trip attachments (headers as a MIME parser gives them). */
void
make_parts(struct wss_part parts[3])
{
	memset(parts, 0, 3 * sizeof(parts[0]));
	parts[0].content_id = "p1@t";
	parts[0].content_type = "application/xml; charset=UTF-8";
	parts[0].headers = "Content-Type: application/xml; charset=UTF-8\r\n"
	    "Content-ID: <p1@t>\r\nContent-Description: report\r\n";
	parts[0].headers_len = strlen(parts[0].headers);
	parts[0].data = (const unsigned char *)xml_att;
	parts[0].len = sizeof(xml_att) - 1;
	parts[1].content_id = "p2@t";
	parts[1].content_type = "text/plain";
	parts[1].data = (const unsigned char *)text_att;
	parts[1].len = sizeof(text_att) - 1;
	parts[2].content_id = "p3@t";
	parts[2].content_type = "application/octet-stream";
	parts[2].data = bin_att;
	parts[2].len = sizeof(bin_att);
}

const char *const round_uris[] = { "cid:p1@t", "cid:p2@t",
	"cid:p3%40t" };

/*
 * Sign the envelope's Body ("#body", exc-c14n) and each URI (with
 * transform t, none when NULL) while parts are bound; the signed document
 * serialised (malloc), or NULL when xmlsec could not sign.
 */
char *
sign_uris(struct wss_part *parts, size_t n, const char *const *uris,
    size_t n_uris, xmlSecTransformId t)
{
	struct arena *a = arena_new(0);
	xmlSecDSigCtxPtr ctx;
	xmlNodePtr sig, ref;
	xmlChar *out = NULL;
	char *ret = NULL;
	xmlDocPtr doc;
	struct err err;
	size_t i;
	int size = 0;

	err_clear(&err);
	assert_int_equal(xml_parse(a, envelope, sizeof(envelope) - 1, NULL,
	    &doc, &err), 0);
	assert_int_equal(wss_ids_index(doc, &err), 0);
	sig = xmlSecTmplSignatureCreate(doc, xmlSecTransformExclC14NId,
	    xmlSecTransformRsaSha256Id, NULL);
	assert_non_null(xmlAddChild(xml_child(xmlDocGetRootElement(doc),
	    NS_SOAP12, "Header"), sig));
	ref = xmlSecTmplSignatureAddReference(sig, xmlSecTransformSha256Id,
	    NULL, (const xmlChar *)"#body", NULL);
	assert_non_null(xmlSecTmplReferenceAddTransform(ref,
	    xmlSecTransformExclC14NId));
	for (i = 0; i < n_uris; i++) {
		ref = xmlSecTmplSignatureAddReference(sig,
		    xmlSecTransformSha256Id, NULL, (const xmlChar *)uris[i],
		    NULL);
		assert_non_null(ref);
		if (t != NULL)
			assert_non_null(xmlSecTmplReferenceAddTransform(ref, t));
	}
	wss_swa_bind(parts, n, NULL);
	ctx = swa_ctx(0, test_key);
	if (xmlSecDSigCtxSign(ctx, sig) == 0) {
		xmlDocDumpMemory(doc, &out, &size);
		assert_non_null(out);
		ret = strdup((const char *)out);
	}
	wss_swa_unbind();
	xmlFree(out);
	xmlSecDSigCtxDestroy(ctx);
	arena_free(a);
	return ret;
}

/* Parse signed XML and verify it against parts (see verify()). */
int
verify_xml(const char *xml, struct wss_part *parts, size_t n, unsigned *bad)
{
	struct arena *a = arena_new(0);
	xmlDocPtr doc;
	struct err err;
	int rc;

	err_clear(&err);
	assert_int_equal(xml_parse(a, xml, strlen(xml), NULL, &doc, &err), 0);
	assert_int_equal(wss_ids_index(doc, &err), 0);
	wss_swa_bind(parts, n, NULL);
	rc = verify(doc, test_key, bad);
	wss_swa_unbind();
	arena_free(a);
	return rc;
}
