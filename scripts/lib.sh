# Shared by scripts/run and scripts/test: Debian packages and the build.
# shellcheck shell=bash

AS4GW_PACKAGES=(
	meson ninja-build pkg-config gcc libc6-dev
	libmicrohttpd-dev libxml2-dev libxmlsec1-dev libxmlsec1-openssl libssl-dev
	libpq-dev libsqlite3-dev zlib1g-dev libcurl4-openssl-dev libcmocka-dev
	openssl curl
)
# clang-tidy and cppcheck: scripts/lint, run by scripts/test; iproute2 (ip netns):
# the network cut of tests/integration/test_ha_failover.py (conf/ha/netns.py)
AS4GW_TEST_PACKAGES=(postgresql python3 python3-pytest python3-psycopg2 python3-lxml python3-cryptography sqlite3
	nginx clang libclang-rt-14-dev clang-tidy cppcheck
	patroni etcd-server etcd-client iproute2)
# bench/run: wrk (the load tool), postgresql (server, pgbench, pg_test_fsync;
# Debian 12's postgresql-15 has the contrib modules), python3 (bench/bench.py).
# linux-perf is optional (profiles: bench/README.md) and not installed here.
AS4GW_BENCH_PACKAGES=(wrk postgresql python3)

# Install what is missing: apt-get when root, else print the line and stop.
as4gw_need_packages() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
			missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "as4gw: missing Debian packages; run:" >&2
		echo "  sudo apt-get install -y ${missing[*]}" >&2
		exit 1
	fi
	echo "as4gw: installing ${missing[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null 2>&1 || {
		apt-get update >/dev/null && apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null
	}
}

# Configure (once) and build into $1 with extra meson options after it.
as4gw_build() {
	local dir=$1
	shift
	# a first build takes a while on two cores: say so, and what it does
	echo "as4gw: building in $dir/ (meson + ninja; a first build takes ~1 min)" >&2
	if [ ! -f "$dir/build.ninja" ]; then
		meson setup "$dir" "$@" >/dev/null
	elif [ $# -gt 0 ]; then
		meson configure "$dir" "$@" >/dev/null   # an old build dir: same options
	fi
	ninja -C "$dir" >/dev/null || ninja -C "$dir"
	echo "as4gw: built $dir/as4gw and $dir/as4gw-client" >&2
}
