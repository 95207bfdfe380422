package operatorproc

import (
	"strings"
	"testing"
)

const scrape = `# TYPE rest_client_requests_total counter
rest_client_requests_total{code="200",host="127.0.0.1:6443",method="GET"} 7
rest_client_requests_total{code="200",host="127.0.0.1:6443",method="PATCH"} 5
rest_client_requests_total{code="409",host="127.0.0.1:6443",method="PUT"} 2
rest_client_requests_total{code="201",host="127.0.0.1:6443",method="POST"} 3
# TYPE controller_runtime_reconcile_total counter
controller_runtime_reconcile_total{controller="webserver",result="success"} 4
controller_runtime_reconcile_total{controller="podset",result="error"} 1
# TYPE leader_election_master_status gauge
leader_election_master_status{name="appkeeper.apps.appkeeper.dev"} 1
`

func TestParseMetricsAndAddUpRuns(t *testing.T) {
	s, err := ParseMetrics(strings.NewReader(scrape))
	if err != nil {
		t.Fatal(err)
	}
	if s.Writes() != 10 || s.Conflicts != 2 || s.Reconciles != 5 || s.ReconcilesBy["podset"] != 1 || !s.Leader {
		t.Errorf("writes %v, conflicts %v, reconciles %v by %v, leader %t", s.Writes(), s.Conflicts, s.Reconciles, s.ReconcilesBy, s.Leader)
	}
	standby, err := ParseMetrics(strings.NewReader(strings.Replace(scrape, `appkeeper.dev"} 1`, `appkeeper.dev"} 0`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if standby.Leader {
		t.Error("a standby's metrics read as the leader's")
	}
	sum := NewSnapshot()
	sum.add(s)
	sum.add(standby)
	if sum.Writes() != 20 || sum.Conflicts != 4 || sum.ReconcilesBy["webserver"] != 8 {
		t.Errorf("two runs add up to writes %v, conflicts %v, reconciles by %v", sum.Writes(), sum.Conflicts, sum.ReconcilesBy)
	}
}
