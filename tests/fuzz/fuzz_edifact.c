/*
 * fuzz_edifact — libFuzzer driver for the EDIFACT interchange header reader
 * (src/edifact: UNA service string advice, UNB).
 *
 * Input: the first bytes of a payload.  Besides "no crash, no read past the
 * input (ASan: libFuzzer's buffer is exactly sized), no undefined
 * behaviour", a parsed header must keep what edifact.h promises: required
 * values non-empty, every value within its ISO 9735 length and free of
 * control bytes, syntax UNOA..UNOY version 1..4; a refusal must be
 * EBMS:0004.  A broken promise aborts, so libFuzzer keeps the input.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edifact/edifact.h"
#include "util/err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken promise: say which and abort. */
static __attribute__((noreturn)) void
fuzz_edifact_die(const char *what)
{
	fprintf(stderr, "fuzz_edifact: %s\n", what);
	abort();
}

/* v: at most max bytes, non-empty when required, no control byte. */
static void
fuzz_edifact_value(const char *v, size_t max, int required)
{
	size_t n = strnlen(v, max + 1), i;

	if (n > max)
		fuzz_edifact_die("value too long");
	if (required && n == 0)
		fuzz_edifact_die("required value empty");
	for (i = 0; i < n; i++)
		if ((unsigned char)v[i] < 0x20 || (unsigned char)v[i] == 0x7f)
			fuzz_edifact_die("control byte in a value");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct edifact_unb u;
	struct err err;
	int r;

	err_clear(&err);
	r = edifact_unb_parse(data, size, &u, &err);
	if (r == -1 && (err.kind != ERR_EBMS || err.ebms_code == NULL ||
	    strcmp(err.ebms_code, "EBMS:0004") != 0))
		fuzz_edifact_die("refusal is not EBMS:0004");
	if (r == 0 && edifact_is_interchange(data, size))
		fuzz_edifact_die("an interchange answered as none");
	if (r != 1)
		return 0;
	if (strncmp(u.syntax, "UNO", 3) != 0 || u.syntax[3] < 'A' ||
	    u.syntax[3] > 'Y' || u.syntax[4] != '\0' || u.version < 1 ||
	    u.version > 4)
		fuzz_edifact_die("syntax identifier");
	fuzz_edifact_value(u.sender, EDIFACT_ID_MAX, 1);
	fuzz_edifact_value(u.sender_qual, EDIFACT_QUAL_MAX, 0);
	fuzz_edifact_value(u.recipient, EDIFACT_ID_MAX, 1);
	fuzz_edifact_value(u.recipient_qual, EDIFACT_QUAL_MAX, 0);
	fuzz_edifact_value(u.reference, EDIFACT_REF_MAX, 1);
	return 0;
}
