/*
 * cli_push — `as4gw push`: a sender for tests, demos and partner onboarding.
 * Builds an ebMS3 UserMessage (SOAP 1.2, payloads as MIME attachments),
 * optionally compressed, signed and encrypted as eDelivery AS4 1.15 sends
 * it (gzip; rsa-sha256 over eb:Messaging, the Body and every attachment;
 * aes128-gcm with xenc11 rsa-oaep), POSTs it, prints the answer and checks
 * that a Receipt came back for the message that was sent (with
 * --gateway-cert, that it is signed; for a signed message, that its NRR
 * digests are the ones we signed).
 *
 * The transport, file reading and the classification of the answer are
 * shared with `replay` and live in cli_replay.c (declared in cli.h); libcurl
 * is loaded only when the client is made (cli_curl.c), so --write-requests
 * and usage errors never load it.
 */
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <zlib.h>

#include "../mime/mime.h"
#include "../util/clock.h"
#include "../util/codec.h"
#include "../sender/sender.h"
#include "../wss/wss.h"
#include "../xml/xml.h"

#define CLI_PUSH_NS_ROLE                                                       \
	"http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/"
#define CLI_PUSH_MAX_ID 255 /* inbox message_id column (DESIGN.md) */
#define CLI_PUSH_GZIP "application/gzip" /* AS4 profile 3.1 */
#define CLI_PUSH_GZIP_CHUNK ((size_t)1 << 30) /* zlib avail_in is 32 bits */

/* "[TYPE::]VALUE" as given on the command line. */
struct cli_push_typed {
	const char *type; /* NULL when absent */
	const char *value;
};

/* A --property: eb:MessageProperties/eb:Property (ebMS3 Core 5.2.2.11). */
struct cli_push_prop {
	const char *type; /* NULL when absent */
	const char *name;
	const char *value;
};

struct cli_push_payload {
	const char *path;
	const char *mime_type;
	const char *cid;
	struct buf data;
};

struct cli_push_opts {
	struct cli_replay_net net;
	const char *message_id, *from_role, *to_role, *action, *conversation;
	struct cli_push_typed from, to, service, agreement;
	struct cli_push_payload *payloads;
	size_t n_payloads;
	struct cli_push_prop *props;
	size_t n_props;
	const char *gateway_cert, *save_request, *write_requests;
	const char *sign_cert, *sign_key, *recipient_cert;
	struct wss_key *key;             /* --sign: loaded by cli_push_load */
	struct sender_recipient *recipient; /* --encrypt: likewise */
	long count;
	int repeat, quiet, sign, encrypt, compress;
};

/* One built message: the exact bytes and headers that go on the wire. */
struct cli_push_msg {
	const char *message_id;
	const char *content_type;
	struct buf body;
	xmlDocPtr sent; /* the signed envelope (arena), for the NRR check */
};

/* Arena cleanup wrapper: buf_free() takes a typed pointer. */
static void
cli_push_buf_cleanup(void *p)
{
	buf_free(p);
}

/* Arena cleanup wrapper for the --gateway-cert certificate. */
static void
cli_push_cert_cleanup(void *p)
{
	wss_cert_free(p);
}

/* Arena cleanup wrapper for the --sign key. */
static void
cli_push_key_cleanup(void *p)
{
	wss_key_free(p);
}

/* Arena cleanup wrapper for the --recipient-cert certificate. */
static void
cli_push_recipient_cleanup(void *p)
{
	sender_recipient_free(p);
}

/* Arena cleanup wrapper for the HTTP client. */
static void
cli_push_client_cleanup(void *p)
{
	cli_replay_client_free(p);
}

/* Usage text for `as4gw push`. */
static void
cli_push_usage(FILE *f)
{
	(void)fprintf(
	    f,
	    "usage: as4gw push --url URL --from [TYPE::]ID --to [TYPE::]ID\n"
	    "                  --service [TYPE::]SERVICE --action ACTION "
	    "[options]\n"
	    "  --message-id ID          eb:MessageId (default "
	    "<uuid>@as4gw-push)\n"
	    "  --from-role ROLE         default " CLI_PUSH_NS_ROLE "initiator\n"
	    "  --to-role ROLE           default " CLI_PUSH_NS_ROLE "responder\n"
	    "  --agreement [TYPE::]REF  eb:AgreementRef\n"
	    "  --conversation ID        eb:ConversationId (default: the --message-id, else a uuid)\n"
	    "  --payload FILE[;mime=TYPE][;cid=ID]   attachment (repeatable)\n"
	    "  --property [TYPE::]NAME=VALUE   eb:MessageProperties/eb:Property "
	    "(repeatable)\n"
	    "  --gateway-cert FILE      verify the Receipt's signature with "
	    "this PEM certificate\n"
	    "  --compress               gzip every payload (AS4 3.1 "
	    "CompressionType)\n"
	    "  --sign --sign-cert FILE --sign-key FILE   sign eb:Messaging, "
	    "the Body and every\n"
	    "                           payload (rsa-sha256, PEM); the Receipt "
	    "must then be an NRR\n"
	    "                           Receipt with the digests that were "
	    "signed\n"
	    "  --encrypt --recipient-cert FILE   encrypt every payload for "
	    "this PEM certificate\n"
	    "                           (aes128-gcm, rsa-oaep; after signing)\n"
	    "  --cacert FILE | --insecure   TLS trust for https\n"
	    "  --timeout S, --connect-timeout S   (default %d, %d)\n"
	    "  --save-request FILE      write the HTTP body to FILE, its "
	    "Content-Type to FILE.ct\n"
	    "  --count N [--repeat]     send N messages (--repeat: the same "
	    "bytes N times)\n"
	    "  --write-requests FILE    build the N messages (signed, "
	    "encrypted as asked)\n"
	    "                           and append them to FILE instead of "
	    "sending (--url not\n"
	    "                           needed): per message a line with the "
	    "Content-Type, a\n"
	    "                           line with the body length, the body "
	    "(bench/run's load)\n"
	    "  --quiet                  print only failures and the summary\n"
	    "exit: 0 receipt(s) ok, 1 error/fault/HTTP or check failure, 2 "
	    "usage\n",
	    CLI_REPLAY_TIMEOUT_S, CLI_REPLAY_CONNECT_TIMEOUT_S);
}

