/*
 * testswa — the fixture shared by the test_wss_swa_*.c programs
 * (src/wss/wss_swa.c, SwA 1.1 signature transforms): an RSA signing key
 * made at group setup, the envelope and attachments of the round trips,
 * a dsig context as wss_inbound makes one, signing cid: references and
 * verifying them.  Helpers fail the running cmocka test on error.
 */
#ifndef AS4GW_TESTSWA_H
#define AS4GW_TESTSWA_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libxml/tree.h>
#include <openssl/evp.h>
#include <xmlsec/xmlsec.h>
#include <xmlsec/buffer.h>
#include <xmlsec/crypto.h>
#include <xmlsec/keys.h>
#include <xmlsec/openssl/evp.h>
#include <xmlsec/templates.h>
#include <xmlsec/transforms.h>
#include <xmlsec/xmldsig.h>

#include "testutil.h"
#include "util/arena.h"
#include "util/err.h"
#include "wss/wss.h"
#include "wss/wss_int.h"
#include "xml/xml.h"

/* Attachments for the round trips: XML, text with LF line ends, binary. */
extern const char xml_att[];
extern const char xml_att_same[];
extern const char text_att[];
extern const char text_att_crlf[];
extern const unsigned char bin_att[6];

/* Make the signing key and initialise libxml2 and xmlsec. */
int group_setup(void **state);

/* Free the key and shut xmlsec down. */
int group_teardown(void **state);

/* Unbind after every test so no binding leaks into the next. */
int unbind(void **state);

/*
 * Verify doc's signature with key: -1 not processable, 0 valid with every
 * reference valid, 1 invalid.  *ret_refs (if not NULL) gets a bit per
 * reference that failed.
 */
int verify(xmlDocPtr doc, xmlSecKeyPtr key, unsigned *ret_refs);

/* The three round-trip attachments (headers as a MIME parser gives them). */
void make_parts(struct wss_part parts[3]);
/* The cid: URIs of the three parts (the last one %-encoded). */
extern const char *const round_uris[];

/*
 * Sign the envelope's Body ("#body", exc-c14n) and each URI (with
 * transform t, none when NULL) while parts are bound; the signed document
 * serialised (malloc), or NULL when xmlsec could not sign.
 */
char *sign_uris(struct wss_part *parts, size_t n, const char *const *uris,
    size_t n_uris, xmlSecTransformId t);

/* Parse signed XML and verify it against parts (see verify()). */
int verify_xml(const char *xml, struct wss_part *parts, size_t n,
    unsigned *bad);

#endif
