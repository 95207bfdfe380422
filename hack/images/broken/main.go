// Command broken is the entrypoint of an image that cannot start: it says so on stderr and exits
// with status 1, whatever its arguments, as a server does that refuses its configuration. Tests
// of failed upgrades roll a workload out to it on the real node, where no registry can serve a
// broken image.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "broken: this image fails at start on purpose (exit status 1), to test failed upgrades")
	os.Exit(1)
}
