package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/conditions"
	"github.com/appkeeper/appkeeper/internal/operator"
)

// rollbackKind is one kind in the rollback section: instances running good are asked for broken,
// an image whose pods crash-loop on kwok's nodes.
type rollbackKind struct {
	name         string
	spec         map[string]any
	good, broken string
	// imagePointer is the JSON pointer of the image in the resource.
	imagePointer string
	// workload is the child whose pod template the operator rolls back, named like the instance;
	// nil for a PodSet, whose pods are its children.
	workload client.Object
}

var rollbackKinds = []rollbackKind{
	{name: "WebServer", good: "nginx:1.27", broken: "nginx:broken", imagePointer: "/spec/image", workload: &appsv1.Deployment{},
		spec: map[string]any{"image": "nginx:1.27", "replicas": int64(2)}},
	{name: "Memcached", good: appsv1alpha1.DefaultMemcachedImage, broken: "memcached:broken", imagePointer: "/spec/image",
		workload: &appsv1.StatefulSet{}, spec: map[string]any{"size": int64(3)}},
	{name: "PodSet", good: "busybox:1.36", broken: "busybox:broken", imagePointer: "/spec/template/spec/containers/0/image",
		spec: map[string]any{"replicas": int64(3), "maxUnavailable": int64(1), "template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "main", "image": "busybox:1.36", "command": []any{"sleep", "3600"}}},
		}}}},
	{name: "MySQL", good: appsv1alpha1.DefaultMySQLImage, broken: "mysql:broken", imagePointer: "/spec/image",
		workload: &appsv1.StatefulSet{}, spec: map[string]any{"database": "shop", "user": "shop"}},
	{name: "WordPress", good: appsv1alpha1.DefaultWordPressImage, broken: "wordpress:broken", imagePointer: "/spec/image",
		workload: &appsv1.Deployment{}, spec: map[string]any{}},
}

// rollbackTimeout bounds each instance's creation and each rollback; on kwok both take seconds.
const rollbackTimeout = 2 * time.Minute

// runRollback measures every kind's rollback with its own operator process.
func (b *bench) runRollback(ctx context.Context) error {
	loads := []loadSample{sampleLoad("the rollback section")}
	op, err := b.startOperator(ctx, "operator-rollback.log", false, b.o.operatorArgs)
	if err != nil {
		return err
	}
	defer op.Stop()
	var results []rollbackResult
	for _, k := range rollbackKinds {
		if !b.o.rollbackKinds[k.name] {
			continue
		}
		progress("rollback: %s × %d", k.name, b.o.rollbacks)
		r, err := b.measureRollback(ctx, k, b.o.rollbacks)
		if err != nil {
			return fmt.Errorf("rollback of %s: %w", k.name, err)
		}
		results = append(results, r)
		progress("%s", r.row())
		if err := b.writeRollbackResults(results, loads, false); err != nil {
			return err
		}
	}
	return b.writeRollbackResults(results, loads, true)
}

