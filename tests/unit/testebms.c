/*
 * testebms — the fixture shared by the test_ebms_*.c programs (see
 * testebms.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "testebms.h"

static struct ebms_schema *schema;

/* Group setup: compile the ebMS3 header schema once. */
int
setup_schema(void **state)
{
	struct err err;

	(void)state;
	err_clear(&err);
	xml_global_init();
	if (ebms_schema_load(&schema, &err) != 0) {
		fprintf(stderr, "schema: %s (%s)\n", err.msg, err.detail);
		return -1;
	}
	return 0;
}

/* Group teardown: free the schema (and NULL, which must be safe). */
int
teardown_schema(void **state)
{
	(void)state;
	ebms_schema_free(schema);
	ebms_schema_free(NULL);
	return 0;
}

/*
 * phase4 test files start with a licence comment, some followed by an XML
 * declaration (ill-formed as it stands): skip such a comment.
 */
const char *
skip_licence(const char *text, size_t *len)
{
	const char *end;

	if (strncmp(text, "<!--", 4) != 0 || (end = strstr(text, "-->")) == NULL)
		return text;
	end += 3;
	while (*end == '\n' || *end == '\r' || *end == ' ')
		end++;
	if (strncmp(end, "<?xml", 5) != 0)
		return text;
	*len -= (size_t)(end - text);
	return end;
}

/* Parse text up to ebms_parse; xml/soap failures fail the test. */
int
parse_text(struct arena *a, const char *text, size_t len,
    struct soap_env *env, struct ebms_user_message **um, const char **mid,
    struct err *err)
{
	xmlDocPtr doc = NULL;

	text = skip_licence(text, &len);
	if (xml_parse(a, text, len, NULL, &doc, err) != 0 ||
	    soap_open(doc, env, err) != 0)
		fail_msg("not SOAP: %s (%s)", err->msg, err->detail);
	return ebms_parse(a, schema, env, um, mid, err);
}

/* got equals want (both may be NULL); what names the field. */
void
check_str(const char *what, const char *got, const char *want)
{
	if (want == NULL && got == NULL)
		return;
	if (want == NULL || got == NULL || strcmp(got, want) != 0)
		fail_msg("%s: got \"%s\", want \"%s\"", what,
		    got != NULL ? got : "(null)", want != NULL ? want : "(null)");
}

/* Build a SOAP 1.2 UserMessage from the case's pieces into buf. */
void
build(char *buf, size_t size, const char *mi, const char *from,
    const char *to, const char *ci, const char *pay, const char *body)
{
	int n = snprintf(buf, size,
	    "<S:Envelope xmlns:S='http://www.w3.org/2003/05/soap-envelope' "
	    "xmlns:eb='" EB "' xmlns:wsu='" NS_WSU "'><S:Header>"
	    "<eb:Messaging S:mustUnderstand='true' wsu:Id='m'>"
	    "<eb:UserMessage>%s<eb:PartyInfo>%s%s</eb:PartyInfo>%s%s"
	    "</eb:UserMessage></eb:Messaging></S:Header>"
	    "<S:Body wsu:Id='body1'>%s</S:Body></S:Envelope>",
	    mi != NULL ? mi : D_MI, from != NULL ? from : D_FROM,
	    to != NULL ? to : D_TO, ci != NULL ? ci : D_CI,
	    pay != NULL ? pay : D_PAY, body != NULL ? body : "");

	assert_true(n > 0 && (size_t)n < size);
}
