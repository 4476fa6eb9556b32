/*
 * fuzz_conf — libFuzzer driver for the configuration loader (src/conf):
 * conf_load() on the input as a configuration file, and the hand-written
 * parsers behind it (conf_parse_listen, conf_cidr_parse/match) on the
 * input as a string.
 *
 * conf_load() reads a path, so the input goes into one memfd made at
 * start-up (memfd_create: anonymous memory, nothing written to a disk) and
 * is loaded as /proc/self/fd/N.  Relative paths in the input resolve under
 * /proc/self/fd/ and fail the file check: that is the last step of the
 * load, after everything the driver is meant to reach.
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "conf/conf.h"
#include "util/err.h"
#include "xml/xml.h"

/* Longest input also tried as a listen address / CIDR string. */
#define FUZZ_CONF_MAX_STRING 256

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int fuzz_conf_fd = -1;
static char fuzz_conf_path[64];

/* A broken invariant or set-up failure: say which and abort. */
static __attribute__((noreturn)) void
fuzz_conf_die(const char *what)
{
	fprintf(stderr, "fuzz_conf: %s\n", what);
	abort();
}

/* Once: libxml2 and the memfd the inputs are loaded from. */
int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	xml_global_init();
	fuzz_conf_fd = memfd_create("as4gw-fuzz-conf.xml", MFD_CLOEXEC);
	if (fuzz_conf_fd < 0)
		fuzz_conf_die("memfd_create failed");
	(void)snprintf(fuzz_conf_path, sizeof(fuzz_conf_path),
	    "/proc/self/fd/%d", fuzz_conf_fd);
	return 0;
}

/* Replace the memfd's content with the input. */
static void
fuzz_conf_put(const uint8_t *data, size_t size)
{
	size_t off = 0;
	ssize_t n;

	if (ftruncate(fuzz_conf_fd, 0) != 0)
		fuzz_conf_die("ftruncate failed");
	while (off < size) {
		n = pwrite(fuzz_conf_fd, data + off, size - off, (off_t)off);
		if (n <= 0)
			fuzz_conf_die("pwrite failed");
		off += (size_t)n;
	}
}

/* The string parsers: a parsed block contains its own address. */
static void
fuzz_conf_strings(const uint8_t *data, size_t size)
{
	char s[FUZZ_CONF_MAX_STRING + 1];
	struct conf_cidr c;
	char *host = NULL;
	int port = -1;

	if (size > FUZZ_CONF_MAX_STRING)
		return;
	memcpy(s, data, size);
	s[size] = '\0';
	if (conf_parse_listen(s, &host, &port) == 0 &&
	    (host == NULL || port < 0 || port > 65535))
		fuzz_conf_die("conf_parse_listen: bad result");
	free(host);
	if (conf_cidr_parse(s, &c) == 0) {
		if ((c.family != AF_INET || c.prefix > 32) &&
		    (c.family != AF_INET6 || c.prefix > 128))
			fuzz_conf_die("conf_cidr_parse: bad result");
		if (conf_cidr_match(&c, c.family, c.addr) != 1)
			fuzz_conf_die("conf_cidr_match: block misses itself");
	}
}

/* One input: the string parsers, then conf_load() of it as a file. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct conf *c = NULL;
	struct err err = { 0 };

	fuzz_conf_strings(data, size);
	fuzz_conf_put(data, size);
	if (conf_load(fuzz_conf_path, &c, &err) == 0) {
		if (c->n_legs > 0 && c->legs == NULL)
			fuzz_conf_die("legs missing");
		conf_free(c);
	} else if (err.kind == ERR_NONE) {
		fuzz_conf_die("failure without an error");
	}
	return 0;
}
