// Command appkeeper runs the appkeeper operator, with `appkeeper local …` a local Kubernetes to
// try it on, with `appkeeper backup …` the data path of the backup Jobs, or with `appkeeper member …`
// the copy of a cluster member's data to another.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime/debug"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/appkeeper/appkeeper/internal/operator"
)

// gcPercent is the heap growth that starts a collection unless GOGC says otherwise. Most of the
// operator's heap is its cache, which grows with the instances and changes slowly; collecting at
// 50 % growth instead of Go's 100 % keeps the resident set about a tenth smaller at a thousand
// instances for a little more CPU time (the benchmark results have the figures).
const gcPercent = 50

func main() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
	if len(os.Args) > 1 && os.Args[1] == "local" {
		os.Exit(runLocal(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "backup" {
		os.Exit(runBackup(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "member" {
		os.Exit(runMember(os.Args[2:]))
	}
	os.Exit(runManager(os.Args[1:]))
}

func runManager(args []string) int {
	fs := flag.NewFlagSet("appkeeper", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: appkeeper [flags]        run the operator against the current kubeconfig\n"+
			"       appkeeper local up [flags]  run a local Kubernetes with the operator (see appkeeper local up -h)\n\nFlags:\n")
		fs.PrintDefaults()
	}
	options := operator.DefaultOptions()
	options.MetricsAddr, options.SecureMetrics, options.ProbeAddr = ":8443", true, ":8081"
	options.BindFlags(fs)
	zapOptions := zap.Options{}
	zapOptions.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOptions)))
	log := ctrl.Log.WithName("setup")

	cfg, err := ctrl.GetConfig()
	if err != nil {
		log.Error(err, "cannot load a kubeconfig")
		return 1
	}
	mgr, err := operator.NewManager(cfg, options)
	if err != nil {
		log.Error(err, "cannot start the operator")
		return 1
	}
	log.Info("starting the operator")
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		log.Error(err, "operator stopped")
		return 1
	}
	return 0
}
