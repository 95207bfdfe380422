package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/appkeeper/appkeeper/internal/localcluster"
)

// runNodeFault does to a real node of the local cluster running on this host what happens to
// machines: `appkeeper local node lose|hang|partition|heal NAME`.
func runNodeFault(args []string) int {
	usage := "Usage: appkeeper local node lose|hang|partition|heal NAME [--for DURATION] [--from-host] [--from-api-server] [--kubelet-only]"
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, usage)
		return 2
	}
	fault, name := args[0], args[1]
	fs := flag.NewFlagSet("appkeeper local node "+fault, flag.ContinueOnError)
	hangFor := fs.Duration("for", 30*time.Second, "hang: how long the node stays frozen")
	fromHost := fs.Bool("from-host", false, "partition: cut the node's pods off from this host too (the control plane, the operator, the kubelets' probes)")
	fromAPIServer := fs.Bool("from-api-server", false, "partition: cut the node's kubelet off from the API server too: the node stops reporting while its pods run on")
	kubeletOnly := fs.Bool("kubelet-only", false, "partition: cut the node's kubelet off from the API server and nothing else: its pods keep talking to every pod and to this host")
	if err := fs.Parse(args[2:]); err != nil {
		return 2
	}
	if *kubeletOnly && *fromHost {
		fmt.Fprintln(os.Stderr, "appkeeper local node partition: --kubelet-only cuts the kubelet's link alone, and cannot go with --from-host")
		return 2
	}
	cut := localcluster.Partition{FromOtherNodes: !*kubeletOnly, FromHost: *fromHost, FromAPIServer: *fromAPIServer || *kubeletOnly}
	if fault == "hang" && *hangFor <= 0 {
		fmt.Fprintln(os.Stderr, "appkeeper local node hang: --for must be more than 0")
		return 2
	}
	// Ctrl-C during a hang thaws the node at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := localcluster.NodeFault(ctx, fault, name, *hangFor, cut); err != nil {
		fmt.Fprintf(os.Stderr, "appkeeper local node %s: %v\n", fault, err)
		return 1
	}
	return 0
}
