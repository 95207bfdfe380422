package pass

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
)

func TestEarliest(t *testing.T) {
	tests := []struct{ a, b, want time.Duration }{
		{0, 0, 0},
		{0, time.Second, time.Second},
		{time.Second, 0, time.Second},
		{time.Second, time.Minute, time.Second},
		{time.Minute, time.Second, time.Second},
	}
	for _, tt := range tests {
		if got := Earliest(tt.a, tt.b); got != tt.want {
			t.Errorf("Earliest(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestObservedIsNilUntilTheChildIsRead(t *testing.T) {
	unread := &appsv1.Deployment{}
	if got := Observed(unread); got != nil {
		t.Errorf("Observed(a Deployment never read) = %v, want nil", got)
	}
	read := &appsv1.Deployment{}
	read.UID = "6f1b"
	if got := Observed(read); got != read {
		t.Errorf("Observed(a Deployment read) = %v, want it", got)
	}
}

func TestJoinAnd(t *testing.T) {
	tests := []struct {
		items []string
		want  string
	}{
		{nil, ""},
		{[]string{"Service web"}, "Service web"},
		{[]string{"Deployment web", "Service web"}, "Deployment web and Service web"},
		{[]string{"ConfigMap a", "Deployment b", "Service c"}, "ConfigMap a, Deployment b and Service c"},
	}
	for _, tt := range tests {
		if got := joinAnd(tt.items); got != tt.want {
			t.Errorf("joinAnd(%q) = %q, want %q", tt.items, got, tt.want)
		}
	}
}
