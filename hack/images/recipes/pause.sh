# The pod sandbox image: hack/images/pause, a static Go program that waits for SIGINT or SIGTERM
# and reaps orphaned children. containerd's sandbox_image points at it; no Debian package needed.
IMAGE=localhost/appkeeper/pause:3.10
FROM_BASE=false
USER_SPEC=65535:65535
ENTRYPOINT='["/pause"]'
INPUTS=(hack/images/pause/main.go)

build_root() {
	mkdir -p "$1"
	CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$1/pause" ./hack/images/pause
}
