/*
 * conf_int — internals shared by the files of the conf module only
 * (conf.c: the load; conf_gateway.c: the gateway settings; conf_leg.c: the
 * P-Mode legs and the cross-leg checks).  Only the .c files of src/conf/
 * include this header; the contract for everyone else is conf.h, which this
 * does not change.
 *
 * Strings handed out by the helpers below are malloc'd into fields of the
 * struct conf being built (owned by it, freed by conf_free()); scratch
 * copies come from conf_ctx.a and die with the load.
 */
#ifndef AS4GW_CONF_INT_H
#define AS4GW_CONF_INT_H

#include <libxml/tree.h>

#include "conf.h"
#include "../util/arena.h"
#include "../util/err.h"

#define CONF_NS "urn:as4gw:config:1"
#define CONF_DAYS_MAX 36500ULL

/* A file the configuration names, checked for readability once the
 * structure is known to be right (environment problems come last). */
struct conf_file {
	struct conf_file *next;
	long line;            /* of the element naming it */
	const char *what;     /* "signing key", "pmode \"a\": trust anchor" */
	const char *path;     /* resolved; owned by the struct conf */
};

/* State of one conf_load(): where messages point and what is being built. */
struct conf_ctx {
	const char *path;     /* the file, as given */
	char *dir;            /* its directory and '/', or NULL (cwd) */
	struct arena *a;      /* scratch: text and attribute copies */
	struct conf *c;
	struct err *err;
	long *leg_lines;      /* line of each <pmode>, for cross-leg messages */
	struct conf_file *files, **files_tail;   /* in the arena, in order */
};

/* conf.c: helpers for reading the configuration document. */

/* Record "FILE:LINE: what" (or "FILE: what" when line <= 0) as ERR_CONF;
 * returns -1. */
