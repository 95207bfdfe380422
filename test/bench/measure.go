package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/appkeeper/appkeeper/internal/localcluster"
	"github.com/appkeeper/appkeeper/test/framework/operatorproc"
)

type bench struct {
	o       options
	cluster *localcluster.Cluster
	c       client.Client
	cs      kubernetes.Interface
	dir     string
	// refused holds why reports were not written.
	refused []string
}

// startOperator runs the operator out of process, logging to logName under the state directory.
func (b *bench) startOperator(ctx context.Context, logName string, profile bool, args []string) (*operatorproc.Process, error) {
	return operatorproc.Start(ctx, operatorproc.Options{
		Binary: b.o.binary, Kubeconfig: b.cluster.KubeconfigPath, LogPath: filepath.Join(b.dir, "logs", logName),
		Profile: profile, Args: args,
	})
}

// workers is how many creates a client keeps in flight, for the floor and the operator alike.
const workers = 32

// convergeTimeout bounds each wait for n objects; at the sizes measured the cluster needs minutes
// at most.
const convergeTimeout = 15 * time.Minute

// healTimeout bounds each step of a self-heal. A deleted child's dependents are removed by the
// garbage collector, which with thousands of objects can take minutes to reach them; a StatefulSet's
// pod must be gone before its replacement can be created under the same name.
const healTimeout = 5 * time.Minute

// parallel runs f for 0..n-1 on the workers and returns the first error.
func parallel(n int, f func(i int) error) error {
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := f(i); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return firstErr
}

func (b *bench) createNamespace(ctx context.Context, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := b.c.Create(ctx, ns); err != nil {
		return err
	}
	// Pods need the namespace's default ServiceAccount, which kube-controller-manager creates.
	return wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		err := b.c.Get(ctx, client.ObjectKey{Namespace: name, Name: "default"}, &corev1.ServiceAccount{})
		return err == nil, client.IgnoreNotFound(err)
	})
}

// deleteNamespace deletes a namespace and waits until it is gone, so that its cleanup does not
// load the cluster during the next measurement.
func (b *bench) deleteNamespace(ctx context.Context, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := b.c.Delete(ctx, ns); client.IgnoreNotFound(err) != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, convergeTimeout, true, func(ctx context.Context) (bool, error) {
		err := b.c.Get(ctx, client.ObjectKeyFromObject(ns), ns)
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

// createUnrelated fills other namespaces with ConfigMaps, Secrets and Pods that the operator must
// not cache: 40 % each of ConfigMaps and Secrets, 20 % Pods bound to the nodes directly.
func (b *bench) createUnrelated(ctx context.Context) error {
	const namespaces = 10
	for i := range namespaces {
		if err := b.createNamespace(ctx, fmt.Sprintf("unrelated-%d", i)); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	n := b.o.unrelated
	if err := parallel(n, func(i int) error {
		meta := metav1.ObjectMeta{Name: fmt.Sprintf("unrelated-%d", i), Namespace: fmt.Sprintf("unrelated-%d", i%namespaces)}
		var obj client.Object
		switch {
		case i < n*4/10:
			obj = &corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"key": strings.Repeat("x", 512)}}
		case i < n*8/10:
			obj = &corev1.Secret{ObjectMeta: meta, StringData: map[string]string{"key": strings.Repeat("x", 512)}}
		default:
			obj = &corev1.Pod{ObjectMeta: meta, Spec: corev1.PodSpec{
				NodeName:   fmt.Sprintf("kwok-node-%d", i%b.o.nodes),
				Containers: []corev1.Container{{Name: "app", Image: "busybox:1.36"}},
			}}
		}
		if err := b.c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		return nil
	}); err != nil {
		return err
	}
	// The cluster is busy making the pods run for a while; the first floor must not pay for that.
	pods := n - n*8/10
	return wait.PollUntilContextTimeout(ctx, 2*time.Second, convergeTimeout, true, func(ctx context.Context) (bool, error) {
		ready := 0
		for i := range namespaces {
			list := &corev1.PodList{}
			if err := b.c.List(ctx, list, client.InNamespace(fmt.Sprintf("unrelated-%d", i))); err != nil {
				return false, err
			}
			for _, pod := range list.Items {
				for _, c := range pod.Status.Conditions {
					if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
						ready++
					}
				}
			}
		}
		return ready >= pods, nil
	})
}

func instanceName(k benchKind, i int) string { return fmt.Sprintf("%s-%d", strings.ToLower(k.name), i) }

// measure runs the floor and then the operator for n instances of k.
func (b *bench) measure(ctx context.Context, k benchKind, n int) (result, error) {
	r := result{Kind: k.name, N: n}
	if err := b.floor(ctx, k, n, &r); err != nil {
		return r, fmt.Errorf("floor: %w", err)
	}

	ns := fmt.Sprintf("operator-%s-%d", strings.ToLower(k.name), n)
	if err := b.createNamespace(ctx, ns); err != nil {
		return r, err
	}
	defer func() { _ = b.deleteNamespace(ctx, ns) }()
	op, err := b.startOperator(ctx, fmt.Sprintf("operator-%s-%d.log", strings.ToLower(k.name), n), b.o.profile, b.o.operatorArgs)
	if err != nil {
		return r, err
	}
	defer op.Stop()
	if err := b.operatorRun(ctx, k, n, ns, op, &r); err != nil {
		return r, err
	}
	return r, nil
}

