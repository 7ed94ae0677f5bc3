#!/usr/bin/env bash
# test.sh: set up what the tests need on a fresh machine, then run every test.
# It is the README's "all tests" command, and .ci/run runs it.
#
# Real parts: redis-server, chromium, buildah and the CA certificates (Debian
# packages; buildah builds the Dockerfile's image in cmd/loopctl's tests), node and npm with the
# packages pinned in the committed package-lock.json files (installed with npm ci).
# As root it installs what is missing with apt-get; otherwise it says what to install.
set -euo pipefail
cd "$(dirname "$0")"

need_apt=()
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
command -v node >/dev/null 2>&1 || need_apt+=(nodejs)
command -v npm >/dev/null 2>&1 || need_apt+=(npm)
command -v buildah >/dev/null 2>&1 || need_apt+=(buildah)
[ -f /etc/ssl/certs/ca-certificates.crt ] || need_apt+=(ca-certificates)
if [ ${#need_apt[@]} -gt 0 ]; then
	if [ "$(id -u)" = 0 ]; then
		echo "== installing ${need_apt[*]} (apt-get)"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -q
		apt-get install -y -q "${need_apt[@]}"
	else
		echo "test.sh: missing ${need_apt[*]}; install with: sudo apt-get install -y ${need_apt[*]}" >&2
		exit 1
	fi
fi

# Node packages: every committed package-lock.json the tests use (bench/ holds the
# benchmark's peers, installed by bench/gateway.sh when it runs).
while IFS= read -r lock; do
	case "$lock" in bench/*) continue ;; esac
	dir=$(dirname "$lock")
	echo "== npm ci in $dir"
	(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
done < <(git ls-files '*package-lock.json' 2>/dev/null || find . -name package-lock.json -not -path '*/node_modules/*')

echo "== go test -race ./..."
go test -race ./...
echo "== go test -race ./... (bench module)"
(cd bench && go test -race ./...)