/* A value that can go into XML text and MIME headers: non-empty, no control
 * characters (XML 1.0 forbids most of them; CR/LF would break headers). */
static int
cli_push_text_ok(const char *s)
{
	const unsigned char *p;

	if (s == NULL || *s == '\0')
		return 0;
	for (p = (const unsigned char *)s; *p != '\0'; p++)
		if (*p < 0x20 || *p == 0x7f)
			return 0;
	return 1;
}

/* An identifier (MessageId, ConversationId, Content-ID): ebMS3 Core 5.2.2.1
 * wants an RFC 2822 msg-id without "<>"; no spaces, at most 255 bytes. */
static int
cli_push_id_ok(const char *s)
{
	return s != NULL && cli_push_text_ok(s) &&
	       strlen(s) <= CLI_PUSH_MAX_ID && strpbrk(s, " <>\"") == NULL;
}

/* Split "[TYPE::]VALUE" at the first "::" (URN types contain single ':'). */
static int
cli_push_typed_parse(struct arena *a, const char *s, struct cli_push_typed *ret)
{
	const char *sep = strstr(s, "::");

	ret->type = NULL;
	ret->value = s;
	if (sep != NULL) {
		ret->type = arena_strndup(a, s, (size_t)(sep - s));
		ret->value = sep + 2;
	}
	if (!cli_push_text_ok(ret->value) ||
	    (sep != NULL && !cli_push_text_ok(ret->type)))
		return -1;
	return 0;
}

/* "[TYPE::]NAME=VALUE" (a Peppol originalSender:
 * iso6523-actorid-upis::originalSender=0088:123); the name ends at the
 * first '=', the type at the first "::" before it. */
static int
cli_push_prop_parse(struct arena *a, const char *s, struct cli_push_prop *ret)
{
	const char *eq = strchr(s, '=');
	struct cli_push_typed t;
	const char *name;

	if (eq == NULL || (name = arena_strndup(a, s, (size_t)(eq - s))) ==
	    NULL || cli_push_typed_parse(a, name, &t) == -1 ||
	    !cli_push_text_ok(eq + 1))
		return -1;
	ret->type = t.type;
	ret->name = t.value;
	ret->value = eq + 1;
	return 0;
}

/* MIME type for a payload from its file name: application/xml for .xml,
 * a few common ones, else application/octet-stream. */
static const char *
cli_push_guess_type(const char *path)
{
	static const char *const map[][2] = {
	    {".xml", "application/xml"}, {".json", "application/json"},
	    {".pdf", "application/pdf"}, {".txt", "text/plain"},
	    {".gz", "application/gzip"}, {".zip", "application/zip"},
	};
	const char *dot = strrchr(path, '.');
	size_t i;

	for (i = 0; dot != NULL && i < sizeof(map) / sizeof(map[0]); i++)
		if (strcasecmp(dot, map[i][0]) == 0)
			return map[i][1];
	return "application/octet-stream";
}

/* Parse "FILE[;mime=TYPE][;cid=ID]"; the file name ends at the first
 * ";mime=" or ";cid=" so that other ';' in names survive. */
static int
cli_push_payload_parse(struct arena *a, const char *spec,
		       struct cli_push_payload *ret)
{
	const char *m = strstr(spec, ";mime="), *c = strstr(spec, ";cid=");
	const char *end = m == NULL ? c : c == NULL || m < c ? m : c;
	char *rest, *tok, *save = NULL;

	memset(ret, 0, sizeof(*ret));
	ret->path =
	    end == NULL ? spec : arena_strndup(a, spec, (size_t)(end - spec));
	if (ret->path == NULL || *ret->path == '\0')
		return -1;
	rest = end == NULL ? NULL : arena_strdup(a, end + 1);
	for (tok = rest != NULL ? strtok_r(rest, ";", &save) : NULL;
	     tok != NULL; tok = strtok_r(NULL, ";", &save)) {
		if (strncmp(tok, "mime=", 5) == 0 &&
		    cli_push_text_ok(tok + 5) && strchr(tok + 5, '/') != NULL)
			ret->mime_type = tok + 5;
		else if (strncmp(tok, "cid=", 4) == 0 &&
			 cli_push_id_ok(tok + 4))
			ret->cid = strncmp(tok + 4, "cid:", 4) == 0 ? tok + 8
								    : tok + 4;
		else
			return -1;
	}
	if (ret->mime_type == NULL)
		ret->mime_type = cli_push_guess_type(ret->path);
	return 0;
}

enum {
	CLI_PUSH_OPT_URL = 256,
	CLI_PUSH_OPT_MESSAGE_ID,
	CLI_PUSH_OPT_FROM,
	CLI_PUSH_OPT_FROM_ROLE,
	CLI_PUSH_OPT_TO,
	CLI_PUSH_OPT_TO_ROLE,
	CLI_PUSH_OPT_SERVICE,
	CLI_PUSH_OPT_ACTION,
	CLI_PUSH_OPT_AGREEMENT,
	CLI_PUSH_OPT_CONVERSATION,
	CLI_PUSH_OPT_PAYLOAD,
	CLI_PUSH_OPT_PROPERTY,
	CLI_PUSH_OPT_GATEWAY_CERT,
	CLI_PUSH_OPT_CACERT,
	CLI_PUSH_OPT_INSECURE,
	CLI_PUSH_OPT_TIMEOUT,
	CLI_PUSH_OPT_CONNECT_TIMEOUT,
	CLI_PUSH_OPT_SAVE,
	CLI_PUSH_OPT_WRITE,
	CLI_PUSH_OPT_COUNT,
	CLI_PUSH_OPT_REPEAT,
	CLI_PUSH_OPT_QUIET,
	CLI_PUSH_OPT_SIGN,
	CLI_PUSH_OPT_SIGN_CERT,
	CLI_PUSH_OPT_SIGN_KEY,
	CLI_PUSH_OPT_ENCRYPT,
	CLI_PUSH_OPT_RECIPIENT,
	CLI_PUSH_OPT_COMPRESS,
	CLI_PUSH_OPT_HELP,
};

