//go:build real

package real

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/binlog"
	"github.com/appkeeper/appkeeper/test/framework/ackwriter"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/testcluster"
)

// A cluster of three ships its binary log to the object store while a writer writes through a
// backup, a failover and a switchover; then a table is dropped. A new MySQL restored to one
// second before the drop holds every row acknowledged before that second and none written at or
// after it; one restored to a GTID read between two writers holds the rows of the first writer
// and none of the later ones; a target past the archive fails the restore, naming the window,
// before the server holds any data.
func TestMySQLPointInTimeRecovery(t *testing.T) {
	store := testcluster.StartObjectStore(t, cluster.NodeAddress(), nil)
	ns := newNamespace(t, "pitr", restricted)
	createS3Keys(t, ns, store)
	kubectl(t, "", "create", "secret", "generic", "-n", ns, "backup-key", "--from-literal=passphrase=correct horse battery staple")
	c, _ := newLedgerIn(t, ns, 3, fmt.Sprintf(`backup:
    schedule: "0 3 * * *"
    suspend: true
    storage: {s3: {endpoint: %q, bucket: %s, prefix: prod/, forcePathStyle: true, credentialsSecretRef: {name: s3-keys}}}
    encryption: {keySecretRef: {name: backup-key, key: passphrase}}
    pointInTimeRecovery: {enabled: true}`, store.Endpoint, store.Bucket))
	archive := "prod/" + ns + "/ledger/binlog/" + string(c.get().UID)

	w := c.startWriter(t, writerConnections)
	c.waitForAcks(w, 100)
	kubectlAppkeeper(t, "backup", "mysql/ledger", "-n", ns, "--name", "base", "--timeout", timeout.String())
	base := waitBackup(t, ns, "base", false)
	basePosition, err := binlog.ParsePosition(base.Status.GTIDPosition)
	if err != nil || len(basePosition) == 0 {
		t.Fatalf("the backup's status.gtidPosition %q: %v", base.Status.GTIDPosition, err)
	}
	c.waitForAcks(w, w.Acknowledged()+100)
	first := w.Stop()
	c.issued = first.Issued
	// With no writer running, the primary's position holds every row acknowledged so far.
	gtidTarget := c.position()

	// Two switchovers move the primary twice whatever the kill ends with (a failover, or the
	// same member reopened once its server restarted).
	later := []ackwriter.Result{
		c.failOver(t, "mariadbd killed", writerConnections, killMainProcess),
		c.switchOver(t),
		c.switchOver(t),
	}
	last := c.startWriter(t, writerConnections)
	time.Sleep(3 * time.Second)
	c.waitForAcks(last, 100)
	later = append(later, last.Stop())
	c.issued = later[len(later)-1].Issued
	dropSent := time.Now()
	if _, err := c.service.Exec("DROP TABLE " + ackwriter.Table); err != nil {
		t.Fatal(err)
	}
	archived := waitArchived(t, store, archive, binlog.SeqIn(basePosition, 0), c.position())
	t.Logf("the archive holds %d pieces; the drop was shipped %s after it was sent", archived, time.Since(dropSent).Round(time.Millisecond))
	// The status shows the window, from the backup to the drop, as the primary's shipper tells it.
	afterDrop := c.position()
	await.Eventually(t, time.Minute, func(context.Context) error {
		p := c.get().Status.PointInTimeRecovery
		switch {
		case p == nil:
			return fmt.Errorf("no status.pointInTimeRecovery")
		case p.Message != "" || p.LagSeconds != 0 || p.RecoverableFrom == nil || base.Status.CompletionTime.Before(p.RecoverableFrom) || p.RecoverableTo == nil ||
			p.RecoverableTo.Before(&metav1.Time{Time: dropSent.Truncate(time.Second)}) || !strings.Contains(afterDrop, p.LastArchivedGTID):
			return fmt.Errorf("status.pointInTimeRecovery %+v; want from the backup base to %s (%s), no lag", p, dropSent.Format(time.RFC3339), afterDrop)
		}
		t.Logf("status.pointInTimeRecovery: from %s (%s) to %s (%s), shipped by %s", p.RecoverableFrom.UTC().Format(time.RFC3339),
			p.RecoverableFromBackup, p.RecoverableTo.UTC().Format(time.RFC3339), p.LastArchivedGTID, p.Member)
		return nil
	})
	all := append([]ackwriter.Result{first}, later...)
	// The operator took a base backup by itself once the primary changed.
	epoch := c.get().Status.Epoch
	await.Eventually(t, timeout, func(ctx context.Context) error {
		list := &appsv1alpha1.MySQLBackupList{}
		if err := k8s.List(ctx, list, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, b := range list.Items {
			if b.Annotations[appsv1alpha1.AnnotationBackupReason] == appsv1alpha1.BackupReasonPointInTimeBase &&
				b.Annotations[appsv1alpha1.AnnotationBackupEpoch] == strconv.FormatInt(epoch, 10) && b.Status.Phase == appsv1alpha1.BackupSucceeded {
				t.Logf("base backup %s taken by the operator for epoch %d, the primary %s", b.Name, epoch, c.get().Status.Primary)
				return nil
			}
		}
		return fmt.Errorf("no base backup of epoch %d has succeeded among %d backups", epoch, len(list.Items))
	})

	t.Run("to one second before the drop", func(t *testing.T) {
		target := dropSent.Truncate(time.Second).Add(-time.Second)
		rows := restoredRows(t, ns, "before-drop", fmt.Sprintf("{time: %q}", target.UTC().Format(time.RFC3339)))
		var kept, missing, late int
		for _, r := range all {
			for i, id := range r.Acked {
				if _, ok := rows[id]; r.AckedAt[i].Before(target) && !ok {
					missing++
					t.Errorf("row %d, acknowledged at %s, is missing after a restore to %s", id, r.AckedAt[i].Format(time.RFC3339Nano), target)
				}
			}
		}
		for id, at := range rows {
			if !at.Before(target) {
				late++
				t.Errorf("row %d, written at %s, is there after a restore to %s", id, at.Format(time.RFC3339Nano), target)
			}
			kept++
		}
		written := 0
		for _, r := range all {
			written += len(r.Acked)
		}
		if kept == written {
			t.Errorf("the restore kept all %d rows: the target left nothing out", written)
		}
		t.Logf("restored to %s: %d of %d acknowledged rows, across a kill and two switchovers", target.Format(time.RFC3339), kept, written)
	})

	t.Run("to a GTID, into a single server that archives its own binary log", func(t *testing.T) {
		rows := restoredRows(t, ns, "at-gtid", fmt.Sprintf("{gtid: %q}", gtidTarget), fmt.Sprintf(`backup:
    schedule: "0 3 * * *"
    suspend: true
    storage: {s3: {endpoint: %q, bucket: %s, prefix: prod/, forcePathStyle: true, credentialsSecretRef: {name: s3-keys}}}
    pointInTimeRecovery: {enabled: true}`, store.Endpoint, store.Bucket))
		for _, id := range first.Acked {
			if _, ok := rows[id]; !ok {
				t.Errorf("row %d, acknowledged before %s, is missing", id, gtidTarget)
			}
		}
		for id := range rows {
			if id > first.Issued {
				t.Errorf("row %d, written after %s, is there", id, gtidTarget)
			}
		}
		t.Logf("restored through %s: %d rows, the first writer's %d acknowledged", gtidTarget, len(rows), len(first.Acked))
		// The single server ships its own binary log, and the operator takes the base it lacks.
		await.Eventually(t, timeout, func(ctx context.Context) error {
			m := &appsv1alpha1.MySQL{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "at-gtid"}, m); err != nil {
				return err
			}
			p := m.Status.PointInTimeRecovery
			if p == nil || p.Message != "" || p.RecoverableFrom == nil || p.Member != "at-gtid-0" {
				return fmt.Errorf("status.pointInTimeRecovery %+v; want a window from a base backup, shipped by at-gtid-0", p)
			}
			t.Logf("the restored server archives its own binary log: from %s (%s)", p.RecoverableFrom.UTC().Format(time.RFC3339), p.RecoverableFromBackup)
			return nil
		})
	})

	t.Run("a target still to come is refused before anything is created", func(t *testing.T) {
		createRestored(t, ns, "too-late", fmt.Sprintf("{time: %q}", time.Now().Add(time.Hour).UTC().Format(time.RFC3339)))
		waitRestoreRefused(t, ns, "too-late", "has not come yet")
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "too-late"}, &appsv1.StatefulSet{}); !apierrors.IsNotFound(err) {
			t.Errorf("the StatefulSet of a refused restore: %v, want none", err)
		}
	})

	t.Run("a GTID past the archive fails before the server starts", func(t *testing.T) {
		past := binlog.GTID{Domain: 0, ServerID: 100, Seq: binlog.SeqIn(mustPosition(t, afterDrop), 0) + 1000}
		createRestored(t, ns, "past-archive", fmt.Sprintf("{gtid: %q}", past))
		waitRestoreRefused(t, ns, "past-archive", "outside the recoverable window")
		pod := getPod(t, ns, "past-archive-0")
		for _, s := range pod.Status.ContainerStatuses {
			if s.Name == "mysql" && (s.State.Running != nil || s.RestartCount > 0) {
				t.Errorf("the server of a failed restore started: %+v", s.State)
			}
		}
	})
}