// measureRollback creates n instances of k, waits until their first revision is the last good one,
// then breaks them one at a time, each once the previous one is Available again.
func (b *bench) measureRollback(ctx context.Context, k rollbackKind, n int) (rollbackResult, error) {
	r := rollbackResult{Kind: k.name, Instances: n}
	ns := "rollback-" + strings.ToLower(k.name)
	if err := b.createNamespace(ctx, ns); err != nil {
		return r, err
	}
	defer func() { _ = b.deleteNamespace(context.WithoutCancel(ctx), ns) }()
	good, err := watchReady(ctx, b.cluster.Config, ns, k.object(ns, ""), func(obj client.Object) bool {
		st, ok := rolloutOf(obj)
		return ok && crSettled(obj) && st.LastGood != nil && st.LastGood.Image == k.good
	})
	if err != nil {
		return r, err
	}
	defer good.stop()
	for i := range n {
		cr := k.object(ns, rollbackInstance(k, i))
		cr.Object["spec"] = runtime.DeepCopyJSONValue(k.spec)
		if err := b.c.Create(ctx, cr); err != nil {
			return r, err
		}
	}
	if err := good.waitCount(ctx, n, rollbackTimeout); err != nil {
		return r, err
	}
	w, err := b.watchRollbacks(ctx, ns, k)
	if err != nil {
		return r, err
	}
	defer w.stop()
	var failing, rolledBack, available []time.Duration
	for i := range n {
		name := rollbackInstance(k, i)
		patched := time.Now()
		if err := b.breakImage(ctx, k, ns, name); err != nil {
			return r, err
		}
		at, err := w.wait(ctx, name)
		if err != nil {
			return r, fmt.Errorf("%s: %w", name, err)
		}
		failing = append(failing, at.failing.Sub(patched))
		rolledBack = append(rolledBack, at.restored.Sub(at.failing))
		available = append(available, at.available.Sub(at.failing))
	}
	r.FailingP50MS, r.FailingMaxMS = percentileMS(failing, 0.5), percentileMS(failing, 1)
	r.RolledBackP50MS, r.RolledBackMaxMS = percentileMS(rolledBack, 0.5), percentileMS(rolledBack, 1)
	r.AvailableP50MS, r.AvailableMaxMS = percentileMS(available, 0.5), percentileMS(available, 1)
	return r, nil
}

func rollbackInstance(k rollbackKind, i int) string {
	return fmt.Sprintf("%s-%d", strings.ToLower(k.name), i)
}

// object is an instance of k, or a sample of the kind when name is empty.
func (k rollbackKind) object(ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetAPIVersion(appsv1alpha1.GroupVersion.String())
	u.SetKind(k.name)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// breakImage asks the instance for the broken image, with the shortest progress deadline.
func (b *bench) breakImage(ctx context.Context, k rollbackKind, ns, name string) error {
	patch, err := json.Marshal([]map[string]any{
		{"op": "add", "path": k.imagePointer, "value": k.broken},
		{"op": "add", "path": "/spec/upgrade", "value": map[string]any{"progressDeadlineSeconds": 30}},
	})
	if err != nil {
		return err
	}
	return b.c.Patch(ctx, k.object(ns, name), client.RawPatch(types.JSONPatchType, patch))
}

// rolloutOf is the rollout status of an appkeeper resource.
func rolloutOf(obj client.Object) (appsv1alpha1.RolloutStatus, bool) {
	var st appsv1alpha1.RolloutStatus
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return st, false
	}
	raw, found, err := unstructured.NestedMap(u.Object, "status", "rollout")
	if !found || err != nil {
		return st, false
	}
	return st, runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &st) == nil
}

// rollbackTimes are when the benchmark saw each step of one instance's rollback.
type rollbackTimes struct {
	// failing: a pod of the broken image crash-looping. broken: the workload's template on the
	// broken image. restored: the template back on the good image (for a PodSet, a pod of the
	// good image created after a failing one). available: the instance Available and settled
	// with Degraded reason RolledBack.
	failing, broken, restored, available time.Time
}

// rollbackWatch follows the pods, the workloads and the instances of one namespace, and notes
// when each step happened, as the watch delivers it.
type rollbackWatch struct {
	k       rollbackKind
	mu      sync.Mutex
	times   map[string]*rollbackTimes
	changed chan struct{}
	cancel  context.CancelFunc
}