static const struct option cli_push_longopts[] = {
    {"url", required_argument, NULL, CLI_PUSH_OPT_URL},
    {"message-id", required_argument, NULL, CLI_PUSH_OPT_MESSAGE_ID},
    {"from", required_argument, NULL, CLI_PUSH_OPT_FROM},
    {"from-role", required_argument, NULL, CLI_PUSH_OPT_FROM_ROLE},
    {"to", required_argument, NULL, CLI_PUSH_OPT_TO},
    {"to-role", required_argument, NULL, CLI_PUSH_OPT_TO_ROLE},
    {"service", required_argument, NULL, CLI_PUSH_OPT_SERVICE},
    {"action", required_argument, NULL, CLI_PUSH_OPT_ACTION},
    {"property", required_argument, NULL, CLI_PUSH_OPT_PROPERTY},
    {"agreement", required_argument, NULL, CLI_PUSH_OPT_AGREEMENT},
    {"conversation", required_argument, NULL, CLI_PUSH_OPT_CONVERSATION},
    {"payload", required_argument, NULL, CLI_PUSH_OPT_PAYLOAD},
    {"gateway-cert", required_argument, NULL, CLI_PUSH_OPT_GATEWAY_CERT},
    {"cacert", required_argument, NULL, CLI_PUSH_OPT_CACERT},
    {"insecure", no_argument, NULL, CLI_PUSH_OPT_INSECURE},
    {"timeout", required_argument, NULL, CLI_PUSH_OPT_TIMEOUT},
    {"connect-timeout", required_argument, NULL, CLI_PUSH_OPT_CONNECT_TIMEOUT},
    {"save-request", required_argument, NULL, CLI_PUSH_OPT_SAVE},
    {"write-requests", required_argument, NULL, CLI_PUSH_OPT_WRITE},
    {"count", required_argument, NULL, CLI_PUSH_OPT_COUNT},
    {"repeat", no_argument, NULL, CLI_PUSH_OPT_REPEAT},
    {"quiet", no_argument, NULL, CLI_PUSH_OPT_QUIET},
    {"sign", no_argument, NULL, CLI_PUSH_OPT_SIGN},
    {"sign-cert", required_argument, NULL, CLI_PUSH_OPT_SIGN_CERT},
    {"sign-key", required_argument, NULL, CLI_PUSH_OPT_SIGN_KEY},
    {"encrypt", no_argument, NULL, CLI_PUSH_OPT_ENCRYPT},
    {"recipient-cert", required_argument, NULL, CLI_PUSH_OPT_RECIPIENT},
    {"compress", no_argument, NULL, CLI_PUSH_OPT_COMPRESS},
    {"help", no_argument, NULL, CLI_PUSH_OPT_HELP},
    {NULL, 0, NULL, 0},
};

/* Apply one option; -1 (after a message) when its value is unusable. */
static int
cli_push_option(struct arena *a, struct cli_push_opts *o, int opt,
		const char *arg)
{
	int rc = 0;

	switch (opt) {
	case CLI_PUSH_OPT_URL: o->net.url = arg; break;
	case CLI_PUSH_OPT_MESSAGE_ID: o->message_id = arg; break;
	case CLI_PUSH_OPT_FROM:
		rc = cli_push_typed_parse(a, arg, &o->from);
		break;
	case CLI_PUSH_OPT_FROM_ROLE: o->from_role = arg; break;
	case CLI_PUSH_OPT_TO: rc = cli_push_typed_parse(a, arg, &o->to); break;
	case CLI_PUSH_OPT_TO_ROLE: o->to_role = arg; break;
	case CLI_PUSH_OPT_SERVICE:
		rc = cli_push_typed_parse(a, arg, &o->service);
		break;
	case CLI_PUSH_OPT_ACTION: o->action = arg; break;
	case CLI_PUSH_OPT_AGREEMENT:
		rc = cli_push_typed_parse(a, arg, &o->agreement);
		break;
	case CLI_PUSH_OPT_CONVERSATION: o->conversation = arg; break;
	case CLI_PUSH_OPT_PAYLOAD:
		rc = cli_push_payload_parse(a, arg,
					    &o->payloads[o->n_payloads++]);
		break;
	case CLI_PUSH_OPT_PROPERTY:
		rc = cli_push_prop_parse(a, arg, &o->props[o->n_props++]);
		break;
	case CLI_PUSH_OPT_GATEWAY_CERT: o->gateway_cert = arg; break;
	case CLI_PUSH_OPT_CACERT: o->net.cacert = arg; break;
	case CLI_PUSH_OPT_INSECURE: o->net.insecure = 1; break;
	case CLI_PUSH_OPT_TIMEOUT:
		rc = cli_number(arg, 1, 86400, &o->net.timeout_s);
		break;
	case CLI_PUSH_OPT_CONNECT_TIMEOUT:
		rc =
		    cli_number(arg, 1, 86400, &o->net.connect_timeout_s);
		break;
	case CLI_PUSH_OPT_SAVE: o->save_request = arg; break;
	case CLI_PUSH_OPT_WRITE: o->write_requests = arg; break;
	case CLI_PUSH_OPT_COUNT:
		rc = cli_number(arg, 1, 100000000, &o->count);
		break;
	case CLI_PUSH_OPT_REPEAT: o->repeat = 1; break;
	case CLI_PUSH_OPT_QUIET: o->quiet = 1; break;
	case CLI_PUSH_OPT_SIGN: o->sign = 1; break;
	case CLI_PUSH_OPT_SIGN_CERT: o->sign_cert = arg; break;
	case CLI_PUSH_OPT_SIGN_KEY: o->sign_key = arg; break;
	case CLI_PUSH_OPT_ENCRYPT: o->encrypt = 1; break;
	case CLI_PUSH_OPT_RECIPIENT: o->recipient_cert = arg; break;
	case CLI_PUSH_OPT_COMPRESS: o->compress = 1; break;
	default: rc = -1; break;
	}
	if (rc == -1 && arg != NULL)
		(void)fprintf(stderr, "as4gw push: invalid value \"%s\"\n",
			      arg);
	return rc;
}

/* The security options go together: --sign with its certificate and key,
 * --encrypt with the recipient, and nothing to encrypt is an error. */
