/*
 * conf — load the XML configuration: parse it with the hardened parser of
 * xml/, validate it against the embedded schemas/as4gw-config.xsd, read it
 * into a struct conf, then check what the schema cannot say (addresses, DSN
 * schemes, ranges, retention, duplicate and ambiguous P-Mode legs, readable
 * files).  Every failure is one line naming the file and, where known, the
 * line: `conf/as4gw.xml:12: pmode "a": ...`.  The <gateway> section is read
 * in conf_gateway.c; the legs themselves are read and cross-checked in
 * conf_leg.c; helpers these files use are declared in conf_int.h.
 */
#include "conf.h"
#include "conf_int.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <libxml/tree.h>
#include <libxml/xmlschemas.h>

#include "../util/arena.h"
#include "../xml/xml.h"

#define CONF_SCHEMA "as4gw-config.xsd"

/* Configuration spelling of a policy, for pmode-check and logs. */
const char *
conf_policy_name(enum conf_policy p)
{
	switch (p) {
	case CONF_NEVER: return "never";
	case CONF_OPTIONAL: return "optional";
	case CONF_REQUIRED: return "required";
	}
	return "unknown";
}

/* The configuration word of a profile (security/@profile). */
const char *
conf_profile_name(enum conf_profile p)
{
	switch (p) {
	case CONF_PROFILE_1X: return "edelivery-1.x";
	case CONF_PROFILE_2_0: return "edelivery-2.0";
	case CONF_PROFILE_2_0_EC: return "edelivery-2.0-ec";
	}
	return "unknown";
}

/* Record "FILE:LINE: what" (or "FILE: what" when line <= 0) as ERR_CONF;
 * returns -1. */
int
(conf_fail_line)(const struct conf_ctx *x, long line, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	if (vsnprintf(what, sizeof(what), fmt, ap) < 0)
		what[0] = '\0';
	va_end(ap);
	if (line > 0)
		return err_set(x->err, ERR_CONF, NULL, "%s:%ld: %s", x->path,
		    line, what);
	return err_set(x->err, ERR_CONF, NULL, "%s: %s", x->path, what);
}

/* Allocation failure; returns -1. */
int
conf_oom(const struct conf_ctx *x)
{
	return err_set(x->err, ERR_INTERNAL, NULL, "out of memory");
}

/* malloc'd copy of s into *ret (replacing and freeing what was there). */
static int
conf_set(const struct conf_ctx *x, char **ret, const char *s)
{
	char *dup = strdup(s);

	if (dup == NULL)
		return conf_oom(x);
	free(*ret);
	*ret = dup;
	return 0;
}

