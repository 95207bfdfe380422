package main

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/localcluster"
	"github.com/appkeeper/appkeeper/internal/resources/webserver"
)

type bench struct {
	o       options
	cluster *localcluster.Cluster
	c       client.Client
	dir     string
}

// workers is how many creates a client keeps in flight, for the floor and the operator alike.
const workers = 32

// convergeTimeout bounds each wait for n objects; at the sizes measured the cluster needs minutes
// at most.
const convergeTimeout = 15 * time.Minute

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
	return parallel(n, func(i int) error {
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
	})
}

// floorSingle is the median time for a plain client to create one Deployment of a WebServer's
// shape and see it Available.
func (b *bench) floorSingle(ctx context.Context) (time.Duration, error) {
	const ns, rounds = "floor-single", 5
	if err := b.createNamespace(ctx, ns); err != nil {
		return 0, err
	}
	defer func() { _ = b.deleteNamespace(ctx, ns) }()
	ws := &appsv1alpha1.WebServer{ObjectMeta: metav1.ObjectMeta{Namespace: ns},
		Spec: appsv1alpha1.WebServerSpec{Image: appsv1alpha1.DefaultWebServerImage, Port: 8080}}
	r, err := watchReady(ctx, b.cluster.Config, ns, &appsv1.Deployment{}, kinds[0].primaryReady)
	if err != nil {
		return 0, err
	}
	defer r.stop()
	times := make([]time.Duration, 0, rounds)
	for i := range rounds {
		ws.Name = fmt.Sprintf("single-%d", i)
		dep := typedFrom[appsv1.Deployment](webserver.Deployment(ws))
		start := time.Now()
		if err := b.c.Create(ctx, dep); err != nil {
			return 0, err
		}
		if err := r.waitName(ctx, ws.Name, time.Minute); err != nil {
			return 0, err
		}
		times = append(times, time.Since(start))
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	return times[rounds/2], nil
}

// floor times a plain client creating the children of n instances of k.
func (b *bench) floor(ctx context.Context, k benchKind, n int) (time.Duration, error) {
	ns := fmt.Sprintf("floor-%s-%d", strings.ToLower(k.name), n)
	if err := b.createNamespace(ctx, ns); err != nil {
		return 0, err
	}
	defer func() { _ = b.deleteNamespace(ctx, ns) }()
	// The children are built from the defaulted resource, which a dry run gives without storing it.
	objects := make([][]client.Object, n)
	if err := parallel(n, func(i int) error {
		cr := k.newCR(ns, fmt.Sprintf("%s-%d", strings.ToLower(k.name), i))
		if err := b.c.Create(ctx, cr, client.DryRunAll); err != nil {
			return err
		}
		typed := k.typed()
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(cr.Object, typed); err != nil {
			return err
		}
		objects[i] = k.children(typed)
		return nil
	}); err != nil {
		return 0, err
	}
	r, err := watchReady(ctx, b.cluster.Config, ns, k.primary(), k.primaryReady)
	if err != nil {
		return 0, err
	}
	defer r.stop()
	start := time.Now()
	if err := parallel(n, func(i int) error {
		for _, obj := range objects[i] {
			if err := b.c.Create(ctx, obj); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return 0, err
	}
	if err := r.waitCount(ctx, n, convergeTimeout); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// measure runs the floor and then the operator for n instances of k.
func (b *bench) measure(ctx context.Context, k benchKind, n int) (result, error) {
	r := result{Kind: k.name, N: n}
	floor, err := b.floor(ctx, k, n)
	if err != nil {
		return r, fmt.Errorf("floor: %w", err)
	}
	r.FloorS = floor.Seconds()

	ns := fmt.Sprintf("operator-%s-%d", strings.ToLower(k.name), n)
	if err := b.createNamespace(ctx, ns); err != nil {
		return r, err
	}
	defer func() { _ = b.deleteNamespace(ctx, ns) }()
	op, err := startOperator(ctx, b.o.binary, b.cluster.KubeconfigPath,
		filepath.Join(b.dir, "logs", fmt.Sprintf("operator-%s-%d.log", strings.ToLower(k.name), n)), b.o.operatorArgs)
	if err != nil {
		return r, err
	}
	defer op.stop()
	if err := b.operatorRun(ctx, k, n, ns, op, &r); err != nil {
		return r, err
	}
	return r, nil
}

func (b *bench) operatorRun(ctx context.Context, k benchKind, n int, ns string, op *operatorProcess, r *result) error {
	sample := k.newCR(ns, "")
	crs, err := watchReady(ctx, b.cluster.Config, ns, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": sample.GetAPIVersion(), "kind": sample.GetKind()}}, crAvailable)
	if err != nil {
		return err
	}
	defer crs.stop()
	before, err := op.metrics(ctx)
	if err != nil {
		return err
	}
	start := time.Now()
	if err := parallel(n, func(i int) error {
		return b.c.Create(ctx, k.newCR(ns, fmt.Sprintf("%s-%d", strings.ToLower(k.name), i)))
	}); err != nil {
		return err
	}
	if err := crs.waitCount(ctx, n, convergeTimeout); err != nil {
		return err
	}
	r.OperatorS = time.Since(start).Seconds()
	r.Ratio = r.OperatorS / r.FloorS
	converged, err := op.metrics(ctx)
	if err != nil {
		return err
	}
	r.CreationRequestsPerCR = map[string]float64{}
	for method, count := range converged.requests {
		if d := count - before.requests[method]; d > 0 {
			r.CreationRequestsPerCR[method] = round2(d / float64(n))
		}
	}
	r.Conflicts409 = converged.conflicts - before.conflicts
	r.ReconcileP50MS = round2(converged.quantile(before, 0.50) * 1000)
	r.ReconcileP99MS = round2(converged.quantile(before, 0.99) * 1000)

	time.Sleep(b.o.idle)
	idle, err := op.metrics(ctx)
	if err != nil {
		return err
	}
	r.IdleWrites60s = idle.writes() - converged.writes()
	r.IdleReconciles60s = idle.reconciles - converged.reconciles
	for _, method := range []string{"POST", "PUT", "PATCH", "DELETE"} {
		if d := idle.requests[method] - converged.requests[method]; d > 0 {
			if r.IdleWritesByMethod == nil {
				r.IdleWritesByMethod = map[string]float64{}
			}
			r.IdleWritesByMethod[method] = d
		}
	}
	if r.RSSMiB, r.CPUS, err = op.usage(); err != nil {
		return err
	}
	if err := b.selfHeal(ctx, k, ns, n, r); err != nil {
		return err
	}
	healed, err := op.metrics(ctx)
	if err != nil {
		return err
	}
	r.SteadyReconcileP50MS = round2(healed.quantile(idle, 0.50) * 1000)
	r.SteadyReconcileP99MS = round2(healed.quantile(idle, 0.99) * 1000)
	return nil
}

// selfHeal deletes the main child of some instances, one at a time, and times until it is back
// and ready.
func (b *bench) selfHeal(ctx context.Context, k benchKind, ns string, n int, r *result) error {
	children, err := watchReady(ctx, b.cluster.Config, ns, k.primary(), k.primaryReady)
	if err != nil {
		return err
	}
	defer children.stop()
	var times []time.Duration
	for i := range min(b.o.selfHeals, n) {
		name := k.primaryName(fmt.Sprintf("%s-%d", strings.ToLower(k.name), i))
		if err := children.waitName(ctx, name, time.Minute); err != nil {
			return err
		}
		child := k.primary()
		child.SetNamespace(ns)
		child.SetName(name)
		start := time.Now()
		if err := b.c.Delete(ctx, child); err != nil {
			return err
		}
		if err := children.waitFor(ctx, time.Minute, func() bool { return !children.ready[name] }, func() string { return name + " not deleted" }); err != nil {
			return err
		}
		if err := children.waitName(ctx, name, time.Minute); err != nil {
			return err
		}
		times = append(times, time.Since(start))
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	if len(times) > 0 {
		r.SelfHealP50MS = ms(times[len(times)/2])
		r.SelfHealP99MS = ms(times[(len(times)*99)/100])
	}
	return nil
}

func round2(f float64) float64 { return float64(int64(f*100+0.5)) / 100 }
