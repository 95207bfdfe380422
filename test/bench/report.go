package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
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
	PeerRatio             float64            `json:"ratio_to_peer,omitempty"` // a Memcached row's time over the peer's
	CreationRequestsPerCR map[string]float64 `json:"creation_requests_per_cr"`
	CreationWritesPerCR   map[string]float64 `json:"creation_writes_per_cr"`
	Conflicts409          float64            `json:"conflicts_409"`
	// Rivals is how many resources of another kind waited, during the idle period, for a name
	// an instance holds.
	Rivals                     int                `json:"rivals"`
	IdleWrites60s              float64            `json:"idle_writes_60s"`
	IdleReconciles60s          float64            `json:"idle_reconciles_60s"`
	IdleWritesByMethod         map[string]float64 `json:"idle_writes_by_method,omitempty"`
	IdleReconcilesByController map[string]float64 `json:"idle_reconciles_by_controller,omitempty"`
	RSSMiB                     float64            `json:"rss_mib"`
	RSSStartMiB                float64            `json:"rss_start_mib"`
	RSSPerCRKiB                float64            `json:"rss_per_cr_kib"`
	HeapStartMiB               float64            `json:"heap_inuse_start_mib"`
	HeapMiB                    float64            `json:"heap_inuse_mib"`
	HeapLiveMiB                float64            `json:"heap_inuse_after_gc_mib,omitempty"`
	SettledS                   float64            `json:"settled_s"`
	CPUS                       float64            `json:"cpu_s"`
	ReconcileP50MS             float64            `json:"reconcile_p50_ms"`
	ReconcileP99MS             float64            `json:"reconcile_p99_ms"`
	SteadyReconcileP50MS       float64            `json:"steady_reconcile_p50_ms"`
	SteadyReconcileP99MS       float64            `json:"steady_reconcile_p99_ms"`
	SelfHealP50MS              float64            `json:"selfheal_p50_ms"`
	SelfHealP99MS              float64            `json:"selfheal_p99_ms"`
	FloorSingleMS              float64            `json:"floor_single_ms"`
	FloorSingleP99MS           float64            `json:"floor_single_p99_ms"`
	Timeline                   timeline           `json:"timeline"`
	// peer marks the peer operator's row, of which only the creation figures are measured.
	peer bool
}

// MarshalJSON writes a peer row with only the figures measured for it.
func (r result) MarshalJSON() ([]byte, error) {
	type plain result
	if !r.peer {
		return json.Marshal(plain(r))
	}
	t := r.Timeline
	return json.Marshal(struct {
		Kind      string  `json:"kind"`
		N         int     `json:"n"`
		FloorS    float64 `json:"floor_s"`
		OperatorS float64 `json:"operator_s"`
		Ratio     float64 `json:"ratio"`
		Timeline  any     `json:"timeline"`
	}{r.Kind, r.N, r.FloorS, r.OperatorS, r.Ratio, map[string]float64{
		"floor_children_created_s": t.FloorChildrenCreatedS, "crs_created_s": t.CRsCreatedS,
		"children_created_s": t.ChildrenCreatedS, "children_ready_s": t.ChildrenReadyS, "reconciles_per_cr": t.ReconcilesPerCR,
	}})
}

// timeline is when each stage of creation was done, in seconds from the first create: it tells
// whether the operator is slower to create the children, or the cluster slower to make them ready
// beside the operator, or the operator slower to report them ready.
type timeline struct {
	// FloorChildrenCreatedS is when the floor's client had created every child.
	FloorChildrenCreatedS float64 `json:"floor_children_created_s"`
	// CRsCreatedS is when every custom resource had been created.
	CRsCreatedS float64 `json:"crs_created_s"`
	// ChildrenCreatedS and ChildrenReadyS are when every main child of the operator's instances
	// existed and was ready.
	ChildrenCreatedS float64 `json:"children_created_s"`
	ChildrenReadyS   float64 `json:"children_ready_s"`
	// ReconcilesPerCR counts the operator's reconciles until every instance was Available, and
	// CPUMSPerReconcile divides all the CPU time the operator used meanwhile (decoding watch events
	// included) by them: what a reconcile costs the operator itself, waits on the API server apart.
	ReconcilesPerCR   float64 `json:"reconciles_per_cr"`
	CPUMSPerReconcile float64 `json:"cpu_ms_per_reconcile"`
	// ServerWriteP50MS and ServerWriteP99MS are the API server's own time to answer the operator's
	// writes (applies and status patches) meanwhile: a reconcile that writes waits at least that.
	ServerWriteP50MS float64 `json:"server_write_p50_ms"`
	ServerWriteP99MS float64 `json:"server_write_p99_ms"`
}

