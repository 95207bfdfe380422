#!/usr/bin/env bash
# Builds the local container images from Debian bookworm's packages, without any registry, into
# image tarballs that `ctr -n k8s.io images import` loads.
#
# Usage: hack/images/build.sh DEST [IMAGE...]
#   DEST   folder for the base root filesystem, the work folders and the tarballs (bin/images)
#   IMAGE  recipe names under hack/images/recipes (default: all of them, one after the other)
#
# One `debootstrap --variant=minbase` root filesystem is made once and copied for each image. An
# image whose tarball was packed from the same recipe, base and packer is skipped: its stamp holds
# a hash of them. Needs root (debootstrap, chroot, unshare).
set -euo pipefail

DEST=${1:?usage: hack/images/build.sh DEST [IMAGE...]}
shift
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
SUITE=bookworm
mkdir -p "$DEST"
DEST=$(cd "$DEST" && pwd)
# The root filesystems live in dot folders, which the go command never walks: debootstrap and
# in_root mount /proc inside them, and a `go mod tidy` or `go vet ./...` beside the build would
# read it and fail.
BASE=$DEST/.base-$SUITE
PACK=$DEST/.pack

log() { printf '%s images: %s\n' "$(date +%T)" "$*" >&2; }

# in_root ROOT CMD... runs CMD chrooted in ROOT with /proc and /dev mounted in a private mount
# namespace: the mounts vanish with the command, whatever happens to it.
in_root() {
	local root=$1
	shift
	unshare --mount --propagation private --fork -- sh -c '
		root=$1; shift
		mount -t proc proc "$root/proc"
		mount --rbind /dev "$root/dev"
		exec chroot "$root" env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 "$@"' sh "$root" "$@"
}

