package main

import (
	"fmt"
	"strings"
)

// rollbackResult is one kind's rollbacks, each from a spec asking for an image whose pods
// crash-loop, one instance at a time.
type rollbackResult struct {
	Kind      string `json:"kind"`
	Instances int    `json:"instances"`
	// Failing is from the spec change to the first crash-looping pod of the broken image, as the
	// benchmark's watch delivers the pod's status: the rollout's start, for context.
	FailingP50MS float64 `json:"failing_p50_ms"`
	FailingMaxMS float64 `json:"failing_max_ms"`
	// RolledBack is from that pod to the workload's template back on the good image (for a
	// PodSet, to the first pod of the good image created).
	RolledBackP50MS float64 `json:"rolled_back_p50_ms"`
	RolledBackMaxMS float64 `json:"rolled_back_max_ms"`
	// Available is from that pod to the instance Available, no longer Progressing, with Degraded
	// reason RolledBack.
	AvailableP50MS float64 `json:"available_p50_ms"`
	AvailableMaxMS float64 `json:"available_max_ms"`
}

const rollbackHeader = "| kind | instances | spec → failing pod p50 / max ms | failing pod → rolled back p50 / max ms | failing pod → Available again p50 / max ms |\n" +
	"| --- | ---: | ---: | ---: | ---: |\n"

func (r rollbackResult) row() string {
	return fmt.Sprintf("| %s | %d | %.0f / %.0f | %.0f / %.0f | %.0f / %.0f |", r.Kind, r.Instances,
		r.FailingP50MS, r.FailingMaxMS, r.RolledBackP50MS, r.RolledBackMaxMS, r.AvailableP50MS, r.AvailableMaxMS)
}

// writeRollbackResults prints the section when show is set and writes it to
// <dir>/<date>-rollback.md, and the figures to <dir>/latest-rollback.json.
func (b *bench) writeRollbackResults(results []rollbackResult, loads []loadSample, show bool) error {
	var table strings.Builder
	table.WriteString(rollbackHeader)
	for _, r := range results {
		table.WriteString(r.row() + "\n")
	}
	return b.writeReport(report{suffix: "-rollback", title: "Rollback benchmark", preamble: "\n\n" +
		"Each instance, once its first revision is the last good one, is asked for an image tagged `broken`, whose pods " +
		"crash-loop on kwok's nodes, with a progress deadline of 30 s; one instance at a time, the next once the previous " +
		"is Available again. Times are when the benchmark's watches delivered each step. \"Rolled back\" is the workload's " +
		"pod template back on the good image (a PodSet's first pod of the good image); \"Available again\" is the instance " +
		"Available and no longer Progressing, with Degraded reason RolledBack.",
		table: table.String(), key: "rollback", figures: results, loads: loads}, show)
}
