package kube

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

func TestTerminatingNamespaces(t *testing.T) {
	start := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return start.Add(d) }
	created := func(d time.Duration) *appsv1alpha1.WebServer {
		return &appsv1alpha1.WebServer{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", CreationTimestamp: metav1.NewTime(at(d).Truncate(time.Second))}}
	}
	n := NewTerminatingNamespaces()
	if n.leaving("shop", at(0)) || n.leftBehind(created(-time.Hour), at(0)) {
		t.Fatal("a namespace nothing was refused in is believed to be going")
	}
	if !n.refused("shop", at(0)) {
		t.Error("the first refusal is not news")
	}
	if n.refused("shop", at(time.Second)) {
		t.Error("a second refusal is news")
	}
	if !n.leaving("shop", at(30*time.Second)) || n.leaving("other", at(30*time.Second)) {
		t.Error("only the namespace refused is believed to be going")
	}
	if !n.leftBehind(created(-time.Hour), at(30*time.Second)) {
		t.Error("an object made before the refusal is not left behind")
	}
	if n.leaving("shop", at(time.Second+namespaceRetry+time.Millisecond)) {
		t.Error("the belief outlives namespaceRetry")
	}

	// Refused again: the belief is back, without news.
	if n.refused("shop", at(2*time.Minute)) {
		t.Error("a refusal soon after the belief ended is news")
	}
	// The namespace made again under the same name holds an object created since.
	if n.leftBehind(created(2*time.Minute+10*time.Second), at(2*time.Minute+11*time.Second)) {
		t.Error("an object created after the refusal is left behind")
	}
	if n.leaving("shop", at(2*time.Minute+12*time.Second)) {
		t.Error("the namespace is still believed to be going after an object was created in it")
	}
	if !n.refused("shop", at(time.Hour)) {
		t.Error("a refusal long after the last is not news")
	}
}
