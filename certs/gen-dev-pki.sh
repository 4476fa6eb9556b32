#!/usr/bin/env bash
# gen-dev-pki.sh — a throw-away development PKI for as4gw.  NOT for production.
#
# usage: certs/gen-dev-pki.sh [--force] [OUTDIR]
#
# Creates in OUTDIR (default: certs/dev next to this script):
#   ca.key / ca.crt            development CA, RSA 3072, 10 years
#   gateway.key / gateway.crt  the gateway's signing key (CN=as4gw-dev-gateway)
#   sender.key / sender.crt    a test partner for `as4gw push`
#                              (CN=as4gw-dev-sender)
#   tls.key / tls.crt          HTTPS server certificate for localhost
#                              (SAN DNS:localhost, IP:127.0.0.1)
# and for eDelivery AS4 2.0 and the elliptic-curve profiles (issue 13):
#   gateway-ed25519.*          the gateway's Ed25519 signing pair (2.0 Receipts)
#   gateway-x25519.*           its X25519 key-agreement pair (2.0 encryption;
#                              an X25519 key cannot sign its own request:
#                              the CA certifies the public key as given)
#   gateway-p256.*, gateway-bp256.*
#                              EC signing pairs, P-256 (2.0-ec) and
#                              brainpoolP256r1 (BDEW)
#   gateway-p256-ecdh.*, gateway-bp256-ecdh.*
#                              EC key-agreement pairs (ECDH-ES) on those curves
#   sender-ed25519.*, sender-p256.*, sender-bp256.*
#                              development partners signing with Ed25519 / ECDSA
# Leaf keys are RSA 2048 unless named otherwise, certificates valid 2 years,
# signed by the CA.
# Keys are unencrypted PKCS#8 PEM, mode 600.  Existing keys are kept unless
# --force is given (idempotent); a certificate is (re)issued when it is
# missing, when its key or the CA was just made, or with --force.  The
# repository must never contain private keys: certs/dev/ is git-ignored.
set -euo pipefail
umask 077

force=0
outdir=""
for arg in "$@"; do
	case "$arg" in
	--force) force=1 ;;
	-h|--help) sed -n '2,31p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "gen-dev-pki.sh: unknown option $arg" >&2; exit 2 ;;
	*)
		if [ -n "$outdir" ]; then
			echo "gen-dev-pki.sh: one OUTDIR only" >&2
			exit 2
		fi
		outdir="$arg" ;;
	esac
done
if [ -z "$outdir" ]; then
	outdir="$(cd "$(dirname "$0")" && pwd)/dev"
fi
if ! command -v openssl >/dev/null; then
	echo "gen-dev-pki.sh: openssl not found" >&2
	exit 1
fi
mkdir -p "$outdir"
chmod 700 "$outdir"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cnf="$tmp/openssl.cnf"
cat >"$cnf" <<'EOF'
[req]
distinguished_name = dn
prompt = no
[dn]
CN = as4gw-dev
[v3_ca]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[v3_sign]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[v3_ecsign]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,nonRepudiation
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[v3_agree]
basicConstraints = critical,CA:FALSE
keyUsage = critical,keyAgreement
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[v3_tls]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
subjectAltName = DNS:localhost,IP:127.0.0.1
EOF

made=()
kept=()

# make_key NAME KIND: create NAME.key unless it exists; sets fresh=1 when
# made.  KIND: RSA bits (2048), ed25519, x25519, or ec:CURVE.
make_key() {
	local key="$outdir/$1.key" what
	fresh=0
	if [ -s "$key" ] && [ "$force" -eq 0 ]; then
		kept+=("$1.key")
		return
	fi
	case "$2" in
	ed25519) openssl genpkey -algorithm ED25519 -out "$key.tmp"
		what="Ed25519" ;;
	x25519) openssl genpkey -algorithm X25519 -out "$key.tmp"
		what="X25519" ;;
	ec:*) openssl genpkey -algorithm EC -pkeyopt \
		    "ec_paramgen_curve:${2#ec:}" -pkeyopt ec_param_enc:named_curve \
		    -out "$key.tmp"
		what="EC ${2#ec:}" ;;
	*) openssl genpkey -algorithm RSA -pkeyopt "rsa_keygen_bits:$2" \
		    -out "$key.tmp" 2>/dev/null
		what="RSA $2" ;;
	esac
	chmod 600 "$key.tmp"
	mv -f "$key.tmp" "$key"
	made+=("$1.key ($what)")
	fresh=1
}

# need_cert NAME UPSTREAM_FRESH: 0 (true) when NAME.crt must be (re)issued.
need_cert() {
	[ ! -s "$outdir/$1.crt" ] || [ "$force" -eq 1 ] || [ "$2" -eq 1 ]
}

