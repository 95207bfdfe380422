// Command installer writes the manifest that installs appkeeper on a cluster, rendered from
// config/default: go run ./hack/installer -image IMG -o dist/install.yaml.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/appkeeper/appkeeper/internal/installer"
)

func main() {
	config := flag.String("config", "config/default", "the kustomization to render")
	image := flag.String("image", "ghcr.io/appkeeper/appkeeper:latest", "the operator's image")
	output := flag.String("o", "dist/install.yaml", "the file to write")
	flag.Parse()
	data, err := installer.Build(*config, *image)
	if err == nil {
		err = os.MkdirAll(filepath.Dir(*output), 0o755)
	}
	if err == nil {
		err = os.WriteFile(*output, data, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "installer:", err)
		os.Exit(1)
	}
}
