/*
 * xml_enc — the one place that decides a document's character encoding.
 *
 * SOAP 1.2 Part 1, 5 (and its HTTP binding, Part 2, 7) carries envelopes as
 * XML 1.0 in UTF-8 or UTF-16; nothing else is accepted, whatever the XML
 * declaration or the MIME charset parameter says.  UTF-16 is converted to
 * UTF-8 here, so that every check made before the parse (xml.c) runs on the
 * very bytes libxml2 reads, and libxml2 is told to ignore the declaration
 * (XML_PARSE_IGNORE_ENC): it can only ever decode UTF-8.
 */
#include "xml.h"
#include "xml_int.h"

#include <string.h>
#include <strings.h>

#include <libxml/xmlmemory.h>

/* What the first bytes (XML 1.0 Appendix F), a declaration or a charset say. */
enum xml_enc {
	XML_ENC_UTF8,
	XML_ENC_UTF16,     /* a label without byte order: either */
	XML_ENC_UTF16LE,
	XML_ENC_UTF16BE,
	XML_ENC_OTHER      /* UCS-4, EBCDIC, UTF-7, ISO-8859-x, ... */
};

static const char *const xml_enc_names[] = {
	"UTF-8", "UTF-16", "UTF-16LE", "UTF-16BE", "another encoding"
};

/* Is c white space in the XML declaration (XML 1.0 production S)? */
static int
xml_enc_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/*
 * XML 1.0 Appendix F.1: the encoding from the first bytes, and the length
 * of a byte order mark to skip.  UCS-4 and EBCDIC patterns are recognised
 * only to be refused; no BOM and no "<?" means UTF-8.
 */
static enum xml_enc
xml_enc_detect(const unsigned char *p, size_t len, size_t *ret_bom)
{
	static const unsigned char other[][4] = {
		{0x00, 0x00, 0xFE, 0xFF}, {0xFF, 0xFE, 0x00, 0x00},
		{0x00, 0x00, 0x00, 0x3C}, {0x3C, 0x00, 0x00, 0x00},
		{0x00, 0x00, 0x3C, 0x00}, {0x00, 0x3C, 0x00, 0x00},
		{0x4C, 0x6F, 0xA7, 0x94},
	};
	size_t i;

	*ret_bom = 0;
	for (i = 0; len >= 4 && i < sizeof(other) / sizeof(other[0]); i++)
		if (memcmp(p, other[i], 4) == 0)
			return XML_ENC_OTHER;
	if (len >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF) {
		*ret_bom = 3;
		return XML_ENC_UTF8;
	}
	if (len >= 2 && ((p[0] == 0xFE && p[1] == 0xFF) ||
	    (p[0] == 0xFF && p[1] == 0xFE))) {
		*ret_bom = 2;
		return p[0] == 0xFE ? XML_ENC_UTF16BE : XML_ENC_UTF16LE;
	}
	if (len >= 4 && memcmp(p, "\0<\0?", 4) == 0)
		return XML_ENC_UTF16BE;
	if (len >= 4 && memcmp(p, "<\0?\0", 4) == 0)
		return XML_ENC_UTF16LE;
	return XML_ENC_UTF8;
}

/* An encoding label (XML EncName or MIME charset, case-insensitive). */
static enum xml_enc
xml_enc_label(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < XML_ENC_OTHER; i++)
		if (strlen(xml_enc_names[i]) == n &&
		    strncasecmp(s, xml_enc_names[i], n) == 0)
			return (enum xml_enc)i;
	return XML_ENC_OTHER;
}

/* May bytes detected as `bytes` carry the label `label`? */
static int
xml_enc_agrees(enum xml_enc label, enum xml_enc bytes)
{
	if (label == XML_ENC_UTF16)
		return bytes == XML_ENC_UTF16LE || bytes == XML_ENC_UTF16BE;
	return label == bytes;
}

/* Append code point c (valid, not a surrogate) to out as UTF-8. */
static char *
xml_enc_put(char *out, unsigned long c)
{
	if (c < 0x80) {
		*out++ = (char)c;
	} else if (c < 0x800) {
		*out++ = (char)(0xC0 | (c >> 6));
		*out++ = (char)(0x80 | (c & 0x3F));
	} else if (c < 0x10000) {
		*out++ = (char)(0xE0 | (c >> 12));
		*out++ = (char)(0x80 | ((c >> 6) & 0x3F));
		*out++ = (char)(0x80 | (c & 0x3F));
	} else {
		*out++ = (char)(0xF0 | (c >> 18));
		*out++ = (char)(0x80 | ((c >> 12) & 0x3F));
		*out++ = (char)(0x80 | ((c >> 6) & 0x3F));
		*out++ = (char)(0x80 | (c & 0x3F));
	}
	return out;
}

