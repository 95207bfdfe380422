package metrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// listsReader answers List as the informer cache does with UnsafeDisableDeepCopy: each call
// copies the objects, not what they point to, into the list.
type listsReader struct{ snap snapshot }

func (r *listsReader) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	return errors.New("the collector only lists")
}

func (r *listsReader) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	switch l := list.(type) {
	case *appsv1alpha1.WebServerList:
		l.Items = append(l.Items[:0:0], r.snap.webServers.Items...)
	case *appsv1alpha1.MemcachedList:
		l.Items = append(l.Items[:0:0], r.snap.memcacheds.Items...)
	case *appsv1alpha1.PodSetList:
		l.Items = append(l.Items[:0:0], r.snap.podSets.Items...)
	case *appsv1alpha1.MySQLList:
		l.Items = append(l.Items[:0:0], r.snap.mySQLs.Items...)
	case *appsv1alpha1.WordPressList:
		l.Items = append(l.Items[:0:0], r.snap.wordPresses.Items...)
	case *appsv1alpha1.MySQLBackupList:
		l.Items = append(l.Items[:0:0], r.snap.mysqlBackups.Items...)
	case *appsv1alpha1.WordPressBackupList:
		l.Items = append(l.Items[:0:0], r.snap.wordPressBackups.Items...)
	default:
		return fmt.Errorf("no %T", list)
	}
	return nil
}

// fleet is n resources of each kind, with the five conditions the operator writes, and per MySQL
// a daily schedule and three backups (one failed, one verified), per WordPress one restore point.
func fleet(n int) snapshot {
	now := metav1.Now()
	conditions := func() []metav1.Condition {
		var out []metav1.Condition
		for _, c := range []string{"Available", "Progressing", "Degraded", "Ready", "Stalled"} {
			out = append(out, metav1.Condition{Type: c, Status: metav1.ConditionFalse, Reason: "AsExpected", LastTransitionTime: now, ObservedGeneration: 1})
		}
		return out
	}
	meta := func(i int, kind string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: fmt.Sprintf("ns-%d", i%50), Name: fmt.Sprintf("%s-%d", kind, i), UID: types.UID(fmt.Sprintf("%s-%d", kind, i))}
	}
	var s snapshot
	for i := range n {
		s.webServers.Items = append(s.webServers.Items, appsv1alpha1.WebServer{ObjectMeta: meta(i, "web"),
			Spec: appsv1alpha1.WebServerSpec{Replicas: ptr.To[int32](3)}, Status: appsv1alpha1.WebServerStatus{ReadyReplicas: 3, Conditions: conditions()}})
		s.memcacheds.Items = append(s.memcacheds.Items, appsv1alpha1.Memcached{ObjectMeta: meta(i, "cache"), Status: appsv1alpha1.MemcachedStatus{Conditions: conditions()}})
		s.podSets.Items = append(s.podSets.Items, appsv1alpha1.PodSet{ObjectMeta: meta(i, "pods"), Status: appsv1alpha1.PodSetStatus{Conditions: conditions()}})
		m := appsv1alpha1.MySQL{ObjectMeta: meta(i, "db"), Status: appsv1alpha1.MySQLStatus{ReadyReplicas: 1, Conditions: conditions()},
			Spec: appsv1alpha1.MySQLSpec{Backup: &appsv1alpha1.MySQLBackupPolicy{Schedule: fmt.Sprintf("%d 2 * * *", i%60)}}}
		s.mySQLs.Items = append(s.mySQLs.Items, m)
		s.wordPresses.Items = append(s.wordPresses.Items, appsv1alpha1.WordPress{ObjectMeta: meta(i, "blog"), Status: appsv1alpha1.WordPressStatus{Conditions: conditions()}})
		for j, phase := range []appsv1alpha1.BackupPhase{appsv1alpha1.BackupSucceeded, appsv1alpha1.BackupFailed, appsv1alpha1.BackupSucceeded} {
			b := appsv1alpha1.MySQLBackup{ObjectMeta: meta(i*3+j, "backup"), Spec: appsv1alpha1.MySQLBackupSpec{MySQLName: m.Name},
				Status: appsv1alpha1.MySQLBackupStatus{Phase: phase, StartTime: &now, CompletionTime: ptr.To(metav1.NewTime(now.Add(time.Duration(j) * time.Minute))), Size: 1 << 20}}
			b.Namespace = m.Namespace
			if j == 2 {
				b.Status.Verification = appsv1alpha1.VerificationPassed
			}
			s.mysqlBackups.Items = append(s.mysqlBackups.Items, b)
		}
		wb := appsv1alpha1.WordPressBackup{ObjectMeta: meta(i, "point"), Spec: appsv1alpha1.WordPressBackupSpec{WordPressName: fmt.Sprintf("blog-%d", i)},
			Status: appsv1alpha1.WordPressBackupStatus{Phase: appsv1alpha1.BackupSucceeded, StartTime: &now, CompletionTime: &now}}
		wb.Namespace = s.wordPresses.Items[i].Namespace
		s.wordPressBackups.Items = append(s.wordPressBackups.Items, wb)
	}
	return s
}

// BenchmarkCollect is one scrape's work over 1,000 resources (200 of each kind): "collect" is the
// collector alone, "scrape" adds what a registry like controller-runtime's and the text format do
// with its series.
func BenchmarkCollect(b *testing.B) {
	ready := make(chan struct{})
	close(ready)
	c := NewCollector(&listsReader{snap: fleet(200)}, ready)
	b.Run("collect", func(b *testing.B) {
		b.ReportAllocs()
		series := 0
		for b.Loop() {
			ch := make(chan prometheus.Metric, 1024)
			go func() { c.Collect(ch); close(ch) }()
			series = 0
			for range ch {
				series++
			}
		}
		b.ReportMetric(float64(series), "series")
	})
	b.Run("scrape", func(b *testing.B) {
		registry := prometheus.NewRegistry()
		registry.MustRegister(c)
		b.ReportAllocs()
		var size int
		for b.Loop() {
			families, err := registry.Gather()
			if err != nil {
				b.Fatal(err)
			}
			size = 0
			for _, f := range families {
				n, err := expfmt.MetricFamilyToText(io.Discard, f)
				if err != nil {
					b.Fatal(err)
				}
				size += n
			}
		}
		b.ReportMetric(float64(size), "text-bytes")
	})
}

// A manager built again in the same process serves its own resources, not the first one's.
func TestCollectorOfANewManagerReplacesTheFirst(t *testing.T) {
	ready := make(chan struct{})
	close(ready)
	registry := prometheus.NewRegistry()
	for _, n := range []int{1, 2} {
		if err := register(registry, NewCollector(&listsReader{snap: fleet(n)}, ready)); err != nil {
			t.Fatal(err)
		}
	}
	families, err := registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "appkeeper_resource_replicas_desired" && len(f.GetMetric()) != 10 {
			t.Errorf("%d series of replicas, want those of the second collector's 10 resources", len(f.GetMetric()))
		}
	}
}

// The series' labels are those their descriptors name, in order, as a pedantic registry checks.
func TestSeriesMatchTheirDescriptors(t *testing.T) {
	ready := make(chan struct{})
	close(ready)
	snap := fleet(2)
	snap.mySQLs.Items = append(snap.mySQLs.Items, ledger())
	registry := prometheus.NewPedanticRegistry()
	registry.MustRegister(NewCollector(&listsReader{snap: snap}, ready))
	families, err := registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(families) != len(descs) {
		t.Errorf("%d families, want one per descriptor, %d", len(families), len(descs))
	}
}