static int
cli_push_check_security(const struct cli_push_opts *o)
{
	const char *why = NULL;

	if (o->sign != (o->sign_cert != NULL) ||
	    o->sign != (o->sign_key != NULL))
		why = "--sign needs --sign-cert and --sign-key, and they "
		      "need --sign";
	else if (o->encrypt != (o->recipient_cert != NULL))
		why = "--encrypt needs --recipient-cert, and it needs "
		      "--encrypt";
	else if ((o->encrypt || o->compress) && o->n_payloads == 0)
		why = "--encrypt and --compress need at least one --payload";
	if (why == NULL)
		return 0;
	(void)fprintf(stderr, "as4gw push: %s\n", why);
	return -1;
}

/* After parsing: required options, identifier syntax, defaults. */
static int
cli_push_check(struct arena *a, struct cli_push_opts *o)
{
	char uuid[37];
	const char *missing = o->net.url == NULL &&
				      o->write_requests == NULL
				  ? "--url"
			      : o->from.value == NULL	 ? "--from"
			      : o->to.value == NULL	 ? "--to"
			      : o->service.value == NULL ? "--service"
			      : o->action == NULL	 ? "--action"
							 : NULL;
	size_t i;

	if (missing != NULL) {
		(void)fprintf(stderr, "as4gw push: %s is required\n", missing);
		return -1;
	}
	if (cli_push_check_security(o) == -1)
		return -1;
	/*
	 * Defaults are derived, not random, where the content hash sees them:
	 * pushing the same --message-id and payloads again must be a retry
	 * (same Receipt), not drift.
	 */
	if (o->conversation == NULL)
		o->conversation = o->message_id;
	if (o->conversation == NULL && codec_uuid(uuid) == 0)
		o->conversation = arena_strdup(a, uuid);
	for (i = 0; i < o->n_payloads; i++) {
		if (o->payloads[i].cid != NULL)
			continue;
		if ((o->payloads[i].cid = arena_sprintf(a,
		    "payload-%zu@as4gw-push", i + 1)) == NULL) {
			(void)fprintf(
			    stderr,
			    "as4gw push: could not make a Content-ID\n");
			return -1;
		}
	}
	if ((o->message_id != NULL && !cli_push_id_ok(o->message_id)) ||
	    !cli_push_id_ok(o->conversation) || !cli_push_text_ok(o->action) ||
	    !cli_push_text_ok(o->from_role) || !cli_push_text_ok(o->to_role)) {
		(void)fprintf(stderr,
			      "as4gw push: invalid message id, conversation, "
			      "action or role (empty, control characters, "
			      "spaces in ids)\n");
		return -1;
	}
	return 0;
}

/* Parse the command line into o: 0 ok, 1 help was printed, -1 usage error. */
static int
cli_push_options(struct arena *a, int argc, char **argv,
		 struct cli_push_opts *o)
{
	int opt;

	memset(o, 0, sizeof(*o));
	o->net.timeout_s = CLI_REPLAY_TIMEOUT_S;
	o->net.connect_timeout_s = CLI_REPLAY_CONNECT_TIMEOUT_S;
	o->from_role = CLI_PUSH_NS_ROLE "initiator";
	o->to_role = CLI_PUSH_NS_ROLE "responder";
	o->count = 1;
	/* every --payload uses one argv slot, so argc bounds their number */
	if ((o->payloads = arena_calloc(a, (size_t)argc + 1,
					sizeof(*o->payloads))) == NULL ||
	    (o->props = arena_calloc(a, (size_t)argc + 1,
				     sizeof(*o->props))) == NULL)
		return -1;
	optind =
	    0; /* glibc: full re-initialisation, main may have used getopt */
	while ((opt = getopt_long(argc, argv, "hq", cli_push_longopts, NULL)) !=
	       -1) {
		if (opt == CLI_PUSH_OPT_HELP || opt == 'h') {
			cli_push_usage(stdout);
			return 1;
		}
		opt = opt == 'q' ? CLI_PUSH_OPT_QUIET : opt;
		if (opt == '?' || cli_push_option(a, o, opt, optarg) == -1)
			return -1;
	}
	if (optind < argc) {
		(void)fprintf(stderr,
			      "as4gw push: unexpected argument \"%s\"\n",
			      argv[optind]);
		return -1;
	}
	return cli_push_check(a, o);
}

/* <eb:NAME[ ATTR="VAL"]>TEXT</eb:NAME> with every value escaped; nonzero
 * when out of memory.  The attribute is left out when val is NULL. */
static int
cli_push_el(struct buf *b, const char *name, const char *attr, const char *val,
	    const char *text)
{
	int bad = buf_printf(b, "<eb:%s", name);

	if (attr != NULL && val != NULL) {
		bad |= buf_printf(b, " %s=\"", attr);
		bad |= buf_xml_escape(b, val);
		bad |= buf_puts(b, "\"");
	}
	bad |= buf_puts(b, ">");
	bad |= buf_xml_escape(b, text);
	bad |= buf_printf(b, "</eb:%s>", name);
	return bad;
}

/* ebMS3 Core 5.2.2.3-5.2.2.5: From or To, one PartyId and the Role. */
static int
cli_push_party(struct buf *b, const char *name, const struct cli_push_typed *id,
	       const char *role)
{
	int bad = buf_printf(b, "<eb:%s>", name);

	bad |= cli_push_el(b, "PartyId", "type", id->type, id->value);
	bad |= cli_push_el(b, "Role", NULL, NULL, role);
	bad |= buf_printf(b, "</eb:%s>", name);
	return bad;
}

/* ebMS3 Core 5.2.2.6-5.2.2.10, in schema order: AgreementRef?, Service,
 * Action, ConversationId. */
static int
cli_push_collab(struct buf *b, const struct cli_push_opts *o)
{
	int bad = buf_puts(b, "<eb:CollaborationInfo>");

	if (o->agreement.value != NULL)
		bad |= cli_push_el(b, "AgreementRef", "type", o->agreement.type,
				   o->agreement.value);
	bad |= cli_push_el(b, "Service", "type", o->service.type,
			   o->service.value);
	bad |= cli_push_el(b, "Action", NULL, NULL, o->action);
	bad |= cli_push_el(b, "ConversationId", NULL, NULL, o->conversation);
	bad |= buf_puts(b, "</eb:CollaborationInfo>");
	return bad;
}

