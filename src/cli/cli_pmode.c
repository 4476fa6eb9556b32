/*
 * `as4gw pmode-check -c FILE`: load and check a configuration the way
 * `serve` and its reload do — the file, then every key and certificate
 * through gateway_new() (key/certificate match, parse, trust material) —
 * and list its P-Mode legs, one line each, with their security (policies,
 * the signer certificate and trust anchor files, the decryption pairs
 * with their fingerprints and key types, the profile and the algorithms
 * it allows, the gateway pair that signs its Receipts, timestamp skew,
 * Peppol checks),
 * then one line per certificate file with the subject, serial and
 * validity of each certificate in it.  A replay
 * verifyAt instant, and a certificate expired, not yet valid or expiring
 * within 30 days (certwatch.h, the rule serve logs by), get a WARNING
 * line on stderr.  Exit 0 when serve would
 * start with the file, 1 with the one-line problem on stderr when not, 2 on
 * a usage error.
 */
#include "cli.h"

#include <getopt.h>
#include <stdio.h>

#include <string.h>

#include "../certwatch/certwatch.h"
#include "../conf/conf.h"
#include "../gateway/gateway.h"
#include "../util/clock.h"
#include "../wss/wss.h"
#include "../xml/xml.h"

/* Print the usage line to f. */
static void
cli_pmode_usage(FILE *f)
{
	(void)fprintf(f, "usage: as4gw pmode-check -c FILE\n");
}

/* One party: its PartyIds (and types, " or " between them) and its role,
 * or "any role". */
static void
cli_pmode_party(const struct conf_party *p)
{
	size_t i;

	if (p->n_ids == 0)
		(void)printf("any network member");
	for (i = 0; i < p->n_ids; i++) {
		if (i > 0)
			(void)printf(" or ");
		if (p->ids[i].type != NULL)
			(void)printf("%s (type %s)", p->ids[i].value,
			    p->ids[i].type);
		else
			(void)printf("%s", p->ids[i].value);
	}
	(void)printf(" as %s", p->role != NULL ? p->role : "any role");
}

/* ", label f1 f2" or ", label none": a leg's list of files. */
static void
cli_pmode_files(const char *label, char *const *v, size_t n)
{
	size_t i;

	(void)printf(", %s", label);
	if (n == 0)
		(void)printf(" none");
	for (i = 0; i < n; i++)
		(void)printf(" %s", v[i]);
}

/*
 * A leg's decryption pairs: ", decryption pairs KEY (certificate CERT,
 * sha256:0123456789abcdef[, retiring]), ..." and where they come from when
 * not from the leg.  The fingerprint prefix is what EBMS:0102 log lines
 * name (wss_keyring.c).
 */
static void
cli_pmode_pairs(const struct conf *c, const struct pmode_leg *l)
{
	char fp[65];
	size_t i;

	(void)printf(", decryption %s", l->n_decrypt > 1 ? "pairs" : "pair");
	for (i = 0; i < l->n_decrypt; i++) {
		if (wss_cert_file_sha256(l->decrypt[i].cert, fp) == -1)
			(void)snprintf(fp, sizeof(fp), "?");
		(void)printf("%s key %s (certificate %s, sha256:%.16s%s)",
		    i > 0 ? "," : "", l->decrypt[i].key, l->decrypt[i].cert,
		    fp, l->decrypt[i].retiring ? ", retiring" : "");
	}
	if (l->decrypt_default)
		(void)printf("%s", c->decrypt_signing ? "; the gateway's "
		    "signing pair" : "; the gateway's decryptionKeys");
}

/*
 * Issue 13: the key types of a leg's decryption pairs (those its
 * algorithms cannot use are not used by the leg: gateway_keys.c) and the
 * gateway pair that signs its Receipts and eb:Errors, with its subject.
 */
static void
cli_pmode_keys(const struct conf *c, const struct pmode_leg *l,
    const struct gateway_leg *gl)
{
	struct arena *a = arena_new(0);
	struct wss_cert_info *info = NULL;
	const struct conf_signkey *sk = &c->signing[gl->sign_index];
	const char *method;
	struct wss_keytype kt;
	size_t i, n = 0;

	(void)printf(", decryption key types");
	for (i = 0; i < l->n_decrypt; i++) {
		if (wss_keytype_file(l->decrypt[i].cert, &kt, NULL) == -1)
			(void)snprintf(kt.name, sizeof(kt.name), "?");
		(void)printf("%s %s%s", i > 0 ? "," : "", kt.name,
		    (wss_keytype_dec_algs(kt.kind) & gl->policy.algs) == 0 ?
		    " (not used by this leg)" : "");
	}
	wss_keytype_of(gl->sign, &kt);
	if (a != NULL)
		(void)wss_cert_file_info(a, sk->cert, &info, &n, NULL);
	method = wss_sign_method_uri(gl->sign);
	(void)printf(", receipt key %s (%s, subject %s, certificate %s, "
	    "signs %s)", sk->id, kt.name, n > 0 ? info[0].subject : "?",
	    sk->cert, method != NULL ? method : "?");
	arena_free(a);
}

