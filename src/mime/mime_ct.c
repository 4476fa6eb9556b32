#include "mime.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "mime_hdr.h"

/*
 * Header value grammar: Content-Type (below) and Content-ID / cid: URLs
 * (at the end, with mime_find).
 *
 * Content-Type grammar, RFC 2045 5.1:
 *   content := type "/" subtype *(";" parameter)
 *   parameter := attribute "=" value
 *   value := token / quoted-string
 * Tolerated beyond the letter of the RFC, because real senders do it:
 * whitespace around every delimiter, a trailing or doubled ";", and unquoted
 * values that contain tspecials (AS4 profile examples send
 * type=application/soap+xml and start=<id@host> unquoted).
 */

/* Bound on parameters, so a hostile header cannot make us allocate freely. */
#define MIME_CT_MAX_PARAMS 32

/* Linear whitespace inside a (possibly still folded) header value. */
static int
mime_ct_is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* RFC 2045 5.1 token character: CHAR except SPACE, CTLs and tspecials. */
static int
mime_ct_is_token(char c)
{
	unsigned char u = (unsigned char)c;

	if (u <= 0x20 || u >= 0x7f)
		return 0;
	return strchr("()<>@,;:\\\"/[]?=", c) == NULL;
}

/* A character allowed in an unquoted parameter value (lenient token). */
static int
mime_ct_is_value(char c)
{
	unsigned char u = (unsigned char)c;

	return u > 0x20 && u != 0x7f && c != ';' && c != '"';
}

/* Skip linear whitespace. */
static const char *
mime_ct_skip_ws(const char *p)
{
	while (mime_ct_is_ws(*p))
		p++;
	return p;
}

/* Where the parse is: the arena, and whether it ran out of memory. */
struct mime_ct_ctx {
	struct arena *a;
	int oom;
};

/* Arena copy of [p, p+len), lower-cased if asked; NULL (oom) on failure. */
static char *
mime_ct_copy(struct mime_ct_ctx *c, const char *p, size_t len, int lower)
{
	char *s = arena_strndup(c->a, p, len);
	size_t i;

	if (s == NULL)
		c->oom = 1;
	for (i = 0; lower && s != NULL && i < len; i++)
		s[i] = (char)tolower((unsigned char)s[i]);
	return s;
}

/*
 * RFC 822 quoted-string starting at *pp (on the opening quote): the unquoted
 * value with backslash escapes resolved, into the arena; *pp moves past the
 * closing quote.  -1 when the string is unterminated or memory runs out.
 */
static int
mime_ct_quoted(struct mime_ct_ctx *c, const char **pp, char **ret)
{
	const char *p = *pp + 1, *q;
	char *out = NULL, *o;
	int rc = -1;

	for (q = p; *q != '"'; q++)
		if (*q == '\0' || (*q == '\\' && *++q == '\0'))
			goto out;
	if ((out = arena_alloc(c->a, (size_t)(q - p) + 1)) == NULL) {
		c->oom = 1;
		goto out;
	}
	for (o = out; p < q; p++) {
		if (*p == '\\')
			p++;
		*o++ = *p;
	}
	*o = '\0';
	*pp = q + 1;
	*ret = out;
	rc = 0;
out:
	return rc;
}

/*
 * RFC 2231 4: a parameter "name*" carries an extended value
 * "charset'language'%XX...": decode it in place (mime_hdr_rfc2231) and drop
 * the '*' from the name.  Continuations ("name*0", RFC 2231 3), an
 * extended value in quotes and a '*' anywhere else are refused: -1.
 */
static int
mime_ct_extended(char *name, char *value, int quoted)
{
	size_t n = strlen(name), len = strlen(value);
	char *star = strchr(name, '*');

	if (star == NULL)
		return 0;
	if (star != name + n - 1 || n == 1 || quoted ||
	    mime_hdr_rfc2231(value, &len) == -1)
		return -1;
	value[len] = '\0';
	*star = '\0';
	return 0;
}

/*
 * One `name = value` at *pp into *ret; advances *pp past it.  0 ok, -1 on a
 * syntax error or when memory runs out.
 */
static int
mime_ct_one_param(struct mime_ct_ctx *c, const char **pp,
    struct mime_param *ret)
{
	const char *p = *pp, *start, *nend;
	char *name = NULL, *value = NULL;
	int rc = -1, quoted = 0;

