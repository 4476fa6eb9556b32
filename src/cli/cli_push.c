/*
 * cli_push — `as4gw push`: a sender for tests, demos and partner onboarding.
 * Builds an ebMS3 UserMessage (SOAP 1.2, payloads as MIME attachments),
 * optionally compressed, signed and encrypted as eDelivery AS4 1.15 sends
 * it (gzip; rsa-sha256 — or the method of an Ed25519 or EC key, as 2.0
 * signs — over eb:Messaging, the Body and every attachment;
 * aes128-gcm with xenc11 rsa-oaep), POSTs it, prints the answer and checks
 * that a Receipt came back for the message that was sent (with
 * --gateway-cert, that it is signed; for a signed message, that its NRR
 * digests are the ones we signed).
 *
 * The transport, file reading and the classification of the answer are
 * shared with `replay` and live in cli_replay.c (declared in cli.h); libcurl
 * is loaded only when the client is made (cli_curl.c), so --write-requests
 * and usage errors never load it.
 *
 * This file loads the inputs, sends and judges the answer; the command line
 * is parsed in cli_push_opts.c and the message built in cli_push_msg.c
 * (shared types in cli_push_int.h).
 *
 * Payload files of --spool-threshold bytes or more take the large path
 * (issue 14): never read into memory, they are staged per message into
 * spool files (cli_push_stage.c), encrypted in chunks (sender_gcm.c) and
 * sent — or written by --write-requests / --save-request — from the body's
 * ranges (cli_push_body.c) through libcurl's read callback.
 */
#include "cli_push_int.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <zlib.h>

#include "../mime/mime.h"
#include "../util/clock.h"
#include "../util/codec.h"
#include "../sender/sender.h"
#include "../wss/wss.h"
#include "../xml/xml.h"

#define CLI_PUSH_GZIP_CHUNK ((size_t)1 << 30) /* zlib avail_in is 32 bits */

/* Arena cleanup wrapper: buf_free() takes a typed pointer. */
void
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

/* The body's length: in memory, or the ranges of a large message. */
static uint64_t
cli_push_body_size(const struct cli_push_msg *m)
{
	return m->stream != NULL ? cli_push_body_len(m->stream) : m->body.len;
}

/* The whole body to f (a large message's ranges streamed): 0, or -1. */
static int
cli_push_fwrite_body(const struct cli_push_msg *m, FILE *f)
{
	if (m->stream != NULL)
		return cli_push_body_write(m->stream, f);
	return fwrite(m->body.data, 1, m->body.len, f) == m->body.len ? 0 : -1;
}

/* Writes what arg stands for to f: 0, or -1 (cli_push_write_file). */
typedef int (*cli_push_put_fn)(FILE *f, const void *arg);

/* cli_push_put_fn: arg is a message, its body. */
static int
cli_push_put_body(FILE *f, const void *arg)
{
	return cli_push_fwrite_body(arg, f);
}

/* cli_push_put_fn: arg is a string, its bytes. */
static int
cli_push_put_text(FILE *f, const void *arg)
{
	size_t len = strlen(arg);

	return fwrite(arg, 1, len, f) == len ? 0 : -1;
}

/* A new file at path with what put writes of arg. */
static int
cli_push_write_file(const char *path, cli_push_put_fn put, const void *arg,
		    struct err *err)
{
	FILE *f = fopen(path, "wb");
	int bad;

	if (f == NULL)
		return err_set(err, ERR_IO, NULL,
			       "could not create file \"%s\": %m", path);
	bad = put(f, arg) == -1;
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
	if (cli_push_write_file(path, cli_push_put_body, m, err) == -1 ||
	    cli_push_write_file(ct_path, cli_push_put_text, ct_line, err) == -1)
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
	int multi = strncasecmp(m->content_type, "multipart/", 10) == 0;
	struct cli_replay_body body = {m->content_type,
				       multi ? mime_hdrs : NULL,
				       m->body.data,
				       m->body.len,
				       NULL,
				       NULL,
				       NULL};
	struct cli_replay_answer ans;
	struct err err;

	err_clear(&err);
	if (m->stream != NULL) { /* the large path: read from the ranges */
		cli_push_body_rewind(m->stream);
		body.data = NULL;
		body.len = cli_push_body_len(m->stream);
		body.read = cli_push_body_read;
		body.seek = cli_push_body_seek;
		body.ctx = m->stream;
	}
	if (cli_replay_client_send(c, a, &body, &ans, &err) == -1) {
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

/* Read (and with --compress, gzip) the payload files below the spool
 * threshold; a larger file is only marked for the large path. */
static int
cli_push_load_payloads(struct arena *a, struct cli_push_opts *o,
		       struct err *err)
{
	size_t i;

	for (i = 0; i < o->n_payloads; i++) {
		struct cli_push_payload *p = &o->payloads[i];
		struct stat st;

		/* the large path: staged from the file for each message */
		if (stat(p->path, &st) == 0 && S_ISREG(st.st_mode) &&
		    (uint64_t)st.st_size >= o->spool_threshold) {
			p->big = 1;
			continue;
		}
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
		/* push signs with the key's method (sender_sign_message:
		 * rsa-sha256, eddsa-ed25519 or ecdsa-sha*); X25519 cannot */
		if (wss_sign_method_uri(o->key) == NULL) {
			wss_key_free(o->key);
			o->key = NULL;
			return err_set(err, ERR_CONF, NULL, "signing key \"%s\" "
			    "cannot sign (RSA, EC or Ed25519)", o->sign_key);
		}
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
	    cli_push_load_security(a, o, err) == -1 ||
	    cli_push_profile_apply(o, err) == -1)
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
		bad = fprintf(f, "%s\n%llu\n", m.content_type,
			      (unsigned long long)cli_push_body_size(&m)) < 0 ||
		      cli_push_fwrite_body(&m, f) == -1;
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
