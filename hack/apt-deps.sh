#!/usr/bin/env bash
# Installs Debian packages the build needs from the host: those of the real node (make node-deps),
# the book's generator (make docs-deps) and the tests (make test-deps). Does nothing when they are
# all installed.
# Usage: apt-deps.sh package...
set -euo pipefail
packages=("$@")

# Only a package dpkg reports as fully installed counts: one removed with its configuration kept
# is still known to dpkg but has no files.
installed() {
	[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]
}

missing=()
for package in "${packages[@]}"; do
	installed "$package" || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
echo "installing ${missing[*]}"
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null 2>&1 ||
	{ $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null; }
for package in "${missing[@]}"; do
	installed "$package" || { echo "$package is still missing after apt-get install" >&2; exit 1; }
done
