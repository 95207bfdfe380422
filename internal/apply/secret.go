package apply

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/kube"
)

// GeneratedSecret keeps owner's Secret named name, which holds values generated once, such as
// passwords: when the Secret does not exist it is created as desired builds it from generate's
// values, and a key missing from an existing Secret is filled from generate. The creation is an
// apply that no existing object can satisfy (createIfAbsent), so that a cache that has not seen
// the Secret yet can never overwrite a password already in use. An existing Secret is applied as
// desired builds it from the values it holds. desired must carry the managed-by label, so that
// the cache sees the Secret; a Secret of that name that appkeeper did not write belongs to someone
// else: it is left alone and reported as a NameConflictError. data is the values the Secret holds.
func GeneratedSecret(ctx context.Context, c kube.Client, owner client.Object, name string,
	generate func() map[string][]byte, desired func(data map[string][]byte) *corev1ac.SecretApplyConfiguration,
) (data map[string][]byte, created bool, err error) {
	key := client.ObjectKey{Namespace: owner.GetNamespace(), Name: name}
	live := &corev1.Secret{}
	var fresh map[string][]byte
	created, err = readOrCreate(ctx, c, key, live, func() any {
		fresh = generate()
		return desired(fresh)
	})
	switch {
	case err != nil:
		return nil, false, err
	case created:
		return fresh, true, nil
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
	return data, false, nil
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