/* ebMS3 Core 5.2.2.11: MessageProperties, one Property per --property (none:
 * no element, the schema wants at least one Property in it). */
static int
cli_push_props(struct buf *b, const struct cli_push_opts *o)
{
	size_t i;
	int bad = 0;

	if (o->n_props == 0)
		return 0;
	bad |= buf_puts(b, "<eb:MessageProperties>");
	for (i = 0; i < o->n_props; i++) {
		bad |= buf_puts(b, "<eb:Property name=\"");
		bad |= buf_xml_escape(b, o->props[i].name);
		bad |= buf_puts(b, "\"");
		if (o->props[i].type != NULL) {
			bad |= buf_puts(b, " type=\"");
			bad |= buf_xml_escape(b, o->props[i].type);
			bad |= buf_puts(b, "\"");
		}
		bad |= buf_puts(b, ">");
		bad |= buf_xml_escape(b, o->props[i].value);
		bad |= buf_puts(b, "</eb:Property>");
	}
	bad |= buf_puts(b, "</eb:MessageProperties>");
	return bad;
}

/* ebMS3 Core 5.2.2.12-5.2.2.13: one PartInfo per attachment, href="cid:..",
 * with the MimeType part property eDelivery AS4 requires, and with
 * --compress CompressionType (AS4 profile 3.1: MimeType is then the type of
 * the uncompressed payload).  No PayloadInfo at all without payloads (the
 * schema wants at least one PartInfo in it). */
static int
cli_push_payload_info(struct buf *b, const struct cli_push_opts *o)
{
	size_t i;
	int bad;

	if (o->n_payloads == 0)
		return 0;
	bad = buf_puts(b, "<eb:PayloadInfo>");
	for (i = 0; i < o->n_payloads; i++) {
		bad |= buf_puts(b, "<eb:PartInfo href=\"cid:");
		bad |= buf_xml_escape(b, o->payloads[i].cid);
		bad |= buf_puts(b, "\"><eb:PartProperties>");
		bad |= cli_push_el(b, "Property", "name", "MimeType",
				   o->payloads[i].mime_type);
		if (o->compress)
			bad |= cli_push_el(b, "Property", "name",
					   "CompressionType", CLI_PUSH_GZIP);
		bad |= buf_puts(b, "</eb:PartProperties></eb:PartInfo>");
	}
	bad |= buf_puts(b, "</eb:PayloadInfo>");
	return bad;
}

/* The SOAP 1.2 envelope: eb:Messaging (mustUnderstand, ebMS3 Core 5.2.1)
 * with one UserMessage, an empty Body; both carry a wsu:Id so that a signing
 * step can reference them (eDelivery AS4 1.15). */
static int
cli_push_envelope(struct buf *b, const struct cli_push_opts *o,
		  const char *msgid, const char *uuid)
{
	char ts[CLOCK_ISO_LEN];
	int bad;

	clock_iso8601(clock_epoch_ms(), ts);
	bad = buf_printf(b,
			 "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			 "<env:Envelope xmlns:env=\"" NS_SOAP12
			 "\" xmlns:eb=\"" NS_EB "\" "
			 "xmlns:wsu=\"" NS_WSU "\"><env:Header><eb:Messaging "
			 "env:mustUnderstand=\"true\" "
			 "wsu:Id=\"messaging-%s\"><eb:UserMessage>"
			 "<eb:MessageInfo>",
			 uuid);
	bad |= cli_push_el(b, "Timestamp", NULL, NULL, ts);
	bad |= cli_push_el(b, "MessageId", NULL, NULL, msgid);
	bad |= buf_puts(b, "</eb:MessageInfo><eb:PartyInfo>");
	bad |= cli_push_party(b, "From", &o->from, o->from_role);
	bad |= cli_push_party(b, "To", &o->to, o->to_role);
	bad |= buf_puts(b, "</eb:PartyInfo>");
	bad |= cli_push_collab(b, o);
	bad |= cli_push_props(b, o);
	bad |= cli_push_payload_info(b, o);
	bad |= buf_printf(b,
			  "</eb:UserMessage></eb:Messaging></env:Header>"
			  "<env:Body wsu:Id=\"body-%s\"/></env:Envelope>\n",
			  uuid);
	return bad;
}

/* The serialized document replaces the bytes in env (UTF-8, as parsed). */
static int
cli_push_dump(xmlDocPtr doc, struct buf *env, struct err *err)
{
	xmlChar *mem = NULL;
	int len = 0, rc = -1;

	xmlDocDumpMemoryEnc(doc, &mem, &len, "UTF-8");
	if (mem != NULL && len > 0) {
		buf_reset(env);
		rc = buf_append(env, mem, (size_t)len);
	}
	xmlFree(mem);
	if (rc == -1)
		err_set(err, ERR_INTERNAL, NULL,
			"could not serialize the envelope");
	return rc;
}

/*
 * --sign and --encrypt on the built envelope (eDelivery AS4 1.15): sign
 * eb:Messaging, the Body and every attachment (after --compress: over the
 * gzip bytes, which is what the receiver has after decrypting), then
 * encrypt the attachments, sign-then-encrypt; env gets the secured
 * envelope, the attachments their ciphertext and type.  The signed document
 * stays in m->sent (arena) for the NRR check of the Receipt.
 */
static int
cli_push_secure(struct arena *a, const struct cli_push_opts *o,
		struct buf *env, struct mime_out_part *att,
		struct cli_push_msg *m, struct err *err)
{
	struct wss_part *wp;
	xmlDocPtr doc = NULL;
	size_t i, n = o->n_payloads;

