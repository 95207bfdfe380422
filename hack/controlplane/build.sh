#!/usr/bin/env bash
# Builds the control-plane binaries into DEST, skipping any that already exist there.
# Usage: build.sh DEST KUBE_VERSION KWOK_VERSION
set -euo pipefail
dest=$1 kube_version=$2 kwok_version=$3
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$kube_version"
# One go build for all of them: each shared package compiles once, and the links run side by side.
missing=()
for cmd in etcd kube-apiserver kube-controller-manager kube-scheduler kubectl; do
	[ -x "$dest/$cmd" ] || missing+=("./$cmd")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "building ${missing[*]#./} $kube_version"
	tmp=$(mktemp -d "$dest/.build.XXXXXX")
	(cd "$here" && CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$tmp/" "${missing[@]}")
	mv "$tmp"/* "$dest/"
	rmdir "$tmp"
fi
if [ ! -x "$dest/kwok" ]; then
	echo "building kwok $kwok_version"
	tmp=$(mktemp -d)
	CGO_ENABLED=0 GOBIN="$tmp" go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$kwok_version"
	mv "$tmp/kwok" "$dest/kwok"
	rmdir "$tmp"
	# The kwok module ships its stage definitions; the local cluster needs them at run time.
	stages=$(go env GOMODCACHE)/sigs.k8s.io/kwok@$kwok_version/kustomize/stage
	rm -rf "$dest/kwok-stages" && cp -r "$stages" "$dest/kwok-stages" && chmod -R u+w "$dest/kwok-stages"
	# Only the YAML is needed; the module's Go test files would otherwise join ./... of the project.
	find "$dest/kwok-stages" -type f ! -name '*.yaml' -delete
fi
