package metrics

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	// The rollout counters are registered where rollouts are judged.
	_ "github.com/appkeeper/appkeeper/internal/rollout"
)

var descFields = regexp.MustCompile(`fqName: "([^"]+)".*variableLabels: \{([^}]*)\}`)

// served is every appkeeper_ metric the operator serves, with its labels in order.
func served(t *testing.T) map[string]string {
	t.Helper()
	metrics := map[string]string{}
	for _, d := range descs {
		m := descFields.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("cannot read the name of %s", d)
		}
		metrics[m[1]] = strings.Join(strings.Split(m[2], ","), ", ")
	}
	families, err := ctrlmetrics.Registry.(prometheus.Gatherer).Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if !strings.HasPrefix(f.GetName(), "appkeeper_") || len(f.GetMetric()) == 0 {
			continue
		}
		var labels []string
		for _, l := range f.GetMetric()[0].GetLabel() {
			labels = append(labels, l.GetName())
		}
		metrics[f.GetName()] = strings.Join(labels, ", ")
	}
	return metrics
}

// The monitoring page's table lists every appkeeper_ metric with its labels, and no other.
func TestMonitoringPageListsEveryMetric(t *testing.T) {
	page, err := os.ReadFile("../../docs/monitoring.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `(appkeeper_[a-z_]+)` \\| [a-z]+ \\| ([a-z, ]+) \\|")
	documented := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(string(page), -1) {
		documented[m[1]] = m[2]
	}
	want := served(t)
	if !reflect.DeepEqual(documented, want) {
		t.Errorf("docs/monitoring.md lists\n%v\nbut the operator serves (name: labels)\n%v", documented, want)
	}
}