func (b *bench) watchRollbacks(ctx context.Context, ns string, k rollbackKind) (*rollbackWatch, error) {
	ctx, cancel := context.WithCancel(ctx)
	w := &rollbackWatch{k: k, times: map[string]*rollbackTimes{}, changed: make(chan struct{}, 1), cancel: cancel}
	c, err := cache.New(b.cluster.Config, cache.Options{Scheme: operator.Scheme(), DefaultNamespaces: map[string]cache.Config{ns: {}}})
	if err != nil {
		cancel()
		return nil, err
	}
	handlers := map[client.Object]func(obj client.Object, added bool){
		&corev1.Pod{}:    w.onPod,
		k.object(ns, ""): w.onInstance,
	}
	if k.workload != nil {
		handlers[k.workload] = w.onWorkload
	}
	for sample, handle := range handlers {
		inf, err := c.GetInformer(ctx, sample)
		if err != nil {
			cancel()
			return nil, err
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { w.handle(obj, true, handle) },
			UpdateFunc: func(_, obj any) { w.handle(obj, false, handle) },
		}); err != nil {
			cancel()
			return nil, err
		}
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		cancel()
		return nil, fmt.Errorf("the caches of %s did not sync", ns)
	}
	return w, nil
}

func (w *rollbackWatch) handle(obj any, added bool, handle func(client.Object, bool)) {
	o, ok := obj.(client.Object)
	if !ok || o.GetDeletionTimestamp() != nil {
		return
	}
	w.mu.Lock()
	handle(o, added)
	w.mu.Unlock()
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

// of is the instance's times; w.mu is held.
func (w *rollbackWatch) of(name string) *rollbackTimes {
	if w.times[name] == nil {
		w.times[name] = &rollbackTimes{}
	}
	return w.times[name]
}

// onPod notes the first crash-looping pod of the broken image and, for a PodSet, the first pod of
// the good image created after it.
func (w *rollbackWatch) onPod(obj client.Object, added bool) {
	pod := obj.(*corev1.Pod)
	at := w.of(pod.Labels[appsv1alpha1.LabelInstance])
	image := pod.Spec.Containers[0].Image
	switch {
	case image == w.k.broken && at.failing.IsZero():
		if p := conditions.FindPodProblem(pod); p != nil && p.Reason == appsv1alpha1.ReasonCrashLoopBackOff {
			at.failing = time.Now()
		}
	case image == w.k.good && added && w.k.workload == nil && !at.failing.IsZero() && at.restored.IsZero():
		at.restored = time.Now()
	}
}

// onWorkload notes when the template goes to the broken image and back to the good one.
func (w *rollbackWatch) onWorkload(obj client.Object, _ bool) {
	var template corev1.PodTemplateSpec
	switch o := obj.(type) {
	case *appsv1.Deployment:
		template = o.Spec.Template
	case *appsv1.StatefulSet:
		template = o.Spec.Template
	}
	at := w.of(obj.GetName())
	switch image := template.Spec.Containers[0].Image; {
	case image == w.k.broken && at.broken.IsZero():
		at.broken = time.Now()
	case image == w.k.good && !at.broken.IsZero() && at.restored.IsZero():
		at.restored = time.Now()
	}
}

// onInstance notes when the instance is Available and settled with the failed revision rolled back.
func (w *rollbackWatch) onInstance(obj client.Object, _ bool) {
	st, ok := rolloutOf(obj)
	c, current := crConditionOf(obj, appsv1alpha1.ConditionDegraded)
	if !ok || st.Failed == nil || !current || c["reason"] != appsv1alpha1.ReasonRolledBack || !crSettled(obj) {
		return
	}
	if at := w.of(obj.GetName()); at.available.IsZero() {
		at.available = time.Now()
	}
}

// wait waits until the instance's rollback is done and returns its times.
func (w *rollbackWatch) wait(ctx context.Context, name string) (rollbackTimes, error) {
	deadline := time.After(rollbackTimeout)
	for {
		w.mu.Lock()
		at := *w.of(name)
		w.mu.Unlock()
		if !at.failing.IsZero() && !at.restored.IsZero() && !at.available.IsZero() {
			return at, nil
		}
		select {
		case <-w.changed:
		case <-deadline:
			return at, fmt.Errorf("no rollback within %s: first failing pod seen %t, rolled back %t, Available again %t",
				rollbackTimeout, !at.failing.IsZero(), !at.restored.IsZero(), !at.available.IsZero())
		case <-ctx.Done():
			return at, ctx.Err()
		}
	}
}

func (w *rollbackWatch) stop() { w.cancel() }
