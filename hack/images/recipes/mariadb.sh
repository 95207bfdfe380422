# MariaDB as the official mysql and mariadb images run it, the way the MySQL kind uses them: uid
# and gid 999, data in /var/lib/mysql, /etc/mysql/conf.d/*.cnf read last, port 3306 on every
# address, `mysql` and `mysqladmin` on PATH for the probes. On a data folder without a `mysql`
# folder the entrypoint initialises it, with a server that takes no TCP connection: it sets the
# root password from MYSQL_ROOT_PASSWORD for root@localhost and root@MYSQL_ROOT_HOST, creates
# MYSQL_DATABASE and MYSQL_USER with MYSQL_PASSWORD, then runs the files of
# /docker-entrypoint-initdb.d in name order (*.sql and *.sql.gz as root in MYSQL_DATABASE, *.sh
# run when executable and sourced otherwise); any failure exits non-zero, and the data appears in
# /var/lib/mysql only once every step succeeded. A [mysqld] init-file in conf.d runs at every
# start, that of the initialisation included; the initialisation writes no binary log. Then it
# runs mysqld in the foreground. It never needs root. mariadb-backup is there for copying a
# member's data to another.
IMAGE=localhost/appkeeper/mariadb:10.11
PACKAGES=(mariadb-server mariadb-client mariadb-backup)
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
		#!/bin/bash
		# Initialises an empty data folder from MYSQL_* variables and /docker-entrypoint-initdb.d,
		# then runs the server. Bash, not sh: pipefail makes a corrupt .sql.gz fail the load. The
		# options are the official images', without -u, so that the *.sh they source behave alike.
		set -eo pipefail
		if [ "${1#-}" != "$1" ]; then
			set -- mariadbd "$@"
		fi
		case "$1" in
		mariadbd | mysqld) ;;
		*) exec "$@" ;;
		esac

		datadir=/var/lib/mysql
		# The first initialisation builds the data in $staging, on the data folder's own filesystem,
		# and moves it into place only once every step has succeeded, the mysql folder last: that
		# folder is what this entrypoint and the official images take for initialised data, so a
		# failed or killed initialisation, say halfway through loading a dump, is never mistaken
		# for a finished one. The next start removes what it left and starts again; a move that
		# was interrupted is finished, as .complete says the data is whole.
		staging=$datadir/.appkeeper-initialising
		initdb=/docker-entrypoint-initdb.d
		socket=/tmp/init.sock
		log() { echo "entrypoint: $*" >&2; }

		# sql_string quotes a value for SQL: backslashes and single quotes escaped.
		sql_string() { printf "'%s'" "$(printf '%s' "$1" | sed -e 's/\\/\\\\/g' -e "s/'/\\\\'/g")"; }
		# sql_name quotes an identifier: backticks doubled.
		sql_name() { printf '`%s`' "$(printf '%s' "$1" | sed -e 's/`/``/g')"; }
		# process_sql runs SQL from stdin as root on the initialisation server, in MYSQL_DATABASE
		# when it is set, as the official images run the files of $initdb; a sourced *.sh may call
		# it too. The mariadb client stops at the first error and exits non-zero.
		process_sql() {
			MYSQL_PWD=$MYSQL_ROOT_PASSWORD mariadb --protocol=socket --socket="$socket" -uroot \
				${MYSQL_DATABASE:+--database="$MYSQL_DATABASE"} "$@"
		}

		start_init_server() {
			# No TCP: nothing can connect, and the probes fail, until the data is in place. No
			# binary log: what initialisation writes is no transaction for replicas to receive, as
			# every member of a cluster initialises its own data alike.
			"$@" --datadir="$staging" --skip-networking --socket="$socket" --skip-log-bin &
			pid=$!
			# A failed step ends the script: the server must not outlive it.
			trap 'kill "$pid" 2>/dev/null || true' EXIT
			local tries=0
			until mariadb --protocol=socket --socket="$socket" -uroot -e 'SELECT 1' >/dev/null 2>&1; do
				tries=$((tries + 1))
				if [ "$tries" -ge 60 ] || ! kill -0 "$pid" 2>/dev/null; then
					log "the initialisation server did not start"
					exit 1
				fi
				sleep 1
			done
		}

		stop_init_server() {
			kill "$pid"
			# A clean shutdown flushes every table: only then may the data be moved into place.
			if ! wait "$pid"; then
				log "the initialisation server did not stop cleanly"
				exit 1
			fi
			trap - EXIT
		}

		# setup_accounts sets root's password and creates MYSQL_DATABASE and MYSQL_USER.
		setup_accounts() {
			local root host user
			root=$(sql_string "$MYSQL_ROOT_PASSWORD")
			# printf, not echo: echo may undo the escaped backslashes of a password.
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
			} | mariadb --protocol=socket --socket="$socket" -uroot
		}

		# load_initdb runs the files of $initdb in name order, as the official images do; the folder
		# may be absent or empty. An executable *.sh runs, another is sourced.
		load_initdb() {
			local f
			shopt -s nullglob
			for f in "$initdb"/*; do
				case "$f" in
				*.sh)
					log "running $f"
					if [ -x "$f" ]; then "$f"; else . "$f"; fi
					;;
				*.sql)
					log "loading $f"
					process_sql <"$f"
					;;
				*.sql.gz)
					log "loading $f"
					gunzip -c "$f" | process_sql
					;;
				*) log "ignoring $f" ;;
				esac
			done
			shopt -u nullglob
		}

		initialise() {
			if [ -z "${MYSQL_ROOT_PASSWORD:-}" ]; then
				log "the data folder is empty and MYSQL_ROOT_PASSWORD is not set"
				exit 1
			fi
			log "initialising $datadir"
			rm -rf "$staging"
			mkdir "$staging"
			# mariadb-install-db's bootstrap ignores an init-file of conf.d; the initialisation
			# server runs it, before the accounts are set up, as every later start does.
			mariadb-install-db --datadir="$staging" --auth-root-authentication-method=normal \
				--skip-test-db --skip-name-resolve --rpm >/dev/null
			start_init_server "$@"
			setup_accounts
			load_initdb
			stop_init_server
			touch "$staging/.complete"
		}

		# move_into_place moves the complete data of $staging into the data folder, mysql last.
		# rename fails rather than merge a folder into one the data folder already holds.
		move_into_place() {
			local f
			shopt -s nullglob dotglob
			for f in "$staging"/*; do
				case "${f##*/}" in
				mysql | .complete) ;;
				*) mv -T "$f" "$datadir/${f##*/}" ;;
				esac
			done
			shopt -u nullglob dotglob
			if [ -d "$staging/mysql" ]; then
				mv -T "$staging/mysql" "$datadir/mysql"
			fi
			rm -rf "$staging"
			log "initialised"
		}

		if [ -e "$staging/.complete" ]; then
			log "finishing an initialisation that was interrupted while its data was moved into place"
			move_into_place
		fi
		if [ ! -d "$datadir/mysql" ]; then
			initialise "$@"
			move_into_place
		fi
		rm -rf "$staging"
		exec "$@"
	SH
}
