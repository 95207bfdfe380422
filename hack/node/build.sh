#!/usr/bin/env bash
# Builds the real node's binaries from Go modules, each into a folder of BIN named by its version,
# skipping any binary that already exists there:
#   node-KUBE_VERSION/{kubelet,kube-proxy}                    (the hack/controlplane module)
#   containerd-CONTAINERD_VERSION/{containerd,ctr,containerd-shim-runc-v2}
#   coredns-COREDNS_VERSION/coredns                           (the hack/tools/coredns module)
# The builds run one after another: each one alone already keeps every core busy. PART builds only
# kubelet and kube-proxy ("kubernetes") or only containerd and CoreDNS ("runtime"); both by default.
# Usage: build.sh BIN KUBE_VERSION CONTAINERD_VERSION COREDNS_VERSION [PART]
set -euo pipefail
bin=$1 kube_version=$2 containerd_version=$3 coredns_version=$4 part=${5:-all}
controlplane=$(cd "$(dirname "$0")/../controlplane" && pwd)
mkdir -p "$bin"
bin=$(cd "$bin" && pwd)
export CGO_ENABLED=0

# go_install DEST NAME PACKAGE@VERSION [go install flags...] installs one command from the module proxy
# into DEST/NAME, through a temporary folder so that an interrupted build leaves no binary behind.
go_install() {
	local dest=$1 name=$2 package=$3
	shift 3
	[ -x "$dest/$name" ] && return 0
	echo "building $name ${package##*@}"
	local tmp
	tmp=$(mktemp -d)
	GOBIN="$tmp" go install -trimpath "$@" "$package"
	mkdir -p "$dest"
	mv "$tmp/$name" "$dest/$name"
	rmdir "$tmp"
}

node=$bin/node-$kube_version
mkdir -p "$node"
[ "$part" = runtime ] || for cmd in kubelet kube-proxy; do
	if [ ! -x "$node/$cmd" ]; then
		echo "building $cmd $kube_version"
		(cd "$controlplane" && go build -trimpath \
			-ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$kube_version" \
			-o "$node/$cmd.tmp" "./$cmd")
		mv "$node/$cmd.tmp" "$node/$cmd"
	fi
done

[ "$part" = kubernetes ] && exit 0

# Without cgo and without the storage drivers that need C libraries (btrfs, devmapper, zfs): the
# node uses the overlayfs snapshotter. urfave_cli_no_docs and the shim's no_grpc are what
# containerd's own release build adds; the version is stamped so the kubelet sees v2, not "+unknown".
containerd=$bin/containerd-$containerd_version
containerd_tags="no_btrfs no_devmapper no_zfs urfave_cli_no_docs"
containerd_ldflags="-s -w -X github.com/containerd/containerd/v2/version.Version=$containerd_version"
for cmd in containerd ctr; do
	go_install "$containerd" "$cmd" "github.com/containerd/containerd/v2/cmd/$cmd@$containerd_version" \
		-tags "$containerd_tags" -ldflags "$containerd_ldflags"
done
go_install "$containerd" containerd-shim-runc-v2 \
	"github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2@$containerd_version" \
	-tags "$containerd_tags no_grpc" -ldflags "$containerd_ldflags"

# CoreDNS with the plugins the node's Corefile uses, from hack/tools/coredns, which pins the version.
coredns=$bin/coredns-$coredns_version
tools=$(cd "$(dirname "$0")/../tools/coredns" && pwd)
if [ ! -x "$coredns/coredns" ]; then
	grep -q "github.com/coredns/coredns $coredns_version\$" "$tools/go.mod" ||
		{ echo "hack/tools/coredns/go.mod does not require CoreDNS $coredns_version" >&2; exit 1; }
	echo "building coredns $coredns_version"
	mkdir -p "$coredns"
	(cd "$tools" && go build -trimpath -ldflags "-s -w" -o "$coredns/coredns.tmp" .)
	mv "$coredns/coredns.tmp" "$coredns/coredns"
fi
