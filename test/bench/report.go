package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

// result holds the figures of one kind at one size, all from the same run.
type result struct {
	Kind                  string             `json:"kind"`
	N                     int                `json:"n"`
	FloorS                float64            `json:"floor_s"`
	OperatorS             float64            `json:"operator_s"`
	Ratio                 float64            `json:"ratio"`
	CreationRequestsPerCR map[string]float64 `json:"creation_requests_per_cr"`
	Conflicts409          float64            `json:"conflicts_409"`
	IdleWrites60s         float64            `json:"idle_writes_60s"`
	IdleReconciles60s     float64            `json:"idle_reconciles_60s"`
	IdleWritesByMethod    map[string]float64 `json:"idle_writes_by_method,omitempty"`
	RSSMiB                float64            `json:"rss_mib"`
	CPUS                  float64            `json:"cpu_s"`
	ReconcileP50MS        float64            `json:"reconcile_p50_ms"`
	ReconcileP99MS        float64            `json:"reconcile_p99_ms"`
	SteadyReconcileP50MS  float64            `json:"steady_reconcile_p50_ms"`
	SteadyReconcileP99MS  float64            `json:"steady_reconcile_p99_ms"`
	SelfHealP50MS         float64            `json:"selfheal_p50_ms"`
	SelfHealP99MS         float64            `json:"selfheal_p99_ms"`
	FloorSingleMS         float64            `json:"floor_single_ms"`
}

const tableHeader = "| kind | N | floor s | operator s | ratio | requests/CR at creation | 409s | idle writes 60 s | idle reconciles 60 s | RSS MiB | CPU s | reconcile p50/p99 ms (creation) | reconcile p50/p99 ms (self-heal) | self-heal p50/p99 ms | floor single ms |\n" +
	"| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n"

func (r result) row() string {
	methods := make([]string, 0, len(r.CreationRequestsPerCR))
	for m := range r.CreationRequestsPerCR {
		methods = append(methods, m)
	}
	sort.Strings(methods)
	requests := make([]string, 0, len(methods))
	for _, m := range methods {
		requests = append(requests, fmt.Sprintf("%s %.2f", m, r.CreationRequestsPerCR[m]))
	}
	return fmt.Sprintf("| %s | %d | %.1f | %.1f | %.2f | %s | %.0f | %.0f | %.0f | %.0f | %.1f | %.1f / %.1f | %.1f / %.1f | %.0f / %.0f | %.0f |",
		r.Kind, r.N, r.FloorS, r.OperatorS, r.Ratio, strings.Join(requests, ", "), r.Conflicts409,
		r.IdleWrites60s, r.IdleReconciles60s, r.RSSMiB, r.CPUS, r.ReconcileP50MS, r.ReconcileP99MS,
		r.SteadyReconcileP50MS, r.SteadyReconcileP99MS, r.SelfHealP50MS, r.SelfHealP99MS, r.FloorSingleMS)
}

// writeResults prints the table and writes it to <dir>/<date>.md, and the figures to
// <dir>/latest.json.
func writeResults(dir string, results []result) error {
	var table strings.Builder
	table.WriteString(tableHeader)
	for _, r := range results {
		table.WriteString(r.row() + "\n")
	}
	fmt.Print(table.String())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	now := time.Now()
	doc := fmt.Sprintf("# Benchmark %s\n\nMachine: %d cores, %s/%s. Every figure of a row comes from the same run as its floor.\n\n%s",
		now.Format("2006-01-02 15:04"), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, table.String())
	if err := os.WriteFile(filepath.Join(dir, now.Format("2006-01-02")+".md"), []byte(doc), 0o644); err != nil {
		return err
	}
	raw, err := json.MarshalIndent(map[string]any{
		"date": now.Format(time.RFC3339), "cores": runtime.NumCPU(), "results": results,
	}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "latest.json"), append(raw, '\n'), 0o644)
}
