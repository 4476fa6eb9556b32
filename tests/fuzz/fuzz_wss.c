/*
 * fuzz_wss — libFuzzer driver for inbound WS-Security (src/wss wss_inbound:
 * Security header walk, Timestamp, decryption, SignedInfo checks, key
 * resolution and trust, xmlsec with the SwA transforms, coverage).
 *
 * Set-up, once per process and in memory only: a fresh RSA key and a
 * self-signed certificate (OpenSSL), handed to wss_key_load(),
 * wss_keyring_new(), trust_new() and sender_recipient_load() through memfd
 * paths (/proc/self/fd/N, closed right after loading: nothing touches a disk).
 * The policy requires a signature, allows encryption, trusts only that
 * certificate and decrypts with its key.  Validity is evaluated at a fixed
 * instant (2015-01-01) with a 20-year timestamp skew, so recorded messages
 * get past their old wsu:Timestamps into the deeper checks, and the driver
 * does not depend on the clock.
 *
 * Input: "[MODE:]Content-Type\n" + request body, as for fuzz_mime.  MODE
 * "sign" or "sign+encrypt": before verification the driver signs the
 * envelope (eb:Messaging, Body, every attachment) with its own key, and
 * encrypts the attachments to itself, as `as4gw push` does; the envelope is
 * then serialised and parsed again, like a message on the wire.  This
 * reaches the verification and decryption code with arbitrary envelope and
 * attachment content; "sign+encrypt-complete" relabels the encrypted
 * parts Attachment-Complete, so the decrypted bytes (the input's
 * attachment) are parsed as MIME headers and body: anyone holding the
 * gateway's public certificate can make it do that.  MODE "canon": only
 * the SwA canonical forms of the attachments (wss_swa_canon, Content and
 * Complete with the part's MIME headers: a man in the middle controls
 * those even on a validly signed message).  Without a MODE, the message's
 * own Security header is checked: it must fail cleanly (nobody but the
 * driver holds the key).
 * AS4GW_FUZZ_VERBOSE=1 prints each input's outcome (2: also the envelope
 * the driver signed).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <libxml/tree.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "mime/mime.h"
#include "soap/soap.h"
#include "trust/trust.h"
#include "util/arena.h"
#include "util/err.h"
#include "wss/wss.h"
#include "sender/sender.h"
#include "wss/wss_int.h"
#include "xml/xml.h"

#define FUZZ_WSS_BUDGET (64u << 20)
#define FUZZ_WSS_AT_MS 1420070400000LL   /* 2015-01-01T00:00:00Z */
#define FUZZ_WSS_SKEW_MS (20LL * 365 * 24 * 3600 * 1000)   /* 20 years */
#define FUZZ_WSS_MAX_PARTS 8

/* What the driver does with an input (its prefix; see the top). */
enum fuzz_wss_mode {
	FUZZ_WSS_AS_IS = 0,  /* no prefix: the message's own security */
	FUZZ_WSS_SIGN,       /* "sign:" */
	FUZZ_WSS_ENCRYPT,    /* "sign+encrypt:" */
	FUZZ_WSS_COMPLETE,   /* "sign+encrypt-complete:" */
	FUZZ_WSS_CANON,      /* "canon:" */
};

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The long-lived objects the gateway builds from its configuration. */
static struct {
	struct wss_key *key;
	struct wss_keyring *ring;   /* the same pair, to decrypt with */
	struct trust *trust;
	struct sender_recipient *recipient;
	struct wss_policy pol;
} fuzz_wss;

/* Set-up failed: nothing to fuzz with. */
static __attribute__((noreturn)) void
fuzz_wss_die(const char *what, const struct err *err)
{
	fprintf(stderr, "fuzz_wss: %s: %s (%s)\n", what,
	    err != NULL ? err->msg : "", err != NULL ? err->detail : "");
	abort();
}

