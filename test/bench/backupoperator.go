package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/backup"
	resources "github.com/appkeeper/appkeeper/internal/resources/mysqlbackup"
	"github.com/appkeeper/appkeeper/test/framework/operatorproc"
)

// backupOverhead is what the operator spends on each on-demand backup, from its creation until the
// MySQL's status names it as its last successful backup.
type backupOverhead struct {
	Backups int `json:"backups"`
	// RequestsPerBackup are the operator's requests by method, from its client's metrics.
	RequestsPerBackup map[string]float64 `json:"requests_per_backup"`
	// WritesPerBackup are its writes as the API server counts them, by verb and resource, and the
	// Events it created.
	WritesPerBackup     map[string]float64 `json:"writes_per_backup"`
	ReconcilesPerBackup map[string]float64 `json:"reconciles_per_backup"`
	CPUMSPerBackup      float64            `json:"cpu_ms_per_backup"`
	// Start is from the backup's creation to its phase Running (the Job applied); Record from the
	// Job's pod reporting its result to the phase Succeeded, through the Job controller.
	StartP50MS  float64 `json:"start_p50_ms"`
	StartP99MS  float64 `json:"start_p99_ms"`
	RecordP50MS float64 `json:"record_p50_ms"`
	RecordP99MS float64 `json:"record_p99_ms"`
}

const (
	backupNamespace = "operator-mysqlbackup"
	backupMySQL     = "db"
	// benchNodeLabel marks the node the MySQL's pod is scheduled to. It is removed once the pod
	// runs, so that the backup Jobs' pods, which ask for the MySQL's nodes, stay unscheduled: kwok
	// would complete them at once, without the result a dump reports, and the backup would fail.
	// The benchmark plays their kubelet instead.
	benchNodeLabel   = "bench.appkeeper.dev/backup"
	benchBackupNode  = "kwok-node-0"
	benchBackupImage = "localhost/appkeeper/appkeeper:bench"
)

// measureBackupOverhead starts the operator, makes a MySQL Available, then takes n on-demand
// backups one after the other, completing each Job's pod with result as its dump's report.
func (b *bench) measureBackupOverhead(ctx context.Context, n int, result backup.Result) (*backupOverhead, error) {
	ns := backupNamespace
	if err := b.createNamespace(ctx, ns); err != nil {
		return nil, err
	}
	defer func() { _ = b.deleteNamespace(ctx, ns) }()
	op, err := b.startOperator(ctx, "operator-mysqlbackup.log", false, append([]string{"--backup-image=" + benchBackupImage}, b.o.operatorArgs...))
	if err != nil {
		return nil, err
	}
	defer op.Stop()
	if err := b.availableMySQL(ctx, ns); err != nil {
		return nil, err
	}
	w, err := b.watchBackups(ctx, ns)
	if err != nil {
		return nil, err
	}
	defer w.stop()
	if err := waitQuiet(ctx, op, 2*time.Second, time.Minute); err != nil {
		return nil, err
	}
	before, err := b.markOverhead(ctx, op, ns)
	if err != nil {
		return nil, err
	}
	starts, records, err := b.takeBackups(ctx, ns, n, result, w)
	if err != nil {
		return nil, err
	}
	if err := w.summary.waitCount(ctx, 1, healTimeout); err != nil {
		return nil, fmt.Errorf("MySQL %s does not name the last backup: %w", backupMySQL, err)
	}
	if err := waitQuiet(ctx, op, 2*time.Second, time.Minute); err != nil {
		return nil, err
	}
	after, err := b.markOverhead(ctx, op, ns)
	if err != nil {
		return nil, err
	}
	o := after.perBackup(before, n)
	o.StartP50MS, o.StartP99MS = percentileMS(starts, 0.50), percentileMS(starts, 0.99)
	o.RecordP50MS, o.RecordP99MS = percentileMS(records, 0.50), percentileMS(records, 0.99)
	return o, nil
}

// availableMySQL creates the MySQL, on benchBackupNode, and the S3 credentials its backups name,
// and waits until it is Available and settled.
func (b *bench) availableMySQL(ctx context.Context, ns string) error {
	if err := b.labelNode(ctx, true); err != nil {
		return err
	}
	// Whatever happens, the node is left as it was.
	defer func() { _ = b.labelNode(context.WithoutCancel(ctx), false) }()
	if err := b.c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s3-keys", Namespace: ns}, StringData: map[string]string{
		appsv1alpha1.SecretKeyAccessKeyID: "bench", appsv1alpha1.SecretKeySecretAccessKey: "bench-secret"}}); err != nil {
		return err
	}
	settled, err := watchReady(ctx, b.cluster.Config, ns, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": appsv1alpha1.GroupVersion.String(), "kind": "MySQL"}}, crSettled)
	if err != nil {
		return err
	}
	defer settled.stop()
	if err := b.c.Create(ctx, &appsv1alpha1.MySQL{
		ObjectMeta: metav1.ObjectMeta{Name: backupMySQL, Namespace: ns},
		Spec: appsv1alpha1.MySQLSpec{Database: "shop", User: "shop",
			NodeSelector: map[string]string{benchNodeLabel: "true"}},
	}); err != nil {
		return err
	}
	return settled.waitCount(ctx, 1, convergeTimeout)
}

