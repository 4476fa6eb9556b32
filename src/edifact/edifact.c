/*
 * edifact — the UNA service string advice and the UNB interchange header
 * (ISO 9735-1 and ISO 9735 versions 1 to 3, sections "Service string
 * advice" and "Interchange header"); see edifact.h.
 */
#include "edifact.h"

#include <ctype.h>
#include <string.h>

/* CR/LF bytes tolerated between the UNA and the UNB (line-broken files). */
#define EDIFACT_EOL_MAX 4

/* How a value ended: at a component or data element separator, or at the
 * segment terminator. */
enum edifact_term { EDIFACT_COMPONENT, EDIFACT_ELEMENT, EDIFACT_SEGMENT };

/* A read position in the interchange with its service characters. */
struct edifact_cur {
	const unsigned char *p, *end;
	const struct edifact_delims *d;
};

/* Up to four components of one composite data element: where each value
 * goes and its maximum length (an unused component: out NULL). */
struct edifact_comp {
	char *out;
	size_t max;
	const char *name;
};

/* ISO 9735 default service characters (no UNA). */
static const struct edifact_delims edifact_defaults = {
	':', '+', '.', '?', ' ', '\''
};

int
edifact_is_interchange(const unsigned char *data, size_t len)
{
	return data != NULL && len >= 3 && (memcmp(data, "UNA", 3) == 0 ||
	    memcmp(data, "UNB", 3) == 0);
}

/* The malformed-header error: EBMS:0004 with what was wrong. */
static int
edifact_bad(struct err *err, const char *what, const char *name)
{
	return err_set(err, ERR_EBMS, "EBMS:0004",
	    "malformed EDIFACT interchange header: %s%s%s", what,
	    name != NULL ? " in " : "", name != NULL ? name : "");
}

/* The terminator kind of byte b, or -1 when b is data. */
static int
edifact_term_of(const struct edifact_delims *d, unsigned char b)
{
	if (b == (unsigned char)d->component)
		return EDIFACT_COMPONENT;
	if (b == (unsigned char)d->element)
		return EDIFACT_ELEMENT;
	if (b == (unsigned char)d->segment)
		return EDIFACT_SEGMENT;
	return -1;
}

/*
 * ISO 9735 "release character": one value up to its separator or
 * terminator, release characters removed, into out (max bytes + NUL; out
 * NULL: checked and dropped).  The terminator kind, or -1 (err set).
 */
static int
edifact_value(struct edifact_cur *c, char *out, size_t max, const char *name,
    struct err *err)
{
	size_t n = 0;
	int t;

	while (c->p < c->end) {
		unsigned char b = *c->p++;

		if (c->d->release != 0 && b == (unsigned char)c->d->release) {
			if (c->p == c->end)
				return edifact_bad(err, "release character at "
				    "the end of the data", name);
			b = *c->p++;
		} else if ((t = edifact_term_of(c->d, b)) != -1) {
			if (out != NULL)
				out[n] = '\0';
			return t;
		}
		if (b < 0x20 || b == 0x7f)
			return edifact_bad(err, "control byte", name);
		if (n == max)
			return edifact_bad(err, "value too long", name);
		if (out != NULL)
			out[n] = (char)b;
		n++;
	}
	return edifact_bad(err, "data ends inside the UNB segment", name);
}

/*
 * A composite data element of at most n components (comp[0..n)); it must
 * end at a data element separator.  0, or -1 (err set).
 */
static int
edifact_composite(struct edifact_cur *c, const struct edifact_comp *comp,
    size_t n, struct err *err)
{
	size_t i;
	int t = EDIFACT_COMPONENT;

	for (i = 0; i < n && t == EDIFACT_COMPONENT; i++) {
		if (comp[i].out != NULL)
			comp[i].out[0] = '\0';
		t = edifact_value(c, comp[i].out, comp[i].max, comp[i].name,
		    err);
	}
	if (t == -1)
		return -1;
	if (t == EDIFACT_COMPONENT)
		return edifact_bad(err, "a component too many", comp[0].name);
	if (t == EDIFACT_SEGMENT)
		return edifact_bad(err, "UNB ends before the control "
		    "reference", comp[0].name);
	return 0;
}

/* A UNA service character: graphic ASCII, neither letter nor digit. */
static int
edifact_service_char(char ch)
{
	unsigned char b = (unsigned char)ch;

	return b > 0x20 && b < 0x7f && !isalnum(b);
}

/* The UNA's service characters into *d (data holds at least 9 bytes). */
static int
edifact_una(const unsigned char *data, struct edifact_delims *d,
    struct err *err)
{
	const char *s = (const char *)data + 3;
	char used[4];
	size_t i, j, n = 0;

	d->component = s[0];
	d->element = s[1];
	d->decimal = s[2];
	d->release = s[3] == ' ' ? 0 : s[3];
	d->repetition = s[4];
	d->segment = s[5];
	if (d->decimal != '.' && d->decimal != ',')
		return edifact_bad(err, "decimal mark not '.' or ','", "UNA");
	used[n++] = d->component;
	used[n++] = d->element;
	used[n++] = d->segment;
	if (d->release != 0)
		used[n++] = d->release;
	for (i = 0; i < n; i++) {
		if (!edifact_service_char(used[i]) ||
		    (d->repetition != ' ' && used[i] == d->repetition))
			return edifact_bad(err, "unusable service character",
			    "UNA");
		for (j = 0; j < i; j++)
			if (used[i] == used[j])
				return edifact_bad(err, "service characters "
				    "not distinct", "UNA");
	}
	if (d->repetition != ' ' && !edifact_service_char(d->repetition))
		return edifact_bad(err, "unusable service character", "UNA");
	return 0;
}