/* Add one X.509v3 extension (self-signed: issuer = cert). */
static void
fuzz_wss_ext(X509 *cert, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *ext;

	X509V3_set_ctx(&ctx, cert, cert, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	if (ext == NULL || X509_add_ext(cert, ext, -1) != 1)
		fuzz_wss_die("certificate extension", NULL);
	X509_EXTENSION_free(ext);
}

/* A self-signed certificate for pkey, valid 2000..2049. */
static X509 *
fuzz_wss_cert(EVP_PKEY *pkey)
{
	X509 *cert = X509_new();
	X509_NAME *name = X509_NAME_new();

	if (cert == NULL || name == NULL ||
	    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
	    (const unsigned char *)"as4gw fuzz signer", -1, -1, 0) != 1 ||
	    X509_set_version(cert, 2) != 1 ||
	    ASN1_INTEGER_set(X509_get_serialNumber(cert), 4242) != 1 ||
	    X509_set_subject_name(cert, name) != 1 ||
	    X509_set_issuer_name(cert, name) != 1 ||
	    ASN1_TIME_set_string(X509_getm_notBefore(cert),
	    "20000101000000Z") != 1 ||
	    ASN1_TIME_set_string(X509_getm_notAfter(cert),
	    "20491231000000Z") != 1 ||
	    X509_set_pubkey(cert, pkey) != 1)
		fuzz_wss_die("certificate", NULL);
	X509_NAME_free(name);
	fuzz_wss_ext(cert, NID_basic_constraints, "critical,CA:FALSE");
	fuzz_wss_ext(cert, NID_key_usage,
	    "critical,digitalSignature,keyEncipherment");
	fuzz_wss_ext(cert, NID_subject_key_identifier, "hash");
	if (X509_sign(cert, pkey, EVP_sha256()) <= 0)
		fuzz_wss_die("certificate signature", NULL);
	return cert;
}

/* A memfd holding the PEM of cert (pkey NULL) or of pkey; its fd. */
static int
fuzz_wss_memfd(X509 *cert, EVP_PKEY *pkey)
{
	BIO *bio = BIO_new(BIO_s_mem());
	char *pem;
	long len;
	int fd = memfd_create("as4gw-fuzz-pem", MFD_CLOEXEC);

	if (bio == NULL || fd < 0 ||
	    (cert != NULL ? PEM_write_bio_X509(bio, cert) :
	    PEM_write_bio_PrivateKey(bio, pkey, NULL, NULL, 0, NULL,
	    NULL)) != 1)
		fuzz_wss_die("pem", NULL);
	len = BIO_get_mem_data(bio, &pem);
	if (len <= 0 || write(fd, pem, (size_t)len) != (ssize_t)len)
		fuzz_wss_die("memfd write", NULL);
	BIO_free(bio);
	return fd;
}

/* Once: xmlsec, the key, the trust, the policy (as gateway_leg_init). */
int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct err err = { 0 };
	EVP_PKEY *pkey;
	X509 *cert;
	char cpath[64], kpath[64];
	const char *list[1] = { cpath };
	struct wss_keyring_spec spec = { cpath, kpath, 0 };
	int cfd, kfd;

	(void)argc;
	(void)argv;
	xml_global_init();
	if (wss_global_init(&err) == -1 || (pkey = EVP_RSA_gen(2048)) == NULL)
		fuzz_wss_die("init", &err);
	cert = fuzz_wss_cert(pkey);
	cfd = fuzz_wss_memfd(cert, NULL);
	kfd = fuzz_wss_memfd(NULL, pkey);
	(void)snprintf(cpath, sizeof(cpath), "/proc/self/fd/%d", cfd);
	(void)snprintf(kpath, sizeof(kpath), "/proc/self/fd/%d", kfd);
	if (wss_key_load(cpath, kpath, &fuzz_wss.key, &err) == -1 ||
	    trust_new(&(struct trust_files){ .signers = list, .n_signers = 1,
	    .anchors = list, .n_anchors = 1 }, &fuzz_wss.trust, &err) == -1 ||
	    wss_keyring_new(&spec, 1, &fuzz_wss.ring, &err) == -1 ||
	    sender_recipient_load(cpath, &fuzz_wss.recipient, &err) == -1)
		fuzz_wss_die("load", &err);
	(void)close(cfd);
	(void)close(kfd);
	X509_free(cert);
	EVP_PKEY_free(pkey);
	fuzz_wss.pol.signing = WSS_REQUIRED;
	fuzz_wss.pol.encryption = WSS_OPTIONAL;
	fuzz_wss.pol.algs = WSS_ALGS_DEFAULT;
	fuzz_wss.pol.trust = fuzz_wss.trust;
	fuzz_wss.pol.decrypt_keys = fuzz_wss.ring;
	fuzz_wss.pol.at_ms = FUZZ_WSS_AT_MS;
	fuzz_wss.pol.skew_ms = FUZZ_WSS_SKEW_MS;
	fuzz_wss.pol.max_references = 30;
	fuzz_wss.pol.max_transforms = 5;
	return 0;
}

