/*
 * wss_policy.c — the algorithm vocabulary of a P-Mode leg's security policy:
 * short names from the configuration and the exact algorithm URIs found in
 * messages, both mapped to enum wss_alg bits.
 *
 * Only exact URIs are recognised (no prefix or case-insensitive match), so
 * that "#rsa-sha256x" or a SHA-1 variant can never pass for an allowed
 * algorithm.  rsa-sha1, sha1, md5 and everything unknown map to 0, which no
 * policy can allow (NEGATIVE-CASES 37).
 */
#include "wss.h"

#include <stdio.h>
#include <string.h>

/* One algorithm: its configuration name, its URI(s) and its bit. */
struct wss_policy_alg {
	const char *name;  /* NULL: URI alias of the row before (same bit) */
	const char *uri;
	unsigned bit;
};

#define WSS_POLICY_DSIG_MORE "http://www.w3.org/2001/04/xmldsig-more#"
#define WSS_POLICY_XENC "http://www.w3.org/2001/04/xmlenc#"
#define WSS_POLICY_XENC11 "http://www.w3.org/2009/xmlenc11#"
#define WSS_POLICY_DSIG_MORE21 "http://www.w3.org/2021/04/xmldsig-more#"

/*
 * XML Signature 1.1 (2013) 6.4 and RFC 6931 (xmldsig-more) for signatures
 * and digests; XML Encryption 1.1 5.4 / 5.5 for key transport and block
 * encryption.  eDelivery AS4 1.15 uses rsa-sha256, sha256, xenc11 rsa-oaep
 * and aes128-gcm; the OASIS AS4 profile also names the others.
 */
static const struct wss_policy_alg wss_policy_algs[] = {
	{ "rsa-sha256", WSS_POLICY_DSIG_MORE "rsa-sha256", WSS_SIG_RSA_SHA256 },
	{ "rsa-sha384", WSS_POLICY_DSIG_MORE "rsa-sha384", WSS_SIG_RSA_SHA384 },
	{ "rsa-sha512", WSS_POLICY_DSIG_MORE "rsa-sha512", WSS_SIG_RSA_SHA512 },
	{ "ecdsa-sha256", WSS_POLICY_DSIG_MORE "ecdsa-sha256",
	    WSS_SIG_ECDSA_SHA256 },
	{ "ecdsa-sha384", WSS_POLICY_DSIG_MORE "ecdsa-sha384",
	    WSS_SIG_ECDSA_SHA384 },
	{ "ecdsa-sha512", WSS_POLICY_DSIG_MORE "ecdsa-sha512",
	    WSS_SIG_ECDSA_SHA512 },
	{ "eddsa-ed25519", WSS_POLICY_DSIG_MORE21 "eddsa-ed25519",
	    WSS_SIG_ED25519 },
	{ "sha256", WSS_POLICY_XENC "sha256", WSS_DIG_SHA256 },
	{ "sha384", WSS_POLICY_DSIG_MORE "sha384", WSS_DIG_SHA384 },
	{ "sha512", WSS_POLICY_XENC "sha512", WSS_DIG_SHA512 },
	{ "rsa-oaep", WSS_POLICY_XENC11 "rsa-oaep", WSS_KT_RSA_OAEP },
	{ "rsa-oaep-mgf1p", WSS_POLICY_XENC "rsa-oaep-mgf1p",
	    WSS_KT_RSA_OAEP_MGF1P },
	{ "rsa-1_5", WSS_POLICY_XENC "rsa-1_5", WSS_KT_RSA_1_5 },
	{ "x25519", WSS_POLICY_DSIG_MORE21 "x25519", WSS_KA_X25519 },
	{ "ecdh-es", WSS_POLICY_XENC11 "ECDH-ES", WSS_KA_ECDH_ES },
	{ "hkdf", WSS_POLICY_DSIG_MORE21 "hkdf", WSS_KDF_HKDF },
	{ "concatkdf", WSS_POLICY_XENC11 "ConcatKDF", WSS_KDF_CONCAT },
	{ "kw-aes128", WSS_POLICY_XENC "kw-aes128", WSS_KW_AES128 },
	{ "kw-aes192", WSS_POLICY_XENC "kw-aes192", WSS_KW_AES192 },
	{ "kw-aes256", WSS_POLICY_XENC "kw-aes256", WSS_KW_AES256 },
	{ "aes128-gcm", WSS_POLICY_XENC11 "aes128-gcm", WSS_ENC_AES128_GCM },
	{ "aes256-gcm", WSS_POLICY_XENC11 "aes256-gcm", WSS_ENC_AES256_GCM },
	{ "aes-cbc", WSS_POLICY_XENC "aes128-cbc", WSS_ENC_AES_CBC },
	{ NULL, WSS_POLICY_XENC "aes256-cbc", WSS_ENC_AES_CBC },
};

