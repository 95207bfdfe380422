//go:build real

package real

import (
	"context"
	"fmt"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// A backup of a cluster reads a replica, once it applied every write its primary acknowledged,
// and a new cluster of three restored from it holds every acknowledged row on every member.
func TestMySQLClusterBacksUpFromAReplicaAndRestoresIntoACluster(t *testing.T) {
	c, _ := newLedger(t, "cluster-backup", 3, `backup: {schedule: "0 3 * * *", suspend: true, storage: {volume: {claimName: backups, path: mysql/}}}`)
	kubectl(t, `
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: backups
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
`, "apply", "-n", c.ns, "-f", "-")
	w := c.startWriter(t, writerConnections)
	c.waitForAcks(w, 300)
	r := w.Stop()
	c.issued = r.Issued
	primary := c.get().Status.Primary

	out := kubectlAppkeeper(t, "backup", "mysql/ledger", "-n", c.ns, "--name", "from-replica", "--timeout", timeout.String())
	t.Logf("kubectl appkeeper backup mysql/ledger --name from-replica:\n%s", out)
	b := waitBackup(t, c.ns, "from-replica", false)
	if b.Status.Member == "" || b.Status.Member == primary {
		t.Fatalf("status.member %q: the backup was to read a replica, not the primary %s", b.Status.Member, primary)
	}
	t.Logf("the backup read %s (the primary is %s): %d bytes, %d tables", b.Status.Member, primary, b.Status.Size, b.Status.Tables)

	created := time.Now()
	kubectl(t, fmt.Sprintf(`
apiVersion: apps.appkeeper.dev/v1alpha1
kind: MySQL
metadata:
  name: copy
spec:
  image: %s
  members: 3
  database: ledger
  user: clerk
  storage: {size: 1Gi}
  restore: {backupName: from-replica}
`, mariadbImage), "apply", "-n", c.ns, "-f", "-")
	took := waitAvailable(t, c.ns, "MySQL", "copy", created)
	t.Logf("a cluster of 3 restored from the backup is Available %s after it was created", took.Round(time.Second))
	restored := &clusterUnderTest{t: t, ns: c.ns, password: secretData(t, c.ns, "copy-credentials")[appsv1alpha1.SecretKeyPassword]}
	m := &appsv1alpha1.MySQL{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: c.ns, Name: "copy"}, m); err != nil {
		t.Fatal(err)
	}
	restored.checkEveryMember(m, r)
	t.Logf("every member of the restored cluster holds the %d acknowledged rows", len(r.Acked))
}