/*
 * RFC 2781: UTF-16 (after the BOM) to UTF-8 in xmlMalloc'd memory, at most
 * 3 bytes per 2 in.  An odd length, an unpaired surrogate or U+0000 (not an
 * XML Char) is not well-formed.
 */
static int
xml_enc_from_utf16(const unsigned char *p, size_t len, int be, char **ret,
    size_t *ret_len, struct err *err)
{
	char *out, *o;
	unsigned long u, lo;
	size_t i;

	if (len % 2 != 0) {
		err_soap(err, ERR_SOAP_SENDER, 400, "XML not well-formed");
		err_detail(err, "UTF-16 document of odd length");
		return -1;
	}
	if ((out = o = xmlMalloc(len / 2 * 3 + 1)) == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	for (i = 0; i < len; i += 2) {
		u = be ? (unsigned long)p[i] << 8 | p[i + 1] :
		    (unsigned long)p[i + 1] << 8 | p[i];
		if (u >= 0xD800 && u <= 0xDBFF && i + 3 < len) {
			lo = be ? (unsigned long)p[i + 2] << 8 | p[i + 3] :
			    (unsigned long)p[i + 3] << 8 | p[i + 2];
			if (lo >= 0xDC00 && lo <= 0xDFFF) {
				u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
				i += 2;
			}
		}
		if (u == 0 || (u >= 0xD800 && u <= 0xDFFF)) {
			xmlFree(out);
			err_soap(err, ERR_SOAP_SENDER, 400, "XML not well-formed");
			err_detail(err, "invalid UTF-16 at byte %zu", i);
			return -1;
		}
		o = xml_enc_put(o, u);
	}
	*o = '\0';
	*ret = out;
	*ret_len = (size_t)(o - out);
	return 0;
}

/* Length of the UTF-8 sequence at p (RFC 3629 4: no overlong forms, no
 * surrogates, nothing above U+10FFFF, no U+0000), or 0 if invalid. */
static size_t
xml_enc_utf8_seq(const unsigned char *p, size_t left)
{
	size_t n, i;
	unsigned long c;

	if (p[0] != 0 && p[0] < 0x80)
		return 1;
	n = p[0] >= 0xF0 && p[0] <= 0xF4 ? 4 : p[0] >= 0xE0 ? 3 :
	    p[0] >= 0xC2 && p[0] < 0xE0 ? 2 : 0;
	if (n == 0 || n > left)
		return 0;
	c = p[0] & (0x7F >> n);
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3F);
	}
	if ((n == 3 && (c < 0x800 || (c >= 0xD800 && c <= 0xDFFF))) ||
	    (n == 4 && (c < 0x10000 || c > 0x10FFFF)))
		return 0;
	return n;
}

/* Is [p, p + len) well-formed UTF-8 without U+0000? */
static int
xml_enc_check_utf8(const char *p, size_t len, struct err *err)
{
	const unsigned char *u = (const unsigned char *)p;
	size_t i = 0, n;

	while (i < len) {
		if ((n = xml_enc_utf8_seq(u + i, len - i)) == 0) {
			err_soap(err, ERR_SOAP_SENDER, 400, "XML not well-formed");
			err_detail(err, "invalid UTF-8 at byte %zu", i);
			return -1;
		}
		i += n;
	}
	return 0;
}

/*
 * XML 1.0 2.8 and 4.3.3: the EncName of the XML declaration at the start
 * of text, if any (1 found, 0 none).  A declaration this reader does not
 * understand is left to libxml2, which refuses it; the encoding libxml2
 * uses is UTF-8 whatever it says (XML_PARSE_IGNORE_ENC).
 */
static int
xml_enc_declared(const char *p, size_t len, const char **ret, size_t *ret_len)
{
	const char *q, *end, *name, *val;
	char quote;

	if (len < 6 || memcmp(p, "<?xml", 5) != 0 || !xml_enc_space(p[5]) ||
	    (end = memmem(p, len, "?>", 2)) == NULL)
		return 0;
	for (q = p + 5;;) {
		while (q < end && xml_enc_space(*q))
			q++;
		for (name = q; q < end && ((*q >= 'a' && *q <= 'z') ||
		    (*q >= 'A' && *q <= 'Z')); q++)
			;
		val = q;
		while (q < end && xml_enc_space(*q))
			q++;
		if (val == name || q >= end || *q++ != '=')
			return 0;
		while (q < end && xml_enc_space(*q))
			q++;
		if (q >= end || (*q != '"' && *q != '\''))
			return 0;
		quote = *q++;
		if ((size_t)(val - name) == 8 && memcmp(name, "encoding", 8) == 0)
			break;
		if ((q = memchr(q, quote, (size_t)(end - q))) == NULL)
			return 0;
		q++;
	}
	if ((val = memchr(q, quote, (size_t)(end - q))) == NULL)
		return 0;
	*ret = q;
	*ret_len = (size_t)(val - q);
	return 1;
}

