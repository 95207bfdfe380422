package metrics_test

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/appkeeper/appkeeper/test/framework/testcluster"
)

// promtool is Prometheus's own linter of exposition text, which make builds into bin/.
var promtool = testcluster.RepoBinary("prometheus-v0.316.0/promtool")

// The appkeeper_ series, with a resource of every kind that has series of its own, follow
// Prometheus's naming and help conventions as promtool checks them.
func TestScrapeFollowsPrometheusConventions(t *testing.T) {
	if _, err := os.Stat(promtool); err != nil {
		t.Skipf("promtool is not built (%v): run make with the Prometheus tools to check the scrape's conventions", err)
	}
	ns := testcluster.NewNamespace(t, k8s, "metrics")
	availableMySQL(t, ns)
	takeBackup(t, ns, "first", true)
	waitSample(t, "appkeeper_backup_last_size_bytes", resource("MySQL", ns, "db"), 123456)

	var ours strings.Builder
	families := 0
	for _, block := range strings.SplitAfter(scrape(t), "\n# HELP ") {
		if strings.HasPrefix(block, "appkeeper_") || strings.HasPrefix(block, "# HELP appkeeper_") {
			if !strings.HasPrefix(block, "# HELP ") {
				block = "# HELP " + block
			}
			ours.WriteString(strings.TrimSuffix(block, "# HELP "))
			families++
		}
	}
	if families < 15 {
		t.Fatalf("%d appkeeper_ families in the scrape:\n%s", families, ours.String())
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(ours.String())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil || out.Len() > 0 {
		t.Errorf("promtool check metrics: %v\n%s\non:\n%s", err, out.String(), ours.String())
	}
	t.Logf("%d appkeeper_ families pass promtool check metrics:\n%s", families, ours.String())
}
