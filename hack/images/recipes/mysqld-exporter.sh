# The MySQL server exporter as prom/mysqld-exporter runs it, which the MySQL kind's monitoring
# defaults to: user nobody (uid and gid 65534), the exporter itself as the entrypoint at the
# upstream path /bin/mysqld_exporter, so the container's arguments are its flags
# (`--config.my-cnf=...`), and /metrics on port 9104. It reads its account from the my.cnf at
# start and reports `mysql_up 0` while the server does not answer. Writes nothing, so a read-only
# root filesystem suits it.
IMAGE=localhost/appkeeper/mysqld-exporter:0.14
PACKAGES=(prometheus-mysqld-exporter)
USER_SPEC=65534:65534
ENTRYPOINT='["/bin/mysqld_exporter"]'
PORTS=(9104/tcp)

after_install() {
	local r=$1
	ln -s prometheus-mysqld-exporter "$r/usr/bin/mysqld_exporter"
	rm -f "$r/etc/default/prometheus-mysqld-exporter"
}
