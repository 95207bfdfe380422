// Command coredns is CoreDNS with only the plugins the real node's Corefile uses (see corefile in
// internal/localcluster): the full build links every cloud provider's SDK, which take most of its
// compile time and none of which a local cluster calls.
package main

import (
	"github.com/coredns/coredns/coremain"
	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/kubernetes"
)

func main() {
	coremain.Run()
}