	for (start = p; mime_ct_is_token(*p); p++)
		;
	nend = p;
	p = mime_ct_skip_ws(p);
	if (nend == start || *p != '=')
		goto out;
	p = mime_ct_skip_ws(p + 1);
	if (*p == '"') {
		quoted = 1;
		if (mime_ct_quoted(c, &p, &value) == -1)
			goto out;
	} else {
		const char *vs = p;

		while (mime_ct_is_value(*p))
			p++;
		if (p == vs || (value = mime_ct_copy(c, vs,
		    (size_t)(p - vs), 0)) == NULL)
			goto out;
	}
	if ((name = mime_ct_copy(c, start, (size_t)(nend - start), 1)) == NULL ||
	    mime_ct_extended(name, value, quoted) == -1)
		goto out;
	ret->name = name;
	ret->value = value;
	*pp = p;
	rc = 0;
out:
	return rc;
}

/* 1 when params[0..n) already holds a parameter called name. */
static int
mime_ct_has(const struct mime_param *params, size_t n, const char *name)
{
	size_t i;
	int has = 0;

	for (i = 0; !has && i < n; i++)
		has = strcmp(params[i].name, name) == 0;
	return has;
}

/*
 * The parameter list after type/subtype.  A repeated parameter name is
 * refused: two boundary= values would let two parsers disagree.
 */
static int
mime_ct_params(struct mime_ct_ctx *c, const char *p,
    struct mime_param *params, size_t *ret_n)
{
	size_t n = 0;
	int rc = -1;

	for (;;) {
		p = mime_ct_skip_ws(p);
		if (*p == '\0')
			break;
		if (*p != ';')
			goto out;
		p = mime_ct_skip_ws(p + 1);
		if (*p == '\0' || *p == ';')
			continue; /* trailing or doubled ";" */
		if (n == MIME_CT_MAX_PARAMS ||
		    mime_ct_one_param(c, &p, &params[n]) == -1 ||
		    mime_ct_has(params, n, params[n].name))
			goto out;
		n++;
	}
	*ret_n = n;
	rc = 0;
out:
	return rc;
}

/* mime_ct_parse with the out-of-memory flag kept in c. */
static int
mime_ct_parse_ctx(struct mime_ct_ctx *c, const char *value,
    struct mime_ct *ret)
{
	struct mime_param params[MIME_CT_MAX_PARAMS];
	const char *p, *type, *sub;
	size_t n = 0, tlen, slen, i;
	char *full = NULL;
	struct mime_param *copy = NULL;
	int rc = -1;

	if (value == NULL)
		goto out;
	p = mime_ct_skip_ws(value);
	for (type = p; mime_ct_is_token(*p); p++)
		;
	tlen = (size_t)(p - type);
	p = mime_ct_skip_ws(p);
	/* RFC 6838 4.2: type and subtype names are at most 127 characters */
	if (tlen == 0 || tlen > 127 || *p != '/')
		goto out;
	p = mime_ct_skip_ws(p + 1);
	for (sub = p; mime_ct_is_token(*p); p++)
		;
	slen = (size_t)(p - sub);
	if (slen == 0 || slen > 127 || mime_ct_params(c, p, params, &n) == -1)
		goto out;
	full = arena_sprintf(c->a, "%.*s/%.*s", (int)tlen, type, (int)slen,
	    sub);
	if (full == NULL ||
	    (n > 0 && (copy = arena_memdup(c->a, params,
	    n * sizeof(*params))) == NULL)) {
		c->oom = 1;
		goto out;
	}
	for (i = 0; full[i] != '\0'; i++)
		full[i] = (char)tolower((unsigned char)full[i]);
	ret->type = full;
	ret->params = copy;
	ret->n_params = n;
	rc = 0;
out:
	return rc;
}

/* A structured value and its parameters; see mime.h. */
int
mime_ct_value_parse(struct arena *a, const char *value, const char **ret_value,
    const struct mime_param **ret_params, size_t *ret_n)
{
	struct mime_param params[MIME_CT_MAX_PARAMS];
	struct mime_ct_ctx c = { a, 0 };
	const char *p, *v;
	size_t n = 0;
	char *lead;

	if (value == NULL)
		return -1;
	v = p = mime_ct_skip_ws(value);
	while (*p != '\0' && *p != ';' && !mime_ct_is_ws(*p))
		p++;
	if (p == v || mime_ct_params(&c, p, params, &n) == -1 ||
	    (lead = mime_ct_copy(&c, v, (size_t)(p - v), 1)) == NULL)
		return -1;
	*ret_params = NULL;
	if (n > 0 && (*ret_params = arena_memdup(a, params,
	    n * sizeof(*params))) == NULL)
		return -1;
	*ret_value = lead;
	*ret_n = n;
	return 0;
}