/* Is c XML white space? */
static int
conf_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Trimmed text of element n into *ret (malloc'd); empty is refused. */
int
conf_elem_text(const struct conf_ctx *x, const xmlNode *n, char **ret)
{
	const char *s = xml_text(x->a, n);

	if (s == NULL)
		return conf_oom(x);
	if (*s == '\0')
		return conf_fail(x, n, "%s is empty", (const char *)n->name);
	return conf_set(x, ret, s);
}

/* Text of parent's child element `name`: 0 absent (*ret untouched), 1 set,
 * -1 error. */
int
conf_text(const struct conf_ctx *x, const xmlNode *parent, const char *name,
    char **ret)
{
	xmlNodePtr n = xml_child(parent, CONF_NS, name);

	if (n == NULL)
		return 0;
	return conf_elem_text(x, n, ret) == -1 ? -1 : 1;
}

/* Attribute `name` of n, trimmed, as a scratch copy; NULL if absent. */
const char *
conf_attr_get(const struct conf_ctx *x, const xmlNode *n, const char *name)
{
	char *s = xml_attr(x->a, n, NULL, name);
	size_t len;

	if (s == NULL)
		return NULL;
	while (conf_space(*s))
		s++;
	len = strlen(s);
	while (len > 0 && conf_space(s[len - 1]))
		s[--len] = '\0';
	return s;
}

/* Attribute `name` of n, trimmed, into *ret (malloc'd); absent leaves *ret
 * alone.  0 ok, -1 error (empty values are refused). */
int
conf_attr(const struct conf_ctx *x, const xmlNode *n, const char *name,
    char **ret)
{
	const char *s = conf_attr_get(x, n, name);

	if (s == NULL)
		return 0;
	if (*s == '\0')
		return conf_fail(x, n, "%s/@%s is empty", (const char *)n->name,
		    name);
	return conf_set(x, ret, s);
}

/*
 * Decimal text of parent's child `name` in [min, max] into *ret: 0 absent,
 * 1 set, -1 error.  The schema already checked the lexical form; this checks
 * it again (a leading '+' is valid xs:positiveInteger) and the range.
 */
int
conf_uint(const struct conf_ctx *x, const xmlNode *parent, const char *name,
    unsigned long long min, unsigned long long max, unsigned long long *ret)
{
	xmlNodePtr n = xml_child(parent, CONF_NS, name);
	unsigned long long v = 0;
	const char *s, *p;

	if (n == NULL)
		return 0;
	s = xml_text(x->a, n);
	if (s == NULL)
		return conf_oom(x);
	p = s + (*s == '+');
	if (*p == '\0')
		return conf_fail(x, n, "%s: \"%s\" is not a number", name, s);
	for (; *p != '\0'; p++) {
		if (*p < '0' || *p > '9')
			return conf_fail(x, n, "%s: \"%s\" is not a number",
			    name, s);
		v = v * 10 + (unsigned)(*p - '0');
		if (v > max)
			v = max + 1;    /* saturate; max < ULLONG_MAX */
	}
	if (v < min || v > max)
		return conf_fail(x, n, "%s must be between %llu and %llu, "
		    "not %s", name, min, max, s);
	*ret = v;
	return 1;
}

/* A number of days: retentionDays, partnerRetryWindowDays (conf_int.h). */
int
conf_days(const struct conf_ctx *x, const xmlNode *parent, const char *name,
    int *ret)
{
	unsigned long long v;
	int r = conf_uint(x, parent, name, 1, CONF_DAYS_MAX, &v);

	if (r == 1)
		*ret = (int)v;
	return r;
}

/* Malloc'd path: rel as is if absolute or the file has no directory part,
 * else the config file's directory + rel. */
char *
conf_resolve(const struct conf_ctx *x, const char *rel)
{
	char *out = NULL;

	if (rel[0] == '/' || x->dir == NULL)
		return strdup(rel);
	if (asprintf(&out, "%s%s", x->dir, rel) < 0)
		return NULL;
	return out;
}

/* Resolve *p in place (see conf_resolve). */
int
conf_resolve_in_place(const struct conf_ctx *x, char **p)
{
	char *r;

	if (*p == NULL)
		return 0;
	r = conf_resolve(x, *p);
	if (r == NULL)
		return conf_oom(x);
	free(*p);
	*p = r;
	return 0;
}

/* Queue a file for conf_files_check (see conf_int.h). */
int
conf_file_later(struct conf_ctx *x, const xmlNode *n, const char *what,
    const char *path)
{
	struct conf_file *f = arena_calloc(x->a, 1, sizeof(*f));

	if (f == NULL)
		return conf_oom(x);
	f->line = xmlGetLineNo(n);
	f->what = what;
	f->path = path;
	*x->files_tail = f;
	x->files_tail = &f->next;
	return 0;
}

/* A certificate + key pair element: both or neither; see conf_int.h. */
int
conf_pair(struct conf_ctx *x, const xmlNode *n, const char *prefix,
    char **cert, char **key)
{
	xmlNodePtr cn = xml_child(n, CONF_NS, "certificate");
	xmlNodePtr kn = xml_child(n, CONF_NS, "key");
	const char *what = (const char *)n->name, *wc, *wk;

	if (cn == NULL && kn == NULL)
		return conf_fail(x, n, "%s%s: certificate and key missing",
		    prefix, what);
	if (cn == NULL)
		return conf_fail(x, n, "%s%s: key without certificate", prefix,
		    what);
	if (kn == NULL)
		return conf_fail(x, n, "%s%s: certificate without key", prefix,
		    what);
	wc = arena_sprintf(x->a, "%s%s certificate", prefix, what);
	wk = arena_sprintf(x->a, "%s%s key", prefix, what);
	if (wc == NULL || wk == NULL)
		return conf_oom(x);
	if (conf_elem_text(x, cn, cert) == -1 ||
	    conf_elem_text(x, kn, key) == -1 ||
	    conf_resolve_in_place(x, cert) == -1 ||
	    conf_resolve_in_place(x, key) == -1 ||
	    conf_file_later(x, cn, wc, *cert) == -1 ||
	    conf_file_later(x, kn, wk, *key) == -1)
		return -1;
	return 0;
}


/* A file the gateway will read at start-up: must open and be regular. */
static int
conf_file_ok(const struct conf_ctx *x, long line, const char *what,
    const char *path)
{
	struct stat st;
	FILE *f;
	int rc = -1;

	if (path == NULL)
		return 0;
	f = fopen(path, "r");
	if (f == NULL) {
		conf_fail_line(x, line, "%s: could not open file \"%s\": %s",
		    what, path, strerror(errno));
		goto out;
	}
	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
		conf_fail_line(x, line, "%s: \"%s\" is not a regular file",
		    what, path);
		goto out;
	}
	rc = 0;
out:
	if (f != NULL)
		(void)fclose(f);
	return rc;
}

