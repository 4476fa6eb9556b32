/*
 * cli_replay — `as4gw replay`: POST recorded AS4 messages unchanged and say
 * what came back.  Also the part of the client `push` shares (cli.h): the
 * libcurl transport (libcurl loaded by cli_curl.c) and file reading; the
 * classification of an answer is cli_replay_outcome.c.
 */
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../mime/mime.h"
#include "../xml/xml.h"

struct cli_replay_client {
	const struct cli_curl *api; /* libcurl's functions (cli_curl.c) */
	CURL *curl;
	struct cli_replay_net net;
	char errbuf[CURL_ERROR_SIZE];
};

/* libcurl write callback: collect the answer, refuse more than the cap. */
static size_t
cli_replay_curl_write(char *p, size_t size, size_t n, void *userdata)
{
	struct buf *b = userdata;

	if (buf_append(b, p, size * n) == -1)
		return 0;
	return size * n;
}

/* Arena cleanup wrapper: buf_free() takes a typed pointer. */
static void
cli_replay_buf_cleanup(void *p)
{
	buf_free(p);
}

/* New client: one easy handle reused for every request (keep-alive).
 * The first one loads libcurl. */
struct cli_replay_client *
cli_replay_client_new(const struct cli_replay_net *net, struct err *err)
{
	const struct cli_curl *api;
	struct cli_replay_client *c;

	if (cli_curl_init(&api, err) == -1)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (c == NULL || (c->curl = api->easy_init()) == NULL) {
		free(c);
		err_set(err, ERR_INTERNAL, NULL,
			"could not initialise libcurl");
		return NULL;
	}
	c->api = api;
	c->net = *net;
	return c;
}

/* Release the handle; accepts NULL. */
void
cli_replay_client_free(struct cli_replay_client *c)
{
	if (c == NULL)
		return;
	c->api->easy_cleanup(c->curl);
	free(c);
}

/*
 * Set the per-request libcurl options; nonzero when one was refused.  No
 * type-checking macro guards these calls (cli.h): longs are 1L or long
 * fields, the size is cast to curl_off_t.
 */
