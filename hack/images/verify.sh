#!/usr/bin/env bash
# Checks the image tarballs that build.sh made against the contracts the operator relies on,
# without a container runtime: each image's layer is unpacked into a temporary folder and its own
# entrypoint and command run there, chrooted as the image's user, with the environment the
# operator sets. Everything runs in a private network namespace, so the real ports (80, 3306...)
# are free and no server of the host is touched; each server runs in its own PID and mount
# namespace, which end with it.
#
# Usage: hack/images/verify.sh DEST [IMAGE...]   (DEST holds <image>.tar; default: every image)
set -euo pipefail

DEST=${1:?usage: hack/images/verify.sh DEST [IMAGE...]}
shift
if [[ -z ${VERIFY_IN_NETNS:-} ]]; then
	exec unshare --net -- env VERIFY_IN_NETNS=1 bash "$0" "$DEST" "$@"
fi
ip link set lo up
DEST=$(cd "$DEST" && pwd)
WORK=$(mktemp -d /tmp/appkeeper-images-verify.XXXXXX)
SERVERS=()
cleanup() {
	while ((${#SERVERS[@]})); do
		stop_last
	done
	rm -rf "$WORK"
}
trap cleanup EXIT

log() { printf '%s verify: %s\n' "$(date +%T)" "$*" >&2; }
fail() {
	log "FAIL: $*"
	grep -v "Access denied" "$WORK"/*.log | grep -E -i -m 20 "entrypoint|error|ERROR" >&2 || true
	exit 1
}

# unpack NAME unpacks NAME's layer into $WORK/NAME and prints its config's "config" object.
unpack() {
	local name=$1 dir=$WORK/$1
	mkdir -p "$dir/archive" "$dir/root"
	tar -xf "$DEST/$name.tar" -C "$dir/archive"
	tar -xpf "$dir/archive/$(jq -r '.[0].Layers[0]' "$dir/archive/manifest.json")" -C "$dir/root" --numeric-owner
	jq -c .config "$dir/archive/$(jq -r '.[0].Config' "$dir/archive/manifest.json")" >"$dir/config.json"
	rm -rf "$dir/archive"
}

# start NAME [-u USER] [-ro] [-m SRC:DST]... [-e K=V]... [-- ARGS...] starts the image's
# entrypoint and command (or ARGS in place of the command) in the background, as the image's user
# unless -u gives another, with the image's environment plus the -e ones. Prints nothing; the
# server's pid is appended to SERVERS and its output goes through a pipe, as a runtime's does, to
# $WORK/NAME.log.
start() {
	local name=$1 root=$WORK/$1/root config=$WORK/$1/config.json
	shift
	local user readonly=false mounts=() env=() args=()
	user=$(jq -r '.User // "0:0"' "$config")
	while (($#)); do
		case $1 in
		-u) user=$2 && shift 2 ;;
		-ro) readonly=true && shift ;;
		-m) mounts+=("$2") && shift 2 ;;
		-e) env+=("$2") && shift 2 ;;
		--) shift && args=("$@") && break ;;
		esac
	done
	[[ $user == *:* ]] || user=$user:$user
	# A runtime makes these mount points when an image lacks them.
	mkdir -p "$root/proc" "$root/dev"
	mapfile -t image_env < <(jq -r '.Env // [] | .[]' "$config")
	mapfile -t argv < <(jq -r '.Entrypoint // [] | .[]' "$config")
	if ((${#args[@]})); then
		argv+=("${args[@]}")
	else
		mapfile -t -O "${#argv[@]}" argv < <(jq -r '.Cmd // [] | .[]' "$config")
	fi
	unshare --mount --pid --fork --kill-child --propagation private -- bash -c '
		set -e
		root=$1 readonly=$2 mounts=$3 user=$4
		shift 4
		$readonly && mount --bind "$root" "$root"
		mount -t proc proc "$root/proc"
		mount --rbind /dev "$root/dev"
		for m in $mounts; do
			src=${m%%:*} dst=$root/${m#*:}
			# A runtime makes the mount point of a volume the image lacks.
			if [ -d "$src" ]; then mkdir -p "$dst"; elif [ ! -e "$dst" ]; then mkdir -p "${dst%/*}" && touch "$dst"; fi
			mount --bind "$src" "$dst"
		done
		# Read-only once the mount points are made, as a runtime does it; the volumes keep theirs.
		$readonly && mount -o remount,bind,ro "$root"
		# runc gives the container user its stdio pipes, so /dev/stderr can be opened again.
		chown "$user" /proc/self/fd/1 /proc/self/fd/2
		exec "$@"' \
		bash "$root" "$readonly" "${mounts[*]}" "$user" \
		env -i "${image_env[@]}" "${env[@]}" /usr/sbin/chroot --userspec="$user" "$root" "${argv[@]}" \
		> >(cat >"$WORK/$name.log") 2>&1 &
	SERVERS+=($!)
}

# run NAME CMD... runs CMD in the unpacked image NAME as root, in the foreground.
run() {
	local root=$WORK/$1/root
	shift
	unshare --mount --propagation private -- bash -c '
		root=$1; shift
		mount -t proc proc "$root/proc"
		mount --rbind /dev "$root/dev"
		exec chroot "$root" "$@"' bash "$root" env -i PATH=/usr/local/bin:/usr/bin:/bin "$@"
}

# main_pid prints the pid of the most recent server's first process: unshare's child, beside the
# cat that copies its output.
main_pid() { ps --ppid "${SERVERS[-1]}" -o pid=,comm= | awk '$2 != "cat" { print $1; exit }'; }

# stop_last stops the most recent server: SIGTERM to its first process (unshare itself ignores
# it), SIGKILL after 30 s; its PID namespace, and every process in it, ends with that process.
stop_last() {
	local pid=${SERVERS[-1]} main
	main=$(main_pid)
	if [[ -n $main ]]; then
		kill -TERM "$main" 2>/dev/null || true
		for _ in $(seq 60); do
			kill -0 "$main" 2>/dev/null || break
			sleep 0.5
		done
		kill -KILL "$main" 2>/dev/null || true
	fi
	wait "$pid" 2>/dev/null || true
	unset 'SERVERS[-1]'
}

# wait_for WHAT CMD... retries CMD for up to 60 s.
wait_for() {
	local what=$1 i
	shift
	for i in $(seq 120); do
		if "$@" >/dev/null 2>&1; then
			return 0
		fi
		sleep 0.5
	done
	fail "$what"
}

verify_pause() {
	unpack pause
	start pause
	local pid=${SERVERS[-1]}
	sleep 1
	kill -0 "$pid" 2>/dev/null || fail "pause exited on its own: $(cat "$WORK/pause.log")"
	# unshare forwards no signal: send it to pause itself, the first process of its namespace.
	kill -TERM "$(main_pid)"
	for _ in $(seq 20); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.25
	done
	kill -0 "$pid" 2>/dev/null && fail "pause did not exit on SIGTERM"
	wait "$pid" || fail "pause exited with status $? on SIGTERM"
	unset 'SERVERS[-1]'
	log "pause: runs as $(jq -r .User "$WORK/pause/config.json"), exits on SIGTERM"
}

verify_busybox() {
	unpack busybox
	local applet
	for applet in sh sleep wget nc nslookup; do
		run busybox sh -c "command -v $applet" >/dev/null || fail "busybox lacks $applet"
	done
	run busybox sh -c 'echo hello | nc -l -p 19999 & sleep 0.5; nc 127.0.0.1 19999 </dev/null' | grep -q hello ||
		fail "busybox nc does not carry a line"
	log "busybox: sh, sleep, wget, nc on PATH; nc carries a line"
}

verify_nginx() {
	unpack nginx
	local conf=$WORK/nginx-default.conf
	# The server block the operator writes (internal/resources/webserver/nginx.go) for port 8080.
	(cd "$REPO" && go run ./hack/images/verify/operatorconf nginx 8080) >"$conf"
	start nginx -m "$conf:/etc/nginx/conf.d/default.conf"
	wait_for "nginx answers /healthz" curl -fsS http://127.0.0.1:8080/healthz
	curl -fsS http://127.0.0.1:8080/ | grep -q 'Welcome to nginx!' || fail "nginx's page lacks the welcome"
	local uids
	uids=$(ps -o uid= -p "$(main_pid)" --ppid "$(main_pid)" | sort -u | tr -d ' ' | tr '\n' ' ')
	[[ $uids == "101 " ]] || fail "nginx's processes run as $uids, not 101"
	curl -s -o /dev/null http://127.0.0.1:80/ && fail "something answers on port 80"
	stop_last
	log "nginx: serves the page and /healthz on 8080 with the operator's server block, as uid 101"
}

verify_memcached() {
	unpack memcached
	start memcached -ro -- -p 11211 -U 0 -m 64
	wait_for "memcached answers stats" bash -c 'exec 3<>/dev/tcp/127.0.0.1/11211; printf "stats\r\nquit\r\n" >&3; grep -q "STAT pid" <&3'
	[[ $(ps -o uid=,comm= -p "$(main_pid)" | xargs) == "11211 memcached" ]] || fail "memcached is not uid 11211"
	stop_last
	log "memcached: answers stats on 11211 as uid 11211 on a read-only root"
}

verify_broken() {
	unpack broken
	start broken -- -g 'daemon off;'
	local pid=${SERVERS[-1]} status=0
	for _ in $(seq 20); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.25
	done
	kill -0 "$pid" 2>/dev/null && fail "broken kept running"
	wait "$pid" || status=$?
	unset 'SERVERS[-1]'
	((status == 1)) || fail "broken exited with status $status, not 1"
	grep -q 'fails at start on purpose' "$WORK/broken.log" || fail "broken said nothing on stderr"
	log "broken: exits with status 1 after one line on stderr, whatever its arguments"
}

# The probe commands of internal/resources/mysql/mysql.go, run in the image as the kubelet would.
MYSQL_READINESS='MYSQL_PWD="$MYSQL_ROOT_PASSWORD" exec mysql --protocol=TCP -h 127.0.0.1 -u root -N -e "SELECT 1"'
MYSQL_LIVENESS='exec mysqladmin --protocol=TCP -h 127.0.0.1 ping'
ROOT_PASSWORD="r00t'pa\\ss\"word"
USER_PASSWORD='shop-pa$$word'

# mariadb_env prints the start options the MySQL kind gives its container.
mariadb_env() {
	printf '%s\n' -e "MYSQL_ROOT_PASSWORD=$ROOT_PASSWORD" -e MYSQL_ROOT_HOST=127.0.0.1 \
		-e MYSQL_DATABASE=shop -e MYSQL_USER=shop -e "MYSQL_PASSWORD=$USER_PASSWORD"
}

# mariadb_probe ready|alive runs one of the operator's probes in the image.
mariadb_probe() {
	local cmd=$MYSQL_LIVENESS
	[[ $1 == ready ]] && cmd=$MYSQL_READINESS
	run mariadb env "MYSQL_ROOT_PASSWORD=$ROOT_PASSWORD" sh -c "$cmd"
}

# The backup account as the operator's init-file creates it at every start of the server.
BACKUP_USER=appkeeper_backup
BACKUP_PRIVILEGES='SELECT, SHOW VIEW, TRIGGER, LOCK TABLES, EVENT, RELOAD, PROCESS, REPLICATION CLIENT'

# write_accounts PASSWORD writes the init-file the operator mounts from a Secret, readable by the
# mysql group only, with PASSWORD for the backup account.
write_accounts() {
	cat >"$WORK/accounts.sql" <<-EOF
		CREATE USER IF NOT EXISTS '$BACKUP_USER'@'%' IDENTIFIED BY '$1';
		ALTER USER '$BACKUP_USER'@'%' IDENTIFIED BY '$1';
		GRANT $BACKUP_PRIVILEGES ON *.* TO '$BACKUP_USER'@'%';
	EOF
	chgrp 999 "$WORK/accounts.sql"
	chmod 0440 "$WORK/accounts.sql"
}

# write_initdb DIR makes DIR a /docker-entrypoint-initdb.d as a restore's init container leaves
# it: a dump compressed with gzip.
write_initdb() {
	mkdir -p "$1"
	printf '%s\n' 'CREATE TABLE restored (v VARCHAR(20));' "INSERT INTO restored VALUES ('from the dump');" |
		gzip >"$1/restore.sql.gz"
}

# start_mariadb DATA INITDB starts the server on the data folder DATA, with INITDB as
# /docker-entrypoint-initdb.d and the operator's settings and init-file.
start_mariadb() {
	local data=$1 initdb=$2 opts
	mapfile -t opts < <(mariadb_env)
	start mariadb -m "$data:/var/lib/mysql" -m "$initdb:/docker-entrypoint-initdb.d" \
		-m "$WORK/appkeeper.cnf:/etc/mysql/conf.d/appkeeper.cnf" -m "$WORK/accounts.sql:/etc/mysql/appkeeper/accounts.sql" \
		"${opts[@]}"
}

# start_mariadb_ready DATA INITDB starts the server and waits until the root probe passes,
# checking that no probe passes while the first-start initialisation runs.
start_mariadb_ready() {
	start_mariadb "$@"
	for _ in $(seq 240); do
		if mariadb_probe alive >/dev/null 2>&1; then
			grep -q 'entrypoint: initialising' "$WORK/mariadb.log" && ! grep -q 'entrypoint: initialised' "$WORK/mariadb.log" &&
				fail "mysqladmin ping passed over TCP during the initialisation"
			break
		fi
		sleep 0.25
	done
	wait_for "mariadb is ready for the root probe" mariadb_probe ready
}

# mariadb_as USER PASSWORD SQL runs SQL over TCP as USER.
mariadb_as() {
	run mariadb env "MYSQL_PWD=$2" mysql --protocol=TCP -h 127.0.0.1 -u "$1" -N -e "$3"
}

# check_backup_account PASSWORD checks that the backup account logs in with PASSWORD, over TCP as
# a Job's pod does, and holds its privileges.
check_backup_account() {
	mariadb_as "$BACKUP_USER" "$1" 'SELECT CURRENT_USER()' >/dev/null ||
		fail "the init-file's backup account does not log in with its password"
	mariadb_as "$BACKUP_USER" "$1" 'SHOW GRANTS' | grep -q 'LOCK TABLES' || fail "the backup account lacks its privileges"
}

# verify_mariadb_broken_dump starts the server on DATA with a truncated dump: the entrypoint must
# exit non-zero and leave nothing that the next start takes for initialised data.
verify_mariadb_broken_dump() {
	local data=$1 broken=$WORK/initdb-broken
	mkdir -p "$broken"
	head -c 40 "$WORK/initdb/restore.sql.gz" >"$broken/restore.sql.gz"
	start_mariadb "$data" "$broken"
	local pid=${SERVERS[-1]} status=0
	for _ in $(seq 240); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.5
	done
	kill -0 "$pid" 2>/dev/null && fail "mariadb kept running with a truncated dump"
	wait "$pid" || status=$?
	unset 'SERVERS[-1]'
	((status != 0)) || fail "the entrypoint exited 0 with a truncated dump"
	grep -q 'entrypoint: loading /docker-entrypoint-initdb.d/restore.sql.gz' "$WORK/mariadb.log" ||
		fail "the entrypoint did not load the truncated dump"
	[[ -e $data/mysql ]] && fail "a failed initialisation left a data folder that looks initialised"
	return 0
}

# write_mycnf writes the my.cnf the operator mounts into conf.d.
write_mycnf() {
	(cd "$REPO" && go run ./hack/images/verify/operatorconf mycnf) >"$WORK/appkeeper.cnf"
	# The operator's my.cnf names the init-file; a my.cnf that does not yet gets the line here.
	grep -q '^init-file' "$WORK/appkeeper.cnf" ||
		printf '\n[mysqld]\ninit-file = /etc/mysql/appkeeper/accounts.sql\n' >>"$WORK/appkeeper.cnf"
}

verify_mariadb() {
	unpack mariadb
	write_mycnf
	write_accounts 'first-backup-pw'
	write_initdb "$WORK/initdb"
	local client
	for client in mysql mysqladmin sh; do
		run mariadb sh -c "command -v $client" >/dev/null || fail "mariadb lacks $client"
	done

	# A fresh volume as a provisioner may make it: root's, writable by all.
	local data=$WORK/mysql-data
	mkdir -m 0777 "$data"
	start_mariadb_ready "$data" "$WORK/initdb"
	grep -q 'entrypoint: initialised' "$WORK/mariadb.log" || fail "mariadb did not initialise its data"
	[[ $(stat -c %u:%g "$data/mysql") == 999:999 ]] || fail "the data belongs to $(stat -c %u:%g "$data/mysql"), not 999"
	[[ $(mariadb_as shop "$USER_PASSWORD" 'SELECT v FROM shop.restored') == 'from the dump' ]] ||
		fail "the dump of /docker-entrypoint-initdb.d was not loaded into MYSQL_DATABASE"
	check_backup_account 'first-backup-pw'
	mariadb_as shop "$USER_PASSWORD" 'CREATE TABLE shop.kept (v VARCHAR(10)); INSERT INTO shop.kept VALUES ("yes")' ||
		fail "the user cannot write its database"
	mariadb_as shop "$USER_PASSWORD" 'CREATE DATABASE other' 2>/dev/null && fail "the user may create other databases"
	mariadb_as root wrong 'SELECT 1' 2>/dev/null && fail "root logs in with a wrong password"
	grep -qF -e "$ROOT_PASSWORD" -e "$USER_PASSWORD" "$WORK/mariadb.log" && fail "the server's output shows a password"
	stop_last

	# The same data again, with a new password in the init-file: no second initialisation, the
	# rows are there, and the init-file ran at this start too.
	write_accounts 'second-backup-pw'
	start_mariadb_ready "$data" "$WORK/initdb"
	grep -q 'entrypoint: initialising' "$WORK/mariadb.log" && fail "mariadb initialised existing data"
	[[ $(mariadb_as shop "$USER_PASSWORD" 'SELECT v FROM shop.kept') == yes ]] || fail "the data did not survive a restart"
	[[ $(mariadb_as shop "$USER_PASSWORD" 'SELECT COUNT(*) FROM shop.restored') == 1 ]] || fail "the dump was loaded again"
	check_backup_account 'second-backup-pw'
	mariadb_as "$BACKUP_USER" 'first-backup-pw' 'SELECT 1' 2>/dev/null && fail "the init-file did not change the backup password"
	stop_last

	# A volume the pod's fsGroup makes writable: root's, group 999 with write. A truncated dump
	# fails the first start; the next one, with the whole dump, initialises from scratch.
	local grouped=$WORK/mysql-grouped
	mkdir -m 2770 "$grouped"
	chgrp 999 "$grouped"
	verify_mariadb_broken_dump "$grouped"
	start_mariadb_ready "$grouped" "$WORK/initdb"
	[[ $(mariadb_as shop "$USER_PASSWORD" 'SELECT COUNT(*) FROM shop.restored') == 1 ]] ||
		fail "the start after a failed initialisation did not load the dump once"
	stop_last
	log "mariadb: initialises an empty volume (0777 or group 999) as 999, loads a .sql.gz of /docker-entrypoint-initdb.d into MYSQL_DATABASE, fails on a truncated one and starts afresh the next time, runs the init-file of conf.d at every start, passes the operator's probes, keeps data across a restart"
}

# The exporters live in verify_exporters.sh, beside this file.
# shellcheck source=hack/images/verify_exporters.sh
source "$(dirname "$0")/verify_exporters.sh"

REPO=$(cd "$(dirname "$0")/../.." && pwd)
if (($# == 0)); then
	set -- pause busybox nginx memcached mariadb broken nginx-exporter mysqld-exporter
fi
for name in "$@"; do
	"verify_${name//-/_}"
done
log "all checks passed: $*"