/* Files last: structural problems are reported before environment ones;
 * in document order (gateway first, then the legs). */
static int
conf_files_check(const struct conf_ctx *x)
{
	const struct conf_file *f;

	for (f = x->files; f != NULL; f = f->next)
		if (conf_file_ok(x, f->line, f->what, f->path) == -1)
			return -1;
	return 0;
}

/*
 * Turn a libxml2 complaint from xml/ ("line N: text; file ..." or
 * "FILE:N: text") into "FILE:N: what: text", dropping the config namespace
 * that libxml2 writes in braces before element names.
 */
static int
conf_fail_xml(const struct conf_ctx *x, const char *what, const char *detail)
{
	static const char ns[] = "{" CONF_NS "}";
	char text[256], *endp, *brace;
	const char *p = detail, *end;
	size_t n = 0, plen = strlen(x->path);
	long line = -1;

	if (strncmp(p, "line ", 5) == 0)
		p += 5;
	else if (strncmp(p, x->path, plen) == 0 && p[plen] == ':')
		p += plen + 1;
	if (p != detail && *p >= '0' && *p <= '9') {
		line = strtol(p, &endp, 10);
		p = strncmp(endp, ": ", 2) == 0 ? endp + 2 : detail;
	} else {
		p = detail;
	}
	end = strncmp(p, "file \"", 6) == 0 ? p : strstr(p, "; file \"");
	if (end == NULL)
		end = p + strlen(p);
	while (p < end && n + 1 < sizeof(text)) {
		if (strncmp(p, ns, sizeof(ns) - 1) == 0) {
			p += sizeof(ns) - 1;
			continue;
		}
		text[n++] = *p++;
	}
	text[n] = '\0';
	brace = strrchr(text, '{');
	if (brace != NULL && strchr(brace, '}') == NULL)   /* cut off by xml/ */
		(void)snprintf(brace, sizeof(text) - (size_t)(brace - text),
		    "...");
	if (n == 0)
		return conf_fail_line(x, line, "%s", what);
	return conf_fail_line(x, line, "%s: %s", what, text);
}

/* Parse the file with the hardened parser; map errors to ERR_CONF. */
static int
conf_parse(const struct conf_ctx *x, xmlDocPtr *ret_doc)
{
	struct xml_limits lim;
	struct err e;

	err_clear(&e);
	xml_limits_default(&lim);
	if (xml_parse_file(x->path, &lim, ret_doc, &e) == 0)
		return 0;
	if (e.kind == ERR_INTERNAL)
		return err_set(x->err, ERR_INTERNAL, NULL, "%s", e.msg);
	if (e.kind == ERR_IO)
		return err_set(x->err, ERR_CONF, NULL, "%s", e.msg);
	return conf_fail_xml(x, e.msg, e.detail);
}

