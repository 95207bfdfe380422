package apply

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/kube"
)

// GeneratedSecret keeps owner's Secret named name, which holds values generated once, such as
// passwords: when the Secret does not exist it is created with generate's values, and a key missing
// from an existing Secret is filled from generate. The Secret is then applied as desired builds it
// from those values, over the object just read or created, so that a new Secret costs no second
// read. It is never created by apply, so that a cache that has not seen the Secret yet can never
// overwrite a password already in use; the API server refuses a second create. labels must include
// the managed-by label, so that the cache sees the Secret; a Secret of that name that appkeeper did
// not write belongs to someone else: it is left alone and reported as a NameConflictError. data is
// the values the Secret holds.
func GeneratedSecret(ctx context.Context, c kube.Client, owner client.Object, name string,
	labels map[string]string, generate func() map[string][]byte, desired func(data map[string][]byte) *corev1ac.SecretApplyConfiguration,
) (data map[string][]byte, created bool, err error) {
	key := client.ObjectKey{Namespace: owner.GetNamespace(), Name: name}
	live, created, err := readOrCreate(ctx, c, key, labels, generate)
	if err != nil {
		return nil, false, err
	}
	if !writtenByOperator(live) {
		return nil, false, conflict(c, owner, live, "")
	}
	data = make(map[string][]byte, len(live.Data))
	for k, v := range live.Data {
		data[k] = v
	}
	for k, v := range generate() {
		if _, ok := data[k]; !ok {
			data[k] = v
		}
	}
	if _, _, err := over(ctx, c, owner, key, live, desired(data), corev1ac.ExtractSecret); err != nil {
		return nil, false, err
	}
	return data, created, nil
}

// readOrCreate reads the Secret at key, from the cache or else the API server, or creates it with
// generate's values and labels when it does not exist.
func readOrCreate(ctx context.Context, c kube.Client, key client.ObjectKey,
	labels map[string]string, generate func() map[string][]byte,
) (live *corev1.Secret, created bool, err error) {
	live = &corev1.Secret{}
	err = c.Get(ctx, key, live)
	if apierrors.IsNotFound(err) {
		fresh := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace, Labels: labels},
			Type:       corev1.SecretTypeOpaque,
			Data:       generate(),
		}
		err = c.Create(ctx, fresh, client.FieldOwner(c.FieldOwner))
		if err == nil {
			return fresh, true, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, false, fmt.Errorf("create Secret %s: %w", key, err)
		}
		// The cache lags behind, or the Secret is not one the cache holds: ask the API server.
		err = c.APIReader.Get(ctx, key, live)
	}
	if err != nil {
		return nil, false, fmt.Errorf("get Secret %s: %w", key, err)
	}
	return live, false, nil
}

// writtenByOperator is true for an object the operator created: it carries the managed-by label or,
// when a person removed that label and so hid it from the cache, a field manager entry of the operator.
func writtenByOperator(obj client.Object) bool {
	if obj.GetLabels()[appsv1alpha1.LabelManagedBy] == appsv1alpha1.ManagedByValue {
		return true
	}
	for _, e := range obj.GetManagedFields() {
		if kube.IsOperatorFieldOwner(e.Manager) {
			return true
		}
	}
	return false
}
