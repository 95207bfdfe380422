// Command nginxconf prints the nginx server block the operator writes for a WebServer on the
// given port, so that the nginx image is checked against the operator's own configuration.
package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/appkeeper/appkeeper/internal/resources/webserver"
)

func main() {
	port, err := strconv.ParseInt(os.Args[len(os.Args)-1], 10, 32)
	if len(os.Args) != 2 || err != nil {
		fmt.Fprintln(os.Stderr, "usage: nginxconf PORT")
		os.Exit(2)
	}
	fmt.Print(webserver.NginxConfig(int32(port)))
}
