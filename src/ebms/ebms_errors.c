/*
 * ebms_errors — the catalogue of standard ebMS error codes: ebMS3 Core
 * 6.7.1 (processing), 6.7.2 (security), 6.7.3 (reliable messaging) and the
 * AS4 profile's additions (AS4 3.2 and 3.1: 0301-0303).  Short descriptions,
 * recommended severities and categories exactly as in those tables.
 */
#include "ebms.h"

#include <string.h>

static const struct ebms_error_def ebms_errors[] = {
	/* ebMS3 Core 6.7.1 */
	{"EBMS:0001", "ValueNotRecognized", "failure", "Content"},
	{"EBMS:0002", "FeatureNotSupported", "warning", "Content"},
	{"EBMS:0003", "ValueInconsistent", "failure", "Content"},
	{"EBMS:0004", "Other", "failure", "Content"},
	{"EBMS:0005", "ConnectionFailure", "failure", "Communication"},
	{"EBMS:0006", "EmptyMessagePartitionChannel", "warning", "Communication"},
	{"EBMS:0007", "MimeInconsistency", "failure", "Unpackaging"},
	{"EBMS:0008", "FeatureNotSupported", "failure", "Unpackaging"},
	{"EBMS:0009", "InvalidHeader", "failure", "Unpackaging"},
	{"EBMS:0010", "ProcessingModeMismatch", "failure", "Processing"},
	{"EBMS:0011", "ExternalPayloadError", "failure", "Content"},
	/* ebMS3 Core 6.7.2 */
	{"EBMS:0101", "FailedAuthentication", "failure", "Processing"},
	{"EBMS:0102", "FailedDecryption", "failure", "Processing"},
	{"EBMS:0103", "PolicyNoncompliance", "failure", "Processing"},
	/* ebMS3 Core 6.7.3 */
	{"EBMS:0201", "DysfunctionalReliability", "failure", "Processing"},
	{"EBMS:0202", "DeliveryFailure", "failure", "Communication"},
	/* AS4 profile 3.2 (reception awareness) and 3.1 (compression) */
	{"EBMS:0301", "MissingReceipt", "failure", "Communication"},
	{"EBMS:0302", "InvalidReceipt", "failure", "Communication"},
	{"EBMS:0303", "DecompressionFailure", "failure", "Communication"},
};

#define EBMS_N_ERRORS (sizeof(ebms_errors) / sizeof(ebms_errors[0]))
#define EBMS_OTHER 3  /* index of EBMS:0004 */

/* The definition for code, or the one for EBMS:0004 (Other) if unknown. */
const struct ebms_error_def *
ebms_error_find(const char *code)
{
	size_t i;

	for (i = 0; code != NULL && i < EBMS_N_ERRORS; i++)
		if (strcmp(ebms_errors[i].code, code) == 0)
			return &ebms_errors[i];
	return &ebms_errors[EBMS_OTHER];
}
