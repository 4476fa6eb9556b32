/*
 * cli_push_opts — the command line of `as4gw push`: the usage text, parsing
 * each option (typed party ids, --property, --payload specs) and the checks
 * after parsing (required options, identifier syntax, the security options
 * that go together, defaults).  Fills struct cli_push_opts (cli_push_int.h).
 */
#include "cli_push_int.h"

#include <getopt.h>
#include <limits.h>
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

/* Usage text, continued: the output options, the large path's (issue
 * 14), the exit status. */
static void
cli_push_usage_spool(FILE *f)
{
	(void)fputs(
	    "  --write-requests FILE    build the N messages (signed, "
	    "encrypted as asked)\n"
	    "                           and append them to FILE instead of "
	    "sending (--url not\n"
	    "                           needed): per message a line with the "
	    "Content-Type, a\n"
	    "                           line with the body length, the body "
	    "(bench/run's load)\n"
	    "  --spool-threshold BYTES  payload files of this size and more "
	    "are streamed from\n"
	    "                           disk through spool files, never "
	    "read into memory\n"
	    "                           (default 8 MiB; 0: every payload)\n"
	    "  --spool-dir DIR          where the spool files go (default "
	    "$TMPDIR, else /tmp)\n"
	    "  --quiet                  print only failures and the summary\n"
	    "exit: 0 receipt(s) ok, 1 error/fault/HTTP or check failure, 2 "
	    "usage\n",
	    f);
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
	    "                           payload (PEM; RSA: rsa-sha256, "
	    "Ed25519: eddsa-ed25519,\n"
	    "                           EC: ecdsa-sha256/384/512); the "
	    "Receipt must then be an NRR\n"
	    "                           Receipt with the digests that were "
	    "signed\n"
	    "  --encrypt --recipient-cert FILE   encrypt every payload for "
	    "this PEM certificate\n"
	    "                           (aes128-gcm after signing; an RSA "
	    "certificate: rsa-oaep,\n"
	    "                           X25519: x25519 + hkdf + kw-aes128, "
	    "EC: ECDH-ES + hkdf)\n"
	    "  --profile NAME           edelivery-1.x (RSA keys), "
	    "edelivery-2.0 (Ed25519 signing\n"
	    "                           key, X25519 recipient), "
	    "edelivery-2.0-ec (EC keys), bdew\n"
	    "                           (EC keys, ECDH-ES with ConcatKDF): "
	    "keys of other types\n"
	    "                           are refused before anything is sent\n"
	    "  --cacert FILE | --insecure   TLS trust for https\n"
	    "  --timeout S, --connect-timeout S   (default %d, %d)\n"
	    "  --save-request FILE      write the HTTP body to FILE, its "
	    "Content-Type to FILE.ct\n"
	    "  --count N [--repeat]     send N messages (--repeat: the same "
	    "bytes N times)\n",
	    CLI_REPLAY_TIMEOUT_S, CLI_REPLAY_CONNECT_TIMEOUT_S);
	cli_push_usage_spool(f);
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
	CLI_PUSH_OPT_PROFILE,
	CLI_PUSH_OPT_SPOOL_THRESHOLD,
	CLI_PUSH_OPT_SPOOL_DIR,
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
    {"profile", required_argument, NULL, CLI_PUSH_OPT_PROFILE},
    {"spool-threshold", required_argument, NULL,
     CLI_PUSH_OPT_SPOOL_THRESHOLD},
    {"spool-dir", required_argument, NULL, CLI_PUSH_OPT_SPOOL_DIR},
    {"help", no_argument, NULL, CLI_PUSH_OPT_HELP},
    {NULL, 0, NULL, 0},
};

/* --spool-threshold, --spool-dir (the large path, issue 14); -1 for
 * anything else or a bad value. */
static int
cli_push_option_spool(struct cli_push_opts *o, int opt, const char *arg)
{
	long n = 0;

	if (opt == CLI_PUSH_OPT_SPOOL_DIR) {
		o->spool_dir = arg;
		return 0;
	}
	if (opt != CLI_PUSH_OPT_SPOOL_THRESHOLD ||
	    cli_number(arg, 0, LONG_MAX, &n) == -1)
		return -1;
	o->spool_threshold = (uint64_t)n;
	return 0;
}

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
	case CLI_PUSH_OPT_PROFILE:
		o->profile = arg;
		rc = cli_push_profile_known(arg) ? 0 : -1;
		break;
	default: rc = cli_push_option_spool(o, opt, arg); break;
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
int
cli_push_options(struct arena *a, int argc, char **argv,
		 struct cli_push_opts *o)
{
	const char *tmpdir = getenv("TMPDIR");
	int opt;

	memset(o, 0, sizeof(*o));
	o->net.timeout_s = CLI_REPLAY_TIMEOUT_S;
	o->net.connect_timeout_s = CLI_REPLAY_CONNECT_TIMEOUT_S;
	o->from_role = CLI_PUSH_NS_ROLE "initiator";
	o->to_role = CLI_PUSH_NS_ROLE "responder";
	o->count = 1;
	o->spool_threshold = CLI_PUSH_SPOOL_THRESHOLD;
	o->spool_dir = tmpdir != NULL && *tmpdir != '\0' ? tmpdir : "/tmp";
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
