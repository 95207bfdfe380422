package apply_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/apply"
	"github.com/appkeeper/appkeeper/internal/failure"
	"github.com/appkeeper/appkeeper/internal/kube"
)

var k8s client.Client

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Println("KUBEBUILDER_ASSETS is not set: run the tests with `make test`")
		return 1
	}
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		fmt.Println(err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	if k8s, err = client.New(cfg, client.Options{}); err != nil {
		fmt.Println(err)
		return 1
	}
	return m.Run()
}

// coldCache misses every object, as the operator's cache does for an object it has not seen yet or
// one that does not carry the managed-by label.
type coldCache struct{ client.Client }

func (coldCache) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	return apierrors.NewNotFound(schema.GroupResource{}, "")
}

const fieldOwner = "appkeeper-test"

// owned is the ConfigMap child of owner that the operator wants, holding value.
func owned(owner *corev1.ConfigMap, name, value string) *corev1ac.ConfigMapApplyConfiguration {
	return corev1ac.ConfigMap(name, owner.Namespace).
		WithLabels(map[string]string{appsv1alpha1.LabelManagedBy: appsv1alpha1.ManagedByValue}).
		WithOwnerReferences(metav1ac.OwnerReference().WithAPIVersion("v1").WithKind("ConfigMap").
			WithName(owner.Name).WithUID(owner.UID).WithController(true)).
		WithData(map[string]string{"value": value})
}

func newOwner(t *testing.T, name string) *corev1.ConfigMap {
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	if err := k8s.Create(context.Background(), owner); err != nil {
		t.Fatal(err)
	}
	return owner
}

func read(t *testing.T, name string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: name}, cm); err != nil {
		t.Fatal(err)
	}
	return cm
}

// TestChildOnACacheMiss holds what a pass does for a child its cache has not seen: it creates a
// free name in one request, leaves alone an object of that name someone else wrote, and finds its
// own object, too new for the cache, already as wanted.
func TestChildOnACacheMiss(t *testing.T) {
	ctx := context.Background()
	c := kube.Client{Client: coldCache{k8s}, APIReader: k8s, FieldOwner: fieldOwner}

	owner := newOwner(t, "site")
	live := &corev1.ConfigMap{}
	result, _, err := apply.Child(ctx, c, owner, "site-child", live, owned(owner, "site-child", "one"), corev1ac.ExtractConfigMap)
	if err != nil || result != apply.Created {
		t.Fatalf("a free name: result %v, error %v; want Created", result, err)
	}
	created := read(t, "site-child")
	if live.UID != created.UID || live.ResourceVersion != created.ResourceVersion || live.Data["value"] != "one" {
		t.Errorf("live after the creation: uid %s version %s data %v; want the stored object's %s %s",
			live.UID, live.ResourceVersion, live.Data, created.UID, created.ResourceVersion)
	}
	if applied, err := corev1ac.ExtractConfigMap(created, fieldOwner); err != nil || applied.Data["value"] != "one" {
		t.Errorf("the created object's fields are not recorded as applied by %s: %v, %v", fieldOwner, applied, err)
	}

	result, _, err = apply.Child(ctx, c, owner, "site-child", &corev1.ConfigMap{}, owned(owner, "site-child", "one"), corev1ac.ExtractConfigMap)
	if err != nil || result != apply.Unchanged {
		t.Fatalf("its own object the cache has not seen: result %v, error %v; want Unchanged", result, err)
	}
	if again := read(t, "site-child"); again.ResourceVersion != created.ResourceVersion {
		t.Errorf("its own object was written again: version %s, was %s", again.ResourceVersion, created.ResourceVersion)
	}

	result, _, err = apply.Child(ctx, c, owner, "site-child", &corev1.ConfigMap{}, owned(owner, "site-child", "two"), corev1ac.ExtractConfigMap)
	if err != nil || result != apply.Updated || read(t, "site-child").Data["value"] != "two" {
		t.Fatalf("a change: result %v, error %v; want Updated to two", result, err)
	}

	foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "taken", Namespace: "default"}, Data: map[string]string{"value": "theirs"}}
	if err := k8s.Create(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	_, _, err = apply.Child(ctx, c, owner, "taken", &corev1.ConfigMap{}, owned(owner, "taken", "ours"), corev1ac.ExtractConfigMap)
	if conflict := (*failure.NameConflictError)(nil); !errors.As(err, &conflict) {
		t.Fatalf("a name someone else holds: error %v; want a NameConflictError", err)
	}
	after := read(t, "taken")
	if after.ResourceVersion != foreign.ResourceVersion || after.Data["value"] != "theirs" || len(after.OwnerReferences) > 0 {
		t.Errorf("the other writer's object was changed: version %s (was %s), data %v, owners %v",
			after.ResourceVersion, foreign.ResourceVersion, after.Data, after.OwnerReferences)
	}
}

// TestGeneratedSecretOnACacheMiss holds that a generated Secret the cache has not seen keeps the
// values it holds: they may be passwords already in use.
func TestGeneratedSecretOnACacheMiss(t *testing.T) {
	ctx := context.Background()
	c := kube.Client{Client: coldCache{k8s}, APIReader: k8s, FieldOwner: fieldOwner}
	owner := newOwner(t, "db")
	generated := 0
	generate := func() map[string][]byte {
		generated++
		return map[string][]byte{"password": fmt.Appendf(nil, "generated-%d", generated)}
	}
	desired := func(data map[string][]byte) *corev1ac.SecretApplyConfiguration {
		return corev1ac.Secret("db-passwords", owner.Namespace).
			WithLabels(map[string]string{appsv1alpha1.LabelManagedBy: appsv1alpha1.ManagedByValue}).
			WithData(map[string][]byte{"password": data["password"]})
	}
	data, created, err := apply.GeneratedSecret(ctx, c, owner, "db-passwords", generate, desired)
	if err != nil || !created || string(data["password"]) != "generated-1" || generated != 1 {
		t.Fatalf("a free name: data %q, created %v, error %v, %d generations; want generated-1 created by one generation", data, created, err, generated)
	}
	data, created, err = apply.GeneratedSecret(ctx, c, owner, "db-passwords", generate, desired)
	if err != nil || created || string(data["password"]) != "generated-1" {
		t.Fatalf("the Secret the cache has not seen: data %q, created %v, error %v; want generated-1 kept", data, created, err)
	}
	stored := &corev1.Secret{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: "default", Name: "db-passwords"}, stored); err != nil {
		t.Fatal(err)
	}
	if string(stored.Data["password"]) != "generated-1" {
		t.Errorf("the stored password is %q; want generated-1 kept", stored.Data["password"])
	}
}
