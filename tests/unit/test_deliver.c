/*
 * Unit tests for src/deliver that need no backend: the back-off, the
 * directory name, invalid options, message.json's parties and properties,
 * which --exec commands run without a shell, the sweep of leftovers.  The
 * targets and the run loop against a real store: test_deliver_dir.c,
 * test_deliver_exec.c, test_deliver_run.c (testdeliver.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


#include "testdeliver.h"

/* message.json: party type and id from the leg even when the value holds
 * ':'; a name the configuration does not know is not split; a quoted
 * "CompressionType" inside a property value is not a key. */
static void
t_json_parties(void **state)
{
	struct conf_party_id id = { TS("a:b"), TS("t:x") };
	struct pmode_leg leg = {
		.id = TS("L"), .from = { &id, 1, TS("t:x:a:b"), NULL },
		.to = { &id, 1, TS("t:x:a:b"), TS("r") }, .service = TS("s"),
	};
	struct conf conf = { .legs = &leg, .n_legs = 1 };
	struct store_part part = { 0, "c", "m",
	    "{\"x\": \"\\\"CompressionType\\\": 1\"}", (const unsigned char *)"z",
	    1 };
	struct store_delivery d = { .message_id = "m", .from_party = "t:x:a:b",
	    .to_party = "other:p", .service = "s", .action = "a",
	    .pmode_id = "L", .parts = &part, .n_parts = 1 };
	struct buf b = { 0 };

	(void)state;
	assert_int_equal(deliver_json(&b, &d, &conf), 0);
	assert_int_equal(buf_append(&b, "", 1), 0);
	assert_non_null(strstr(b.data, "\"from_party\": {\"type\": \"t:x\", "
	    "\"id\": \"a:b\", \"role\": null}"));
	assert_non_null(strstr(b.data, "\"to_party\": {\"type\": null, "
	    "\"id\": null, \"role\": null}"));
	assert_non_null(strstr(b.data, "\"service_type\": null"));
	assert_non_null(strstr(b.data, "\"transformations\": []"));
	buf_free(&b);
	d.pmode_id = "gone";  /* a leg no longer configured */
	d.to_party = "plain";
	assert_int_equal(deliver_json(&b, &d, &conf), 0);
	assert_int_equal(buf_append(&b, "", 1), 0);
	assert_non_null(strstr(b.data, "\"from_party\": {\"type\": null, "
	    "\"id\": null, \"role\": null}"));
	assert_non_null(strstr(b.data, "\"to_party\": {\"type\": null, "
	    "\"id\": \"plain\", \"role\": null}"));
	buf_free(&b);
}