const timelineHeader = "| kind | N | floor: children created | floor: children ready | operator: resources created | children created | children ready | all Available | reconciles/CR | operator CPU ms/reconcile | API server write p50/p99 ms |\n" +
	"| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n"

func (r result) timelineRow() string {
	t := r.Timeline
	if r.peer {
		return fmt.Sprintf("| %s | %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.1f | – | – |", r.Kind, r.N,
			t.FloorChildrenCreatedS, r.FloorS, t.CRsCreatedS, t.ChildrenCreatedS, t.ChildrenReadyS, r.OperatorS, t.ReconcilesPerCR)
	}
	return fmt.Sprintf("| %s | %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.1f | %.2f | %.1f / %.1f |", r.Kind, r.N,
		t.FloorChildrenCreatedS, r.FloorS, t.CRsCreatedS, t.ChildrenCreatedS, t.ChildrenReadyS, r.OperatorS,
		t.ReconcilesPerCR, t.CPUMSPerReconcile, t.ServerWriteP50MS, t.ServerWriteP99MS)
}

const tableHeader = "| kind | N | floor s | operator s | ratio | appkeeper/peer | requests/CR at creation (operator's client) | writes/CR at creation (API server) | 409s | rivals waiting | idle writes 60 s | idle reconciles 60 s | RSS MiB (empty → N) | KiB/CR | heap in use MiB (empty → N) | CPU s | reconcile p50/p99 ms (creation) | reconcile p50/p99 ms (self-heal) | self-heal p50/p99 ms | floor self-heal p50/p99 ms |\n" +
	"| --- | ---: | ---: | ---: | ---: | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n"

func (r result) row() string {
	if r.peer {
		return fmt.Sprintf("| %s | %d | %.1f | %.1f | %.2f | – |%s", r.Kind, r.N, r.FloorS, r.OperatorS, r.Ratio,
			strings.Repeat(" – |", 14))
	}
	vsPeer := "–"
	if r.PeerRatio > 0 {
		vsPeer = fmt.Sprintf("%.2f", r.PeerRatio)
	}
	return fmt.Sprintf("| %s | %d | %.1f | %.1f | %.2f | %s | %s | %s | %.0f | %d | %.0f | %.0f | %.0f → %.0f | %.0f | %.0f → %.0f | %.1f | %.1f / %.1f | %.1f / %.1f | %.0f / %.0f | %.0f / %.0f |",
		r.Kind, r.N, r.FloorS, r.OperatorS, r.Ratio, vsPeer, perCR(r.CreationRequestsPerCR), perCR(r.CreationWritesPerCR),
		r.Conflicts409, r.Rivals, r.IdleWrites60s, r.IdleReconciles60s, r.RSSStartMiB, r.RSSMiB, r.RSSPerCRKiB, r.HeapStartMiB, r.HeapMiB, r.CPUS,
		r.ReconcileP50MS, r.ReconcileP99MS, r.SteadyReconcileP50MS, r.SteadyReconcileP99MS,
		r.SelfHealP50MS, r.SelfHealP99MS, r.FloorSingleMS, r.FloorSingleP99MS)
}

// perCR lists counts per instance by key, sorted.
func perCR(counts map[string]float64) string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, fmt.Sprintf("%s %.2f", k, counts[k]))
	}
	return strings.Join(out, ", ")
}

// writeResults prints the table when show is set and writes it to <dir>/<date>.md, and the figures to
// <dir>/latest.json; loads are the samples taken before the measurements.
func (b *bench) writeResults(results []result, loads []loadSample, show bool) error {
	var table strings.Builder
	table.WriteString(tableHeader)
	for _, r := range results {
		table.WriteString(r.row() + "\n")
	}
	table.WriteString("\nWhere creation time goes, in seconds from the first create:\n\n" + timelineHeader)
	for _, r := range results {
		table.WriteString(r.timelineRow() + "\n")
	}
	notes := kindsNotes
	if slices.ContainsFunc(results, func(r result) bool { return r.peer }) {
		notes += peerNotes
	}
	return b.writeReport(report{title: "Benchmark", preamble: " Every figure of a row comes from the same run as its floor." + notes,
		table: table.String(), key: "results", figures: results, loads: loads}, show)
}

