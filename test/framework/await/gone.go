package await

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Gone waits until the object key names, of obj's kind, is not found; why says what should have
// removed it.
func Gone(t testing.TB, c client.Client, timeout time.Duration, key client.ObjectKey, obj client.Object, why string) {
	t.Helper()
	Eventually(t, timeout, func(ctx context.Context) error {
		err := c.Get(ctx, key, obj)
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return err
		}
		return fmt.Errorf("%s is still there: %s", key.Name, why)
	})
}
