# install.sh: sourced by gateway.sh, outage.sh and pool.sh. ensure_portkey NAME
# installs the pinned Portkey gateway (npm ci in bench/portkey, from its
# package-lock.json) when node_modules is missing; without npm, or if the
# install fails, it says so (as NAME) and the benchmark skips Portkey.
ensure_portkey() {
	[ -d portkey/node_modules/@portkey-ai/gateway ] && return 0
	if command -v npm >/dev/null 2>&1; then
		echo "installing the Portkey gateway (npm ci in bench/portkey)" >&2
		(cd portkey && npm ci --no-audit --no-fund --ignore-scripts >&2) ||
			echo "$1: npm ci failed; Portkey will be skipped" >&2
	else
		echo "$1: npm not found (apt-get install -y nodejs npm); Portkey will be skipped" >&2
	fi
}