/* The non-root MIME parts as wss sees them (gateway_secure). */
static struct wss_part *
fuzz_wss_parts(struct arena *a, const struct mime_message *m, size_t *ret_n)
{
	struct wss_part *parts;
	size_t i, n = 0;

	parts = arena_calloc(a, m->n_parts, sizeof(*parts));
	if (parts == NULL)
		return NULL;
	for (i = 0; i < m->n_parts; i++) {
		const struct mime_part *mp = &m->parts[i];

		if (i == m->root)
			continue;
		parts[n].content_id = mp->content_id;
		parts[n].content_type = mp->content_type;
		parts[n].headers = mp->headers;
		parts[n].headers_len = mp->headers_len;
		parts[n].data = mp->data;
		parts[n].len = mp->len;
		n++;
	}
	*ret_n = n;
	return parts;
}

/* "sign+encrypt-complete:": relabel the EncryptedData (encrypted
 * Content-Only) as Attachment-Complete, so that the decrypted attachment
 * bytes from the input are read as a MIME header block and body. */
static void
fuzz_wss_relabel(xmlDocPtr doc)
{
	const char *soap = NULL;
	xmlNodePtr env = wss_envelope(doc, &soap), sec, ed;

	sec = xml_child(xml_child(env, soap, "Header"), NS_WSSE, "Security");
	for (ed = xml_child(sec, NS_XENC, "EncryptedData"); ed != NULL;
	    ed = xml_next(ed, NS_XENC, "EncryptedData"))
		(void)xmlSetProp(ed, (const xmlChar *)"Type",
		    (const xmlChar *)WSS_SWA_NS "Attachment-Complete");
}

/* Sign (and encrypt) doc as `as4gw push` would, then serialise it and
 * parse it again into *doc.  -1 when the driver's own signing refuses
 * the message (not a finding: the input is just unusable that way). */
static int
fuzz_wss_protect(struct arena *a, xmlDocPtr *doc, struct wss_part *parts,
    size_t n, enum fuzz_wss_mode mode, struct err *err)
{
	struct xml_limits lim;
	xmlChar *mem = NULL;
	int len = 0, rc = -1;
	size_t i;

	for (i = 0; i < n; i++)
		if (parts[i].content_id == NULL)   /* no cid: to reference */
			return err_set(err, ERR_INTERNAL, NULL, "driver: "
			    "part without Content-ID");
	if (sender_sign_message(*doc, fuzz_wss.key, parts, n, err) == -1 ||
	    (mode != FUZZ_WSS_SIGN && n > 0 && sender_encrypt_message(a, *doc,
	    fuzz_wss.recipient, parts, n, err) == -1))
		return -1;
	if (mode == FUZZ_WSS_COMPLETE)
		fuzz_wss_relabel(*doc);
	for (i = 0; i < n; i++)
		parts[i].headers = NULL;   /* no longer the sent headers */
	xmlDocDumpMemoryEnc(*doc, &mem, &len, "UTF-8");
	if (mem != NULL && getenv("AS4GW_FUZZ_VERBOSE") != NULL &&
	    strcmp(getenv("AS4GW_FUZZ_VERBOSE"), "2") == 0)
		fprintf(stderr, "fuzz_wss: protected envelope:\n%s\n", mem);
	xml_limits_default(&lim);
	if (mem != NULL && len > 0 && xml_parse(a, (const char *)mem,
	    (size_t)len, &lim, doc, err) == 0)
		rc = 0;
	xmlFree(mem);
	return rc;
}

/* The input's MODE prefix; *p and *n skip it. */
static enum fuzz_wss_mode
fuzz_wss_mode(const uint8_t **p, size_t *n)
{
	static const struct {
		const char *prefix;
		enum fuzz_wss_mode mode;
	} modes[] = { { "sign:", FUZZ_WSS_SIGN },
		{ "sign+encrypt:", FUZZ_WSS_ENCRYPT },
		{ "sign+encrypt-complete:", FUZZ_WSS_COMPLETE },
		{ "canon:", FUZZ_WSS_CANON } };
	size_t i, len;

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		len = strlen(modes[i].prefix);
		if (*n >= len && memcmp(*p, modes[i].prefix, len) == 0) {
			*p += len;
			*n -= len;
			return modes[i].mode;
		}
	}
	return FUZZ_WSS_AS_IS;
}