# base_root makes the shared root filesystem: minbase, apt that installs no recommends, docs, man
# pages or locales, and a policy-rc.d that keeps every package's service from starting.
base_root() {
	local stamp
	stamp=$(printf '%s %s\n' "$SUITE" "$(declare -f base_root in_root | sha256sum)" | sha256sum | cut -c1-16)
	if [[ -f $BASE/.stamp && $(cat "$BASE/.stamp") == "$stamp" ]]; then
		return
	fi
	local boot=$BASE.debootstrap
	if [[ ! -f $boot/.done ]]; then
		log "debootstrap $SUITE into $boot"
		rm -rf "$boot"
		debootstrap --variant=minbase "$SUITE" "$boot" "$MIRROR" >"$DEST/debootstrap.log" 2>&1 ||
			{ tail -20 "$DEST/debootstrap.log" >&2; exit 1; }
		touch "$boot/.done"
	fi
	log "configuring the base root filesystem"
	rm -rf "$BASE.tmp"
	cp -a "$boot" "$BASE.tmp"
	rm -f "$BASE.tmp/.done"
	local r=$BASE.tmp
	cat >"$r/etc/apt/sources.list" <<-EOF
		deb $MIRROR $SUITE main
		deb $MIRROR $SUITE-updates main
		deb http://deb.debian.org/debian-security $SUITE-security main
	EOF
	printf '#!/bin/sh\n# No service starts while an image is built.\nexit 101\n' >"$r/usr/sbin/policy-rc.d"
	chmod 0755 "$r/usr/sbin/policy-rc.d"
	cat >"$r/etc/apt/apt.conf.d/90images" <<-'EOF'
		APT::Install-Recommends "false";
		APT::Install-Suggests "false";
		Acquire::Languages "none";
	EOF
	cat >"$r/etc/dpkg/dpkg.cfg.d/90images" <<-'EOF'
		path-exclude=/usr/share/doc/*
		path-include=/usr/share/doc/*/copyright
		path-exclude=/usr/share/man/*
		path-exclude=/usr/share/info/*
		path-exclude=/usr/share/locale/*
		path-exclude=/usr/share/lintian/*
	EOF
	in_root "$r" apt-get update -qq
	in_root "$r" apt-get -qq clean
	find "$r/usr/share/doc" -mindepth 1 ! -name copyright ! -type d -delete
	rm -rf "$r/usr/share/man"/* "$r/usr/share/info"/* "$r/usr/share/locale"/*
	rm -rf "$BASE"
	mv "$BASE.tmp" "$BASE"
	echo "$stamp" >"$BASE/.stamp"
}

# The recipe hooks and settings; a recipe file sets what its image needs.
reset_recipe() {
	IMAGE='' FROM_BASE=true PACKAGES=() USER_SPEC='' ENTRYPOINT='' CMD='' WORKDIR='' ENV=() PORTS=() INPUTS=() STOP_SIGNAL=''
	before_install() { :; }
	after_install() { :; }
	build_root() { debian_root "$1"; }
}

# debian_root ROOT copies the base into ROOT, installs the recipe's packages between its two hooks
# and drops what a container never reads.
debian_root() {
	local r=$1
	cp -a "$BASE" "$r"
	rm -f "$r/.stamp"
	before_install "$r"
	if ((${#PACKAGES[@]})); then
		in_root "$r" apt-get install -y -qq -o Dpkg::Use-Pty=0 "${PACKAGES[@]}" >"$r.apt.log" 2>&1 ||
			{ tail -30 "$r.apt.log" >&2; exit 1; }
	fi
	after_install "$r"
	in_root "$r" apt-get -qq clean
	rm -rf "$r/var/lib/apt/lists"/* "$r/var/cache/apt"/* "$r/var/cache/debconf"/*-old \
		"$r/var/log"/*.log "$r/var/log/apt"/* "$r/tmp"/* "$r/root/.cache"
	find "$r/usr/share/doc" -mindepth 1 ! -name copyright ! -type d -delete
	rm -rf "$r/usr/share/man"/* "$r/usr/share/info"/* "$r/usr/share/locale"/*
	rm -f "$r/usr/sbin/policy-rc.d" "$r.apt.log"
}

# build_image NAME builds one image from hack/images/recipes/NAME.sh unless its stamp is current.
build_image() {
	local name=$1 recipe=$HERE/recipes/$1.sh
	[[ -f $recipe ]] || { echo "no recipe $recipe" >&2; exit 1; }
	reset_recipe
	# shellcheck source=/dev/null
	source "$recipe"
	local out=$DEST/$name.tar stamp base_stamp=()
	$FROM_BASE && base_stamp=("$BASE/.stamp")
	stamp=$(cat "$HERE/build.sh" "$recipe" "${PACKER_SOURCES[@]}" "${base_stamp[@]}" "${INPUTS[@]/#/$REPO/}" | sha256sum | cut -c1-16)
	if [[ -f $out && -f $out.stamp && $(cat "$out.stamp") == "$stamp" ]]; then
		log "$IMAGE is current ($out)"
		return
	fi
	local start=$SECONDS work=$DEST/.work-$name
	log "building $IMAGE"
	rm -rf "$work" "$out.stamp"
	build_root "$work"
	local args=(-rootfs "$work" -name "$IMAGE" -o "$out.tmp")
	[[ -n $USER_SPEC ]] && args+=(-user "$USER_SPEC")
	[[ -n $ENTRYPOINT ]] && args+=(-entrypoint "$ENTRYPOINT")
	[[ -n $CMD ]] && args+=(-cmd "$CMD")
	[[ -n $WORKDIR ]] && args+=(-workdir "$WORKDIR")
	[[ -n $STOP_SIGNAL ]] && args+=(-stop-signal "$STOP_SIGNAL")
	local e p
	for e in PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "${ENV[@]}"; do args+=(-env "$e"); done
	for p in "${PORTS[@]}"; do args+=(-port "$p"); done
	"$PACK" "${args[@]}"
	mv "$out.tmp" "$out"
	echo "$stamp" >"$out.stamp"
	rm -rf "$work"
	log "built $IMAGE in $((SECONDS - start)) s: $(du -h "$out" | cut -f1)"
}

cd "$REPO"
CGO_ENABLED=0 go build -o "$PACK" ./hack/images/pack
# The packer's own sources, tests aside: a change to how an image is packed repacks every image.
mapfile -t PACKER_SOURCES < <(find "$HERE/pack" "$REPO/internal/ociarchive" -name '*.go' ! -name '*_test.go' | sort)
if (($# == 0)); then
	set -- pause busybox nginx memcached mariadb wordpress broken
fi
base_root
for name in "$@"; do
	build_image "$name"
done
