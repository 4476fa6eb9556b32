/* store_sql — migrations embedded from sql/<backend>/NNN_name.sql, in order. */
#ifndef AS4GW_STORE_SQL_H
#define AS4GW_STORE_SQL_H

#include <stddef.h>

struct store_sql {
	const char *name;  /* "sqlite/001_inbox.sql" */
	const char *text;
};

extern const struct store_sql store_sql_files[];
extern const size_t store_sql_count;

#endif
