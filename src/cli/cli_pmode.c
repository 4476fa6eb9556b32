/*
 * `as4gw pmode-check -c FILE`: load and check a configuration the way
 * `serve` would, and list its P-Mode legs, one line each, with their
 * security (policies, the signer certificate and trust anchor files, the
 * decryption key file, algorithms, timestamp skew; conf does not parse
 * certificates, so files are listed by name).  A replay verifyAt instant
 * gets a WARNING line on stderr.  Exit 0 when the file is usable, 1 with the
 * one-line problem on stderr when not, 2 on a usage error.
 */
#include "cli.h"

#include <getopt.h>
#include <stdio.h>

#include <string.h>

#include "../conf/conf.h"
#include "../util/clock.h"
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

/* The WS-Security settings of a leg (issue 3), continuing its line. */
static void
cli_pmode_security(const struct conf *c, const struct pmode_leg *l)
{
	(void)printf(", signing %s, encryption %s",
	    conf_policy_name(l->signing), conf_policy_name(l->encryption));
	cli_pmode_files("signer certificates", l->signer_certs,
	    l->n_signer_certs);
	cli_pmode_files("trust anchors", l->trust_anchors, l->n_trust_anchors);
	if (l->n_trust_crls > 0)
		cli_pmode_files("CRLs", l->trust_crls, l->n_trust_crls);
	(void)printf(", decryption key %s (certificate %s%s)", l->decrypt_key,
	    l->decrypt_cert, strcmp(l->decrypt_key, c->sign_key) == 0 &&
	    strcmp(l->decrypt_cert, c->sign_cert) == 0 ?
	    "; the gateway's signing pair" : "");
	(void)printf(", algorithms %s, timestamp skew %us",
	    l->algorithms != NULL ? l->algorithms : "default",
	    l->timestamp_skew_s);
}

/* One line per leg: id, parties, service, action, security. */
static void
cli_pmode_print_leg(const struct conf *c, const struct pmode_leg *l)
{
	(void)printf("  %s: ", l->id);
	cli_pmode_party(&l->from);
	(void)printf(" -> ");
	cli_pmode_party(&l->to);
	(void)printf(", service %s", l->service);
	if (l->service_type != NULL)
		(void)printf(" (type %s)", l->service_type);
	(void)printf(", action %s", l->action);
	if (l->agreement != NULL)
		(void)printf(", agreement %s", l->agreement);
	cli_pmode_security(c, l);
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
	    "certificate validity and wsu:Timestamp freshness are evaluated at "
	    "that instant, not now; never use this in production\n", at);
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
	cli_pmode_warn_replay(c);
	(void)printf("%s: ok\n", file);
	for (i = 0; i < c->n_legs; i++)
		cli_pmode_print_leg(c, &c->legs[i]);
	rc = fflush(stdout) == 0 ? 0 : 1;
out:
	conf_free(c);
	return rc;
}