/* A <network> leg's trust (issue 12), continuing its line. */
static void
cli_pmode_network(const struct conf_network *n)
{
	static const char *const src[] = { "CN", "subject attribute",
		"subjectAltName URI", "subjectAltName DNS name",
		"subjectAltName email" };

	cli_pmode_files("network anchors", n->anchors, n->n_anchors);
	(void)printf(", PartyId = the certificate's %s%s%s%s%s",
	    src[n->party_source], n->party_attribute != NULL ? " " : "",
	    n->party_attribute != NULL ? n->party_attribute : "",
	    n->party_type != NULL ? " as type " : "",
	    n->party_type != NULL ? n->party_type : "");
}

/* The WS-Security settings of a leg (issue 3), continuing its line. */
static void
cli_pmode_security(const struct conf *c, const struct pmode_leg *l,
    const struct gateway_leg *gl)
{
	char algs[512];

	(void)printf(", signing %s, encryption %s",
	    conf_policy_name(l->signing), conf_policy_name(l->encryption));
	if (l->network != NULL) {
		cli_pmode_network(l->network);
	} else {
		cli_pmode_files("signer certificates", l->signer_certs,
		    l->n_signer_certs);
		cli_pmode_files("trust anchors", l->trust_anchors,
		    l->n_trust_anchors);
	}
	if (l->n_trust_crls > 0)
		cli_pmode_files("CRLs", l->trust_crls, l->n_trust_crls);
	cli_pmode_pairs(c, l);
	cli_pmode_keys(c, l, gl);
	wss_alg_names(gl->policy.algs, algs, sizeof(algs));
	(void)printf(", profile %s, algorithms %s%s, timestamp skew %us",
	    conf_profile_name(l->profile), l->algorithms != NULL ? "(listed) " :
	    "", algs, l->timestamp_skew_s);
	if (l->timestamp == CONF_REQUIRED)
		(void)printf(", signed wsu:Timestamp required");
	if (l->peppol != NULL)   /* README "Peppol" */
		(void)printf(", Peppol checks (document types: %zu, processes: "
		    "%zu; 0 = any)", l->peppol->n_doc_types,
		    l->peppol->n_processes);
	if (l->revocation != CONF_NEVER)
		(void)printf(", live revocation %s",
		    l->revocation == CONF_REQUIRED ? "required" : "preferred");
}

/* One line per leg: id, parties, service, action, security. */
static void
cli_pmode_print_leg(const struct conf *c, const struct pmode_leg *l,
    const struct gateway_leg *gl)
{
	(void)printf("  %s: ", l->id);
	cli_pmode_party(&l->from);
	(void)printf(" -> ");
	cli_pmode_party(&l->to);
	(void)printf(", service %s", l->service != NULL ? l->service : "any");
	if (l->service_type != NULL)
		(void)printf(" (type %s)", l->service_type);
	if (l->n_services > 1)
		(void)printf(" and %zu more", l->n_services - 1);
	(void)printf(", action %s", l->action != NULL ? l->action : "any");
	if (l->n_actions > 1)
		(void)printf(" and %zu more", l->n_actions - 1);
	if (l->agreement != NULL)
		(void)printf(", agreement %s", l->agreement);
	cli_pmode_security(c, l, gl);
	/* issue 14 item 4: the body cap that applies to the leg */
	(void)printf(", max body %llu bytes (%s)", l->max_body_bytes != 0 &&
	    l->max_body_bytes < c->limits.max_body_bytes ?
	    (unsigned long long)l->max_body_bytes :
	    (unsigned long long)c->limits.max_body_bytes,
	    l->max_body_bytes != 0 ? "leg" : "gateway");
	/* README "Business-level duplicates" */
	(void)printf(", business duplicates %s",
	    l->business_duplicates == CONF_BUSINESS_REFUSE ? "refuse" :
	    l->business_duplicates == CONF_BUSINESS_OFF ? "off" : "flag");
	(void)printf("\n");
}

/* verifyAt set: say loudly (stderr, so stdout stays "ok" + one line per
 * leg) that validity and freshness are not checked against now. */
static void
cli_pmode_warn_replay(const struct conf *c)
{
	char at[CLOCK_ISO_LEN];

	if (c->verify_at_ms == 0)
		return;
	clock_iso8601(c->verify_at_ms, at);
	(void)fprintf(stderr, "WARNING: replay verifyAt %s is set: "
	    "certificate validity, wsu:Timestamp freshness and eb:Timestamp age "
	    "are evaluated at that instant, not now; never use this in "
	    "production\n", at);
}

