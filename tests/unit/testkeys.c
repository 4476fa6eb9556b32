/*
 * testkeys — the openssl-command PKI of the key-type tests (see
 * testkeys.h).
 */
#include "testkeys.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int
testkeys_sh(const char *dir, const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	int n;

	n = snprintf(cmd, sizeof(cmd), "cd %s && ", dir);
	va_start(ap, fmt);
	(void)vsnprintf(cmd + n, sizeof(cmd) - (size_t)n, fmt, ap);
	va_end(ap);
	return system(cmd) == 0 ? 0 : -1;
}

int
testkeys_make(char *dir, const char *prefix, const char *ext)
{
	(void)snprintf(dir, 64, "/tmp/%s.XXXXXX", prefix);
	if (mkdtemp(dir) == NULL)
		return -1;
	return testkeys_sh(dir, "openssl req -x509 -newkey ec -pkeyopt "
	    "ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.crt "
	    "-subj /CN=test-ca -days 30 -addext "
	    "basicConstraints=critical,CA:TRUE -addext "
	    "keyUsage=critical,keyCertSign,cRLSign >/dev/null 2>&1 && "
	    "printf '%%s\\n' '%s' >leaf.ext", ext);
}

int
testkeys_leaf(const char *dir, const char *name, const char *genpkey)
{
	return testkeys_sh(dir, "exec 2>/dev/null && "
	    "openssl genpkey %2$s -out %1$s.key && "
	    "openssl pkey -in %1$s.key -pubout -out %1$s.pub && "
	    "openssl req -new -key ca.key -subj /CN=%1$s | "
	    "openssl x509 -req -CA ca.crt -CAkey ca.key "
	    "-set_serial 0x$(openssl rand -hex 8) -force_pubkey %1$s.pub "
	    "-extfile leaf.ext -days 30 -sha256 -out %1$s.crt", name, genpkey);
}

void
testkeys_remove(const char *dir)
{
	(void)testkeys_sh("/", "rm -rf %s", dir);
}