	if ((wp = arena_calloc(a, n + 1, sizeof(*wp))) == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	for (i = 0; i < n; i++) {
		wp[i].content_id = att[i].content_id;
		wp[i].content_type = att[i].content_type;
		wp[i].data = att[i].data;
		wp[i].len = att[i].len;
	}
	if (xml_parse(a, env->data, env->len, NULL, &doc, err) == -1 ||
	    (o->key != NULL &&
	     sender_sign_message(doc, o->key, wp, n, err) == -1) ||
	    (o->recipient != NULL &&
	     sender_encrypt_message(a, doc, o->recipient, wp, n, err) == -1) ||
	    cli_push_dump(doc, env, err) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		att[i].content_type = wp[i].content_type;
		att[i].data = wp[i].data;
		att[i].len = wp[i].len;
	}
	m->sent = o->key != NULL ? doc : NULL;
	return 0;
}

/* The attachments as they go out before security: the payload bytes (gzip
 * after --compress, then typed application/gzip: AS4 profile 3.1). */
static void
cli_push_attachments(const struct cli_push_opts *o, struct mime_out_part *att)
{
	size_t i;

	for (i = 0; i < o->n_payloads; i++) {
		att[i].content_id = o->payloads[i].cid;
		att[i].content_type =
		    o->compress ? CLI_PUSH_GZIP : o->payloads[i].mime_type;
		att[i].data = o->payloads[i].data.data;
		att[i].len = o->payloads[i].data.len;
	}
}

/* Build one message: a fresh MessageId (unless --message-id) and Timestamp;
 * secured as the options say; a bare SOAP body without payloads, else
 * multipart/related (ebMS3 Core 5.1.1: both packagings are legal). */
static int
cli_push_build(struct arena *a, const struct cli_push_opts *o,
	       struct cli_push_msg *m, struct err *err)
{
	struct mime_out_part *parts = NULL;
	struct buf env = {0};
	char uuid[37];
	int rc = -1;

	memset(m, 0, sizeof(*m));
	if (codec_uuid(uuid) == -1 ||
	    arena_cleanup(a, cli_push_buf_cleanup, &m->body) == -1)
		goto out;
	m->message_id = o->message_id != NULL
			    ? o->message_id
			    : arena_sprintf(a, "%s@as4gw-push", uuid);
	if (m->message_id == NULL ||
	    cli_push_envelope(&env, o, m->message_id, uuid) != 0 ||
	    (parts = arena_calloc(a, o->n_payloads + 1, sizeof(*parts))) ==
		NULL)
		goto out;
	cli_push_attachments(o, parts + 1);
	if ((o->key != NULL || o->recipient != NULL) &&
	    cli_push_secure(a, o, &env, parts + 1, m, err) == -1)
		goto out;
	if (o->n_payloads == 0) {
		m->content_type = "application/soap+xml; charset=UTF-8";
		rc = buf_append(&m->body, env.data, env.len);
		goto out;
	}
	parts[0].content_id = arena_sprintf(a, "envelope-%s@as4gw-push", uuid);
	parts[0].content_type = "application/soap+xml; charset=UTF-8";
	parts[0].data = env.data;
	parts[0].len = env.len;
	rc = mime_write(a, parts, o->n_payloads + 1, NULL, &m->body,
			&m->content_type, err);
out:
	if (rc == -1)
		err_set(err, ERR_INTERNAL, NULL, "could not build the message");
	buf_free(&env);
	return rc;
}

/* Write len bytes to a new file at path. */
static int
cli_push_write_file(const char *path, const void *data, size_t len,
		    struct err *err)
{
	FILE *f = fopen(path, "wb");
	int bad;

	if (f == NULL)
		return err_set(err, ERR_IO, NULL,
			       "could not create file \"%s\": %m", path);
	bad = fwrite(data, 1, len, f) != len;
	bad |= fclose(f) != 0;
	if (bad)
		return err_set(err, ERR_IO, NULL,
			       "could not write file \"%s\": %m", path);
	return 0;
}

/* --save-request: the exact HTTP body to FILE, its Content-Type to FILE.ct
 * (what `as4gw replay` needs to send it again unchanged). */
static int
cli_push_save(struct arena *a, const char *path, const struct cli_push_msg *m,
	      struct err *err)
{
	const char *ct_path = arena_sprintf(a, "%s.ct", path);
	const char *ct_line = arena_sprintf(a, "%s\n", m->content_type);

