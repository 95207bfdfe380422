package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// peerRowKind names the peer's row beside appkeeper's Memcached rows.
const peerRowKind = "Memcached (peer)"

// peerManager is the peer operator running in the benchmark's process.
type peerManager struct {
	reconciler *peerReconciler
	cancel     context.CancelFunc
	done       chan error
}

// startPeer runs the peer as the tutorial's main does: a manager with the defaults, one
// controller for its kind that owns Deployments, one reconcile at a time, and a client without a
// client-side rate limit, which controller-runtime turns off when the kubeconfig sets none. It
// returns once the caches the reconciles read are filled, the pods' included, as appkeeper's
// clock starts with its caches filled.
func startPeer(ctx context.Context, cfg *rest.Config) (*peerManager, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.UserAgent = -1, "memcached-peer"
	scheme := peerScheme()
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		// A manager starts for every size measured, each registering the same controller name.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return nil, err
	}
	r := &peerReconciler{Client: mgr.GetClient(), scheme: scheme}
	if err := ctrl.NewControllerManagedBy(mgr).For(&peerMemcached{}).Owns(&appsv1.Deployment{}).Named("memcached").Complete(r); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	p := &peerManager{reconciler: r, cancel: cancel, done: make(chan error, 1)}
	go func() { p.done <- mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		p.stop()
		return nil, errors.New("the peer's caches did not sync")
	}
	for _, obj := range []client.Object{&peerMemcached{}, &appsv1.Deployment{}, &corev1.Pod{}} {
		if _, err := mgr.GetCache().GetInformer(ctx, obj); err != nil {
			p.stop()
			return nil, err
		}
	}
	return p, nil
}

func (p *peerManager) stop() {
	p.cancel()
	if err := <-p.done; err != nil {
		progress("peer: %v", err)
	}
}

// peerAvailable is true when a peer resource reports Available=True. The tutorial's conditions
// carry no observedGeneration, which appkeeper's readiness requires.
func peerAvailable(obj client.Object) bool {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return false
	}
	raw, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range raw {
		if c, ok := c.(map[string]any); ok && c["type"] == "Available" {
			return c["status"] == string(metav1.ConditionTrue)
		}
	}
	return false
}

func newPeerCR(ns, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": peerGV.String(), "kind": peerKind,
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     map[string]any{"size": int64(1)},
	}}
}

func peerName(i int) string { return fmt.Sprintf("memcached-%d", i) }

// measurePeer times the peer's floor, then the peer creating n instances until each reports
// Available=True, timed as appkeeper's are; appkeeper is appkeeper's Memcached row at n, which
// gets the ratio of the two.
func (b *bench) measurePeer(ctx context.Context, n int, appkeeper *result) (result, error) {
	r := result{Kind: peerRowKind, N: n, peer: true}
	if err := b.peerFloor(ctx, n, &r); err != nil {
		return r, fmt.Errorf("floor: %w", err)
	}
	ns := fmt.Sprintf("peer-memcached-%d", n)
	if err := b.createNamespace(ctx, ns); err != nil {
		return r, err
	}
	defer func() { _ = b.deleteNamespace(ctx, ns) }()
	p, err := startPeer(ctx, b.cluster.Config)
	if err != nil {
		return r, err
	}
	defer p.stop()
	sample := &unstructured.Unstructured{}
	sample.SetGroupVersionKind(peerGV.WithKind(peerKind))
	crs, err := watchReady(ctx, b.cluster.Config, ns, sample, peerAvailable)
	if err != nil {
		return r, err
	}
	defer crs.stop()
	children, err := watchReady(ctx, b.cluster.Config, ns, &appsv1.Deployment{}, deploymentAvailable)
	if err != nil {
		return r, err
	}
	defer children.stop()
	before := p.reconciler.reconciles.Load()
	start := time.Now()
	childrenPresent := milestone(start, func() error { return children.waitPresent(ctx, n, convergeTimeout) })
	childrenReady := milestone(start, func() error { return children.waitCount(ctx, n, convergeTimeout) })
	if err := parallel(n, func(i int) error { return b.c.Create(ctx, newPeerCR(ns, peerName(i))) }); err != nil {
		return r, err
	}
	r.Timeline.CRsCreatedS = round2(time.Since(start).Seconds())
	if err := crs.waitCount(ctx, n, convergeTimeout); err != nil {
		return r, err
	}
	r.OperatorS = time.Since(start).Seconds()
	r.Timeline.ChildrenCreatedS, r.Timeline.ChildrenReadyS = childrenPresent(), childrenReady()
	r.Ratio = round2(r.OperatorS / r.FloorS)
	r.Timeline.ReconcilesPerCR = round2(float64(p.reconciler.reconciles.Load()-before) / float64(n))
	appkeeper.PeerRatio = round2(appkeeper.OperatorS / r.OperatorS)
	return r, nil
}

// peerFloor times a plain client creating the peer's Deployments and waiting until they are
// available: the peer's children differ from appkeeper's, so its floor does too.
func (b *bench) peerFloor(ctx context.Context, n int, r *result) error {
	ns := fmt.Sprintf("floor-peer-memcached-%d", n)
	if err := b.createNamespace(ctx, ns); err != nil {
		return err
	}
	defer func() { _ = b.deleteNamespace(ctx, ns) }()
	deployments := make([]client.Object, n)
	for i := range deployments {
		deployments[i] = peerDeployment(&peerMemcached{
			ObjectMeta: metav1.ObjectMeta{Name: peerName(i), Namespace: ns}, Spec: peerMemcachedSpec{Size: 1},
		})
	}
	ready, err := watchReady(ctx, b.cluster.Config, ns, &appsv1.Deployment{}, deploymentAvailable)
	if err != nil {
		return err
	}
	defer ready.stop()
	start := time.Now()
	if err := parallel(n, func(i int) error { return b.c.Create(ctx, deployments[i]) }); err != nil {
		return err
	}
	r.Timeline.FloorChildrenCreatedS = round2(time.Since(start).Seconds())
	if err := ready.waitCount(ctx, n, convergeTimeout); err != nil {
		return err
	}
	r.FloorS = time.Since(start).Seconds()
	return nil
}