static int
cli_replay_client_setup(struct cli_replay_client *c, struct curl_slist *hdrs,
			const struct cli_replay_body *body, struct buf *out)
{
	CURLcode (*const set)(CURL *, CURLoption, ...) = c->api->easy_setopt;
	curl_write_callback write_cb = cli_replay_curl_write;
	CURL *h = c->curl;
	int bad = 0;

	bad |= set(h, CURLOPT_URL, c->net.url);
	bad |= set(h, CURLOPT_PROTOCOLS_STR, "http,https");
	bad |= set(h, CURLOPT_NOSIGNAL, 1L);
	bad |= set(h, CURLOPT_ERRORBUFFER, c->errbuf);
	bad |= set(h, CURLOPT_USERAGENT, "as4gw-push");
	bad |= set(h, CURLOPT_TIMEOUT, c->net.timeout_s);
	bad |= set(h, CURLOPT_CONNECTTIMEOUT, c->net.connect_timeout_s);
	bad |= set(h, CURLOPT_HTTPHEADER, hdrs);
	bad |= set(h, CURLOPT_POST, 1L);
	/* a read callback serves the body when POSTFIELDS is NULL */
	bad |= set(h, CURLOPT_POSTFIELDS, body->read != NULL ? NULL :
	    body->data);
	bad |= set(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body->len);
	if (body->read != NULL) {
		bad |= set(h, CURLOPT_READFUNCTION, body->read);
		bad |= set(h, CURLOPT_READDATA, body->ctx);
		bad |= set(h, CURLOPT_SEEKFUNCTION, body->seek);
		bad |= set(h, CURLOPT_SEEKDATA, body->seek != NULL ?
		    body->ctx : NULL);
	}
	bad |= set(h, CURLOPT_WRITEFUNCTION, write_cb);
	bad |= set(h, CURLOPT_WRITEDATA, out);
	if (c->net.cacert != NULL)
		bad |= set(h, CURLOPT_CAINFO, c->net.cacert);
	if (c->net.insecure) {
		bad |= set(h, CURLOPT_SSL_VERIFYPEER, 0L);
		bad |= set(h, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	return bad;
}

/* Append one header line to a libcurl list; -1 on NULL line or no memory. */
static int
cli_replay_curl_header(const struct cli_curl *api, struct curl_slist **list,
		       const char *line)
{
	struct curl_slist *n;

	if (line == NULL || (n = api->slist_append(*list, line)) == NULL)
		return -1;
	*list = n;
	return 0;
}

/* POST a body; see cli.h. */
int
cli_replay_client_post(struct cli_replay_client *c, struct arena *a,
		       const char *content_type, const char *const *headers,
		       const void *body, size_t len,
		       struct cli_replay_answer *ret, struct err *err)
{
	struct cli_replay_body b = {content_type, headers, body, len, NULL,
				    NULL, NULL};

	return cli_replay_client_send(c, a, &b, ret, err);
}

/* POST a body in memory or from a read callback; see cli.h. */
int
cli_replay_client_send(struct cli_replay_client *c, struct arena *a,
		       const struct cli_replay_body *body,
		       struct cli_replay_answer *ret, struct err *err)
{
	const char *const *headers = body->headers;
	struct curl_slist *hdrs = NULL;
	const char *ct = NULL;
	CURLcode cc = CURLE_OUT_OF_MEMORY;
	int rc = -1;

	memset(ret, 0, sizeof(*ret));
	c->errbuf[0] = '\0';
	ret->body.limit = CLI_REPLAY_MAX_ANSWER;
	if (arena_cleanup(a, cli_replay_buf_cleanup, &ret->body) == -1)
		goto out;
	/* "Expect:" off: the body goes out at once, no 100-continue round trip.
	 */
	if (cli_replay_curl_header(c->api, &hdrs, "Expect:") == -1 ||
	    cli_replay_curl_header(
		c->api, &hdrs,
		arena_sprintf(a, "Content-Type: %s", body->content_type)) == -1)
		goto out;
	for (; headers != NULL && *headers != NULL; headers++)
		if (cli_replay_curl_header(c->api, &hdrs, *headers) == -1)
			goto out;
	cc = CURLE_BAD_FUNCTION_ARGUMENT;
	if (cli_replay_client_setup(c, hdrs, body, &ret->body) != 0)
		goto out;
	if ((cc = c->api->easy_perform(c->curl)) != CURLE_OK)
		goto out;
	(void)c->api->easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE,
				   &ret->status);
	if (c->api->easy_getinfo(c->curl, CURLINFO_CONTENT_TYPE, &ct) ==
		CURLE_OK &&
	    ct != NULL)
		ret->content_type = arena_strdup(a, ct);
	rc = 0;
out:
	if (rc == -1 && cc == CURLE_WRITE_ERROR)
		err_set(err, ERR_IO, NULL,
			"answer from %s is larger than %zu bytes", c->net.url,
			CLI_REPLAY_MAX_ANSWER);
	else if (rc == -1)
		err_set(err, ERR_IO, NULL, "could not post to %s: %s",
			c->net.url,
			c->errbuf[0] != '\0' ? c->errbuf
					     : c->api->easy_strerror(cc));
	c->api->slist_free_all(hdrs);
	return rc;
}

/* Read a whole file; see cli.h. */
int
cli_replay_read_file(const char *path, size_t limit, struct buf *out,
		     struct err *err)
{
	char chunk[65536];
	FILE *f;
	size_t n;
	int rc = -1;

	out->limit = limit;
	if ((f = fopen(path, "rb")) == NULL)
		return err_set(err, ERR_IO, NULL,
			       "could not open file \"%s\": %m", path);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		if (buf_append(out, chunk, n) == -1) {
			err_set(err, ERR_IO, NULL,
				"file \"%s\" is larger than %zu bytes", path,
				limit);
			goto out;
		}
	if (ferror(f)) {
		err_set(err, ERR_IO, NULL, "could not read file \"%s\": %m",
			path);
		goto out;
	}
	if (buf_append(out, "", 0) ==
	    -1) { /* NUL-terminate an empty file too */
		err_set(err, ERR_INTERNAL, NULL, "out of memory");
		goto out;
	}
	rc = 0;
out:
	(void)fclose(f);
	return rc;
}

#define CLI_REPLAY_MAX_HEADER_BLOCK 65536 /* bytes of recorded HTTP headers */

struct cli_replay_opts {
	struct cli_replay_net net;
	const char *content_type; /* --content-type: overrides everything */
	const char *expect;	  /* --expect receipt|error|fault, or NULL */
	int verbose;
};

/* What goes on the wire for one recorded file. */
struct cli_replay_req {
	const char *content_type;
	const char *headers[3]; /* SOAPAction, MIME-Version, NULL */
	size_t n_headers;
	const char *body;
	size_t len;
};

/* Length of the line at p without its LF or CRLF; *ret_eol is the length of
 * that terminator (0 at the end of the data). */
static size_t
cli_replay_line(const char *p, size_t len, size_t *ret_eol)
{
	const char *nl = memchr(p, '\n', len);
	size_t n = nl != NULL ? (size_t)(nl - p) : len;

	*ret_eol = nl != NULL ? 1 : 0;
	if (nl != NULL && n > 0 && p[n - 1] == '\r') {
		n--;
		(*ret_eol)++;
	}
	return n;
}

/* A request line such as "POST /as4 HTTP/1.1". */
static int
cli_replay_request_line(const char *p, size_t n)
{
	const char *sp;
	size_t i = 0;

	while (i < n && p[i] >= 'A' && p[i] <= 'Z')
		i++;
	if (i == 0 || i >= n || p[i] != ' ')
		return 0;
	sp = memchr(p + i + 1, ' ', n - i - 1);
	return sp != NULL && (size_t)(p + n - sp) > 5 &&
	       memcmp(sp + 1, "HTTP/", 5) == 0;
}

/* Length of the field name when the line is "Name: value" (RFC 7230 token
 * starting with a letter, so "--uuid:..." MIME boundaries are not taken for
 * headers), else 0. */
static size_t
cli_replay_header_name(const char *p, size_t n)
{
	size_t i = 0;

	if (n == 0 ||
	    !((p[0] >= 'A' && p[0] <= 'Z') || (p[0] >= 'a' && p[0] <= 'z')))
		return 0;
	while (i < n && p[i] != '\0' &&
	       (strchr("!#$%&'*+-.^_`|~", p[i]) != NULL ||
		(p[i] >= '0' && p[i] <= '9') || (p[i] >= 'A' && p[i] <= 'Z') ||
		(p[i] >= 'a' && p[i] <= 'z')))
		i++;
	return i < n && p[i] == ':' ? i : 0;
}

/* Keep the recorded headers that describe the body: Content-Type,
 * SOAPAction and MIME-Version (Host, Content-Length ... are not replayed). */
static void
cli_replay_keep(struct arena *a, struct cli_replay_req *r, const char *name,
		const char *value)
{
	if (strcasecmp(name, "Content-Type") == 0)
		r->content_type = value;
	else if ((strcasecmp(name, "SOAPAction") == 0 ||
		  strcasecmp(name, "MIME-Version") == 0) &&
		 r->n_headers < 2)
		r->headers[r->n_headers++] =
		    arena_sprintf(a, "%s: %s", name, value);
}

/* value of the line after "Name:", leading and trailing blanks trimmed. */
static char *
cli_replay_value(struct arena *a, const char *p, size_t n)
{
	while (n > 0 && (*p == ' ' || *p == '\t')) {
		p++;
		n--;
	}
	while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
		n--;
	return arena_strndup(a, p, n);
}

/*
 * Recorded HTTP headers in front of the body: an optional request line, then
 * "Name: value" lines (folded continuation lines are joined with one space)
 * up to an empty line.  1 when found (r->body is what follows the empty
 * line), 0 when the file does not start that way.
 */
static int
cli_replay_headers(struct arena *a, const char *data, size_t len,
		   struct cli_replay_req *r)
{
	const char *name = NULL, *value = NULL, *line;
	size_t pos = 0, n, eol, nl;

	while (pos < len && pos < CLI_REPLAY_MAX_HEADER_BLOCK) {
		line = data + pos;
		n = cli_replay_line(line, len - pos, &eol);
		if (eol == 0)
			return 0;
		if (n == 0 && name != NULL) {
			cli_replay_keep(a, r, name, value);
			r->body = line + eol;
			r->len = len - pos - eol;
			return 1;
		}
		if (pos == 0 && cli_replay_request_line(line, n)) {
			pos += n + eol;
			continue;
		}
		if (n > 0 && (line[0] == ' ' || line[0] == '\t') &&
		    name != NULL)
			value = arena_sprintf(a, "%s %s", value,
					      cli_replay_value(a, line, n));
		else if ((nl = cli_replay_header_name(line, n)) > 0) {
			if (name != NULL)
				cli_replay_keep(a, r, name, value);
			name = arena_strndup(a, line, nl);
			value = cli_replay_value(a, line + nl + 1, n - nl - 1);
		} else
			return 0;
		if (name == NULL || value == NULL)
			return 0;
		pos += n + eol;
	}
	return 0;
}

/* Content-Type from the body itself (AS4.NET .as4 files are bare bodies,
 * often with a BOM and CRLFs first — a legal MIME preamble): "--boundary"
 * -> multipart/related with that boundary, '<' -> SOAP 1.2; else NULL. */
static const char *
cli_replay_sniff(struct arena *a, const char *body, size_t len)
{
	size_t i = 0, n, eol;
	const char *b;

	if (len >= 3 && memcmp(body, "\xEF\xBB\xBF", 3) == 0)
		i = 3;
	while (i < len && (body[i] == ' ' || body[i] == '\t' ||
			   body[i] == '\r' || body[i] == '\n'))
		i++;
	if (i < len && body[i] == '<')
		return "application/soap+xml";
	if (len - i < 3 || body[i] != '-' || body[i + 1] != '-')
		return NULL;
	b = body + i + 2;
	n = cli_replay_line(b, len - i - 2, &eol);
	while (n > 0 &&
	       (b[n - 1] == ' ' || b[n - 1] == '\t')) /* RFC 2046 padding */
		n--;
	if (n == 0 || n > 200)
		return NULL;
	return arena_sprintf(a,
			     "multipart/related; boundary=\"%.*s\"; "
			     "type=\"application/soap+xml\"",
			     (int)n, b);
}

/* The first line of FILE.ct (written by `push --save-request`), or NULL. */
static const char *
cli_replay_sidecar(struct arena *a, const char *path)
{
	struct buf *b = arena_alloc(a, sizeof(*b));
	const char *ct_path = arena_sprintf(a, "%s.ct", path);
	struct err err;
	size_t eol, n;

	err_clear(&err);
	if (b == NULL || ct_path == NULL ||
	    arena_cleanup(a, cli_replay_buf_cleanup, b) == -1 ||
	    cli_replay_read_file(ct_path, 4096, b, &err) == -1)
		return NULL;
	n = cli_replay_line(b->data, b->len, &eol);
	return n > 0 ? arena_strndup(a, b->data, n) : NULL;
}

/* Read one recorded file and decide what to send: --content-type, else
 * recorded headers, else FILE.ct, else what the body looks like. */
static int
cli_replay_load(struct arena *a, const struct cli_replay_opts *o,
		const char *path, struct cli_replay_req *r, struct err *err)
{
	struct buf *file = arena_alloc(a, sizeof(*file));

	memset(r, 0, sizeof(*r));
	if (file == NULL ||
	    arena_cleanup(a, cli_replay_buf_cleanup, file) == -1)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	if (cli_replay_read_file(path, CLI_REPLAY_MAX_FILE, file, err) == -1)
		return -1;
	if (cli_replay_headers(a, file->data, file->len, r) != 1) {
		memset(r, 0, sizeof(*r));
		r->body = file->data;
		r->len = file->len;
	}
	if (o->content_type != NULL)
		r->content_type = o->content_type;
	if (r->content_type == NULL)
		r->content_type = cli_replay_sidecar(a, path);
	if (r->content_type == NULL)
		r->content_type = cli_replay_sniff(a, r->body, r->len);
	if (r->content_type == NULL)
		return err_set(err, ERR_IO, NULL,
			       "cannot tell the Content-Type "
			       "of \"%s\" (use --content-type)",
			       path);
	return 0;
}

/* Does the outcome match --expect? */
static int
cli_replay_expected(const struct cli_replay_opts *o, long status,
		    const struct cli_replay_outcome *out)
{
	if (o->expect == NULL)
		return 1;
	if (strcmp(o->expect, "receipt") == 0)
		return status >= 200 && status <= 299 &&
		       out->kind == CLI_REPLAY_RECEIPT;
	if (strcmp(o->expect, "error") == 0)
		return out->kind == CLI_REPLAY_ERROR;
	return out->kind == CLI_REPLAY_FAULT;
}

/* Replay one file: 0 answered as expected, -1 not sent, no answer, or not
 * what --expect asked for. */
static int
cli_replay_one(const struct cli_replay_opts *o, struct cli_replay_client *c,
	       const char *path)
{
	struct arena *a = arena_new(0);
	struct cli_replay_outcome out;
	struct cli_replay_answer ans;
	struct cli_replay_req r;
	struct err err;
	int rc = -1;

	err_clear(&err);
	if (a == NULL || cli_replay_load(a, o, path, &r, &err) == -1 ||
	    cli_replay_client_post(c, a, r.content_type, r.headers, r.body,
				   r.len, &ans, &err) == -1) {
		(void)printf("%s: not sent: %s\n", path,
			     a == NULL ? "out of memory" : err.msg);
		goto out;
	}
	cli_replay_outcome_parse(a, &ans, &out);
	/* an eb:Error: each one's code, short description and description */
	(void)printf("%s: HTTP %ld %s%s\n", path, ans.status,
		     out.kind == CLI_REPLAY_ERROR && out.errors != NULL
			 ? "error "
			 : cli_replay_outcome_str(a, &out),
		     out.kind == CLI_REPLAY_ERROR && out.errors != NULL
			 ? out.errors
			 : "");
	if (o->verbose) {
		(void)fwrite(ans.body.data, 1, ans.body.len, stdout);
		if (ans.body.len > 0 && ans.body.data[ans.body.len - 1] != '\n')
			(void)putchar('\n');
	}
	rc = cli_replay_expected(o, ans.status, &out) ? 0 : -1;
out:
	(void)fflush(stdout);
	arena_free(a);
	return rc;
}

/* Usage text for `as4gw replay`. */
static void
cli_replay_usage(FILE *f)
{
	(void)fprintf(
	    f,
	    "usage: as4gw replay --url URL [options] FILE...\n"
	    "  posts recorded messages byte for byte; the Content-Type "
	    "comes from\n"
	    "  --content-type, else HTTP headers at the top of the file, "
	    "else FILE.ct,\n"
	    "  else the body (\"--boundary\" -> multipart/related, XML -> "
	    "SOAP 1.2)\n"
	    "  --content-type TYPE       send with this Content-Type\n"
	    "  --expect receipt|error|fault   exit 1 when an answer is "
	    "something else\n"
	    "  --verbose                 print the answer bodies\n"
	    "  --cacert FILE | --insecure   TLS trust for https\n"
	    "  --timeout S, --connect-timeout S   (default %d, %d)\n"
	    "exit: 0 every file got an answer (as expected), 1 otherwise, "
	    "2 usage\n",
	    CLI_REPLAY_TIMEOUT_S, CLI_REPLAY_CONNECT_TIMEOUT_S);
}

enum {
	CLI_REPLAY_OPT_URL = 256,
	CLI_REPLAY_OPT_CT,
	CLI_REPLAY_OPT_EXPECT,
	CLI_REPLAY_OPT_CACERT,
	CLI_REPLAY_OPT_INSECURE,
	CLI_REPLAY_OPT_TIMEOUT,
	CLI_REPLAY_OPT_CONNECT_TIMEOUT,
};

static const struct option cli_replay_longopts[] = {
    {"url", required_argument, NULL, CLI_REPLAY_OPT_URL},
    {"content-type", required_argument, NULL, CLI_REPLAY_OPT_CT},
    {"expect", required_argument, NULL, CLI_REPLAY_OPT_EXPECT},
    {"cacert", required_argument, NULL, CLI_REPLAY_OPT_CACERT},
    {"insecure", no_argument, NULL, CLI_REPLAY_OPT_INSECURE},
    {"timeout", required_argument, NULL, CLI_REPLAY_OPT_TIMEOUT},
    {"connect-timeout", required_argument, NULL,
     CLI_REPLAY_OPT_CONNECT_TIMEOUT},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* Apply one option; -1 when its value is unusable. */
static int
cli_replay_option(struct cli_replay_opts *o, int opt, const char *arg)
{
	switch (opt) {
	case CLI_REPLAY_OPT_URL: o->net.url = arg; return 0;
	case CLI_REPLAY_OPT_CT:
		o->content_type = arg;
		return strpbrk(arg, "\r\n") == NULL && *arg != '\0' ? 0 : -1;
	case CLI_REPLAY_OPT_EXPECT:
		o->expect = arg;
		return strcmp(arg, "receipt") == 0 ||
			       strcmp(arg, "error") == 0 ||
			       strcmp(arg, "fault") == 0
			   ? 0
			   : -1;
	case CLI_REPLAY_OPT_CACERT: o->net.cacert = arg; return 0;
	case CLI_REPLAY_OPT_INSECURE: o->net.insecure = 1; return 0;
	case CLI_REPLAY_OPT_TIMEOUT:
		return cli_number(arg, 1, 86400, &o->net.timeout_s);
	case CLI_REPLAY_OPT_CONNECT_TIMEOUT:
		return cli_number(arg, 1, 86400,
					 &o->net.connect_timeout_s);
	case 'v': o->verbose = 1; return 0;
	default: return -1;
	}
}

/* Parse the command line: 0 ok, 1 help printed, -1 usage error. */
static int
cli_replay_options(int argc, char **argv, struct cli_replay_opts *o)
{
	int opt;

	memset(o, 0, sizeof(*o));
	o->net.timeout_s = CLI_REPLAY_TIMEOUT_S;
	o->net.connect_timeout_s = CLI_REPLAY_CONNECT_TIMEOUT_S;
	optind =
	    0; /* glibc: full re-initialisation, main may have used getopt */
	while ((opt = getopt_long(argc, argv, "hv", cli_replay_longopts,
				  NULL)) != -1) {
		if (opt == 'h') {
			cli_replay_usage(stdout);
			return 1;
		}
		if (opt == '?')
			return -1;
		if (cli_replay_option(o, opt, optarg) == -1) {
			(void)fprintf(stderr,
				      "as4gw replay: invalid value \"%s\"\n",
				      optarg);
			return -1;
		}
	}
	if (o->net.url == NULL || optind >= argc) {
		(void)fprintf(
		    stderr,
		    "as4gw replay: --url and at least one FILE are required\n");
		return -1;
	}
	return 0;
}

/* `as4gw replay`: see cli_replay_usage(). */
int
cli_replay(int argc, char **argv)
{
	struct cli_replay_client *c = NULL;
	struct cli_replay_opts o;
	struct err err;
	int rc, r, i;

	err_clear(&err);
	if ((r = cli_replay_options(argc, argv, &o)) != 0) {
		if (r == -1)
			(void)fprintf(stderr, "try: as4gw replay --help\n");
		return r == 1 ? 0 : 2;
	}
	if ((c = cli_replay_client_new(&o.net, &err)) == NULL) {
		(void)fprintf(stderr, "as4gw replay: %s\n", err.msg);
		cli_curl_shutdown();
		return 1;
	}
	rc = 0;
	for (i = optind; i < argc; i++)
		if (cli_replay_one(&o, c, argv[i]) == -1)
			rc = 1;
	cli_replay_client_free(c);
	cli_curl_shutdown();
	return rc;
}
