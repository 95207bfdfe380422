package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// serviceAccount is the operator's identity as the shipped RBAC in config/rbac names it.
type serviceAccount struct{ namespace, name string }

func (sa serviceAccount) userName() string {
	return "system:serviceaccount:" + sa.namespace + ":" + sa.name
}

// impersonating returns a copy of cfg that acts as sa, with the groups the API server gives every
// ServiceAccount's token.
func (sa serviceAccount) impersonating(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: sa.userName(),
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + sa.namespace},
	}
	return cfg
}

// shippedRBAC reads the objects that config/rbac/kustomization.yaml lists: what a cluster gets
// from dist/install.yaml, less the namespace the kustomization in config/default sets (every
// namespaced object there already names appkeeper-system).
func shippedRBAC(root string) ([]*unstructured.Unstructured, error) {
	dir := filepath.Join(root, "config", "rbac")
	raw, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		return nil, err
	}
	var kustomization struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(raw, &kustomization); err != nil {
		return nil, fmt.Errorf("config/rbac/kustomization.yaml: %w", err)
	}
	var objects []*unstructured.Unstructured
	for _, file := range kustomization.Resources {
		data, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			return nil, err
		}
		decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			obj := &unstructured.Unstructured{}
			if err := decoder.Decode(&obj.Object); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				return nil, fmt.Errorf("config/rbac/%s: %w", file, err)
			}
			if len(obj.Object) > 0 {
				objects = append(objects, obj)
			}
		}
	}
	return objects, nil
}

// installRBAC creates the shipped RBAC (and the namespaces it lives in) with the admin client and
// returns the operator's ServiceAccount, once the API server's authorizer grants it its rights.
func installRBAC(ctx context.Context, admin client.Client, root string) (serviceAccount, error) {
	objects, err := shippedRBAC(root)
	if err != nil {
		return serviceAccount{}, err
	}
	var sa serviceAccount
	for _, obj := range objects {
		if ns := obj.GetNamespace(); ns != "" {
			err := admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
			if client.IgnoreAlreadyExists(err) != nil {
				return sa, err
			}
		}
		if obj.GetKind() == "ServiceAccount" {
			sa = serviceAccount{namespace: obj.GetNamespace(), name: obj.GetName()}
		}
		if err := admin.Create(ctx, obj); err != nil {
			return sa, fmt.Errorf("create %s %s from config/rbac: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	if sa.name == "" {
		return sa, errors.New("config/rbac ships no ServiceAccount")
	}
	// The authorizer reads roles from an informer: wait until it sees the bindings.
	for _, attributes := range []authorizationv1.ResourceAttributes{
		{Group: "apps.appkeeper.dev", Resource: "webservers", Verb: "watch"},
		{Namespace: sa.namespace, Group: "coordination.k8s.io", Resource: "leases", Verb: "create"},
	} {
		if err := waitAllowed(ctx, admin, sa, attributes); err != nil {
			return sa, err
		}
	}
	return sa, nil
}

func waitAllowed(ctx context.Context, admin client.Client, sa serviceAccount, attributes authorizationv1.ResourceAttributes) error {
	var review *authorizationv1.SubjectAccessReview
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		review = &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:               sa.userName(),
			Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + sa.namespace},
			ResourceAttributes: &attributes,
		}}
		if err := admin.Create(ctx, review); err != nil {
			return false, err
		}
		return review.Status.Allowed, nil
	})
	if wait.Interrupted(err) && ctx.Err() == nil {
		return fmt.Errorf("%s is not allowed to %s %s after installing config/rbac: %s",
			sa.userName(), attributes.Verb, attributes.Resource, review.Status.Reason)
	}
	return err
}

// forbiddenLog records every request of the operator that the API server refused for want of
// RBAC. Under the shipped roles there must be none: a refusal means a verb the code uses is
// missing from the +kubebuilder:rbac markers.
type forbiddenLog struct {
	mu       sync.Mutex
	messages []string
}

// watch wraps cfg's transport so that every 403 answer is recorded and reported at once, beside
// the test that is waiting for the operator.
func (l *forbiddenLog) watch(cfg *rest.Config) {
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			resp, err := next.RoundTrip(req)
			if err != nil || resp.StatusCode != http.StatusForbidden {
				return resp, err
			}
			body, readErr := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			resp.Body = io.NopCloser(bytes.NewReader(body))
			if readErr != nil {
				return resp, nil //nolint:nilerr // the caller gets the 403 without its body
			}
			l.record(req, body)
			return resp, nil
		})
	})
}

func (l *forbiddenLog) record(req *http.Request, body []byte) {
	message := strings.TrimSpace(string(body))
	// The answer is in JSON or protobuf, as the request asked.
	if decoded, _, err := clientgoscheme.Codecs.UniversalDeserializer().Decode(body, nil, nil); err == nil {
		if status, ok := decoded.(*metav1.Status); ok && status.Message != "" {
			message = status.Message
			if apierrors.HasStatusCause(&apierrors.StatusError{ErrStatus: *status}, corev1.NamespaceTerminatingCause) {
				// The namespace is being deleted: the roles are not at fault.
				return
			}
		}
	}
	line := fmt.Sprintf("%s %s: %s", req.Method, req.URL.Path, message)
	l.mu.Lock()
	defer l.mu.Unlock()
	if slices.Contains(l.messages, line) {
		return
	}
	l.messages = append(l.messages, line)
	fmt.Fprintf(os.Stderr, "RBAC: the operator was forbidden %s\n"+
		"  add the verb to a +kubebuilder:rbac marker and run `make manifests sync-manifests`\n", line)
}

// report returns an error listing every refusal, nil when there was none.
func (l *forbiddenLog) report() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.messages) == 0 {
		return nil
	}
	return fmt.Errorf("the API server refused %d request(s) of the operator under the RBAC in config/rbac; "+
		"add the missing verbs to the +kubebuilder:rbac markers and run `make manifests sync-manifests`:\n  %s",
		len(l.messages), strings.Join(l.messages, "\n  "))
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// AsShippedServiceAccount installs config/rbac on the cluster that cfg administers and returns a
// copy of cfg acting as the operator's ServiceAccount: a manager started with it holds only the
// RBAC the project ships, as it does in a cluster installed from dist/install.yaml.
func AsShippedServiceAccount(ctx context.Context, cfg *rest.Config) (*rest.Config, error) {
	admin, err := client.New(cfg, client.Options{})
	if err != nil {
		return nil, err
	}
	sa, err := installRBAC(ctx, admin, repoRoot())
	if err != nil {
		return nil, fmt.Errorf("install config/rbac: %w", err)
	}
	return sa.impersonating(cfg), nil
}

// repoRoot is the project's folder, which holds config/.
func repoRoot() string {
	_, self, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(self), "..", "..", "..")
}