// waitRestoreRefused waits until the MySQL name says, in Degraded, that its restore cannot go on
// for the reason want, and a Warning Event says so.
func waitRestoreRefused(t *testing.T, ns, name, want string) {
	t.Helper()
	await.Eventually(t, timeout, func(ctx context.Context) error {
		m := &appsv1alpha1.MySQL{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, m); err != nil {
			return err
		}
		for _, cond := range m.Status.Conditions {
			if cond.Type == appsv1alpha1.ConditionDegraded && cond.Reason == appsv1alpha1.ReasonRestoreSourceNotReady && strings.Contains(cond.Message, want) {
				t.Logf("%s: Degraded: %s", name, cond.Message)
				return nil
			}
		}
		return fmt.Errorf("conditions %+v", m.Status.Conditions)
	})
	await.WantEvents(t, k8s, ns, time.Minute, appsv1alpha1.ReasonRestoreSourceNotReady)
}

func mustPosition(t *testing.T, position string) []binlog.GTID {
	t.Helper()
	p, err := binlog.ParsePosition(position)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// position is the primary's @@gtid_binlog_pos.
func (c *clusterUnderTest) position() string {
	c.t.Helper()
	var position string
	if err := c.service.QueryRow("SELECT @@gtid_binlog_pos").Scan(&position); err != nil {
		c.t.Fatal(err)
	}
	return position
}

// waitArchived waits until the archive joins the base position to want, and returns how many
// pieces it holds.
func waitArchived(t *testing.T, store *testcluster.ObjectStore, archive string, base uint64, want string) int {
	t.Helper()
	position, err := binlog.ParsePosition(want)
	if err != nil {
		t.Fatal(err)
	}
	var pieces []binlog.Piece
	await.Eventually(t, time.Minute, func(context.Context) error {
		pieces = pieces[:0]
		for _, key := range store.Objects(t) {
			if name, ok := strings.CutPrefix(key, archive+"/"); ok {
				p, err := binlog.ParsePiece(name)
				if err != nil {
					return err
				}
				pieces = append(pieces, p)
			}
		}
		chain, err := binlog.Plan(pieces, 0, base)
		if err != nil {
			return err
		}
		if chain.Last < binlog.SeqIn(position, 0) {
			return fmt.Errorf("the archive reaches %d of %s (%d pieces; gap %q)", chain.Last, want, len(pieces), chain.Gap)
		}
		return nil
	})
	return len(pieces)
}

// createRestored creates a MySQL of one member restored from the backup base to target, with
// more lines of spec if given.
func createRestored(t *testing.T, ns, name, target string, spec ...string) {
	t.Helper()
	manifest := fmt.Sprintf(`
apiVersion: apps.appkeeper.dev/v1alpha1
kind: MySQL
metadata:
  name: %s
spec:
  image: %s
  database: ledger
  user: clerk
  storage: {size: 1Gi}
  restore: {backupName: base, pointInTime: %s}
`, name, mariadbImage, target)
	for _, line := range spec {
		manifest += "  " + line + "\n"
	}
	kubectl(t, manifest, "apply", "-n", ns, "-f", "-")
}

// restoredRows creates a MySQL restored to target, waits until it is Available and returns the
// writer's rows it holds, with when each was written.
func restoredRows(t *testing.T, ns, name, target string, spec ...string) map[int64]time.Time {
	t.Helper()
	created := time.Now()
	createRestored(t, ns, name, target, spec...)
	took := waitAvailable(t, ns, "MySQL", name, created)
	t.Logf("%s is Available %s after it was created", name, took.Round(time.Second))
	restored := &clusterUnderTest{t: t, ns: ns, password: secretData(t, ns, name+"-credentials")[appsv1alpha1.SecretKeyPassword]}
	db := restored.open(net.JoinHostPort(clusterIP(t, ns, name), strconv.Itoa(appsv1alpha1.MySQLPort)))
	rows := map[int64]time.Time{}
	await.Eventually(t, time.Minute, func(ctx context.Context) error {
		result, err := db.QueryContext(ctx, "SELECT id, UNIX_TIMESTAMP(at) FROM "+ackwriter.Table)
		if err != nil {
			return err
		}
		defer result.Close()
		for result.Next() {
			var id int64
			var at float64
			if err := result.Scan(&id, &at); err != nil {
				return err
			}
			rows[id] = time.UnixMicro(int64(at * 1e6))
		}
		return result.Err()
	})
	return rows
}