/* "canon:": the SwA canonical forms (SwA 1.1 5.4) of every attachment,
 * Content and Complete (MIME headers too), as the transforms digest them. */
static int
fuzz_wss_canon(const struct wss_part *parts, size_t n, struct err *err)
{
	xmlSecBufferPtr out = xmlSecBufferCreate(0);
	size_t i;
	int complete;

	for (i = 0; out != NULL && i < n; i++) {
		for (complete = 0; complete < 2; complete++) {
			(void)wss_swa_canon(&parts[i], parts[i].data,
			    parts[i].len, complete, NULL, out);
			xmlSecBufferEmpty(out);
		}
	}
	if (out != NULL)
		xmlSecBufferDestroy(out);
	return err_set(err, ERR_INTERNAL, NULL, "driver: canon only");
}

/* Parse the input into doc, parts; sign it first in the sign modes. */
static int
fuzz_wss_prepare(struct arena *a, const uint8_t *data, size_t size,
    xmlDocPtr *ret_doc, struct wss_part **ret_parts, size_t *ret_n,
    struct err *err)
{
	enum fuzz_wss_mode mode = fuzz_wss_mode(&data, &size);
	const uint8_t *nl = memchr(data, '\n', size);
	const unsigned char *body = nl != NULL ? nl + 1 : data + size;
	struct mime_limits mlim;
	struct xml_limits xlim;
	struct mime_message m;
	const struct mime_part *root;
	char *ct = arena_strndup(a, (const char *)data,
	    nl != NULL ? (size_t)(nl - data) : size);

	mime_limits_default(&mlim);
	mlim.max_parts = FUZZ_WSS_MAX_PARTS;
	xml_limits_default(&xlim);
	if (ct == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	if (mime_parse(a, ct, body, size - (size_t)(body - data), &mlim, &m,
	    err) == -1)
		return -1;
	if ((*ret_parts = fuzz_wss_parts(a, &m, ret_n)) == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	if (mode == FUZZ_WSS_CANON)
		return fuzz_wss_canon(*ret_parts, *ret_n, err);
	root = &m.parts[m.root];
	if (xml_parse(a, (const char *)root->data, root->len, &xlim, ret_doc,
	    err) == -1)
		return -1;
	if (mode != FUZZ_WSS_AS_IS && fuzz_wss_protect(a, ret_doc, *ret_parts,
	    *ret_n, mode, err) == -1)
		return -1;
	return 0;
}

/* One input: (protect,) then wss_inbound() under the driver's policy. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct arena *a = arena_new(FUZZ_WSS_BUDGET);
	struct wss_result res = { 0 };
	struct wss_part *parts = NULL;
	struct soap_env env;
	struct err err = { 0 };
	xmlNodePtr messaging;
	xmlDocPtr doc = NULL;
	size_t n = 0;

	if (a == NULL || fuzz_wss_prepare(a, data, size, &doc, &parts, &n,
	    &err) == -1 || soap_open(doc, &env, &err) == -1)
		goto out;
	messaging = xml_child(env.header, NS_EB, "Messaging");
	if (messaging == NULL) {
		err_set(&err, ERR_EBMS, "EBMS:0009", "driver: no eb:Messaging");
		goto out;
	}
	if (wss_inbound(a, doc, messaging, env.body, parts, n, &fuzz_wss.pol,
	    &res, &err) == -1) {
		if (err.kind == ERR_NONE)
			fuzz_wss_die("failure without an error", &err);
		goto out;
	}
	if (!res.verified || res.n_references < 2 || res.signer == NULL)
		fuzz_wss_die("accepted without a verified signature", &err);
out:
	/* AS4GW_FUZZ_VERBOSE=1: the outcome of each input, to check seeds */
	if (getenv("AS4GW_FUZZ_VERBOSE") != NULL)
		fprintf(stderr, "fuzz_wss: %s%s%s %s\n", res.verified ?
		    "verified" : "refused: ", err.msg, res.decrypted ?
		    " (decrypted)" : "", err.detail);
	arena_free(a);
	return 0;
}
