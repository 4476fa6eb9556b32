/*
 * testinbound — the fixture of the wss_inbound tests (test_wss_inbound.c,
 * test_wss_inbound_tamper.c, test_wss_inbound_corpus.c): the development
 * PKI (certs/gen-dev-pki.sh in a temporary directory) with a self-signed
 * attacker and an EC P-256 signer issued by its CA; signed UserMessages
 * built with xmlsec templates (two SwA attachments) as a spec asks; the
 * policy variants; tampering on the serialised message, as an attacker
 * would; one run of wss_inbound the way the gateway does it.  Helpers fail
 * the running cmocka test on error.
 */
#ifndef AS4GW_TESTINBOUND_H
#define AS4GW_TESTINBOUND_H

#include <stddef.h>

#include "util/arena.h"
#include "util/err.h"
#include "wss/wss.h"

#define EXC_C14N "http://www.w3.org/2001/10/xml-exc-c14n#"
#define EXC_T "<ds:Transform Algorithm=\"" EXC_C14N "\"/>"
#define SHA256_DM "<ds:DigestMethod Algorithm=" \
	"\"http://www.w3.org/2001/04/xmlenc#sha256\"/>"
#define WRAP_OPEN "<x:W xmlns:x=\"urn:x\">"

/* What a message signature covers (bits). */
enum { R_MSG = 1, R_BODY = 2, R_TS = 4, R_P1 = 8, R_P2 = 16,
	R_ALL = R_MSG | R_BODY | R_P1 | R_P2 };
/* Which identity signs / sits in the BST. */
enum who { K_SENDER = 0, K_GATEWAY, K_ATTACKER, K_EC };
/* Algorithm choices the signer can make (default = eDelivery). */
enum alg { A_DEFAULT = 0, A_RSA_SHA1, A_SHA1, A_SHA384, A_INCL_C14N,
	A_EXC_COMMENTS, A_RSA_SHA512, A_ECDSA_SHA256, A_ECDSA_SHA384 };
/* wsu:Timestamp variants. */
enum ts { TS_NONE = 0, TS_GOOD, TS_EXPIRED, TS_FUTURE, TS_BACKWARDS,
	TS_TWO };
/* Policy variants. */
enum pol { P_DEFAULT = 0, P_ENC_REQUIRED, P_ENC_NEVER, P_SIGN_NEVER,
	P_SIGN_OPTIONAL, P_NO_RSA_SHA256, P_FUTURE, P_PAST, P_NO_TRUST,
	P_MAX_REFS_3, P_ONLY_ENC, P_EC, P_EC_NO_ECDSA, P_ATTACKER_BOUND,
	P_XML_NODES_1, P_XML_DEPTH_1, P_XML_MEMORY_1, P_TS_REQUIRED };

struct spec {
	unsigned refs;        /* 0 = R_ALL */
	enum ts ts;
	enum alg c14n, sig, dig;
	enum who key, bst;
	int keyvalue;         /* KeyInfo: KeyValue instead of a BST reference */
};

/* The two attachments of every test message (p1@test, p2@test; the
 * EdDSA inbound tests send them too). */
extern const char part1[];
extern const unsigned char part2[12];
/* Fresh copies of the two attachments (wss_inbound may rewrite them). */
void parts_init(struct wss_part p[2]);

/* Group setup / teardown: the libraries, the PKI, the keys and the
 * trusts; freed and removed afterwards. */
int tinbound_setup(void **state);
int tinbound_teardown(void **state);
/* Group setup / teardown of the libraries alone (libxml2, xmlsec, the SwA
 * transforms): the recorded-traffic tests bring their own keys. */
int tinbound_libs_setup(void **state);
int tinbound_libs_teardown(void **state);

/* The policy of a variant (the PKI's trusts where it names one). */
void policy(enum pol v, struct wss_policy *p);
/* A signed message for sp, serialised (free with free()). */
char *sign_message(const struct spec *sp);
/* The message with sp = default: Messaging, Body and both parts. */
char *sign_default(void);
/* s with the first `from` replaced by `to` (s is freed). */
char *tamper(char *s, const char *from, const char *to);
/* The text of s from `start` through the end of `end` (malloc). */
char *slice(const char *s, const char *start, const char *end);

/* One run of wss_inbound over a message and its attachments. */
struct run {
	struct wss_part parts[2];
	size_t n_parts;
	enum pol pol;
	struct wss_result res;
	struct err err;
};

/* Process xml as the gateway would: parse, locate Messaging and Body by
 * position, wss_inbound; the arena keeps the results alive. */
int process(struct arena *a, const char *xml, struct run *r);
/* A run with fresh copies of both attachments under policy v. */
void run_init(struct run *r, enum pol v);
/* Process xml with fresh attachments under v; expect code (NULL = ok). */
void expect(const char *name, const char *xml, enum pol v, const char *code);

#endif
