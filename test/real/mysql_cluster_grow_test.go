//go:build real

package real

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/ackwriter"
	"github.com/appkeeper/appkeeper/test/framework/await"
)

// A MySQL of one server that holds rows grows to three members: the server restarts once and
// becomes the primary, the new members start from a copy of its data, every member holds every
// row acknowledged before and after, and the writes go on through the same client Service.
func TestMySQLClusterGrowsFromOneServer(t *testing.T) {
	ns := newNamespace(t, "grow", restricted)
	manifest := fmt.Sprintf(`
apiVersion: apps.appkeeper.dev/v1alpha1
kind: MySQL
metadata:
  name: ledger
spec:
  image: %s
  database: ledger
  user: clerk
  storage: {size: 1Gi}
`, mariadbImage)
	kubectl(t, manifest, "apply", "-n", ns, "-f", "-")
	waitAvailable(t, ns, "MySQL", "ledger", time.Now())
	c := &clusterUnderTest{t: t, ns: ns}
	c.password = secretData(t, ns, c.get().SecretName())[appsv1alpha1.SecretKeyPassword]
	c.service = c.open(net.JoinHostPort(clusterIP(t, ns, "ledger"), strconv.Itoa(appsv1alpha1.MySQLPort)))
	await.Eventually(t, time.Minute, func(ctx context.Context) error {
		_, err := c.service.ExecContext(ctx, ackwriter.Schema)
		return err
	})
	w := c.startWriter(t)
	c.waitForAcks(w, 200)
	before := w.Stop()
	c.issued = before.Issued

	grown := time.Now()
	kubectl(t, "", "patch", "-n", ns, "mysql", "ledger", "--type", "merge", "-p", `{"spec":{"members":3}}`)
	m := c.waitWhole(0)
	if m.Status.Primary != "ledger-0" || m.Status.Epoch != 1 {
		t.Errorf("primary %s, epoch %d after growing: want the server that held the data, ledger-0, as the first primary", m.Status.Primary, m.Status.Epoch)
	}
	t.Logf("one server grew to 3 members, whole %s after the patch", time.Since(grown).Round(time.Second))
	c.checkEveryMember(m, before)

	w = c.startWriter(t)
	c.waitForAcks(w, 100)
	after := w.Stop()
	c.issued = after.Issued
	c.checkEveryMember(c.waitWhole(0), after)
}
