# WordPress as the official wordpress:*-apache images run it, which the WordPress kind defaults to:
# Apache with PHP on port 80, started as root and serving as www-data (uid 33), WordPress in the
# document root /var/www/html with wp-content on the volume the operator mounts there. At start the
# entrypoint copies WordPress into the document root, keeping every file the volume already holds
# (uploads, themes, plugins), and a wp-config.php that reads the database coordinates
# (WORDPRESS_DB_HOST, _NAME, _USER, _PASSWORD) and the eight keys and salts (WORDPRESS_AUTH_KEY …
# WORDPRESS_NONCE_SALT) from the environment. Logs go to stdout and stderr. PHP has the XML extension
# that XML-RPC needs and mbstring, as the official image does, and the default theme, without which
# the site serves blank pages.
IMAGE=localhost/appkeeper/wordpress:6.1
PACKAGES=(wordpress wordpress-theme-twentytwentythree apache2 libapache2-mod-php php-mysql php-xml php-mbstring)
ENTRYPOINT='["/usr/local/bin/entrypoint"]'
CMD='["apache2-foreground"]'
WORKDIR=/var/www/html
PORTS=(80/tcp)
STOP_SIGNAL=SIGWINCH

after_install() {
	local r=$1
	# Debian spreads WordPress over /usr/share/wordpress, /var/lib/wordpress and /etc/wordpress
	# with symbolic links; the image keeps one self-contained copy to install from.
	mkdir -p "$r/usr/src"
	in_root "$r" cp -aL /usr/share/wordpress /usr/src/wordpress
	rm -f "$r/usr/src/wordpress/wp-config.php" "$r/usr/src/wordpress/wp-config-sample.php" "$r/usr/src/wordpress/.htaccess"
	cat >"$r/usr/src/wordpress/wp-config.php" <<-'PHP'
		<?php
		// Written by the image: every setting comes from the container's environment.
		function appkeeper_env($name, $default = '') {
			$value = getenv($name);
			return $value === false ? $default : $value;
		}
		define('DB_NAME', appkeeper_env('WORDPRESS_DB_NAME', 'wordpress'));
		define('DB_USER', appkeeper_env('WORDPRESS_DB_USER', 'wordpress'));
		define('DB_PASSWORD', appkeeper_env('WORDPRESS_DB_PASSWORD'));
		define('DB_HOST', appkeeper_env('WORDPRESS_DB_HOST', 'mysql'));
		define('DB_CHARSET', 'utf8mb4');
		define('DB_COLLATE', '');
		foreach (array('AUTH_KEY', 'SECURE_AUTH_KEY', 'LOGGED_IN_KEY', 'NONCE_KEY',
			'AUTH_SALT', 'SECURE_AUTH_SALT', 'LOGGED_IN_SALT', 'NONCE_SALT') as $key) {
			define($key, appkeeper_env('WORDPRESS_' . $key));
		}
		$table_prefix = appkeeper_env('WORDPRESS_TABLE_PREFIX', 'wp_');
		define('WP_DEBUG', false);
		// WordPress writes files itself, without asking for FTP credentials.
		define('FS_METHOD', 'direct');
		if (!defined('ABSPATH')) {
			define('ABSPATH', __DIR__ . '/');
		}
		require_once ABSPATH . 'wp-settings.php';
	PHP
	# WordPress's own rewrite rules, for its permalinks: it writes them into the document root at
	# install, which a new pod does not keep, so every pod starts with them.
	cat >"$r/usr/src/wordpress/.htaccess" <<-'HTACCESS'
		# BEGIN WordPress
		<IfModule mod_rewrite.c>
		RewriteEngine On
		RewriteRule .* - [E=HTTP_AUTHORIZATION:%{HTTP:Authorization}]
		RewriteBase /
		RewriteRule ^index\.php$ - [L]
		RewriteCond %{REQUEST_FILENAME} !-f
		RewriteCond %{REQUEST_FILENAME} !-d
		RewriteRule . /index.php [L]
		</IfModule>
		# END WordPress
	HTACCESS
	in_root "$r" chown -R www-data:www-data /usr/src/wordpress
	rm -rf "$r/var/www/html"
	mkdir -p "$r/var/www/html"
	in_root "$r" chown www-data:www-data /var/www/html

	# Apache serves the document root to everyone, logs to the container's output, and passes the
	# environment on to PHP.
	rm -f "$r/etc/apache2/sites-enabled/"* "$r/etc/apache2/conf-enabled/wordpress.conf"
	cat >"$r/etc/apache2/sites-enabled/000-wordpress.conf" <<-'CONF'
		<VirtualHost *:80>
			DocumentRoot /var/www/html
			<Directory /var/www/html>
				Options FollowSymLinks
				AllowOverride All
				Require all granted
			</Directory>
			ErrorLog /dev/stderr
			CustomLog /dev/stdout combined
		</VirtualHost>
	CONF
	printf 'ServerName localhost\n' >"$r/etc/apache2/conf-enabled/servername.conf"
	ln -sfT /dev/stderr "$r/var/log/apache2/error.log"
	ln -sfT /dev/stdout "$r/var/log/apache2/access.log"
	ln -sfT /dev/stdout "$r/var/log/apache2/other_vhosts_access.log"
	in_root "$r" a2enmod -q rewrite >/dev/null

	cat >"$r/usr/local/bin/apache2-foreground" <<-'SH'
		#!/bin/sh
		# Runs Apache in the foreground with Debian's settings.
		set -e
		. /etc/apache2/envvars
		mkdir -p "$APACHE_RUN_DIR" "$APACHE_LOCK_DIR" "$APACHE_LOG_DIR"
		rm -f "$APACHE_PID_FILE"
		exec apache2 -DFOREGROUND "$@"
	SH
	cat >"$r/usr/local/bin/entrypoint" <<-'SH'
		#!/bin/sh
		# Installs WordPress into the document root, keeping what the content volume holds, then
		# runs the command.
		set -e
		if [ ! -e /var/www/html/index.php ] || [ ! -e /var/www/html/wp-includes/version.php ]; then
			cp -a -n /usr/src/wordpress/. /var/www/html/
		fi
		chown www-data:www-data /var/www/html/wp-content
		exec "$@"
	SH
	chmod 0755 "$r/usr/local/bin/apache2-foreground" "$r/usr/local/bin/entrypoint"
}
