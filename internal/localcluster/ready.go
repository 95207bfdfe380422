package localcluster

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	readyTimeout = 2 * time.Minute
	pollInterval = 50 * time.Millisecond
	// kube-apiserver delays every create of a custom resource by about 2 s during the first
	// 2 s after its CRD becomes Established; callers would otherwise see that as slowness.
	crdSettleTime = 2 * time.Second
)

func (c *Cluster) client() (client.Client, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return client.New(c.Config, client.Options{Scheme: scheme})
}

// waitReady returns once the cluster can run workloads. The checks run one after the other,
// but the components they check have all been started already and come up side by side.
func (c *Cluster) waitReady(ctx context.Context, crds []*apiextensionsv1.CustomResourceDefinition) error {
	cl, err := c.client()
	if err != nil {
		return err
	}
	settled := time.Now()
	if len(crds) > 0 {
		err := c.waitFor(ctx, "CRDs to be Established", c.logPath("kube-apiserver"), func(ctx context.Context) error {
			return crdsEstablished(ctx, cl, crds)
		})
		if err != nil {
			return err
		}
		settled = time.Now().Add(crdSettleTime)
	}
	for _, ch := range c.children {
		if ch.healthPort == 0 {
			continue
		}
		url := "https://127.0.0.1:" + strconv.Itoa(ch.healthPort) + "/healthz"
		if err := c.waitFor(ctx, ch.name+" to be healthy", ch.logPath, healthz(url)); err != nil {
			return err
		}
	}
	err = c.waitFor(ctx, "nodes to be Ready", c.logPath("kwok"), func(ctx context.Context) error {
		return nodesReady(ctx, cl, c.nodes)
	})
	if err != nil {
		return err
	}
	if c.real != nil {
		if err := c.waitRealNodesReady(ctx, cl); err != nil {
			return err
		}
	}
	// Pods are admitted only once their namespace has its default ServiceAccount.
	err = c.waitFor(ctx, "the default ServiceAccount", c.logPath("kube-controller-manager"), func(ctx context.Context) error {
		return cl.Get(ctx, client.ObjectKey{Namespace: "default", Name: "default"}, &corev1.ServiceAccount{})
	})
	if err != nil {
		return err
	}
	return sleepCtx(ctx, time.Until(settled))
}

// waitFor calls check until it returns nil. It fails early when a child process exits, and
// after readyTimeout with the last reason and the log to read.
func (c *Cluster) waitFor(ctx context.Context, what, logPath string, check func(context.Context) error) error {
	began := time.Now()
	var last error
	// Each check runs for up to 5 s of its own, so that the last one gives its reason, not the
	// wait's deadline.
	err := wait.PollUntilContextTimeout(ctx, pollInterval, readyTimeout, true, func(context.Context) (bool, error) {
		for _, ch := range c.allChildren() {
			if err := ch.exited(); err != nil {
				return false, err
			}
		}
		callCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		last = check(callCtx)
		return last == nil, nil
	})
	switch {
	case err == nil:
		c.log.V(1).Info("waited", "for", what, "took", time.Since(began).Round(time.Millisecond))
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
	case wait.Interrupted(err):
		return fmt.Errorf("waiting for %s: gave up after %s (%w): see %s", what, readyTimeout, last, logPath)
	}
	return err
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// healthz checks a component's /healthz. The components serve it with a self-signed
// certificate, and only on loopback.
func healthz(url string) func(context.Context) error {
	return answersOK(&http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
	}}, url)
}

// answersOK checks that a health endpoint answers "ok" to hc.
func answersOK(hc *http.Client, url string) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		defer func() { _ = resp.Body.Close() }()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != "ok" {
			return fmt.Errorf("%s: %s %s", url, resp.Status, strings.TrimSpace(string(body)))
		}
		return nil
	}
}

// nodesReady requires the fake nodes to be Ready and free of taints but the one that keeps pods
// off them beside a real node: any other is kube-controller-manager's not-ready mark.
func nodesReady(ctx context.Context, cl client.Client, want int) error {
	var nodes corev1.NodeList
	if err := cl.List(ctx, &nodes, client.MatchingLabels{"type": "kwok"}); err != nil {
		return err
	}
	ready := 0
	for _, n := range nodes.Items {
		if untainted(n, FakeNodeTaint) && nodeConditionTrue(n, corev1.NodeReady) {
			ready++
		}
	}
	if ready < want {
		return fmt.Errorf("%d of %d nodes Ready and untainted", ready, want)
	}
	return nil
}

func nodeConditionTrue(n corev1.Node, t corev1.NodeConditionType) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func crdsEstablished(ctx context.Context, cl client.Client, crds []*apiextensionsv1.CustomResourceDefinition) error {
	var errs []error
	for _, want := range crds {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := cl.Get(ctx, client.ObjectKey{Name: want.Name}, &crd); err != nil {
			return err
		}
		established := false
		for _, cond := range crd.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				established = true
			}
		}
		if !established {
			errs = append(errs, fmt.Errorf("CRD %s not Established", crd.Name))
		}
	}
	return errors.Join(errs...)
}

func untainted(n corev1.Node, except string) bool {
	for _, t := range n.Spec.Taints {
		if t.Key != except {
			return false
		}
	}
	return true
}

// waitRealNodesReady waits for each kubelet to serve, its node to be Ready without taints, and
// CoreDNS to answer for the cluster's Services.
func (c *Cluster) waitRealNodesReady(ctx context.Context, cl client.Client) error {
	for _, rn := range c.real.nodes {
		kubelet := c.logPath(rn.logName("kubelet"))
		if err := c.waitFor(ctx, "the kubelet of "+rn.name+" to be healthy", kubelet, healthz(rn.kubeletHealthz)); err != nil {
			return err
		}
		err := c.waitFor(ctx, rn.name+" to be Ready", kubelet, func(ctx context.Context) error {
			var n corev1.Node
			if err := cl.Get(ctx, client.ObjectKey{Name: rn.name}, &n); err != nil {
				return err
			}
			if !nodeConditionTrue(n, corev1.NodeReady) || !untainted(n, "") {
				return fmt.Errorf("node %s not Ready or tainted: %v", rn.name, n.Spec.Taints)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return c.waitFor(ctx, "CoreDNS to answer", c.logPath("coredns"), dnsAnswers)
}

func (c *Cluster) allChildren() []*child {
	all := c.controlPlaneChildren()
	if c.real != nil {
		all = append(all, c.real.shared...)
		for _, n := range c.real.nodes {
			all = append(all, n.children...)
		}
	}
	return all
}

// controlPlaneChildren are the components this package started itself, with kube-apiserver once
// RestartAPIServer has started it again.
func (c *Cluster) controlPlaneChildren() []*child {
	if c.apiServer == nil {
		return c.children
	}
	return append(slices.Clone(c.children), c.apiServer)
}