/* 1 when s is n digits (n one of the lengths allowed), else 0. */
static int
edifact_digits(const char *s, size_t n1, size_t n2)
{
	size_t n = strlen(s), i;

	if (n != n1 && n != n2)
		return 0;
	for (i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return 0;
	return 1;
}

/* S001 syntax identifier: UNOA..UNOY, version 1..4 (ISO 9735 0001, 0002). */
static int
edifact_syntax(struct edifact_cur *c, struct edifact_unb *u, struct err *err)
{
	char version[2] = "";
	const struct edifact_comp comp[] = {
		{ u->syntax, 4, "syntax identifier" },
		{ version, 1, "syntax version" },
		{ NULL, 6, "service code list directory" },
		{ NULL, 3, "character encoding" },
	};

	if (edifact_composite(c, comp, 4, err) == -1)
		return -1;
	if (strlen(u->syntax) != 4 || strncmp(u->syntax, "UNO", 3) != 0 ||
	    u->syntax[3] < 'A' || u->syntax[3] > 'Y')
		return edifact_bad(err, "syntax identifier not UNOA..UNOY",
		    NULL);
	if (version[0] < '1' || version[0] > '4' || version[1] != '\0')
		return edifact_bad(err, "syntax version not 1..4", NULL);
	u->version = version[0] - '0';
	return 0;
}

/* S002 sender, S003 recipient, S004 date/time of preparation. */
static int
edifact_parties(struct edifact_cur *c, struct edifact_unb *u,
    struct err *err)
{
	char date[EDIFACT_DATE_MAX + 1] = "", hhmm[EDIFACT_TIME_MAX + 1] = "";
	const struct edifact_comp from[] = {
		{ u->sender, EDIFACT_ID_MAX, "interchange sender" },
		{ u->sender_qual, EDIFACT_QUAL_MAX, "sender qualifier" },
		{ NULL, EDIFACT_ROUTE_MAX, "sender routing address" },
		{ NULL, EDIFACT_ROUTE_MAX, "sender sub-identification" },
	};
	const struct edifact_comp to[] = {
		{ u->recipient, EDIFACT_ID_MAX, "interchange recipient" },
		{ u->recipient_qual, EDIFACT_QUAL_MAX, "recipient qualifier" },
		{ NULL, EDIFACT_ROUTE_MAX, "recipient routing address" },
		{ NULL, EDIFACT_ROUTE_MAX, "recipient sub-identification" },
	};
	const struct edifact_comp at[] = {
		{ date, EDIFACT_DATE_MAX, "date of preparation" },
		{ hhmm, EDIFACT_TIME_MAX, "time of preparation" },
	};

	if (edifact_composite(c, from, 4, err) == -1 ||
	    edifact_composite(c, to, 4, err) == -1 ||
	    edifact_composite(c, at, 2, err) == -1)
		return -1;
	if (u->sender[0] == '\0' || u->recipient[0] == '\0')
		return edifact_bad(err, "sender or recipient empty", NULL);
	if (!edifact_digits(date, 6, 8) || !edifact_digits(hhmm, 4, 4))
		return edifact_bad(err, "date or time of preparation not "
		    "digits", NULL);
	return 0;
}

/* "UNB" and its data element separator after the UNA (CR/LF allowed). */
static int
edifact_unb_tag(struct edifact_cur *c, struct err *err)
{
	size_t eol = 0;

	while (c->p < c->end && (*c->p == '\r' || *c->p == '\n') &&
	    eol < EDIFACT_EOL_MAX) {
		c->p++;
		eol++;
	}
	if ((size_t)(c->end - c->p) < 4 || memcmp(c->p, "UNB", 3) != 0 ||
	    c->p[3] != (unsigned char)c->d->element)
		return edifact_bad(err, "no UNB segment", NULL);
	c->p += 4;
	return 0;
}

int
edifact_unb_parse(const unsigned char *data, size_t len,
    struct edifact_unb *ret, struct err *err)
{
	struct edifact_unb u;
	struct edifact_cur c;
	int t;

	if (!edifact_is_interchange(data, len))
		return 0;
	memset(&u, 0, sizeof(u));
	u.delims = edifact_defaults;
	c.p = data;
	c.end = data + len;
	c.d = &u.delims;
	if (memcmp(data, "UNA", 3) == 0) {
		if (len < 9)
			return edifact_bad(err, "UNA shorter than 9 bytes",
			    NULL);
		if (edifact_una(data, &u.delims, err) == -1)
			return -1;
		u.una = 1;
		c.p += 9;
	}
	if (edifact_unb_tag(&c, err) == -1 ||
	    edifact_syntax(&c, &u, err) == -1 ||
	    edifact_parties(&c, &u, err) == -1)
		return -1;
	t = edifact_value(&c, u.reference, EDIFACT_REF_MAX,
	    "interchange control reference", err);
	if (t == -1)
		return -1;
	if (t == EDIFACT_COMPONENT)
		return edifact_bad(err, "a component too many",
		    "interchange control reference");
	if (u.reference[0] == '\0')
		return edifact_bad(err, "control reference empty", NULL);
	*ret = u;
	return 1;
}
