# nginx as the nginxinc/nginx-unprivileged images run it, which the WebServer kind defaults to:
# uid and gid 101, `nginx -g 'daemon off;'` in the foreground, every /etc/nginx/conf.d/*.conf
# included (the operator mounts its server block as conf.d/default.conf), the page in
# /usr/share/nginx/html, pid and temporary files in /tmp, logs on stdout and stderr, no site on
# port 80. Needs no capability.
IMAGE=localhost/appkeeper/nginx:1.22
PACKAGES=(nginx-light)
USER_SPEC=101:101
CMD='["nginx", "-g", "daemon off;"]'
PORTS=(8080/tcp)
STOP_SIGNAL=SIGQUIT

before_install() {
	in_root "$1" groupadd --system --gid 101 nginx
	in_root "$1" useradd --system --uid 101 --gid 101 --home-dir /nonexistent --shell /usr/sbin/nologin nginx
}

after_install() {
	local r=$1
	rm -rf "$r/etc/nginx/sites-enabled" "$r/etc/nginx/sites-available" "$r/var/www/html"
	cat >"$r/etc/nginx/nginx.conf" <<-'CONF'
		# nginx for an unprivileged container: no user switch, writable paths in /tmp only.
		worker_processes auto;
		pid /tmp/nginx.pid;
		error_log /dev/stderr notice;
		include /etc/nginx/modules-enabled/*.conf;

		events {
		    worker_connections 1024;
		}

		http {
		    include /etc/nginx/mime.types;
		    default_type application/octet-stream;
		    access_log /dev/stdout;
		    client_body_temp_path /tmp/client_temp;
		    proxy_temp_path /tmp/proxy_temp;
		    fastcgi_temp_path /tmp/fastcgi_temp;
		    uwsgi_temp_path /tmp/uwsgi_temp;
		    scgi_temp_path /tmp/scgi_temp;
		    sendfile on;
		    keepalive_timeout 65;
		    include /etc/nginx/conf.d/*.conf;
		}
	CONF
	cat >"$r/etc/nginx/conf.d/default.conf" <<-'CONF'
		server {
		    listen 8080;
		    server_name localhost;
		    root /usr/share/nginx/html;
		    index index.html index.htm;
		}
	CONF
	mkdir -p "$r/usr/share/nginx/html"
	cat >"$r/usr/share/nginx/html/index.html" <<-'HTML'
		<!DOCTYPE html>
		<html>
		<head><title>Welcome to nginx!</title></head>
		<body>
		<h1>Welcome to nginx!</h1>
		<p>If you see this page, the nginx web server is successfully installed and working.</p>
		</body>
		</html>
	HTML
	# nginx opens its compiled-in error log before it reads nginx.conf.
	ln -sf /dev/stdout "$r/var/log/nginx/access.log"
	ln -sf /dev/stderr "$r/var/log/nginx/error.log"
}
