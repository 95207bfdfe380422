//go:build faults

package faults

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// summary is what one scenario measured, a row of the table the run ends with.
type summary struct {
	scenario string
	// took is the scenario's wall time from its namespace's creation, its teardown left out.
	took time.Duration
	// converged says how long the instances took to converge after the fault ended, one or
	// more durations.
	converged []time.Duration
	// writes and conflicts are the operator's requests that change something and its HTTP 409
	// answers, over the scenario, from its metrics.
	writes, conflicts float64
	restarts          int
	// logErrors counts the error lines in the operator's log.
	logErrors int
	notes     string
}

var (
	summariesMu sync.Mutex
	summaries   []summary
)

// report logs the scenario's summary line and keeps it for the table.
func report(t *testing.T, s summary) {
	t.Helper()
	t.Logf("%s: converged in %s s after the fault; %.0f operator writes, %.0f 409s, %d operator restarts, %d error lines in its log; %s; took %.1f s",
		s.scenario, seconds(s.converged), s.writes, s.conflicts, s.restarts, s.logErrors, s.notes, s.took.Seconds())
	summariesMu.Lock()
	defer summariesMu.Unlock()
	summaries = append(summaries, s)
}

func seconds(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = fmt.Sprintf("%.1f", d.Seconds())
	}
	return strings.Join(parts, ", ")
}

// table is the summaries as a Markdown table, with the run's total time.
func table(total time.Duration) string {
	summariesMu.Lock()
	defer summariesMu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "\nFault suite, %d instances of each kind per scenario, %d cores, %s/%s: %.0f s in all.\n\n",
		perKind, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, total.Seconds())
	b.WriteString("| scenario | converged after the fault, s | operator writes | 409s | operator restarts | errors in the operator's log | scenario s | notes |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n")
	for _, s := range summaries {
		fmt.Fprintf(&b, "| %s | %s | %.0f | %.0f | %d | %d | %.1f | %s |\n",
			s.scenario, seconds(s.converged), s.writes, s.conflicts, s.restarts, s.logErrors, s.took.Seconds(), s.notes)
	}
	return b.String()
}
