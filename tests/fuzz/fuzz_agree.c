/*
 * fuzz_agree — libFuzzer driver for the key agreement reader (issue 13
 * item 2; src/wss/wss_agree.c): the input is parsed as XML (xml_parse,
 * hardened, as inbound envelopes are), the first xenc:AgreementMethod in
 * it goes to wss_agree_parse() with every key agreement algorithm
 * allowed, and what parses is then run through wss_agree_unwrap() with an
 * X25519 and a P-256 key generated at start-up (originator key decoding,
 * curve and public key checks, agreement, KDF, unwrap of a fixed wrapped
 * key).  Invariants: a refusal is EBMS:0102 with the fixed msg or EBMS:0103;
 * a parse yields known algorithm bits and values within the wire bounds;
 * a fixed wrapped key never unwraps (RFC 3394's check: 2^-64 by chance).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/tree.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include "util/arena.h"
#include "util/err.h"
#include "wss/wss.h"
#include "wss/wss_int.h"
#include "xml/xml.h"

#define FUZZ_AGREE_ALGS (WSS_ALGS_KEY_AGREEMENT | WSS_DIG_SHA256 | \
	WSS_DIG_SHA384 | WSS_DIG_SHA512)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static EVP_PKEY *fuzz_agree_keys[2];

/* A broken invariant: say which and abort. */
static __attribute__((noreturn)) void
fuzz_agree_die(const char *what)
{
	fprintf(stderr, "fuzz_agree: %s\n", what);
	abort();
}

/* The first {ns}name at or below n, depth-first, at most 64 deep. */
static xmlNodePtr
fuzz_agree_find(xmlNodePtr n, int depth)
{
	xmlNodePtr c, hit;

	if (n == NULL || depth > 64)
		return NULL;
	if (n->type == XML_ELEMENT_NODE &&
	    xml_is(n, NS_XENC, "AgreementMethod"))
		return n;
	for (c = n->children; c != NULL; c = c->next)
		if ((hit = fuzz_agree_find(c, depth + 1)) != NULL)
			return hit;
	return NULL;
}

/* Initialise once: xml, wss, the two recipient keys. */
static void
fuzz_agree_init(void)
{
	static int done;
	struct err err;

	if (done)
		return;
	done = 1;
	err_clear(&err);
	xml_global_init();
	if (wss_global_init(&err) < 0)
		fuzz_agree_die("wss_global_init");
	fuzz_agree_keys[0] = EVP_PKEY_Q_keygen(NULL, NULL, "X25519");
	fuzz_agree_keys[1] = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	if (fuzz_agree_keys[0] == NULL || fuzz_agree_keys[1] == NULL)
		fuzz_agree_die("keygen");
}

/* What a parse yields must be what the reader promises. */
static void
fuzz_agree_check(const struct wss_agree *p)
{
	if ((p->ka != WSS_KA_X25519 && p->ka != WSS_KA_ECDH_ES) ||
	    (p->kdf != WSS_KDF_HKDF && p->kdf != WSS_KDF_CONCAT) ||
	    wss_kdf_md(p->dig) == NULL)
		fuzz_agree_die("parse yields an unknown algorithm");
	if (p->salt.len > 1024 || p->info.len > 1024 ||
	    p->other.len > 5 * 1024 || p->key_len > 1024 ||
	    p->orig.len > 2048 || p->orig.p == NULL || p->recipient == NULL)
		fuzz_agree_die("parse yields a value beyond the wire bounds");
	if (p->kdf == WSS_KDF_HKDF && p->other.p != NULL)
		fuzz_agree_die("HKDF with ConcatKDF OtherInfo");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned char wrapped[24] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	struct wss_bytes w = { wrapped, sizeof(wrapped) };
	struct arena *a;
	xmlDocPtr doc = NULL;
	struct wss_agree p;
	struct err err;
	unsigned char key[16];
	const char *why = NULL;
	size_t i;

	fuzz_agree_init();
	if ((a = arena_new(8u << 20)) == NULL)
		return 0;
	err_clear(&err);
	if (xml_parse(a, (const char *)data, size, NULL, &doc, &err) == 0 &&
	    wss_agree_parse(a, fuzz_agree_find(xmlDocGetRootElement(doc), 0),
	    FUZZ_AGREE_ALGS, &p, &err) == 0) {
		fuzz_agree_check(&p);
		p.kek_len = 16;
		for (i = 0; i < 2; i++)
			if (wss_agree_unwrap(&p, fuzz_agree_keys[i], &w, key, 16,
			    &why) == 0)
				fuzz_agree_die("a fixed wrapped key unwrapped");
	} else if (err.kind == ERR_EBMS && err.ebms_code != NULL &&
	    strcmp(err.ebms_code, "EBMS:0102") == 0 &&
	    strcmp(err.msg, "decryption failed") != 0) {
		fuzz_agree_die("EBMS:0102 without the fixed msg");
	}
	ERR_clear_error();
	arena_free(a);
	return 0;
}