/* --exec: one program path runs without a shell; anything else with. */
static void
t_exec_direct(void **state)
{
	static const struct { const char *cmd; int direct; } t[] = {
		{ "/usr/local/bin/backend.sh", 1 }, { "./hand-off", 1 },
		{ "true", 1 }, { "/opt/a+b/x_y-1.2,3@%:", 1 },
		{ "cp -r \"$1\" /x", 0 }, { "/bin/x arg", 0 },
		{ "/bin/x;rm", 0 }, { "$HOME/x", 0 }, { "~/x", 0 },
		{ "A=1", 0 }, { "x|y", 0 }, { "x*", 0 }, { "", 0 },
		{ "x\ty", 0 }, { "'x'", 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (deliver_exec_direct(t[i].cmd) != t[i].direct)
			fail_msg("%s: want %d", t[i].cmd, t[i].direct);
}

/* Entries of dir, dot entries included (but . and ..). */
static size_t
tcount_all(const char *dir)
{
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	assert_non_null(d = opendir(dir));
	while ((de = readdir(d)) != NULL)
		n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
	(void)closedir(d);
	return n;
}

/* Sweep: leftovers of a dead pid go; a live pid's (pid 1, ours) stay
 * unless older than stale_ms (ours: never); other names stay. */
static void
t_sweep(void **state)
{
	char dir[] = "/tmp/as4gw-sweep-XXXXXX", p[512], h[65];
	struct deliver_opts o;
	pid_t dead;
	int st;

	(void)state;
	memset(h, 'a', 64);
	h[64] = '\0';
	assert_non_null(mkdtemp(dir));
	if ((dead = fork()) == 0)
		_exit(0);
	assert_int_equal(waitpid(dead, &st, 0), dead);
	(void)snprintf(p, sizeof(p), "%s/.tmp-%s-%ld", dir, h, (long)dead);
	assert_int_equal(mkdir(p, 0700), 0);
	(void)snprintf(p, sizeof(p), "%s/.tmp-%s-%ld/part-0.bin", dir, h,
	    (long)dead);
	assert_int_equal(close(open(p, O_WRONLY | O_CREAT, 0600)), 0);
	(void)snprintf(p, sizeof(p), "%s/.old-%s-%ld", dir, h, (long)dead);
	assert_int_equal(mkdir(p, 0700), 0);
	(void)snprintf(p, sizeof(p), "%s/.tmp-%s-1", dir, h);
	assert_int_equal(mkdir(p, 0700), 0);
	(void)snprintf(p, sizeof(p), "%s/.tmp-%s-%ld", dir, h, (long)getpid());
	assert_int_equal(mkdir(p, 0700), 0);
	(void)snprintf(p, sizeof(p), "%s/.tmp-other-%ld", dir, (long)dead);
	assert_int_equal(mkdir(p, 0700), 0);
	memset(&o, 0, sizeof(o));
	o.to_dir = dir;
	o.stale_ms = DELIVER_STALE_MS_DEFAULT;
	assert_int_equal(deliver_sweep(&o), 2);
	assert_int_equal(tcount_all(dir), 3);
	o.stale_ms = 0;  /* pid 1 is alive, but its directory is "old" */
	(void)nanosleep(&(struct timespec){ 0, 20000000 }, NULL);
	assert_int_equal(deliver_sweep(&o), 1);
	assert_int_equal(tcount_all(dir), 2);
	rm_rf(dir);
}

/* 1 s doubling to 60 s. */
static void
t_backoff(void **state)
{
	static const struct {
		int attempts;
		int64_t ms;
	} cases[] = {
		{ -1, 1000 }, { 0, 1000 }, { 1, 1000 }, { 2, 2000 }, { 3, 4000 },
		{ 5, 16000 }, { 6, 32000 }, { 7, 60000 }, { 8, 60000 },
		{ 64, 60000 }, { 1000000, 60000 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (deliver_backoff_ms(cases[i].attempts) != cases[i].ms)
			fail_msg("attempts %d: %lld", cases[i].attempts,
			    (long long)deliver_backoff_ms(cases[i].attempts));
}

/* The name is the hex SHA-256 over party, NUL, id (the inbox key): two
 * parties' messages with one MessageId get two directories. */
static void
t_name(void **state)
{
	char name[65], other[65];
	struct err err = { 0 };

	(void)state;
	assert_int_equal(deliver_name("urn:a", "abc", name, &err), 0);
	/* python3: hashlib.sha256(b"urn:a\x00abc").hexdigest() */
	assert_string_equal(name, "66d32f71074e4ed6ae700eac47a90cfa"
	    "37affd27bcd5c75d4cc2f179d88833d9");
	assert_int_equal(deliver_name("urn:b", "abc", other, &err), 0);
	assert_string_not_equal(name, other);
	assert_int_equal(deliver_name("urn:a", "bc", other, &err), 0);
	assert_string_not_equal(name, other);
	assert_int_equal(deliver_name("urn:ab", "c", other, &err), 0);
	assert_string_not_equal(name, other);
	tname("../../etc/passwd", name);
	assert_null(strchr(name, '/'));
}

/* Exactly one target: both or none is a programmer error, store untouched. */
static void
t_opts_invalid(void **state)
{
	struct deliver_opts o;
	struct err err = { 0 };

	(void)state;
	memset(&o, 0, sizeof(o));
	assert_int_equal(deliver_one(NULL, &o, &err), -1);
	assert_int_equal(err.kind, ERR_INTERNAL);
	o.to_dir = "/tmp";
	o.exec_cmd = "true";
	err_clear(&err);
	assert_int_equal(deliver_one(NULL, &o, &err), -1);
	assert_int_equal(err.kind, ERR_INTERNAL);
}

/* The tests without a backend. */
int
main(void)
{
	const struct CMUnitTest common[] = {
		cmocka_unit_test(t_backoff),
		cmocka_unit_test(t_name),
		cmocka_unit_test(t_opts_invalid),
		cmocka_unit_test(t_json_parties),
		cmocka_unit_test(t_exec_direct),
		cmocka_unit_test(t_sweep),
	};

	return cmocka_run_group_tests_name("deliver", common, NULL, NULL);
}
