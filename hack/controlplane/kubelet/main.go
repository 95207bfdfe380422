// Command kubelet is the upstream kubelet, built from Go modules.
package main

import (
	"context"
	"os"

	"k8s.io/component-base/cli"
	// The release binary registers these too: the JSON log format, and the client and version
	// metrics; without them --logging-format=json fails and /metrics lacks those series.
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kubelet/app"
)

func main() {
	os.Exit(cli.Run(app.NewKubeletCommand(context.Background())))
}
