/*
 * certwatch — certificate hygiene (issue 12 item 5): every certificate a
 * configuration names — the gateway's own (signing pair, TLS, each leg's
 * decryption pair) and every partner signer certificate and trust anchor —
 * with its subject, fingerprint and validity, and whether it expires soon.
 * The one owner of that list and of the 30-day rule: `as4gw pmode-check`
 * prints it, `serve` logs a warning for each at start, on reload and once a
 * day, and exposes the days left in /metrics.  Reads files only; never
 * logs.  Depends on conf and wss.
 */
#ifndef AS4GW_CERTWATCH_H
#define AS4GW_CERTWATCH_H

#include <stddef.h>
#include <stdint.h>

#include "../conf/conf.h"
#include "../util/arena.h"
#include "../util/err.h"
#include "../wss/wss.h"

/* A certificate expiring within this many days is reported. */
#define CERTWATCH_SOON_DAYS 30

/* How often `serve` looks again (and at start and on every reload). */
#define CERTWATCH_INTERVAL_S 86400

enum certwatch_state {
	CERTWATCH_OK,
	CERTWATCH_SOON,       /* expires within CERTWATCH_SOON_DAYS */
	CERTWATCH_EXPIRED,
	CERTWATCH_NOT_YET,    /* not valid yet */
};

struct certwatch_cert {
	const char *role;     /* "signing" "tls" "decryption" "signer" "anchor" */
	const char *leg;      /* the P-Mode leg's id; NULL: the gateway's own */
	const char *path;     /* the file (conf memory) */
	int retiring;         /* a decryption pair marked retiring */
	struct wss_cert_info info;
};

/*
 * Every certificate in every certificate file c names (a file may hold
 * several): signing, tls, the default decryption pairs (<decryptionKeys>,
 * unless they are the signing pair), then per leg its own decryption pairs
 * (unless it uses the default), signers and anchors.  Arena memory.  -1 when a
 * file cannot be read: err names the first such file; *ret and *ret_n
 * still hold the certificates of every file that could be read.
 */
int certwatch_list(struct arena *a, const struct conf *c,
    struct certwatch_cert **ret, size_t *ret_n, struct err *err);

/* The state of x at now_ms (epoch). */
enum certwatch_state certwatch_state(const struct certwatch_cert *x,
    int64_t now_ms);

/* The instant certificates are judged at: <replay><verifyAt>, else now. */
int64_t certwatch_now(const struct conf *c);

#endif