func (b *bench) labelNode(ctx context.Context, on bool) error {
	node := &corev1.Node{}
	if err := b.c.Get(ctx, client.ObjectKey{Name: benchBackupNode}, node); err != nil {
		return err
	}
	patch := client.MergeFrom(node.DeepCopy())
	if on {
		if node.Labels == nil {
			node.Labels = map[string]string{}
		}
		node.Labels[benchNodeLabel] = "true"
	} else {
		delete(node.Labels, benchNodeLabel)
	}
	return b.c.Patch(ctx, node, patch)
}

// backupWatch follows the backups' phases, their Jobs' pods and the MySQL's summary.
type backupWatch struct {
	running, succeeded, pods, summary *readiness
}

func (b *bench) watchBackups(ctx context.Context, ns string) (*backupWatch, error) {
	phaseIn := func(phases ...appsv1alpha1.BackupPhase) func(client.Object) bool {
		return func(obj client.Object) bool {
			for _, p := range phases {
				if obj.(*appsv1alpha1.MySQLBackup).Status.Phase == p {
					return true
				}
			}
			return false
		}
	}
	w := &backupWatch{}
	var err error
	if w.running, err = watchReady(ctx, b.cluster.Config, ns, &appsv1alpha1.MySQLBackup{},
		phaseIn(appsv1alpha1.BackupRunning, appsv1alpha1.BackupSucceeded)); err != nil {
		return nil, err
	}
	if w.succeeded, err = watchReady(ctx, b.cluster.Config, ns, &appsv1alpha1.MySQLBackup{},
		phaseIn(appsv1alpha1.BackupSucceeded)); err != nil {
		w.stop()
		return nil, err
	}
	if w.pods, err = watchReady(ctx, b.cluster.Config, ns, &corev1.Pod{}, func(obj client.Object) bool {
		return obj.GetLabels()[appsv1alpha1.LabelName] == appsv1alpha1.MySQLBackupAppName
	}); err != nil {
		w.stop()
		return nil, err
	}
	return w, nil
}

func (w *backupWatch) stop() {
	for _, r := range []*readiness{w.running, w.succeeded, w.pods, w.summary} {
		if r != nil {
			r.stop()
		}
	}
}

// takeBackups creates n backups one after the other and plays the kubelet of each one's Job's pod.
// It returns how long each took to start, and to be recorded once its pod had reported.
func (b *bench) takeBackups(ctx context.Context, ns string, n int, result backup.Result, w *backupWatch) (starts, records []time.Duration, err error) {
	last := fmt.Sprintf("backup-%d", n-1)
	if w.summary, err = watchReady(ctx, b.cluster.Config, ns, &appsv1alpha1.MySQL{}, func(obj client.Object) bool {
		s := obj.(*appsv1alpha1.MySQL).Status.Backup
		return s != nil && s.LastSuccessfulBackup == last
	}); err != nil {
		return nil, nil, err
	}
	for i := range n {
		name := fmt.Sprintf("backup-%d", i)
		created := time.Now()
		if err := b.c.Create(ctx, onDemandBackup(ns, name)); err != nil {
			return nil, nil, err
		}
		if err := w.running.waitName(ctx, name, healTimeout); err != nil {
			return nil, nil, err
		}
		starts = append(starts, time.Since(created))
		if err := w.pods.waitCount(ctx, i+1, healTimeout); err != nil {
			return nil, nil, fmt.Errorf("the Job of %s has no pod: %w", name, err)
		}
		if err := b.finishBackupPod(ctx, ns, name, result); err != nil {
			return nil, nil, fmt.Errorf("complete the pod of %s: %w", name, err)
		}
		reported := time.Now()
		if err := w.succeeded.waitName(ctx, name, healTimeout); err != nil {
			return nil, nil, err
		}
		records = append(records, time.Since(reported))
	}
	return starts, records, nil
}

