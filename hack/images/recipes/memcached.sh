# memcached as the official memcached image runs it, which the Memcached kind defaults to: user
# memcache with uid and gid 11211, an entrypoint that runs `memcached "$@"` when the first
# argument is a flag (the operator passes only flags), CMD ["memcached"]. Writes nothing, so a
# read-only root filesystem suits it.
IMAGE=localhost/appkeeper/memcached:1.6
PACKAGES=(memcached)
USER_SPEC=11211:11211
ENTRYPOINT='["/usr/local/bin/entrypoint"]'
CMD='["memcached"]'
PORTS=(11211/tcp)

after_install() {
	local r=$1
	# Debian's package makes a system user memcache; the official image's has id 11211.
	if in_root "$r" getent passwd memcache >/dev/null; then
		in_root "$r" groupmod --gid 11211 memcache
		in_root "$r" usermod --uid 11211 --gid 11211 memcache
	else
		in_root "$r" groupadd --gid 11211 memcache
		in_root "$r" useradd --uid 11211 --gid 11211 --home-dir /nonexistent --shell /usr/sbin/nologin memcache
	fi
	rm -f "$r/etc/memcached.conf"
	cat >"$r/usr/local/bin/entrypoint" <<-'SH'
		#!/bin/sh
		# Runs memcached with the given flags, or the given command.
		set -e
		if [ "${1#-}" != "$1" ]; then
			set -- memcached "$@"
		fi
		exec "$@"
	SH
	chmod 0755 "$r/usr/local/bin/entrypoint"
}
