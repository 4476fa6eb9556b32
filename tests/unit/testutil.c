#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *
testutil_shared_dir(void)
{
	static char dir[4096];
	const char *env = getenv("AS4GW_SHARED");
	struct stat st;

	if (env != NULL && *env != '\0')
		(void)snprintf(dir, sizeof(dir), "%s", env);
	else
		(void)snprintf(dir, sizeof(dir), "%s/../shared", AS4GW_SOURCE_DIR);
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return NULL;
	return dir;
}

static char *
testutil_read_abs(const char *path, size_t *ret_len)
{
	FILE *f = fopen(path, "rb");
	char *data = NULL;
	long n;

	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) != 0)
		goto out;
	data = malloc((size_t)n + 1);
	if (data == NULL)
		goto out;
	if (fread(data, 1, (size_t)n, f) != (size_t)n) {
		free(data);
		data = NULL;
		goto out;
	}
	data[n] = '\0';
	if (ret_len != NULL)
		*ret_len = (size_t)n;
out:
	(void)fclose(f);
	return data;
}

char *
testutil_read(const char *path, size_t *ret_len)
{
	char full[8192];

	if (path[0] == '/')
		return testutil_read_abs(path, ret_len);
	if (snprintf(full, sizeof(full), "%s/%s", AS4GW_SOURCE_DIR, path) >=
	    (int)sizeof(full))
		return NULL;
	return testutil_read_abs(full, ret_len);
}

char *
testutil_read_shared(const char *rel, size_t *ret_len)
{
	const char *dir = testutil_shared_dir();
	char full[8192];

	if (dir == NULL ||
	    snprintf(full, sizeof(full), "%s/%s", dir, rel) >= (int)sizeof(full))
		return NULL;
	return testutil_read_abs(full, ret_len);
}

void
testutil_skip_note(const char *why)
{
	fprintf(stderr, "SKIPPED (loudly): %s\n", why);
}