# issue NAME SUBJECT EXTENSIONS: sign NAME.key's request with the CA, 2 years.
issue() {
	local name="$1" serial
	serial="0x$(openssl rand -hex 16)"
	openssl req -config "$cnf" -new -key "$outdir/$name.key" -subj "$2" \
	    -out "$tmp/$name.csr"
	openssl x509 -req -in "$tmp/$name.csr" -CA "$outdir/ca.crt" \
	    -CAkey "$outdir/ca.key" -set_serial "$serial" -days 730 -sha256 \
	    -extfile "$cnf" -extensions "$3" -out "$outdir/$name.crt.tmp" \
	    2>/dev/null
	chmod 644 "$outdir/$name.crt.tmp"
	mv -f "$outdir/$name.crt.tmp" "$outdir/$name.crt"
	made+=("$name.crt ($2)")
}

# issue_pub NAME SUBJECT EXTENSIONS: certify NAME.key's public key without a
# request (an X25519 key cannot sign one), 2 years.
issue_pub() {
	local name="$1"
	openssl pkey -in "$outdir/$name.key" -pubout -out "$tmp/$name.pub"
	openssl x509 -new -force_pubkey "$tmp/$name.pub" -subj "$2" \
	    -CA "$outdir/ca.crt" -CAkey "$outdir/ca.key" \
	    -set_serial "0x$(openssl rand -hex 16)" -days 730 -sha256 \
	    -extfile "$cnf" -extensions "$3" -out "$outdir/$name.crt.tmp"
	chmod 644 "$outdir/$name.crt.tmp"
	mv -f "$outdir/$name.crt.tmp" "$outdir/$name.crt"
	made+=("$name.crt ($2)")
}

make_key ca 3072
ca_fresh=$fresh
if need_cert ca "$ca_fresh"; then
	openssl req -config "$cnf" -new -x509 -key "$outdir/ca.key" \
	    -subj "/CN=as4gw-dev-ca/O=as4gw development" -days 3650 -sha256 \
	    -extensions v3_ca -set_serial "0x$(openssl rand -hex 16)" \
	    -out "$outdir/ca.crt.tmp"
	chmod 644 "$outdir/ca.crt.tmp"
	mv -f "$outdir/ca.crt.tmp" "$outdir/ca.crt"
	made+=("ca.crt (development CA, 10 years)")
	ca_fresh=1
else
	kept+=("ca.crt")
fi

# name, key kind, subject, extension section
o="O=as4gw development"
for spec in "gateway|2048|/CN=as4gw-dev-gateway/$o|v3_sign" \
    "sender|2048|/CN=as4gw-dev-sender/$o|v3_sign" \
    "tls|2048|/CN=localhost/$o|v3_tls" \
    "gateway-ed25519|ed25519|/CN=as4gw-dev-gateway-ed25519/$o|v3_ecsign" \
    "gateway-x25519|x25519|/CN=as4gw-dev-gateway-x25519/$o|v3_agree" \
    "gateway-p256|ec:P-256|/CN=as4gw-dev-gateway-p256/$o|v3_ecsign" \
    "gateway-p256-ecdh|ec:P-256|/CN=as4gw-dev-gateway-p256-ecdh/$o|v3_agree" \
    "gateway-bp256|ec:brainpoolP256r1|/CN=as4gw-dev-gateway-bp256/$o|v3_ecsign" \
    "gateway-bp256-ecdh|ec:brainpoolP256r1|/CN=as4gw-dev-gateway-bp256-ecdh/$o|v3_agree" \
    "sender-ed25519|ed25519|/CN=as4gw-dev-sender-ed25519/$o|v3_ecsign" \
    "sender-p256|ec:P-256|/CN=as4gw-dev-sender-p256/$o|v3_ecsign" \
    "sender-bp256|ec:brainpoolP256r1|/CN=as4gw-dev-sender-bp256/$o|v3_ecsign"; do
	IFS='|' read -r name kind subj ext <<<"$spec"
	make_key "$name" "$kind"
	if ! need_cert "$name" $((fresh | ca_fresh)); then
		kept+=("$name.crt")
	elif [ "$kind" = x25519 ]; then
		issue_pub "$name" "$subj" "$ext"
	else
		issue "$name" "$subj" "$ext"
	fi
done

echo "development PKI in $outdir (not for production)"
for f in "${made[@]}"; do echo "  made: $f"; done
if [ "${#kept[@]}" -gt 0 ]; then
	for f in "${kept[@]}"; do echo "  kept: $f"; done
fi