/* Parse a Content-Type value (RFC 2045 5.1); see mime.h. */
int
mime_ct_parse(struct arena *a, const char *value, struct mime_ct *ret)
{
	struct mime_ct_ctx c = { a, 0 };

	return mime_ct_parse_ctx(&c, value, ret);
}

/* mime_ct_parse that records why it failed; see mime.h. */
int
mime_ct_parse_err(struct arena *a, const char *value, struct mime_ct *ret,
    struct err *err)
{
	struct mime_ct_ctx c = { a, 0 };
	int rc = mime_ct_parse_ctx(&c, value, ret);

	if (rc == -1 && c.oom)
		err_set(err, ERR_INTERNAL, NULL, "out of memory");
	else if (rc == -1)
		err_http(err, 400, "malformed content-type");
	return rc;
}

/* A parameter by case-insensitive name (names are stored lower case). */
const char *
mime_ct_param(const struct mime_ct *ct, const char *name)
{
	size_t i;

	if (ct == NULL || name == NULL)
		return NULL;
	for (i = 0; i < ct->n_params; i++)
		if (strcasecmp(ct->params[i].name, name) == 0)
			return ct->params[i].value;
	return NULL;
}

/*
 * Content-ID (RFC 2045 7, RFC 822 msg-id) and cid: URLs (RFC 2392): the id is
 * compared without "<>" and without a "cid:" prefix; see mime.h.
 * Blanks, "<>" and "cid:" are taken off until none is left (" < cid:x > "
 * and "cid:<x>" are both x), so that a stripped id strips to itself: a
 * part's stored Content-ID must find that part again (mime_find) and come
 * back unchanged from a written "<id>" (mime_write).  Linear: each round
 * removes at least one byte.
 */
int
mime_ct_id_strip(const char **pp, size_t *plen)
{
	const char *p = *pp;
	size_t n = *plen, before;
	int cid = 0;

	do {
		before = n;
		while (n > 0 && (*p == ' ' || *p == '\t')) {
			p++;
			n--;
		}
		while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
			n--;
		if (n >= 2 && p[0] == '<' && p[n - 1] == '>') {
			p++;
			n -= 2;
		} else if (n >= 4 && strncasecmp(p, "cid:", 4) == 0) {
			p += 4;
			n -= 4;
			cid = 1;
		}
	} while (n != before);
	*pp = p;
	*plen = n;
	return cid;
}

/*
 * Does a cid: URL's id [q, q+n) name the Content-ID id?  %-decoded by the
 * one cid: decoder (mime_cid_match) when pct is set, compared as it is
 * otherwise.  1 equal, 0 not (a malformed escape is never equal).
 */
static int
mime_id_eq(const char *q, size_t n, int pct, const char *id)
{
	if (pct)
		return mime_cid_match(q, n, id) == 1;
	return strlen(id) == n && memcmp(q, id, n) == 0;
}

/* The first part whose Content-ID equals [q, q+n) (decoded if pct). */
static const struct mime_part *
mime_find_id(const struct mime_message *m, const char *q, size_t n, int pct)
{
	const struct mime_part *found = NULL;
	size_t i;

	for (i = 0; found == NULL && i < m->n_parts; i++)
		if (m->parts[i].content_id != NULL &&
		    mime_id_eq(q, n, pct, m->parts[i].content_id))
			found = &m->parts[i];
	return found;
}

/* The part a Content-ID or cid: href names; see mime.h. */
const struct mime_part *
mime_find(const struct mime_message *m, const char *content_id)
{
	const struct mime_part *found = NULL;
	const char *q = content_id;
	size_t n;
	int pct;

	if (m == NULL || q == NULL)
		goto out;
	n = strlen(q);
	pct = mime_ct_id_strip(&q, &n);
	if (n == 0)
		goto out;
	/*
	 * A "cid:" URL is %-encoded (RFC 2392 2) and decoded by the one cid:
	 * decoder, exactly as the signature's cid: resolver decodes it (a
	 * malformed escape names no part); a bare Content-ID is compared as
	 * it is.  No second reading: two readings of one href are a parser
	 * differential.
	 */
	found = mime_find_id(m, q, n, pct);
out:
	return found;
}
