//go:build tools

// Package tools pins the Prometheus release whose server and promtool the tests run: the alert
// rules are unit-tested with promtool and evaluated end to end by a real Prometheus.
// "make prometheus" builds both into bin/prometheus-<version>/.
package tools

import (
	_ "github.com/prometheus/prometheus/cmd/prometheus"
	_ "github.com/prometheus/prometheus/cmd/promtool"
)