func onDemandBackup(ns, name string) *appsv1alpha1.MySQLBackup {
	return &appsv1alpha1.MySQLBackup{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1alpha1.MySQLBackupSpec{MySQLName: backupMySQL, Storage: &appsv1alpha1.BackupStorage{S3: &appsv1alpha1.S3Storage{
			Endpoint: "http://objects.storage.svc:7070", Bucket: "backups", Prefix: "bench", Region: "us-east-1",
			ForcePathStyle: true, CredentialsSecretRef: appsv1alpha1.SecretReference{Name: "s3-keys"},
		}}},
	}
}

// finishBackupPod plays the kubelet of the backup's Job's pod: its containers ended, the dump's
// termination message carrying result for the backup's key. The Job controller then completes
// the Job.
func (b *bench) finishBackupPod(ctx context.Context, ns, name string, result backup.Result) error {
	bk := &appsv1alpha1.MySQLBackup{}
	if err := b.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, bk); err != nil {
		return err
	}
	if bk.Status.Location == nil {
		return fmt.Errorf("%s is Running without a location", name)
	}
	result.Key, result.Artifact = bk.Status.Location.Key, backup.ArtifactKey(bk.Status.Location.Key, false)
	message, err := json.Marshal(result)
	if err != nil {
		return err
	}
	pods := &corev1.PodList{}
	if err := b.c.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{
		appsv1alpha1.LabelName: appsv1alpha1.MySQLBackupAppName, appsv1alpha1.LabelInstance: name}); err != nil {
		return err
	}
	if len(pods.Items) != 1 {
		return fmt.Errorf("%d pods, want 1", len(pods.Items))
	}
	key := client.ObjectKeyFromObject(&pods.Items[0])
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod := &corev1.Pod{}
		if err := b.c.Get(ctx, key, pod); err != nil {
			return err
		}
		now := metav1.Now()
		ended := func(c corev1.Container, message string) corev1.ContainerStatus {
			return corev1.ContainerStatus{Name: c.Name, Image: c.Image, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 0, Reason: "Completed", Message: message, StartedAt: now, FinishedAt: now}}}
		}
		pod.Status.Phase = corev1.PodSucceeded
		pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses = nil, nil
		for _, c := range pod.Spec.InitContainers {
			pod.Status.InitContainerStatuses = append(pod.Status.InitContainerStatuses, ended(c, ""))
		}
		for _, c := range pod.Spec.Containers {
			report := ""
			if c.Name == resources.DumpContainer {
				report = string(message) + "\n"
			}
			pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, ended(c, report))
		}
		return b.c.Status().Update(ctx, pod)
	})
}

// overheadMark is what the operator had done and spent at one moment.
type overheadMark struct {
	metrics *operatorproc.Snapshot
	server  map[string]float64
	cpu     float64
	events  float64
}

func (b *bench) markOverhead(ctx context.Context, op *operatorproc.Process, ns string) (overheadMark, error) {
	var m overheadMark
	var err error
	if m.metrics, err = op.Metrics(ctx); err != nil {
		return m, err
	}
	if m.server, _, err = b.serverWrites(ctx); err != nil {
		return m, err
	}
	if _, m.cpu, err = op.Usage(); err != nil {
		return m, err
	}
	m.events, err = b.operatorEvents(ctx, ns)
	return m, err
}

// perBackup divides what the operator did and spent since before by the n backups.
func (m overheadMark) perBackup(before overheadMark, n int) *backupOverhead {
	per := func(after, before map[string]float64) map[string]float64 {
		out := map[string]float64{}
		for key, count := range after {
			if d := count - before[key]; d > 0 {
				out[key] = round2(d / float64(n))
			}
		}
		return out
	}
	o := &backupOverhead{Backups: n,
		RequestsPerBackup:   per(m.metrics.Requests, before.metrics.Requests),
		WritesPerBackup:     per(m.server, before.server),
		ReconcilesPerBackup: per(m.metrics.ReconcilesBy, before.metrics.ReconcilesBy),
		CPUMSPerBackup:      round2((m.cpu - before.cpu) * 1000 / float64(n)),
	}
	o.WritesPerBackup["create events"] = round2((m.events - before.events) / float64(n))
	return o
}

// waitQuiet waits until the operator has neither reconciled nor written for quiet, within timeout.
func waitQuiet(ctx context.Context, op *operatorproc.Process, quiet, timeout time.Duration) error {
	last, err := op.Metrics(ctx)
	if err != nil {
		return err
	}
	since := time.Now()
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, false, func(context.Context) (bool, error) {
		now, err := op.Metrics(ctx)
		if err != nil {
			return false, err
		}
		if now.Reconciles != last.Reconciles || now.Writes() != last.Writes() {
			last, since = now, time.Now()
		}
		return time.Since(since) >= quiet, nil
	})
	if wait.Interrupted(err) && ctx.Err() == nil {
		return fmt.Errorf("the operator was still busy after %s", timeout)
	}
	return err
}
