#!/usr/bin/env bash
# Installs the host packages the real node needs beyond what make node builds: runc (containerd's
# runtime), the CNI plugins (in /usr/lib/cni on Debian), iptables, nftables and conntrack (for
# kube-proxy and the bridge plugin) and debootstrap (to build images from Debian's packages).
# Does nothing when they are all installed.
# Usage: node-deps.sh
set -euo pipefail
packages=(runc containernetworking-plugins iptables nftables conntrack debootstrap)

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
