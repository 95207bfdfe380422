package metrics_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/testenv"
)

var k8s client.Client

func TestMain(m *testing.M) {
	os.Exit(testenv.RunWithOperator(m, &k8s))
}

const timeout = 20 * time.Second

// scrape is what the operator's metrics endpoint serves: controller-runtime's registry, gathered
// and written in Prometheus's text format.
func scrape(t *testing.T) string {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatalf("gather the metrics: %v", err)
	}
	var out bytes.Buffer
	for _, family := range families {
		if _, err := expfmt.MetricFamilyToText(&out, family); err != nil {
			t.Fatal(err)
		}
	}
	return out.String()
}

// labels of a series, by name.
type labels map[string]string

// series is how the text format writes the series name{labels}: its labels sorted by name.
func series(name string, l labels) string {
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	pairs := make([]string, 0, len(keys))
	for _, k := range keys {
		pairs = append(pairs, fmt.Sprintf("%s=%q", k, l[k]))
	}
	return name + "{" + strings.Join(pairs, ",") + "}"
}

// sample is the value of the series name{l} in text, and whether text has it.
func sample(text, name string, l labels) (float64, bool) {
	prefix := series(name, l) + " "
	for _, line := range strings.Split(text, "\n") {
		if value, ok := strings.CutPrefix(line, prefix); ok {
			v, err := strconv.ParseFloat(value, 64)
			return v, err == nil
		}
	}
	return 0, false
}

// waitSample waits until a scrape shows name{l} with the value want.
func waitSample(t *testing.T, name string, l labels, want float64) {
	t.Helper()
	await.Eventually(t, timeout, func(context.Context) error {
		got, ok := sample(scrape(t), name, l)
		switch {
		case !ok:
			return fmt.Errorf("no series %s", series(name, l))
		case got != want:
			return fmt.Errorf("%s %v, want %v", series(name, l), got, want)
		}
		return nil
	})
}

// waitAbsent waits until a scrape no longer shows name{l}.
func waitAbsent(t *testing.T, name string, l labels) {
	t.Helper()
	await.Eventually(t, timeout, func(context.Context) error {
		if v, ok := sample(scrape(t), name, l); ok {
			return fmt.Errorf("%s %v is still there", series(name, l), v)
		}
		return nil
	})
}

// resource is the labels of a resource's series, with extra ones as key, value pairs.
func resource(kind, ns, name string, extra ...string) labels {
	l := labels{"kind": kind, "namespace": ns, "name": name}
	for i := 0; i+1 < len(extra); i += 2 {
		l[extra[i]] = extra[i+1]
	}
	return l
}
