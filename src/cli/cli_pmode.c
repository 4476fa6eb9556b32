/*
 * `as4gw pmode-check -c FILE`: load and check a configuration the way
 * `serve` would, and list its P-Mode legs.  Exit 0 when the file is usable,
 * 1 with the one-line problem on stderr when not, 2 on a usage error.
 */
#include "cli.h"

#include <getopt.h>
#include <stdio.h>

#include "../conf/conf.h"
#include "../xml/xml.h"

/* Print the usage line to f. */
static void
cli_pmode_usage(FILE *f)
{
	(void)fprintf(f, "usage: as4gw pmode-check -c FILE\n");
}

/* One party: its PartyId (and type) and its role, or "any role". */
static void
cli_pmode_party(const struct conf_party *p)
{
	if (p->party_type != NULL)
		(void)printf("%s (type %s)", p->party_id, p->party_type);
	else
		(void)printf("%s", p->party_id);
	(void)printf(" as %s", p->role != NULL ? p->role : "any role");
}

/* One line per leg: id, parties, service, action, security policy. */
static void
cli_pmode_print_leg(const struct pmode_leg *l)
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
	(void)printf(", signing %s, encryption %s\n",
	    conf_policy_name(l->signing), conf_policy_name(l->encryption));
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
	(void)printf("%s: ok\n", file);
	for (i = 0; i < c->n_legs; i++)
		cli_pmode_print_leg(&c->legs[i]);
	rc = fflush(stdout) == 0 ? 0 : 1;
out:
	conf_free(c);
	return rc;
}