func (b *bench) operatorRun(ctx context.Context, k benchKind, n int, ns string, op *operatorproc.Process, r *result) error {
	sample := k.newCR(ns, "")
	crs, err := watchReady(ctx, b.cluster.Config, ns, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": sample.GetAPIVersion(), "kind": sample.GetKind()}}, crAvailable)
	if err != nil {
		return err
	}
	defer crs.stop()
	// The clock starts once the operator's caches are filled, as the floor's client starts warm.
	var cpuStart float64
	if r.RSSStartMiB, cpuStart, err = op.Usage(); err != nil {
		return err
	}
	before, err := op.Metrics(ctx)
	if err != nil {
		return err
	}
	serverBefore, latencyBefore, err := b.serverWrites(ctx)
	if err != nil {
		return err
	}
	profiles := filepath.Join(b.dir, "profiles")
	if b.o.profile {
		if err := os.MkdirAll(profiles, 0o755); err != nil {
			return err
		}
	}
	profileName := func(suffix string) string {
		return filepath.Join(profiles, fmt.Sprintf("%s-%d-%s", strings.ToLower(k.name), n, suffix))
	}
	cpuDone := make(chan error, 1)
	go func() {
		serverDone := make(chan error, 1)
		go func() { serverDone <- b.saveServerProfile(ctx, profileName("creation.apiserver.cpu.pprof")) }()
		cpuDone <- errors.Join(op.SaveProfile(ctx, "profile?seconds=30", profileName("creation.cpu.pprof")), <-serverDone)
	}()
	// The main children are followed too, to tell where the operator's time goes: creating them,
	// the cluster making them ready, or reporting it.
	children, err := watchReady(ctx, b.cluster.Config, ns, k.primary(), k.primaryReady)
	if err != nil {
		return err
	}
	defer children.stop()
	start := time.Now()
	childrenPresent := milestone(start, func() error { return children.waitPresent(ctx, n, convergeTimeout) })
	childrenReady := milestone(start, func() error { return children.waitCount(ctx, n, convergeTimeout) })
	if err := parallel(n, func(i int) error {
		return b.c.Create(ctx, k.newCR(ns, instanceName(k, i)))
	}); err != nil {
		return err
	}
	r.Timeline.CRsCreatedS = round2(time.Since(start).Seconds())
	if err := crs.waitCount(ctx, n, convergeTimeout); err != nil {
		return err
	}
	r.OperatorS = time.Since(start).Seconds()
	r.Timeline.ChildrenCreatedS, r.Timeline.ChildrenReadyS = childrenPresent(), childrenReady()
	children.stop()
	r.Ratio = round2(r.OperatorS / r.FloorS)
	converged, err := op.Metrics(ctx)
	if err != nil {
		return err
	}
	_, cpuConverged, err := op.Usage()
	if err != nil {
		return err
	}
	if reconciles := converged.Reconciles - before.Reconciles; reconciles > 0 {
		r.Timeline.ReconcilesPerCR = round2(reconciles / float64(n))
		r.Timeline.CPUMSPerReconcile = round2((cpuConverged - cpuStart) * 1000 / reconciles)
	}
	serverAfter, latencyAfter, err := b.serverWrites(ctx)
	if err != nil {
		return err
	}
	r.Timeline.ServerWriteP50MS = round2(latencyAfter.Quantile(latencyBefore, 0.50) * 1000)
	r.Timeline.ServerWriteP99MS = round2(latencyAfter.Quantile(latencyBefore, 0.99) * 1000)
	r.CreationRequestsPerCR = map[string]float64{}
	for method, count := range converged.Requests {
		if d := count - before.Requests[method]; d > 0 {
			r.CreationRequestsPerCR[method] = round2(d / float64(n))
		}
	}
	r.CreationWritesPerCR = map[string]float64{}
	for key, count := range serverAfter {
		if d := count - serverBefore[key]; d > 0 {
			r.CreationWritesPerCR[key] = round2(d / float64(n))
		}
	}
	events, err := b.operatorEvents(ctx, ns)
	if err != nil {
		return err
	}
	r.CreationWritesPerCR["create events"] = round2(events / float64(n))
	r.Conflicts409 = converged.Conflicts - before.Conflicts
	r.ReconcileP50MS = round2(converged.Quantile(before, 0.50) * 1000)
	r.ReconcileP99MS = round2(converged.Quantile(before, 0.99) * 1000)

	// Available comes from the pods; Progressing turns False only once the Deployment or
	// StatefulSet reports the rollout complete, a moment later. The idle period starts when every
	// status has caught up, so that it counts what an idle operator does, not the end of creation.
	settled, err := watchReady(ctx, b.cluster.Config, ns, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": sample.GetAPIVersion(), "kind": sample.GetKind()}}, crSettled)
	if err != nil {
		return err
	}
	err = settled.waitCount(ctx, n, convergeTimeout)
	settled.stop()
	if err != nil {
		return err
	}
	r.SettledS = round2(time.Since(start).Seconds())
	if r.Rivals, err = b.createRivals(ctx, k, n, ns); err != nil {
		return err
	}
	converged, err = op.Metrics(ctx)
	if err != nil {
		return err
	}
	time.Sleep(b.o.idle)
	idle, err := op.Metrics(ctx)
	if err != nil {
		return err
	}
	if err := <-cpuDone; err != nil {
		progress("CPU profile: %v", err)
	}
	// The heap profile runs a collection first, which leaves the live heap in use.
	if err := op.SaveProfile(ctx, "heap?gc=1", profileName("idle.heap.pprof")); err != nil {
		progress("heap profile: %v", err)
	}
	r.IdleWrites60s = idle.Writes() - converged.Writes()
	r.IdleReconciles60s = idle.Reconciles - converged.Reconciles
	for controller, count := range idle.ReconcilesBy {
		if d := count - converged.ReconcilesBy[controller]; d > 0 {
			if r.IdleReconcilesByController == nil {
				r.IdleReconcilesByController = map[string]float64{}
			}
			r.IdleReconcilesByController[controller] = d
		}
	}
	for _, method := range []string{"POST", "PUT", "PATCH", "DELETE"} {
		if d := idle.Requests[method] - converged.Requests[method]; d > 0 {
			if r.IdleWritesByMethod == nil {
				r.IdleWritesByMethod = map[string]float64{}
			}
			r.IdleWritesByMethod[method] = d
		}
	}
	if r.RSSMiB, r.CPUS, err = op.Usage(); err != nil {
		return err
	}
	r.RSSMiB, r.CPUS = round2(r.RSSMiB), round2(r.CPUS)
	r.RSSStartMiB = round2(r.RSSStartMiB)
	r.RSSPerCRKiB = round2((r.RSSMiB - r.RSSStartMiB) * 1024 / float64(n))
	r.HeapStartMiB, r.HeapMiB = round2(before.HeapInuse/(1<<20)), round2(idle.HeapInuse/(1<<20))
	if b.o.profile {
		// After the collection the heap profile made: what the instances really hold.
		collected, err := op.Metrics(ctx)
		if err != nil {
			return err
		}
		r.HeapLiveMiB = round2(collected.HeapInuse / (1 << 20))
	}
	if err := b.selfHeal(ctx, k, ns, n, r); err != nil {
		return err
	}
	healed, err := op.Metrics(ctx)
	if err != nil {
		return err
	}
	r.SteadyReconcileP50MS = round2(healed.Quantile(idle, 0.50) * 1000)
	r.SteadyReconcileP99MS = round2(healed.Quantile(idle, 0.99) * 1000)
	return nil
}

// selfHeal deletes the main child of some instances, one at a time, and times until the operator
// has put it back and it is ready.
func (b *bench) selfHeal(ctx context.Context, k benchKind, ns string, n int, r *result) error {
	children, err := watchReady(ctx, b.cluster.Config, ns, k.primary(), k.primaryReady)
	if err != nil {
		return err
	}
	defer children.stop()
	var times []time.Duration
	for i := range min(b.o.selfHeals, n) {
		name := k.primaryName(instanceName(k, i))
		if err := children.waitName(ctx, name, healTimeout); err != nil {
			return err
		}
		uid := children.uid(name)
		child := k.primary()
		child.SetNamespace(ns)
		child.SetName(name)
		start := time.Now()
		if err := b.c.Delete(ctx, child); err != nil {
			return err
		}
		if err := children.waitReplaced(ctx, name, uid, healTimeout); err != nil {
			return err
		}
		times = append(times, time.Since(start))
	}
	r.SelfHealP50MS, r.SelfHealP99MS = percentileMS(times, 0.50), percentileMS(times, 0.99)
	return nil
}

// percentileMS is the q-quantile of times in milliseconds, by the nearest-rank method.
func percentileMS(times []time.Duration, q float64) float64 {
	if len(times) == 0 {
		return 0
	}
	sorted := append([]time.Duration(nil), times...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	rank := int(math.Ceil(q*float64(len(sorted)))) - 1
	return round2(ms(sorted[max(rank, 0)]))
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }

// saveServerProfile saves the API server's CPU profile over the same 30 seconds as the operator's,
// when profiles are asked for: the operator's cost is mostly the API server's work for it.
func (b *bench) saveServerProfile(ctx context.Context, file string) error {
	if !b.o.profile {
		return nil
	}
	raw, err := b.cs.Discovery().RESTClient().Get().AbsPath("/debug/pprof/profile").Param("seconds", "30").DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("API server profile: %w", err)
	}
	return os.WriteFile(file, raw, 0o644)
}
