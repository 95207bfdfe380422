package kubectlplugin

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// apiError says what went wrong with what, in the words a user acts on.
func apiError(err error, what string) error {
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("%s: not found", what)
	case meta.IsNoMatchError(err):
		return fmt.Errorf("%s: appkeeper's CRDs are not installed on this cluster (%w)", what, err)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("%s: your account may not do this: %w", what, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// singleList is a list holding obj alone.
func singleList(list client.ObjectList, obj client.Object) client.ObjectList {
	if err := meta.SetList(list, []runtime.Object{obj}); err != nil {
		panic(fmt.Sprintf("a list of %T: %v", obj, err))
	}
	return list
}
