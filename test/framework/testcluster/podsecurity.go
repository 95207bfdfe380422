package testcluster

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// RequireRestricted checks that namespace refuses a pod that does not meet the restricted pod
// security standard (a dry run, nothing is created): pods running there were admitted on their
// own merit.
func RequireRestricted(t *testing.T, c client.Client, namespace string) {
	t.Helper()
	privileged := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "privileged"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox:1.36"}}},
	}
	err := c.Create(context.Background(), privileged, client.DryRunAll)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "PodSecurity") {
		t.Fatalf("a pod that is not restricted in namespace %s: got %v, want refused by PodSecurity", namespace, err)
	}
}
