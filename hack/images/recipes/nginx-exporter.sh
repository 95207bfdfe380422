# The NGINX Prometheus exporter as nginx/nginx-prometheus-exporter runs it, which the WebServer
# kind's monitoring defaults to: uid and gid 1001, the exporter itself as the entrypoint at the
# upstream path /usr/bin/nginx-prometheus-exporter, so the container's arguments are its flags
# (`--nginx.scrape-uri=...`), and /metrics on port 9113. Debian's 0.11 reads its flags with Go's
# flag package, which takes `--name=value` as the newer releases do. The newer releases start
# whether or not nginx answers yet; 0.11 exits at once unless told to retry, so the image's
# environment, which those releases ignore, gives it a minute of retries: nginx may start after
# it in the same pod. Writes nothing, so a read-only root filesystem suits it.
IMAGE=localhost/appkeeper/nginx-exporter:0.11
PACKAGES=(prometheus-nginx-exporter)
USER_SPEC=1001:1001
ENTRYPOINT='["/usr/bin/nginx-prometheus-exporter"]'
PORTS=(9113/tcp)
ENV=(NGINX_RETRIES=60 NGINX_RETRY_INTERVAL=1s)

after_install() {
	local r=$1
	ln -s prometheus-nginx-exporter "$r/usr/bin/nginx-prometheus-exporter"
	# The package's settings for its own service, which never runs in a container.
	rm -f "$r/etc/default/prometheus-nginx-exporter"
}
