#!/usr/bin/env bash
# Installs what the tests need beyond Go: a MariaDB server, against which the MySQL probe commands
# run. Does nothing when it is already there.
set -euo pipefail
command -v mariadbd >/dev/null && command -v mariadb-install-db >/dev/null && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get install -y -q --no-install-recommends mariadb-server >/dev/null 2>&1 ||
	{ $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q --no-install-recommends mariadb-server >/dev/null; }
command -v mariadbd >/dev/null || { echo "mariadbd is still missing after installing mariadb-server" >&2; exit 1; }
