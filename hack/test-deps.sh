#!/usr/bin/env bash
# Installs what the tests and the benchmark's backup section need beyond Go: a MariaDB server and
# mariadb-backup, against which the MySQL probe commands and the backup data path run, and versitygw, an S3 gateway
# over a folder that the backups are stored in. Does nothing for what is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

VERSITYGW_VERSION=v1.8.0
versitygw="bin/versitygw-${VERSITYGW_VERSION}/versitygw"
if [ ! -x "$versitygw" ]; then
	# go install writes the binary only once it has linked, so a stopped build leaves nothing that
	# this check would take for a finished one.
	GOBIN="$PWD/bin/versitygw-${VERSITYGW_VERSION}" go install "github.com/versity/versitygw/cmd/versitygw@${VERSITYGW_VERSION}"
fi

command -v mariadbd >/dev/null && command -v mariadb-install-db >/dev/null && command -v mariadb-backup >/dev/null && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get install -y -q --no-install-recommends mariadb-server mariadb-backup >/dev/null 2>&1 ||
	{ $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q --no-install-recommends mariadb-server mariadb-backup >/dev/null; }
command -v mariadbd >/dev/null || { echo "mariadbd is still missing after installing mariadb-server" >&2; exit 1; }
command -v mariadb-backup >/dev/null || { echo "mariadb-backup is still missing after installing it" >&2; exit 1; }
