package mysql

import (
	"errors"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/rollout"
)

func TestDowngradeRefusal(t *testing.T) {
	tests := []struct {
		running, wanted string
		refused         bool
	}{
		{"", "mysql:8.0.40", false},
		{"mysql:8.4.6", "mysql:8.4.6", false},
		{"mysql:8.4.6", "mysql:8.4.7", false},
		{"mysql:8.4.6", "mysql:8.4.5", false}, // a patch release reads the same data files
		{"mysql:8.4.6", "mysql:9.1.0", false},
		{"mysql:8.4.6", "mysql:8.0.40", true},
		{"mysql:9.1.0", "mysql:8.4.6", true},
		{"mysql:8.4.6", "mysql:latest", false},
		{"mysql:latest", "mysql:8.0", false},
	}
	for _, tt := range tests {
		msg := downgradeRefusal(tt.running, tt.wanted)
		if (msg != "") != tt.refused {
			t.Errorf("%s → %s: refusal %q, want refused=%v", tt.running, tt.wanted, msg, tt.refused)
		}
		if tt.refused && (!strings.Contains(msg, "spec.image") || !strings.Contains(msg, tt.running)) {
			t.Errorf("refusal %q does not name spec.image and the running image", msg)
		}
	}
}

func TestNewestImage(t *testing.T) {
	tests := []struct{ a, b, want string }{
		{"", "mysql:8.4.6", "mysql:8.4.6"},
		{"mysql:8.4.6", "", "mysql:8.4.6"},
		{"mysql:8.4.6", "mysql:8.4.6", "mysql:8.4.6"},
		{"mysql:8.4.6", "mysql:9.1.0", "mysql:9.1.0"},
		{"mysql:8.0.40", "mysql:8.4.6", "mysql:8.4.6"},
		{"mysql:9.1.0", "mysql:8.4.6", "mysql:9.1.0"},
		{"mysql:8.4.7", "mysql:8.4.6", "mysql:8.4.7"}, // the same minor: the first
		// A tag without a version never erases one with a version, on either side.
		{"mysql:latest", "mysql:8.4.6", "mysql:8.4.6"},
		{"mysql:8", "mysql:8.4.6", "mysql:8.4.6"},
		{"mysql@sha256:0123abcd", "mysql:8.4.6", "mysql:8.4.6"},
		{"mysql:8.4.6", "mysql:latest", "mysql:8.4.6"},
		{"mysql:latest", "mysql:8", "mysql:latest"},
	}
	for _, tt := range tests {
		if got := newestImage(tt.a, tt.b); got != tt.want {
			t.Errorf("newestImage(%q, %q) = %q, want %q", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestUnverifiedImage(t *testing.T) {
	tests := []struct {
		recorded, wanted string
		unverified       bool
	}{
		{"", "mysql:latest", false},
		{"mysql:8.4.6", "mysql:8.4.6", false},
		{"mysql:8.4.6", "mysql:9.1.0", false},
		{"mysql:8.4.6", "mysql:latest", true},
		{"mysql:8.4.6", "mysql:8", true},
		{"mysql:8.4.6", "mysql@sha256:0123abcd", true},
		{"mysql:latest", "mysql:8", false}, // nothing comparable was recorded
	}
	for _, tt := range tests {
		msg := unverifiedImage(tt.recorded, tt.wanted)
		if (msg != "") != tt.unverified {
			t.Errorf("%s → %s: note %q, want one=%v", tt.recorded, tt.wanted, msg, tt.unverified)
		}
		if tt.unverified && (!strings.Contains(msg, "spec.image") || !strings.Contains(msg, tt.recorded)) {
			t.Errorf("note %q does not name spec.image and the recorded image", msg)
		}
	}
}

func statefulSet(ready int32, image string, current bool) *appsv1.StatefulSet {
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
	sts.Spec.Template.Spec.Containers = []corev1.Container{{Name: "mysql", Image: image}}
	sts.Status = appsv1.StatefulSetStatus{ObservedGeneration: 2, Replicas: 1, ReadyReplicas: ready, UpdatedReplicas: 1,
		CurrentRevision: "a", UpdateRevision: "a"}
	if !current {
		sts.Status.UpdateRevision = "b"
		sts.Status.UpdatedReplicas = 0
	}
	return sts
}

func bound(phase corev1.PersistentVolumeClaimPhase) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{Status: corev1.PersistentVolumeClaimStatus{Phase: phase}}
}

func TestComputeStatus(t *testing.T) {
	m := &appsv1alpha1.MySQL{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "shop", Generation: 3},
		Spec:       appsv1alpha1.MySQLSpec{Image: "mysql:8.4.6"},
		Status:     appsv1alpha1.MySQLStatus{Image: "mysql:8.4.5"},
	}
	tests := []struct {
		name                             string
		seen                             observed
		err                              error
		available, progressing, degraded metav1.ConditionStatus
		availableReason, degradedReason  string
		image                            string
	}{
		{"nothing yet", observed{}, nil, "False", "True", "False", appsv1alpha1.ReasonCreating, appsv1alpha1.ReasonAsExpected, "mysql:8.4.5"},
		{"volume pending", observed{sts: statefulSet(1, "mysql:8.4.6", true), claim: bound(corev1.ClaimPending)}, nil,
			"False", "False", "False", appsv1alpha1.ReasonClaimNotBound, appsv1alpha1.ReasonAsExpected, "mysql:8.4.6"},
		{"server starting", observed{sts: statefulSet(0, "mysql:8.4.6", true), claim: bound(corev1.ClaimBound)}, nil,
			"False", "True", "False", appsv1alpha1.ReasonReplicasNotReady, appsv1alpha1.ReasonAsExpected, "mysql:8.4.5"},
		{"serving", observed{sts: statefulSet(1, "mysql:8.4.6", true), claim: bound(corev1.ClaimBound)}, nil,
			"True", "False", "False", appsv1alpha1.ReasonAsExpected, appsv1alpha1.ReasonAsExpected, "mysql:8.4.6"},
		{"rolling", observed{sts: statefulSet(1, "mysql:8.4.6", false), claim: bound(corev1.ClaimBound)}, nil,
			"True", "True", "False", appsv1alpha1.ReasonAsExpected, appsv1alpha1.ReasonAsExpected, "mysql:8.4.5"},
		{"downgrade refused", observed{sts: statefulSet(1, "mysql:8.4.5", true), claim: bound(corev1.ClaimBound), refusal: "no"}, nil,
			"True", "False", "True", appsv1alpha1.ReasonAsExpected, appsv1alpha1.ReasonDowngradeRefused, "mysql:8.4.5"},
		{"failed pass", observed{sts: statefulSet(1, "mysql:8.4.6", true), claim: bound(corev1.ClaimBound)}, errors.New("spec.credentialsSecretRef: no"),
			"True", "False", "True", appsv1alpha1.ReasonAsExpected, appsv1alpha1.ReasonReconcileFailed, "mysql:8.4.6"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status := computeStatus(m.DeepCopy(), rollout.Decision{}, tt.seen, tt.err)
			check := func(condType string, want metav1.ConditionStatus, reason string) {
				c := meta.FindStatusCondition(status.Conditions, condType)
				if c == nil || c.Status != want || c.ObservedGeneration != 3 || (reason != "" && c.Reason != reason) {
					t.Errorf("%s = %+v, want %s %s", condType, c, want, reason)
				}
			}
			check(appsv1alpha1.ConditionAvailable, tt.available, tt.availableReason)
			check(appsv1alpha1.ConditionProgressing, tt.progressing, "")
			check(appsv1alpha1.ConditionDegraded, tt.degraded, tt.degradedReason)
			if status.Image != tt.image || status.Endpoint != "db.shop.svc:3306" || status.SecretName != "db-credentials" || status.ObservedGeneration != 3 {
				t.Errorf("image/endpoint/secret/generation = %s/%s/%s/%d", status.Image, status.Endpoint, status.SecretName, status.ObservedGeneration)
			}
		})
	}
}
