// Command operatorconf prints a configuration file the operator mounts into a pod, so that the
// images are checked against the operator's own files:
//
//	operatorconf nginx PORT [monitoring]   the nginx server block of a WebServer on PORT,
//	                                       with the stub_status server when monitoring is on
//	operatorconf mycnf        the my.cnf of a MySQL without extra lines
package main

import (
	"fmt"
	"os"
	"strconv"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/resources/mysql"
	"github.com/appkeeper/appkeeper/internal/resources/webserver"
)

func main() {
	switch {
	case (len(os.Args) == 3 || len(os.Args) == 4 && os.Args[3] == "monitoring") && os.Args[1] == "nginx":
		port, err := strconv.ParseInt(os.Args[2], 10, 32)
		if err != nil {
			usage()
		}
		fmt.Print(webserver.NginxConfig(int32(port), len(os.Args) == 4))
	case len(os.Args) == 2 && os.Args[1] == "mycnf":
		fmt.Print(mysql.MyCnf(&appsv1alpha1.MySQL{}))
	default:
		usage()
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: operatorconf nginx PORT [monitoring] | operatorconf mycnf")
	os.Exit(2)
}