	if (ct_path == NULL || ct_line == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	if (cli_push_write_file(path, m->body.data, m->body.len, err) == -1 ||
	    cli_push_write_file(ct_path, ct_line, strlen(ct_line), err) == -1)
		return -1;
	return 0;
}

/* "failed: ID: what: msg[: detail]" for a Receipt that did not pass. */
static const char *
cli_push_failed(struct arena *a, const char *id, const char *what,
		const struct err *err)
{
	return arena_sprintf(a, "failed: %s: %s: %s%s%s", id, what, err->msg,
			     err->detail[0] != '\0' ? ": " : "", err->detail);
}

/* The verdict for a Receipt whose signature passed (or was not checked):
 * for a signed message its NRR digests must also be the ones we signed
 * (AS4 profile 5.1.8 b); *ret_rc becomes 0 only when all is well. */
static const char *
cli_push_ok(struct arena *a, const struct wss_cert *cert,
	    const struct cli_push_msg *m, const struct cli_replay_outcome *out,
	    int *ret_rc)
{
	const char *sig = cert != NULL ? "signature verified"
				       : "(signature not checked)";
	struct err err;
	size_t n = 0;

	err_clear(&err);
	if (m->sent != NULL && sender_nrr_match(m->sent, out->doc, &n, &err) == -1) {
		/* a retry built anew gets the stored Receipt of the first
		 * transmission: provable only when its signature verified */
		if (cert == NULL || sender_nrr_earlier(m->sent, out->doc, &n) == -1)
			return cli_push_failed(a, m->message_id,
					       "no proof of receipt", &err);
		*ret_rc = 0;
		return arena_sprintf(a, "receipt ok: ref %s %s, the stored "
				     "Receipt of an earlier transmission of this "
				     "message (a retry): %zu payload digests "
				     "match", m->message_id, sig, n);
	}
	*ret_rc = 0;
	if (m->sent == NULL)
		return arena_sprintf(a, "receipt ok: ref %s %s", m->message_id,
				     sig);
	return arena_sprintf(a, "receipt ok: ref %s %s, %zu NRR digests match",
			     m->message_id, sig, n);
}

/* Judge one answer and print the verdict line on stderr: 0 only when a
 * Receipt for this MessageId came back (HTTP 2xx), with a gateway
 * certificate its signature verifies, and for a signed message its NRR
 * digests are the ones we signed. */
static int
cli_push_judge(struct arena *a, const struct cli_push_opts *o,
	       const struct wss_cert *cert, const struct cli_push_msg *m,
	       const struct cli_replay_answer *ans)
{
	struct cli_replay_outcome out;
	const char *v, *id = m->message_id;
	struct err err;
	int rc = -1;

	err_clear(&err);
	cli_replay_outcome_parse(a, ans, &out);
	if (ans->status < 200 || ans->status > 299 ||
	    out.kind != CLI_REPLAY_RECEIPT)
		v = arena_sprintf(a, "failed: %s: HTTP %ld, %s%s%s", id,
				  ans->status, cli_replay_outcome_str(a, &out),
				  out.description != NULL ? ": " : "",
				  out.description != NULL ? out.description
							  : "");
	else if (out.ref == NULL || strcmp(out.ref, id) != 0)
		v = arena_sprintf(a, "failed: %s: receipt refers to \"%s\"", id,
				  out.ref != NULL ? out.ref : "(nothing)");
	else if (cert != NULL && wss_verify_envelope(out.doc, cert, &err) == -1)
		v = cli_push_failed(a, id, "receipt signature not valid", &err);
	else
		v = cli_push_ok(a, cert, m, &out, &rc);
	if (rc == -1 || !o->quiet)
		(void)fprintf(stderr, "%s\n",
			      v != NULL ? v : "as4gw push: out of memory");
	return rc;
}

/* POST one message, print status and answer body, judge the answer. */
static int
cli_push_send(struct arena *a, const struct cli_push_opts *o,
	      struct cli_replay_client *c, const struct wss_cert *cert,
	      const struct cli_push_msg *m)
{
	static const char *const mime_hdrs[] = {"MIME-Version: 1.0", NULL};
	struct cli_replay_answer ans;
	struct err err;
	int multi = strncasecmp(m->content_type, "multipart/", 10) == 0;

	err_clear(&err);
	if (cli_replay_client_post(c, a, m->content_type,
				   multi ? mime_hdrs : NULL, m->body.data,
				   m->body.len, &ans, &err) == -1) {
		(void)fprintf(stderr, "failed: %s: %s\n", m->message_id,
			      err.msg);
		return -1;
	}
	if (!o->quiet) {
		(void)printf("HTTP %ld\n", ans.status);
		(void)fwrite(ans.body.data, 1, ans.body.len, stdout);
		if (ans.body.len > 0 && ans.body.data[ans.body.len - 1] != '\n')
			(void)putchar('\n');
		(void)fflush(
		    stdout); /* keep stdout and stderr lines in order */
	}
	return cli_push_judge(a, o, cert, m, &ans);
}

/* Build (and for the first message, save) one message into arena a. */
static int
cli_push_prepare(struct arena *a, const struct cli_push_opts *o, int first,
		 struct cli_push_msg *m, struct err *err)
{
	if (cli_push_build(a, o, m, err) == -1)
		return -1;
	if (first && o->save_request != NULL &&
	    cli_push_save(a, o->save_request, m, err) == -1)
		return -1;
	return 0;
}

/* "as4gw push: msg[: detail]" on stderr for a failure before sending (the
 * detail names the file, key or xmlsec complaint). */
static void
cli_push_complain(const struct err *err)
{
	(void)fprintf(stderr, "as4gw push: %s%s%s\n", err->msg,
		      err->detail[0] != '\0' ? ": " : "", err->detail);
}

/* Send message number i: the prepared one with --repeat, else a new one. */
static int
cli_push_one(const struct cli_push_opts *o, struct cli_replay_client *c,
	     const struct wss_cert *cert, const struct cli_push_msg *once,
	     long i)
{
	struct arena *a = arena_new(0);
	struct cli_push_msg fresh = {0};
	struct err err;
	int rc = -1;

	err_clear(&err);
	if (a == NULL) {
		(void)fprintf(stderr, "as4gw push: out of memory\n");
		return -1;
	}
	if (once == NULL && cli_push_prepare(a, o, i == 0, &fresh, &err) == -1)
		cli_push_complain(&err);
	else
		rc = cli_push_send(a, o, c, cert, once != NULL ? once : &fresh);
	arena_free(a);
	return rc;
}

/*
 * --compress (AS4 profile 3.1): data becomes one gzip member (RFC 1952, by
 * zlib's gzip wrapper: no name, mtime 0, so a file always gives the same
 * bytes), fed to zlib in pieces its 32-bit counters can take.
 */
static int
cli_push_gzip(struct buf *data, struct err *err)
{
	unsigned char chunk[1 << 16];
	struct buf out = {0};
	z_stream z;
	size_t off = 0, step;
	int zrc = Z_OK, rc = -1;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		goto out;
	while (zrc == Z_OK) {
		if (z.avail_in == 0 && off < data->len) {
			step = data->len - off;
			step = step < CLI_PUSH_GZIP_CHUNK ? step
							  : CLI_PUSH_GZIP_CHUNK;
			z.next_in = (Bytef *)data->data + off;
			z.avail_in = (uInt)step;
			off += step;
		}
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		zrc = deflate(&z, off == data->len ? Z_FINISH : Z_NO_FLUSH);
		if (buf_append(&out, chunk, sizeof(chunk) - z.avail_out) == -1)
			zrc = Z_MEM_ERROR;
	}
	if (zrc != Z_STREAM_END)
		goto out;
	buf_free(data);
	*data = out;
	memset(&out, 0, sizeof(out));
	rc = 0;
out:
	(void)deflateEnd(&z);
	buf_free(&out);
	if (rc == -1)
		err_set(err, ERR_INTERNAL, NULL,
			"could not compress a payload");
	return rc;
}

/* Read (and with --compress, gzip) the payload files. */
static int
cli_push_load_payloads(struct arena *a, struct cli_push_opts *o,
		       struct err *err)
{
	size_t i;

