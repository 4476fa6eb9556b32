/*
 * fuzz_sbdh — libFuzzer driver for the SBDH parser (src/sbdh): sbdh_parse()
 * on the input as a payload's final bytes, under small XML limits and a
 * small value cap so that the limit paths are reached too.
 *
 * Besides "no crash, no leak, no undefined behaviour", a successful parse
 * must hand out what sbdh.h promises: every required field set, within the
 * value cap, without control characters; a failure is always ERR_EBMS
 * SBDH_EBMS_CODE (or ERR_INTERNAL when the arena runs out).  A broken
 * promise aborts, so libFuzzer keeps the input.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbdh/sbdh.h"
#include "util/arena.h"
#include "util/err.h"
#include "xml/xml.h"

#define FUZZ_SBDH_BUDGET (64u << 20)
#define FUZZ_SBDH_MAX_VALUE 256u

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken promise: say which and abort (libFuzzer saves the input). */
static __attribute__((noreturn)) void
fuzz_sbdh_die(const char *what)
{
	fprintf(stderr, "fuzz_sbdh: %s\n", what);
	abort();
}

/* A value sbdh.h promises: set (unless optional), capped, no controls. */
static void
fuzz_sbdh_value(const char *s, int optional, const char *what)
{
	size_t i, n;

	if (s == NULL) {
		if (!optional)
			fuzz_sbdh_die(what);
		return;
	}
	n = strlen(s);
	if (n == 0 || n > FUZZ_SBDH_MAX_VALUE)
		fuzz_sbdh_die(what);
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			fuzz_sbdh_die(what);
}

/* Once: libxml2's hooks and entity loader. */
int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	xml_global_init();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct arena *a = arena_new(FUZZ_SBDH_BUDGET);
	struct sbdh_limits lim;
	struct sbdh s;
	struct err err;

	if (a == NULL)
		return 0;
	err_clear(&err);
	sbdh_limits_default(&lim);
	lim.xml.max_depth = 32;
	lim.xml.max_nodes = 5000;
	lim.xml.max_memory = 16u << 20;
	lim.max_value_bytes = FUZZ_SBDH_MAX_VALUE;
	if (sbdh_parse(a, data, size, &lim, &s, &err) == 0) {
		fuzz_sbdh_value(s.header_version, 0, "header_version");
		fuzz_sbdh_value(s.sender.value, 0, "sender");
		fuzz_sbdh_value(s.sender.scheme, 1, "sender scheme");
		fuzz_sbdh_value(s.receiver.value, 0, "receiver");
		fuzz_sbdh_value(s.receiver.scheme, 1, "receiver scheme");
		fuzz_sbdh_value(s.instance_id, 0, "instance_id");
		fuzz_sbdh_value(s.creation, 0, "creation");
		fuzz_sbdh_value(s.document_type.value, 1, "document type");
		fuzz_sbdh_value(s.document_type.scheme, 1, "document scheme");
		fuzz_sbdh_value(s.process.value, 1, "process");
		fuzz_sbdh_value(s.country_c1, 1, "country");
		if (s.document_name == NULL)
			fuzz_sbdh_die("document_name");
	} else if (!(err.kind == ERR_EBMS && err.ebms_code != NULL &&
	    strcmp(err.ebms_code, SBDH_EBMS_CODE) == 0) &&
	    err.kind != ERR_INTERNAL) {
		fuzz_sbdh_die("failure of another kind");
	}
	arena_free(a);
	return 0;
}
