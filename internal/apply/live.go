package apply

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/appkeeper/appkeeper/internal/kube"
)

// readOrCreate leaves live holding the object at key, and tells whether it has just been created:
// it is read from the cache, which holds only objects labelled as managed by appkeeper and lags
// behind writes; when the cache misses, the object desired builds is created unless an object has
// the name (createIfAbsent), and only an object that has it is read from the API server.
func readOrCreate(ctx context.Context, c kube.Client, key client.ObjectKey, live client.Object, desired func() any) (created bool, err error) {
	err = c.Get(ctx, key, live)
	switch {
	case err == nil:
		return false, nil
	case !apierrors.IsNotFound(err):
		return false, fmt.Errorf("get %T %s: %w", live, key, err)
	}
	if created, err = createIfAbsent(ctx, c, desired(), live); err != nil || created {
		if err != nil {
			return false, fmt.Errorf("create %T %s: %w", live, key, err)
		}
		logChange(ctx, kindOf(c, live), key, nil)
		return true, nil
	}
	var reader client.Reader = c.Client
	if c.APIReader != nil {
		reader = c.APIReader
	}
	if err := reader.Get(ctx, key, live); err != nil {
		return false, fmt.Errorf("get %T %s: %w", live, key, err)
	}
	return false, nil
}

// absentVersion is a resourceVersion no stored object has: the store's revisions start at 1 and
// every write takes a later one.
const absentVersion = "1"

// createIfAbsent creates desired unless an object has its name. The apply carries absentVersion as
// its precondition, which the API server ignores when it creates the object and which fails, with a
// Conflict, against any object that exists, whoever wrote it. That costs one request where a read
// and then an apply cost two, and takes nothing over. live receives the object created; created is
// false when the name is taken.
func createIfAbsent(ctx context.Context, c kube.Client, desired any, live client.Object) (created bool, err error) {
	obj, err := toUnstructured(desired)
	if err != nil {
		return false, err
	}
	obj.SetResourceVersion(absentVersion)
	err = c.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(c.FieldOwner), client.ForceOwnership)
	switch {
	case apierrors.IsConflict(err):
		return false, nil
	case err != nil:
		return false, err
	}
	if u, ok := live.(*unstructured.Unstructured); ok {
		u.Object = obj.Object
		return true, nil
	}
	return true, runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, live)
}

// toUnstructured is a copy of desired, which is left as it is.
func toUnstructured(desired any) (*unstructured.Unstructured, error) {
	if u, ok := desired.(*unstructured.Unstructured); ok {
		return u.DeepCopy(), nil
	}
	fields, err := runtime.DefaultUnstructuredConverter.ToUnstructured(desired)
	if err != nil {
		return nil, fmt.Errorf("convert %T: %w", desired, err)
	}
	return &unstructured.Unstructured{Object: fields}, nil
}