int conf_fail_line(const struct conf_ctx *x, long line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#ifdef __clang_analyzer__
/* Always -1, for the analyzer (as err_set in err.h); conf.c defines it as
 * (conf_fail_line) so that this does not expand there. */
#define conf_fail_line(...) (conf_fail_line(__VA_ARGS__), -1)
#endif

/* Fail at the line of node (NULL: no line). */
#define conf_fail(x, node, ...) \
	conf_fail_line((x), (node) != NULL ? xmlGetLineNo(node) : -1L, \
	    __VA_ARGS__)

/* Allocation failure; returns -1. */
int conf_oom(const struct conf_ctx *x);

/* Trimmed text of element n into *ret (malloc'd); empty is refused. */
int conf_elem_text(const struct conf_ctx *x, const xmlNode *n, char **ret);

/* Text of parent's child element `name`: 0 absent (*ret untouched), 1 set,
 * -1 error. */
int conf_text(const struct conf_ctx *x, const xmlNode *parent,
    const char *name, char **ret);

/* Attribute `name` of n, trimmed, as a scratch copy; NULL if absent. */
const char *conf_attr_get(const struct conf_ctx *x, const xmlNode *n,
    const char *name);

/* Attribute `name` of n, trimmed, into *ret (malloc'd); absent leaves *ret
 * alone.  0 ok, -1 error (empty values are refused). */
int conf_attr(const struct conf_ctx *x, const xmlNode *n, const char *name,
    char **ret);

/* Decimal text of parent's child `name` in [min, max] into *ret: 0 absent,
 * 1 set, -1 error. */
int conf_uint(const struct conf_ctx *x, const xmlNode *parent,
    const char *name, unsigned long long min, unsigned long long max,
    unsigned long long *ret);

/* A number of days (parent's child `name`, 1 .. CONF_DAYS_MAX) into
 * *ret: as conf_uint (*ret untouched unless 1). */
int conf_days(const struct conf_ctx *x, const xmlNode *parent,
    const char *name, int *ret);

/* Malloc'd path: rel as is if absolute or the file has no directory part,
 * else joined to the config directory; NULL on allocation failure. */
char *conf_resolve(const struct conf_ctx *x, const char *rel);

/* Resolve *p in place against the config file's directory (absolute
 * paths and a file without directory part stay as they are). */
int conf_resolve_in_place(const struct conf_ctx *x, char **p);

/* Queue path (named by element n, described by what; both must outlive the
 * load: what in x->a or static, path in x->c) for the readability check
 * that ends the load. */
int conf_file_later(struct conf_ctx *x, const xmlNode *n, const char *what,
    const char *path);

/*
 * A <certificate> + <key> element n (<tls>, <signing>, a leg's
 * <decryption>): both or neither, trimmed, resolved into *cert and *key,
 * queued for the file check.  prefix starts every message ("" or
 * "pmode \"a\": ").
 */
int conf_pair(struct conf_ctx *x, const xmlNode *n, const char *prefix,
    char **cert, char **key);

/* conf_leg.c: P-Mode legs. */

/* Every <pmode> of root into x->c->legs (and their lines into
 * x->leg_lines); at least one is required. */
int conf_leg_parse(struct conf_ctx *x, const xmlNode *root);

/* conf_route.c: unique leg ids; no two legs a message could both match,
 * except legs on one route (the same match fields and parties, the same
 * signing policy) that AgreementRef/@pmode tells apart. */
int conf_route_check(const struct conf_ctx *x);

/* Free the strings of leg (not the struct); accepts NULL. */
void conf_leg_free(struct pmode_leg *leg);

/* conf_peppol.c: a leg's <peppol>. */

/* <peppol> of the <pmode> node into leg->peppol (absent: stays NULL). */
int conf_peppol_parse(const struct conf_ctx *x, const xmlNode *node,
    struct pmode_leg *leg);

/* Free p and what it owns; accepts NULL. */
void conf_peppol_free(struct conf_peppol *p);

/* conf_keys.c: decryption pairs. */

/* <gateway><decryptionKeys> into x->c->decrypt, else one copy of the
 * signing pair (read before). */
int conf_keys_gateway(struct conf_ctx *x, const xmlNode *gw);

/* The <decryption> pairs of a leg's <security> sec (may be NULL) into
 * leg->decrypt, else copies of the gateway's default pairs. */
int conf_keys_leg(struct conf_ctx *x, const xmlNode *sec,
    struct pmode_leg *leg);

/* Free the strings of v[0..n). */
void conf_keys_free(struct conf_keypair *v, size_t n);

/* <signing> (id "default" unless given) and <signingKeys><signing id>
 * of <gateway> into x->c->signing; sign_cert / sign_key alias the
 * first. */
int conf_keys_signing(struct conf_ctx *x, const xmlNode *gw);

/* The index in x->c->signing of the pair with this id, or -1. */
int conf_keys_signing_find(const struct conf_ctx *x, const char *id);

/* Free the strings of v[0..n). */
void conf_keys_signing_free(struct conf_signkey *v, size_t n);

/* Every child `name` of parent: a file name, resolved, into the malloc'd
 * array *ret of *ret_n, queued for the file check; at least one. */
int conf_leg_files(struct conf_ctx *x, const struct pmode_leg *leg,
    const xmlNode *parent, const char *name, char ***ret, size_t *ret_n);

/* Free an array of n strings and the array; accepts NULL. */
void conf_leg_strv_free(char **v, size_t n);

/* conf_network.c: a leg's <security><network> (issue 12). */

/* Read net into a new *ret (owned by the leg). */
int conf_network_parse(struct conf_ctx *x, const struct pmode_leg *leg,
    const xmlNode *net, struct conf_network **ret);

/* Free a network; accepts NULL. */
void conf_network_free(struct conf_network *n);

/* conf_ops.c: the operations settings of <gateway>. */

/* <trustedProxies>: each <proxy> an address or CIDR block. */
int conf_proxies(const struct conf_ctx *x, const xmlNode *gw);

/* <purge intervalSeconds batch undelivered>. */
int conf_purge(const struct conf_ctx *x, const xmlNode *gw);

/* <revocation>: the revocation engine's limits. */
int conf_revocation(const struct conf_ctx *x, const xmlNode *gw);

/* conf_gateway.c: the <gateway> section, every setting. */
int conf_gateway(struct conf_ctx *x, const xmlNode *gw);

#endif
