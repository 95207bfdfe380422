// Command kubectl-appkeeper is the kubectl plugin of appkeeper: on the PATH, it runs as
// `kubectl appkeeper`.
package main

import (
	"os"

	"github.com/appkeeper/appkeeper/internal/kubectlplugin"
)

func main() {
	os.Exit(kubectlplugin.Run(os.Args[1:]))
}
