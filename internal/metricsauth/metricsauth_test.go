package metricsauth

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// TestFilterAsksTheAPIServer serves a guarded handler and calls it as nobody, with a forged token,
// as a ServiceAccount without the right and as one bound to a role that may GET /metrics.
func TestFilterAsksTheAPIServer(t *testing.T) {
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(cfg)
	const ns = "default"
	reader, other := serviceAccountToken(t, cs, ns, "reader"), serviceAccountToken(t, cs, ns, "other")
	_, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader"},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "reader"}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	filter, err := NewFilter(cfg, httpClient)
	if err != nil {
		t.Fatal(err)
	}
	served := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("metrics")) })
	guarded, err := filter(log.Log, served)
	if err != nil {
		t.Fatal(err)
	}
	server := httptest.NewServer(guarded)
	defer server.Close()

	for _, tc := range []struct {
		name, path, authorization string
		want                      int
	}{
		{name: "no token", path: "/metrics", want: http.StatusUnauthorized},
		{name: "not a bearer token", path: "/metrics", authorization: "Basic " + reader, want: http.StatusUnauthorized},
		{name: "forged token", path: "/metrics", authorization: "Bearer not-a-token", want: http.StatusUnauthorized},
		{name: "no role", path: "/metrics", authorization: "Bearer " + other, want: http.StatusForbidden},
		{name: "reader", path: "/metrics", authorization: "Bearer " + reader, want: http.StatusOK},
		{name: "reader again, from the cache", path: "/metrics", authorization: "Bearer " + reader, want: http.StatusOK},
		{name: "reader on another path", path: "/debug", authorization: "Bearer " + reader, want: http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, server.URL+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.authorization != "" {
				req.Header.Set("Authorization", tc.authorization)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("HTTP %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}
}

func serviceAccountToken(t *testing.T, cs kubernetes.Interface, ns, name string) string {
	t.Helper()
	ctx := context.Background()
	sa, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	expiry := int64(time.Hour.Seconds())
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// TestCacheExpires checks that a decision is forgotten after its time to live.
func TestCacheExpires(t *testing.T) {
	now := time.Now()
	c := newTTLCache[bool]()
	c.now = func() time.Time { return now }
	c.put("k", true, time.Minute)
	if v, ok := c.get("k"); !ok || !v {
		t.Fatalf("get right after put = %v, %v", v, ok)
	}
	now = now.Add(time.Minute)
	if _, ok := c.get("k"); ok {
		t.Fatal("the entry outlived its time to live")
	}
}
