# shellcheck shell=bash
# The checks of the exporter images, sourced by verify.sh: each exporter runs as its image's user
# on a read-only root with the flags the operator passes, beside the local image of the
# application it reads, with that application's settings as the operator writes them.

# unpack_once NAME unpacks NAME unless an earlier check did.
unpack_once() {
	[[ -d $WORK/$1/root ]] || unpack "$1"
}

# metric URL NAME prints the value of the first series NAME that URL serves, labels or not.
metric() {
	curl -fsS "$1" | awk -v name="$2" '!found && ($1 == name || index($1, name "{") == 1) { print $2; found = 1 }'
}

# metric_is URL NAME VALUE succeeds when URL serves the series NAME with VALUE.
metric_is() {
	[[ $(metric "$1" "$2") == "$3" ]]
}

# The server block that nginx's exporter reads, as the WebServer's spec.monitoring asks for it.
NGINX_STUB_STATUS='
server {
    listen 127.0.0.1:8079;
    server_name _;
    access_log off;

    location = /stub_status {
        stub_status;
    }
}'

verify_nginx_exporter() {
	unpack_once nginx
	unpack nginx-exporter
	local conf=$WORK/nginx-monitored.conf metrics=http://127.0.0.1:9113/metrics
	(cd "$REPO" && go run ./hack/images/verify/operatorconf nginx 8080) >"$conf"
	# The operator's server block holds the stub_status server when monitoring is on; one that
	# does not yet gets it here.
	grep -q stub_status "$conf" || printf '%s\n' "$NGINX_STUB_STATUS" >>"$conf"
	# The exporter first: in a pod it may well start before nginx listens.
	start nginx-exporter -ro -- --nginx.scrape-uri=http://127.0.0.1:8079/stub_status
	sleep 2
	local exporter
	exporter=$(main_pid)
	[[ -n $exporter ]] || fail "nginx's exporter exited while nginx was not up yet: $(cat "$WORK/nginx-exporter.log")"
	[[ $(ps -o uid= -p "$exporter" | tr -d ' ') == 1001 ]] || fail "nginx's exporter is not uid 1001"
	start nginx -m "$conf:/etc/nginx/conf.d/default.conf"
	wait_for "nginx's exporter serves nginx_up 1" metric_is "$metrics" nginx_up 1
	local before after
	before=$(metric "$metrics" nginx_connections_accepted)
	for _ in 1 2 3; do
		curl -fsS -o /dev/null http://127.0.0.1:8080/ || fail "nginx does not serve its page"
	done
	after=$(metric "$metrics" nginx_connections_accepted)
	((after >= before + 3)) || fail "nginx_connections_accepted went from $before to $after after 3 requests"
	stop_last
	wait_for "nginx's exporter serves nginx_up 0 once nginx stopped" metric_is "$metrics" nginx_up 0
	stop_last
	log "nginx-exporter: as uid 1001 on a read-only root, waits for nginx, serves nginx_up and nginx_connections_accepted ($before, then $after after 3 requests) on 9113"
}

# The account the operator gives mysqld's exporter, from 127.0.0.1 only, in its init-file and in
# the exporter's my.cnf. Since MariaDB 10.5.9, SHOW SLAVE STATUS, which the exporter's default slave_status collector
# runs, needs SLAVE MONITOR, which REPLICATION CLIENT no longer holds; the grant adds it in a
# comment that only MariaDB from 10.5.9 on executes and that MySQL, which has no such privilege,
# skips.
EXPORTER_USER=appkeeper_exporter
EXPORTER_PASSWORD='exp0rter-pa$$word'

verify_mysqld_exporter() {
	unpack_once mariadb
	unpack mysqld-exporter
	local metrics=http://127.0.0.1:9104/metrics
	printf '[client]\nuser = %s\npassword = %s\nhost = 127.0.0.1\nport = 3306\n' "$EXPORTER_USER" "$EXPORTER_PASSWORD" >"$WORK/exporter.cnf"
	start mysqld-exporter -ro -m "$WORK/exporter.cnf:/etc/mysqld-exporter/.my.cnf" -- --config.my-cnf=/etc/mysqld-exporter/.my.cnf
	wait_for "mysqld's exporter serves mysql_up 0 with no server" metric_is "$metrics" mysql_up 0
	[[ $(ps -o uid= -p "$(main_pid)" | tr -d ' ') == 65534 ]] || fail "mysqld's exporter is not uid 65534"

	write_mycnf
	write_accounts 'backup-pw'
	cat >>"$WORK/accounts.sql" <<-EOF
		CREATE USER IF NOT EXISTS '$EXPORTER_USER'@'127.0.0.1' IDENTIFIED BY '$EXPORTER_PASSWORD' WITH MAX_USER_CONNECTIONS 3;
		ALTER USER '$EXPORTER_USER'@'127.0.0.1' IDENTIFIED BY '$EXPORTER_PASSWORD' WITH MAX_USER_CONNECTIONS 3;
		GRANT PROCESS, REPLICATION CLIENT, SELECT /*M!100509 , SLAVE MONITOR */ ON *.* TO '$EXPORTER_USER'@'127.0.0.1';
	EOF
	local data=$WORK/mysql-exported
	mkdir -m 0777 "$data"
	mkdir -p "$WORK/initdb-empty"
	start_mariadb_ready "$data" "$WORK/initdb-empty"
	wait_for "mysqld's exporter serves mysql_up 1 once the server is up" metric_is "$metrics" mysql_up 1
	local uptime
	uptime=$(metric "$metrics" mysql_global_status_uptime)
	[[ -n $uptime ]] || fail "mysqld's exporter serves no mysql_global_status_uptime"
	# A collector whose privilege the account lacks fails each scrape and says why.
	metric_is "$metrics" mysql_exporter_last_scrape_error 0 ||
		fail "a collector failed: $(grep -m 1 'Error from scraper' "$WORK/mysqld-exporter.log")"
	stop_last
	stop_last
	log "mysqld-exporter: as uid 65534 on a read-only root, serves mysql_up 0 with no server, then mysql_up 1 and mysql_global_status_uptime ($uptime) and no collector error as the account with PROCESS, REPLICATION CLIENT, SELECT (and SLAVE MONITOR on MariaDB) on 9104"
}