// kindsNotes says what the kinds section does for the kinds whose children depend on each other,
// and which children its self-heal and rivals take.
const kindsNotes = "\n\nA MySQL's floor creates what the operator does: the generated credentials and backup account " +
	"Secrets (random passwords), both Services, my.cnf and the StatefulSet, whose data claim kwok binds. A WordPress runs " +
	"its own MySQL: its floor creates the MySQL resource and that MySQL's children, the salts, the wp-content claim and " +
	"the Service, and the Deployment only once the MySQL's StatefulSet is ready, as the operator waits for the MySQL to be " +
	"Available. Self-heal deletes the main child: the Deployment of a WebServer or WordPress, the StatefulSet of a " +
	"Memcached or MySQL, a PodSet's first pod. Rivals want the instance's Service: a Memcached for a WebServer or a " +
	"WordPress, a WebServer for a Memcached or a MySQL; a PodSet has none, its children being pods, which the operator " +
	"makes for no other kind."

// peerNotes says what the peer's row measures.
const peerNotes = "\n\nThe Memcached (peer) rows time the operator of the operator-sdk and kubebuilder Memcached tutorial, " +
	"written to the same contract and run in the benchmark's process right after appkeeper's Memcached row of the same " +
	"size, in a namespace of its own: one reconcile at a time (MaxConcurrentReconciles 1, as the tutorial leaves it), a " +
	"Deployment per resource, Available=True once the Deployment's available replicas equal the size. Its floor is a " +
	"plain client creating those Deployments; appkeeper/peer is appkeeper's time over the peer's. Only its creation is " +
	"measured: its requests, memory and CPU share the benchmark's process, and it has no self-heal or idle figures."

// report is one section of the benchmark as written to <dir>/<date><suffix>.md, with its figures
// under key in <dir>/latest<suffix>.json; loads are the samples taken before its parts.
type report struct {
	suffix, title, preamble, table, key string
	figures                             any
	loads                               []loadSample
}

// writeReport prints the table when show is set and writes the section: the table under the title
// and lines on the machine, then the preamble. A section run alone leaves the other sections'
// files as they are. When another process held the cores before a part of it, nothing is
// written: the files keep what was written before, while the machine was quiet.
func (b *bench) writeReport(r report, show bool) error {
	if show {
		fmt.Print(r.table)
	}
	now := time.Now()
	dir := b.o.resultsDir
	md, latest := filepath.Join(dir, now.Format("2006-01-02")+r.suffix+".md"), filepath.Join(dir, "latest"+r.suffix+".json")
	if why := busyReason(r.loads); why != "" {
		if show {
			refusal := fmt.Sprintf("%s and %s not written: %s", md, latest, why)
			fmt.Fprintln(os.Stderr, "bench: "+refusal)
			b.refused = append(b.refused, refusal)
		}
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	load := loadAverage()
	doc := fmt.Sprintf("# %s %s\n\nMachine: %d cores, %s/%s; load average (1, 5, 15 min) at the end: %s.%s%s\n\n%s",
		r.title, now.Format("2006-01-02 15:04"), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, load, loadNote(r.loads), r.preamble, r.table)
	if err := os.WriteFile(md, []byte(doc), 0o644); err != nil {
		return err
	}
	raw, err := json.MarshalIndent(map[string]any{
		"date": now.Format(time.RFC3339), "cores": runtime.NumCPU(), "load_average": load, "load_before": r.loads, r.key: r.figures,
	}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(latest, append(raw, '\n'), 0o644)
}

// loadNote tells what the machine was doing before each part of a section.
func loadNote(loads []loadSample) string {
	parts := make([]string, 0, len(loads))
	for _, s := range loads {
		parts = append(parts, fmt.Sprintf("before %s: %s", s.Before, s))
	}
	return fmt.Sprintf(" CPU used by processes outside the benchmark over %s, results being written only when it is "+
		"at most %.1f core each time: %s.", loadSampleTime, maxOtherCores, strings.Join(parts, "; "))
}

// loadAverage is the machine's load over 1, 5 and 15 minutes, which shows whether other work shared
// the cores with the benchmark.
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	fields := strings.Fields(string(raw))
	if len(fields) < 3 {
		return "unknown"
	}
	return strings.Join(fields[:3], " ")
}