#define WSS_POLICY_N_ALGS (sizeof(wss_policy_algs) / sizeof(wss_policy_algs[0]))

/* Longest configuration name we accept (names are short). */
#define WSS_POLICY_NAME_MAX 32

/* Names that stand for a whole set: the profiles. */
static const struct wss_policy_alg wss_policy_sets[] = {
	{ "default", NULL, WSS_ALGS_DEFAULT },
	{ "edelivery-1.x", NULL, WSS_ALGS_DEFAULT },
	{ "edelivery-2.0", NULL, WSS_ALGS_EDELIVERY_2_0 },
	{ "edelivery-2.0-ec", NULL, WSS_ALGS_EDELIVERY_2_0_EC },
};

#define WSS_POLICY_N_SETS (sizeof(wss_policy_sets) / sizeof(wss_policy_sets[0]))

/* The bit(s) for one configuration name (a profile name: its set), or 0. */
static unsigned
wss_policy_name_bit(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < WSS_POLICY_N_SETS; i++)
		if (strlen(wss_policy_sets[i].name) == len &&
		    strncmp(wss_policy_sets[i].name, name, len) == 0)
			return wss_policy_sets[i].bit;
	for (i = 0; i < WSS_POLICY_N_ALGS; i++) {
		const char *n = wss_policy_algs[i].name;

		if (n != NULL && strlen(n) == len && strncmp(n, name, len) == 0)
			return wss_policy_algs[i].bit;
	}
	return 0;
}

/* Is c a list separator (space, tab, line end, comma)? */
static int
wss_policy_sep(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ',';
}

/*
 * Parse a whitespace- (or comma-) separated list of algorithm names into
 * bits; "default" stands for WSS_ALGS_DEFAULT.  An unknown name or an empty
 * list is a configuration error; *ret_bits is written only on success.
 */
int
wss_alg_parse(const char *list, unsigned *ret_bits, struct err *err)
{
	const char *p = list != NULL ? list : "";
	unsigned bits = 0, bit;
	size_t len;
	int rc = -1;

	for (;;) {
		while (*p != '\0' && wss_policy_sep(*p))
			p++;
		if (*p == '\0')
			break;
		for (len = 0; p[len] != '\0' && !wss_policy_sep(p[len]); len++)
			;
		bit = wss_policy_name_bit(p, len);
		if (bit == 0) {
			if (len > WSS_POLICY_NAME_MAX)
				len = WSS_POLICY_NAME_MAX;
			err_set(err, ERR_CONF, NULL,
			    "unknown algorithm \"%.*s\"", (int)len, p);
			goto out;
		}
		bits |= bit;
		p += len;
	}
	if (bits == 0) {
		err_set(err, ERR_CONF, NULL, "empty algorithm list");
		goto out;
	}
	*ret_bits = bits;
	rc = 0;
out:
	return rc;
}

/* The bit for an algorithm URI (exact match), or 0 when unknown. */
unsigned
wss_alg_from_uri(const char *uri)
{
	size_t i;

	if (uri == NULL)
		return 0;
	for (i = 0; i < WSS_POLICY_N_ALGS; i++)
		if (strcmp(wss_policy_algs[i].uri, uri) == 0)
			return wss_policy_algs[i].bit;
	return 0;
}

/* The configuration names of the bits set (aliases once); see wss.h. */
void
wss_alg_names(unsigned bits, char *out, size_t size)
{
	size_t i, len = 0;
	int n;

	if (size == 0)
		return;
	out[0] = '\0';
	for (i = 0; i < WSS_POLICY_N_ALGS; i++) {
		const struct wss_policy_alg *p = &wss_policy_algs[i];

		if (p->name == NULL || (bits & p->bit) == 0 || len >= size)
			continue;
		n = snprintf(out + len, size - len, "%s%s", len > 0 ? " " : "",
		    p->name);
		if (n < 0)
			return;
		len += (size_t)n;
	}
}