/*
 * An encoding libxml2 (iconv) decodes in which the markup bytes < > = " '
 * (all below 0x40) only ever stand for themselves, never for part of
 * another character: the ASCII-compatible single-byte sets and the CJK
 * multi-byte sets whose trail bytes are 0x40 or above (not ISO-2022-x,
 * UTF-7 or EBCDIC, which refuse).
 */
static int
xml_enc_legacy(const char *s, size_t n)
{
	static const char *const names[] = {
		"US-ASCII", "Shift_JIS", "EUC-JP", "EUC-KR", "GB2312", "GBK",
		"GB18030", "Big5", "KOI8-R", "KOI8-U",
	};
	static const char *const prefixes[] = { "ISO-8859-", "windows-125" };
	size_t i, k;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == n && strncasecmp(s, names[i], n) == 0)
			return 1;
	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		k = strlen(prefixes[i]);
		if (n < k || strncasecmp(s, prefixes[i], k) != 0)
			continue;
		/* ISO-8859-1..16, windows-1250..1258: digits only */
		if (n == k || n > k + 2)
			return 0;
		for (; k < n; k++)
			if (s[k] < '0' || s[k] > '9')
				return 0;
		return 1;
	}
	return 0;
}

/*
 * The declaration, if any, must name an accepted encoding of these bytes:
 * 0 UTF-8/UTF-16 as detected, 1 a legacy encoding (with legacy, on bytes
 * detected as ASCII-compatible), -1 refused.
 */
static int
xml_enc_check_declared(const char *text, size_t len, enum xml_enc bytes,
    int legacy, struct err *err)
{
	const char *name;
	size_t n;
	enum xml_enc label;

	if (xml_enc_declared(text, len, &name, &n) == 0)
		return 0;
	label = xml_enc_label(name, n);
	if (label == XML_ENC_OTHER && legacy && bytes == XML_ENC_UTF8 &&
	    xml_enc_legacy(name, n))
		return 1;
	if (label == XML_ENC_OTHER)
		err_soap(err, ERR_SOAP_SENDER, 400,
		    "XML encoding must be UTF-8 or UTF-16");
	else if (!xml_enc_agrees(label, bytes))
		err_soap(err, ERR_SOAP_SENDER, 400, "XML encoding inconsistent");
	else
		return 0;
	err_detail(err, "encoding=\"%.*s\" declared, %s bytes",
	    n > 40 ? 40 : (int)n, name, xml_enc_names[bytes]);
	return -1;
}

/* The document as the parser reads it (xml_int.h). */
int
xml_enc_text(const char *data, size_t len, int legacy, struct xml_text *ret,
    struct err *err)
{
	size_t bom;
	enum xml_enc bytes = xml_enc_detect((const unsigned char *)data, len,
	    &bom);
	int decl;

	memset(ret, 0, sizeof(*ret));
	ret->p = data + bom;
	ret->len = len - bom;
	if (bytes == XML_ENC_OTHER) {
		err_soap(err, ERR_SOAP_SENDER, 400,
		    "XML encoding must be UTF-8 or UTF-16");
		err_detail(err, "UCS-4 or EBCDIC first bytes");
		return -1;
	}
	if (bytes != XML_ENC_UTF8) {
		if (xml_enc_from_utf16((const unsigned char *)ret->p, ret->len,
		    bytes == XML_ENC_UTF16BE, &ret->owned, &ret->len, err) == -1)
			return -1;
		ret->p = ret->owned;
	}
	decl = xml_enc_check_declared(ret->p, ret->len, bytes, legacy, err);
	if (decl == 0 && bytes == XML_ENC_UTF8)
		decl = xml_enc_check_utf8(ret->p, ret->len, err);
	if (decl == -1) {
		xmlFree(ret->owned);
		ret->owned = NULL;
		return -1;
	}
	ret->native = decl == 1;
	return 0;
}

/* RFC 7303 3.2 / SOAP 1.2 Part 2, 7.1.4: the MIME charset parameter. */
int
xml_charset_check(const char *charset, const char *data, size_t len,
    struct err *err)
{
	size_t bom;
	enum xml_enc label, bytes;

	if (charset == NULL)
		return 0;
	label = xml_enc_label(charset, strlen(charset));
	bytes = xml_enc_detect((const unsigned char *)data, len, &bom);
	if (label == XML_ENC_OTHER)
		err_soap(err, ERR_SOAP_SENDER, 400,
		    "XML encoding must be UTF-8 or UTF-16");
	else if (!xml_enc_agrees(label, bytes))
		err_soap(err, ERR_SOAP_SENDER, 400, "XML encoding inconsistent");
	else
		return 0;
	err_detail(err, "charset=%.40s, %s bytes", charset,
	    xml_enc_names[bytes]);
	return -1;
}