	for (i = 0; i < o->n_payloads; i++) {
		struct cli_push_payload *p = &o->payloads[i];

		/* a failed registration frees nothing yet: data is empty */
		if (arena_cleanup(a, cli_push_buf_cleanup, &p->data) == -1) {
			(void)err_set(err, ERR_INTERNAL, NULL, "out of memory");
			return -1;
		}
		if (cli_replay_read_file(p->path, CLI_REPLAY_MAX_FILE, &p->data,
					 err) == -1 ||
		    (o->compress && cli_push_gzip(&p->data, err) == -1))
			return -1;
	}
	return 0;
}

/* --sign's key pair and --encrypt's recipient (owned by the arena). */
static int
cli_push_load_security(struct arena *a, struct cli_push_opts *o,
		       struct err *err)
{
	if (o->sign) {
		if (wss_key_load(o->sign_cert, o->sign_key, &o->key, err) == -1)
			return -1;
		if (arena_cleanup(a, cli_push_key_cleanup, o->key) == -1) {
			o->key = NULL; /* already freed by arena_cleanup */
			return err_set(err, ERR_INTERNAL, NULL,
				       "out of memory");
		}
	}
	if (o->encrypt) {
		if (sender_recipient_load(o->recipient_cert, &o->recipient,
				       err) == -1)
			return -1;
		if (arena_cleanup(a, cli_push_recipient_cleanup,
				  o->recipient) == -1) {
			o->recipient = NULL;
			return err_set(err, ERR_INTERNAL, NULL,
				       "out of memory");
		}
	}
	return 0;
}

/* Read the payload files, the keys and the gateway certificate (owned by the
 * arena). */
static int
cli_push_load(struct arena *a, struct cli_push_opts *o,
	      struct wss_cert **ret_cert, struct err *err)
{
	*ret_cert = NULL;
	if (cli_push_load_payloads(a, o, err) == -1 ||
	    cli_push_load_security(a, o, err) == -1)
		return -1;
	if (o->gateway_cert == NULL)
		return 0;
	if (wss_cert_load(o->gateway_cert, ret_cert, err) == -1)
		return -1;
	if (arena_cleanup(a, cli_push_cert_cleanup, *ret_cert) == -1) {
		*ret_cert = NULL; /* already freed by arena_cleanup */
		(void)err_set(err, ERR_INTERNAL, NULL, "out of memory");
		return -1;
	}
	return 0;
}

/* Prepare everything that lives for the whole run. */
static int
cli_push_setup(struct arena *a, struct cli_push_opts *o,
	       struct wss_cert **ret_cert,
	       struct cli_replay_client **ret_client, struct cli_push_msg *once,
	       struct err *err)
{
	if (cli_push_load(a, o, ret_cert, err) == -1)
		return -1;
	if ((*ret_client = cli_replay_client_new(&o->net, err)) == NULL)
		return -1;
	if (arena_cleanup(a, cli_push_client_cleanup, *ret_client) == -1) {
		(void)err_set(err, ERR_INTERNAL, NULL, "out of memory");
		return -1;
	}
	if (o->repeat && cli_push_prepare(a, o, 1, once, err) == -1)
		return -1;
	return 0;
}

/*
 * --write-requests: build o->count messages and append them to the file, so
 * a load tool sends pre-built (pre-signed) requests and the sender's work is
 * not timed as the gateway's.  0 all written, -1 (after a message).
 */
static int
cli_push_write_all(struct cli_push_opts *o)
{
	struct wss_cert *cert = NULL;
	struct arena *a = arena_new(0);
	struct err err;
	FILE *f = NULL;
	long i;
	int rc = -1;

	err_clear(&err);
	if (a == NULL || cli_push_load(a, o, &cert, &err) == -1)
		goto out;
	if ((f = fopen(o->write_requests, "ab")) == NULL) {
		(void)err_set(&err, ERR_IO, NULL, "could not open \"%s\": %m",
			      o->write_requests);
		goto out;
	}
	for (i = 0; i < o->count; i++) {
		struct arena *m_a = arena_new(0);
		struct cli_push_msg m = {0};
		int bad;

		if (m_a == NULL || cli_push_build(m_a, o, &m, &err) == -1) {
			arena_free(m_a);
			goto out;
		}
		bad = fprintf(f, "%s\n%zu\n", m.content_type, m.body.len) < 0 ||
		      fwrite(m.body.data, 1, m.body.len, f) != m.body.len;
		arena_free(m_a);
		if (bad) {
			(void)err_set(&err, ERR_IO, NULL,
				      "could not write \"%s\": %m",
				      o->write_requests);
			goto out;
		}
	}
	if (fclose(f) != 0) {
		f = NULL;
		(void)err_set(&err, ERR_IO, NULL, "could not write \"%s\": %m",
			      o->write_requests);
		goto out;
	}
	f = NULL;
	rc = 0;
out:
	if (f != NULL)
		(void)fclose(f);
	if (rc == -1)
		cli_push_complain(&err);
	arena_free(a);
	return rc;
}

/* `as4gw push`: see cli_push_usage(). */
int
cli_push(int argc, char **argv)
{
	struct arena *a = arena_new(0);
	struct cli_replay_client *c = NULL;
	struct wss_cert *cert = NULL;
	struct cli_push_opts o;
	struct cli_push_msg once = {0};
	struct err err;
	long i, failed = 0;
	int64_t t0;
	int rc = 2, r;

	err_clear(&err);
	if (a == NULL) {
		(void)fprintf(stderr, "as4gw push: out of memory\n");
		arena_free(a);
		return 1;
	}
	if ((r = cli_push_options(a, argc, argv, &o)) != 0) {
		rc = r == 1 ? 0 : 2;
		if (r == -1)
			(void)fprintf(stderr, "try: as4gw push --help\n");
		goto out;
	}
	rc = 1;
	if (o.write_requests != NULL) {
		rc = cli_push_write_all(&o) == 0 ? 0 : 1;
		goto out;
	}
	if (cli_push_setup(a, &o, &cert, &c, &once, &err) == -1) {
		cli_push_complain(&err);
		goto out;
	}
	t0 = clock_mono_ms();
	for (i = 0; i < o.count; i++)
		failed +=
		    cli_push_one(&o, c, cert, o.repeat ? &once : NULL, i) == -1;
	if (o.count > 1)
		(void)fprintf(stderr,
			      "sent %ld: %ld ok, %ld failed in %lld ms\n",
			      o.count, o.count - failed, failed,
			      (long long)(clock_mono_ms() - t0));
	rc = failed == 0 ? 0 : 1;
out:
	arena_free(a); /* frees the client before libcurl's global cleanup */
	cli_curl_shutdown();
	return rc;
}
