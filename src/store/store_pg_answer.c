/*
 * store_pg_answer — as4gw_accept()'s answer (migration 006) into a struct
 * store_result: the outcome, a duplicate's stored receipt and counter, a
 * drift's stored field digests, the business key's holder.
 */
#include "store.h"

#include <stdint.h>

#include <libpq-fe.h>

#include "store_pg_int.h"

/* A DUPLICATE's stored receipt (copied into a) and counter into ret. */
static int
store_pg_duplicate(const PGresult *res, struct arena *a,
    struct store_result *ret, struct err *err)
{
	size_t n = (size_t)PQgetlength(res, 0, 1);

	if (PQgetisnull(res, 0, 1) || PQgetlength(res, 0, 2) != 8)
		return err_set(err, ERR_STORE, NULL, "could not store message:"
		    " unexpected answer from as4gw_accept()");
	ret->receipt = arena_memdup(a, PQgetvalue(res, 0, 1), n);
	if (ret->receipt == NULL)
		return err_set(err, ERR_INTERNAL, NULL,
		    "request memory exhausted copying the stored receipt");
	ret->receipt_len = n;
	ret->duplicates = (int64_t)store_pg_get(PQgetvalue(res, 0, 2), 8);
	return 0;
}

/* A DRIFT's stored field digests (NULL for an old row) copied into a. */
static int
store_pg_drift(const PGresult *res, struct arena *a, struct store_result *ret,
    struct err *err)
{
	size_t n = (size_t)PQgetlength(res, 0, 3);

	if (PQgetisnull(res, 0, 3))
		return 0;
	ret->stored_fields = arena_memdup(a, PQgetvalue(res, 0, 3), n);
	if (ret->stored_fields == NULL)
		return err_set(err, ERR_INTERNAL, NULL,
		    "request memory exhausted copying the stored digests");
	ret->stored_fields_len = n;
	return 0;
}

/* The business key's holder answered (text, NULL: none) copied into a. */
static int
store_pg_holder(const PGresult *res, struct arena *a, struct store_result *ret,
    struct err *err)
{
	ret->business_duplicate_of = NULL;
	if (PQgetisnull(res, 0, 4))
		return 0;
	ret->business_duplicate_of = arena_strndup(a, PQgetvalue(res, 0, 4),
	    (size_t)PQgetlength(res, 0, 4));
	if (ret->business_duplicate_of == NULL)
		return err_set(err, ERR_INTERNAL, NULL,
		    "request memory exhausted copying a message id");
	return 0;
}

/*
 * as4gw_accept()'s answer (binary: int4 outcome, bytea receipt, int8
 * duplicates, bytea field_hashes, text business_duplicate_of) into ret.
 * Absent after a full call: the row that made the INSERT conflict was
 * purged before the UPDATE; the partner retries.
 */
int
store_pg_outcome(const PGresult *res, const struct store_message *m,
    struct arena *a, struct store_result *ret, struct err *err)
{
	uint64_t outcome = 0;

	if (PQntuples(res) == 1 && PQnfields(res) == 5 &&
	    PQgetlength(res, 0, 0) == 4)
		outcome = store_pg_get(PQgetvalue(res, 0, 0), 4);
	ret->receipt = NULL;
	ret->receipt_len = 0;
	ret->duplicates = 0;
	if (outcome == STORE_NEW && m->receipt != NULL) {
		ret->receipt = m->receipt;
		ret->receipt_len = m->receipt_len;
	} else if (outcome == STORE_DUPLICATE) {
		if (store_pg_duplicate(res, a, ret, err) == -1)
			return -1;
	} else if (outcome == STORE_DRIFT) {
		if (store_pg_drift(res, a, ret, err) == -1)
			return -1;
	} else if (outcome == STORE_BUSINESS_DUP && m->receipt == NULL)
		return err_set(err, ERR_STORE, NULL, "could not store message:"
		    " a probe answered as a business duplicate");
	else if (outcome == STORE_ABSENT && m->receipt != NULL)
		return err_set(err, ERR_STORE, NULL,
		    "could not read inbox row: it disappeared");
	else if (outcome != STORE_DRIFT && outcome != STORE_ABSENT &&
	    outcome != STORE_BUSINESS_DUP)
		return err_set(err, ERR_STORE, NULL, "could not store message:"
		    " unexpected answer from as4gw_accept()");
	ret->outcome = (enum store_outcome)outcome;
	return store_pg_holder(res, a, ret, err);
}
