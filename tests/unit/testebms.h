/*
 * testebms — the fixture shared by the test_ebms_*.c programs
 * (src/ebms): the ebMS3 header schema compiled once at group setup,
 * parsing a text up to ebms_parse, and building a SOAP 1.2 UserMessage
 * from pieces.  Helpers fail the running cmocka test on error.
 */
#ifndef AS4GW_TESTEBMS_H
#define AS4GW_TESTEBMS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebms/ebms.h"
#include "testutil.h"
#include "util/arena.h"
#include "util/err.h"
#include "xml/xml.h"

#define EB "http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/"
#define P4 "corpus/messages/phax_phase4/phase4-lib/src/test/resources/external/"
#define X4 "corpus/extracted/"

/* Group setup: compile the ebMS3 header schema once. */
int setup_schema(void **state);

/* Group teardown: free the schema (and NULL, which must be safe). */
int teardown_schema(void **state);

/*
 * phase4 test files start with a licence comment, some followed by an XML
 * declaration (ill-formed as it stands): skip such a comment.
 */
const char *skip_licence(const char *text, size_t *len);

/* Parse text up to ebms_parse; xml/soap failures fail the test. */
int parse_text(struct arena *a, const char *text, size_t len,
    struct soap_env *env, struct ebms_user_message **um, const char **mid,
    struct err *err);

/* got equals want (both may be NULL); what names the field. */
void check_str(const char *what, const char *got, const char *want);

/* The pieces of the inline envelopes (build()). */
#define D_MI "<eb:MessageInfo><eb:Timestamp>2026-01-29T15:39:03.805Z" \
	"</eb:Timestamp><eb:MessageId>m1@test</eb:MessageId></eb:MessageInfo>"
#define D_FROM "<eb:From><eb:PartyId type='urn:t'>A</eb:PartyId>" \
	"<eb:Role>urn:r:i</eb:Role></eb:From>"
#define D_TO "<eb:To><eb:PartyId type='urn:t'>B</eb:PartyId>" \
	"<eb:Role>urn:r:r</eb:Role></eb:To>"
#define D_CI "<eb:CollaborationInfo><eb:AgreementRef type='t' pmode='pm1'>" \
	"urn:agr</eb:AgreementRef><eb:Service type='st'>S</eb:Service>" \
	"<eb:Action>Act</eb:Action><eb:ConversationId>c1</eb:ConversationId>" \
	"</eb:CollaborationInfo><eb:MessageProperties><eb:Property name='p1' " \
	"type='pt'>v1</eb:Property><eb:Property name='p2'> v2 </eb:Property>" \
	"</eb:MessageProperties>"
#define D_PAY "<eb:PayloadInfo><eb:PartInfo href='cid:p1@x'><eb:PartProperties>" \
	"<eb:Property name='MimeType'>text/xml</eb:Property></eb:PartProperties>" \
	"</eb:PartInfo></eb:PayloadInfo>"

/* Build a SOAP 1.2 UserMessage from the case's pieces into buf. */
void build(char *buf, size_t size, const char *mi, const char *from,
    const char *to, const char *ci, const char *pay, const char *body);

#endif