/* One line for a certificate (its role says what it is for: "signing",
 * "pmode ID signer", ...); WARNING on stderr when certwatch says it needs
 * attention at now_ms (the same rule serve logs by). */
static void
cli_pmode_cert(struct arena *a, const struct certwatch_cert *x,
    int64_t now_ms)
{
	char from[CLOCK_ISO_LEN], to[CLOCK_ISO_LEN];
	const char *role = arena_sprintf(a, "%s%s%s%s", x->leg != NULL ?
	    "pmode " : "", x->leg != NULL ? x->leg : "", x->leg != NULL ?
	    " " : "", x->role);

	if (role != NULL && x->retiring)
		role = arena_sprintf(a, "%s (retiring)", role);
	if (role == NULL)
		role = x->role;
	clock_iso8601(x->info.not_before_ms, from);
	clock_iso8601(x->info.not_after_ms, to);
	(void)printf("  certificate %s %s: subject %s, serial %s, "
	    "valid %s to %s\n", role, x->path, x->info.subject, x->info.serial,
	    from, to);
	switch (certwatch_state(x, now_ms)) {
	case CERTWATCH_EXPIRED:
	case CERTWATCH_NOT_YET:
		(void)fprintf(stderr, "WARNING: certificate %s (%s, %s) "
		    "is not valid now: valid %s to %s\n", x->path, role,
		    x->info.subject, from, to);
		break;
	case CERTWATCH_SOON:
		(void)fprintf(stderr, "WARNING: certificate %s (%s, %s) "
		    "expires %s\n", x->path, role, x->info.subject, to);
		break;
	default:
		break;
	}
}

/*
 * Load every key and certificate as serve and its reload do (gateway_new:
 * signing pairs, decryption pairs, signers, anchors, CRLs) into *ret.
 * 0 ok, -1 with the one-line problem printed ("FILE: problem (detail)").
 */
static int
cli_pmode_load_keys(const char *file, const struct conf *c,
    struct gateway **ret)
{
	struct err err;
	char line[1024];

	err_clear(&err);
	if (gateway_new(c, ret, &err) == 0)
		return 0;
	(void)snprintf(line, sizeof(line), "%s: %s%s%s%s", file, err.msg,
	    err.detail[0] != '\0' ? " (" : "", err.detail,
	    err.detail[0] != '\0' ? ")" : "");
	cli_fail("", line);
	return -1;
}

/* One line per certificate of every certificate file the configuration
 * names (certwatch.h), validity judged at verifyAt or now.  0 ok, -1
 * unreadable file (said on stderr). */
static int
cli_pmode_certs(const struct conf *c)
{
	int64_t now = certwatch_now(c);
	struct arena *a = arena_new(0);
	struct certwatch_cert *v = NULL;
	struct err err;
	size_t i, n = 0;
	int rc;

	if (a == NULL)
		return -1;
	err_clear(&err);
	rc = certwatch_list(a, c, &v, &n, &err);
	for (i = 0; i < n; i++)
		cli_pmode_cert(a, &v[i], now);
	if (rc == -1)
		cli_fail("", err.msg);
	arena_free(a);
	return rc;
}

/* The pmode-check subcommand; see the file comment. */
int
cli_pmode_check(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *file = NULL;
	struct conf *c = NULL;
	struct gateway *gw = NULL;
	struct err err;
	size_t i;
	int ch, rc = 2;

	err_clear(&err);
	optind = 0;     /* glibc: full re-initialisation for a new argv */
	while ((ch = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'c': file = optarg; break;
		case 'h': cli_pmode_usage(stdout); rc = 0; goto out;
		default: cli_pmode_usage(stderr); goto out;
		}
	}
	if (file == NULL || optind != argc) {
		cli_pmode_usage(stderr);
		goto out;
	}
	xml_global_init();
	if (conf_load(file, &c, &err) == -1) {
		(void)fprintf(stderr, "%s\n", err.msg);
		rc = 1;
		goto out;
	}
	if (cli_pmode_load_keys(file, c, &gw) == -1) {
		rc = 1;
		goto out;
	}
	cli_pmode_warn_replay(c);
	(void)printf("%s: ok\n", file);
	for (i = 0; i < c->n_legs; i++)
		cli_pmode_print_leg(c, &c->legs[i], &gw->legs[i]);
	if (cli_pmode_certs(c) == -1) {
		rc = 1;
		goto out;
	}
	rc = fflush(stdout) == 0 ? 0 : 1;
out:
	gateway_free(gw);
	conf_free(c);
	return rc;
}