/* The root must be {urn:as4gw:config:1}as4gw and valid against the XSD. */
static int
conf_validate(const struct conf_ctx *x, xmlNodePtr root)
{
	void *schema = NULL;
	struct err e;
	int rc = -1;

	err_clear(&e);
	if (!xml_is(root, CONF_NS, "as4gw")) {
		conf_fail(x, root, "root element is not as4gw in namespace %s",
		    CONF_NS);
		goto out;
	}
	if (xml_schema_load(CONF_SCHEMA, &schema, &e) == -1) {
		err_set(x->err, ERR_INTERNAL, NULL, "%s: %s", e.msg, e.detail);
		goto out;
	}
	if (xml_validate(schema, root, NULL, &e) == -1) {
		conf_fail_xml(x, "not valid against the schema", e.detail);
		goto out;
	}
	rc = 0;
out:
	if (schema != NULL)
		xmlSchemaFree(schema);
	return rc;
}

/* A struct conf holding the defaults, or NULL. */
static struct conf *
conf_new(const char *path)
{
	struct conf *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->path = strdup(path);
	c->listen_host = strdup("127.0.0.1");
	c->listen_port = 8080;
	c->http_path = strdup("/as4");
	c->store_dsn = strdup("sqlite:var/as4gw.db");
	c->spool_dir = strdup("/var/tmp");
	c->threads = 4;
	c->store_timeout_ms = 30000;
	c->retention_days = 30;
	c->retry_window_days = 7;
	c->purge_interval_s = 3600;
	c->purge_batch = 500;
	conf_revocation_default(&c->revocation);
	conf_limits_default(&c->limits);
	if (c->path == NULL || c->listen_host == NULL || c->http_path == NULL ||
	    c->store_dsn == NULL || c->spool_dir == NULL) {
		conf_free(c);
		c = NULL;
	}
	return c;
}

/* x->dir: the directory part of the path with its '/', or NULL. */
static int
conf_dir(struct conf_ctx *x)
{
	const char *slash = strrchr(x->path, '/');

	if (slash == NULL)
		return 0;
	x->dir = strndup(x->path, (size_t)(slash - x->path) + 1);
	return x->dir == NULL ? conf_oom(x) : 0;
}

/* Load, validate and check path; see conf.h. */
int
conf_load(const char *path, struct conf **ret, struct err *err)
{
	struct conf_ctx x;
	xmlDocPtr doc = NULL;
	xmlNodePtr root;
	int rc = -1;

	memset(&x, 0, sizeof(x));
	x.files_tail = &x.files;
	x.path = path != NULL ? path : "(null)";
	x.err = err;
	x.a = arena_new(0);
	x.c = conf_new(x.path);
	if (x.a == NULL || x.c == NULL) {
		conf_oom(&x);
		goto out;
	}
	if (path == NULL) {
		err_set(err, ERR_CONF, NULL, "no configuration file given");
		goto out;
	}
	if (conf_dir(&x) == -1 || conf_parse(&x, &doc) == -1)
		goto out;
	root = xmlDocGetRootElement(doc);
	if (conf_validate(&x, root) == -1 ||
	    conf_gateway(&x, xml_child(root, CONF_NS, "gateway")) == -1 ||
	    conf_leg_parse(&x, root) == -1 || conf_route_check(&x) == -1 ||
	    conf_files_check(&x) == -1)
		goto out;
	*ret = x.c;
	x.c = NULL;
	rc = 0;
out:
	conf_free(x.c);
	xmlFreeDoc(doc);
	arena_free(x.a);
	free(x.dir);
	return rc;
}

/* Free c and everything it owns; accepts NULL. */
void
conf_free(struct conf *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; c->legs != NULL && i < c->n_legs; i++)
		conf_leg_free(&c->legs[i]);
	free(c->legs);
	free(c->trusted_proxies);
	free(c->path);
	free(c->listen_host);
	free(c->http_path);
	free(c->store_dsn);
	free(c->spool_dir);
	free(c->tls_cert);
	free(c->tls_key);
	conf_keys_signing_free(c->signing, c->n_signing);
	conf_keys_free(c->decrypt, c->n_decrypt);
	free(c);
}
