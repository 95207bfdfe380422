# An image whose entrypoint exits at once with status 1 after one line on stderr, for tests of
# failed upgrades and rollbacks on the real node: hack/images/broken, a static Go program, alone.
# It runs as any user and ignores the arguments a kind's pod gives, so every kind crash-loops on it.
IMAGE=localhost/appkeeper/broken:exit1
FROM_BASE=false
USER_SPEC=65532:65532
ENTRYPOINT='["/broken"]'
INPUTS=(hack/images/broken/main.go)

build_root() {
	mkdir -p "$1"
	CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$1/broken" ./hack/images/broken
}
