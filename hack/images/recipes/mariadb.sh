# MariaDB as the official mysql and mariadb images run it, the way the MySQL kind uses them: uid
# and gid 999, data in /var/lib/mysql, /etc/mysql/conf.d/*.cnf read last, port 3306 on every
# address, `mysql` and `mysqladmin` on PATH for the probes. On an empty data folder the entrypoint
# initialises it, sets the root password from MYSQL_ROOT_PASSWORD for root@localhost and
# root@MYSQL_ROOT_HOST, and creates MYSQL_DATABASE and MYSQL_USER with MYSQL_PASSWORD, all with a
# server that takes no TCP connection; then it runs mysqld in the foreground. It never needs root.
IMAGE=localhost/appkeeper/mariadb:10.11
PACKAGES=(mariadb-server mariadb-client)
USER_SPEC=999:999
ENTRYPOINT='["/usr/local/bin/entrypoint"]'
CMD='["mariadbd"]'
PORTS=(3306/tcp)

before_install() {
	# Before the package, so that everything it installs belongs to 999.
	in_root "$1" groupadd --system --gid 999 mysql
	in_root "$1" useradd --system --uid 999 --gid 999 --home-dir /nonexistent --shell /bin/false mysql
}

after_install() {
	local r=$1
	# The data of the package's own first start: an image starts from an empty folder.
	rm -rf "$r/var/lib/mysql" "$r/etc/mysql/debian.cnf" "$r/etc/mysql/debian-start"
	mkdir -p "$r/var/lib/mysql" "$r/run/mysqld"
	chown 999:999 "$r/var/lib/mysql" "$r/run/mysqld"
	chmod 0777 "$r/run/mysqld"
	rm -rf "$r/etc/mysql/mariadb.conf.d" "$r/etc/mysql/mariadb.cnf" "$r/etc/mysql/my.cnf"
	mkdir -p "$r/etc/mysql/conf.d"
	cat >"$r/etc/mysql/my.cnf" <<-'CNF'
		# The image's settings; the files in conf.d come after them and win.
		[client-server]
		socket = /run/mysqld/mysqld.sock

		[mysqld]
		datadir = /var/lib/mysql
		pid-file = /run/mysqld/mysqld.pid
		bind-address = *
		character-set-server = utf8mb4
		collation-server = utf8mb4_general_ci

		!includedir /etc/mysql/conf.d/
	CNF
	install -m 0755 /dev/stdin "$r/usr/local/bin/entrypoint" <<-'SH'
		#!/bin/sh
		# Initialises an empty data folder from MYSQL_* variables, then runs the server.
		set -eu
		if [ "${1#-}" != "$1" ]; then
			set -- mariadbd "$@"
		fi
		case "$1" in
		mariadbd | mysqld) ;;
		*) exec "$@" ;;
		esac

		datadir=/var/lib/mysql
		log() { echo "entrypoint: $*" >&2; }

		# sql_string quotes a value for SQL: backslashes and single quotes escaped.
		sql_string() { printf "'%s'" "$(printf '%s' "$1" | sed -e 's/\\/\\\\/g' -e "s/'/\\\\'/g")"; }
		# sql_name quotes an identifier: backticks doubled.
		sql_name() { printf '`%s`' "$(printf '%s' "$1" | sed -e 's/`/``/g')"; }

		initialise() {
			if [ -z "${MYSQL_ROOT_PASSWORD:-}" ]; then
				log "the data folder is empty and MYSQL_ROOT_PASSWORD is not set"
				exit 1
			fi
			log "initialising $datadir"
			mariadb-install-db --datadir="$datadir" --auth-root-authentication-method=normal \
				--skip-test-db --skip-name-resolve --rpm >/dev/null
			# No TCP: nothing can connect, and the probes fail, until the accounts exist.
			"$@" --skip-networking --socket=/tmp/init.sock &
			pid=$!
			tries=0
			until mariadb --protocol=socket --socket=/tmp/init.sock -uroot -e 'SELECT 1' >/dev/null 2>&1; do
				tries=$((tries + 1))
				if [ "$tries" -ge 60 ] || ! kill -0 "$pid" 2>/dev/null; then
					log "the initialisation server did not start"
					exit 1
				fi
				sleep 1
			done
			root=$(sql_string "$MYSQL_ROOT_PASSWORD")
			# printf, not echo: sh's echo would undo the escaped backslashes of a password.
			{
				printf '%s\n' "SET @@SESSION.SQL_LOG_BIN = 0;"
				printf '%s\n' "DELETE FROM mysql.global_priv WHERE User = '' OR (User = 'root' AND Host <> 'localhost');"
				printf '%s\n' "FLUSH PRIVILEGES;"
				printf '%s\n' "ALTER USER 'root'@'localhost' IDENTIFIED BY $root;"
				if [ -n "${MYSQL_ROOT_HOST:-}" ] && [ "$MYSQL_ROOT_HOST" != localhost ]; then
					host=$(sql_string "$MYSQL_ROOT_HOST")
					printf '%s\n' "CREATE USER 'root'@$host IDENTIFIED BY $root;"
					printf '%s\n' "GRANT ALL ON *.* TO 'root'@$host WITH GRANT OPTION;"
				fi
				if [ -n "${MYSQL_DATABASE:-}" ]; then
					printf '%s\n' "CREATE DATABASE IF NOT EXISTS $(sql_name "$MYSQL_DATABASE");"
				fi
				if [ -n "${MYSQL_USER:-}" ] && [ -n "${MYSQL_PASSWORD:-}" ]; then
					user=$(sql_string "$MYSQL_USER")
					printf '%s\n' "CREATE USER $user@'%' IDENTIFIED BY $(sql_string "$MYSQL_PASSWORD");"
					if [ -n "${MYSQL_DATABASE:-}" ]; then
						printf '%s\n' "GRANT ALL ON $(sql_name "$MYSQL_DATABASE").* TO $user@'%';"
					fi
				fi
			} | mariadb --protocol=socket --socket=/tmp/init.sock -uroot
			kill "$pid"
			wait "$pid" || true
			log "initialised"
		}

		if [ ! -d "$datadir/mysql" ]; then
			initialise "$@"
		fi
		exec "$@"
	SH
}
