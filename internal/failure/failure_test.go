package failure

import (
	"errors"
	"fmt"
	"testing"
)

func TestRetry(t *testing.T) {
	watched := &NameConflictError{Kind: "Service", Name: "blog", Controller: "MySQL blog", Owner: "WordPress blog", Watched: true}
	handMade := &NameConflictError{Kind: "Service", Name: "web", Owner: "WebServer web"}
	other := errors.New("connection refused")
	tests := []struct {
		name  string
		err   error
		retry bool
	}{
		{"no error", nil, false},
		{"a conflict with a watched object", watched, false},
		{"the same, wrapped", fmt.Errorf("service of WordPress shop/blog: %w", watched), false},
		{"the same, joined with a status write that worked", errors.Join(fmt.Errorf("child: %w", watched), nil), false},
		{"a conflict with an object the cache does not hold", handMade, true},
		{"a watched conflict beside another error", errors.Join(watched, other), true},
		{"another error", other, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DropWatchedWaits(tt.err) != nil; got != tt.retry {
				t.Errorf("DropWatchedWaits(%v) retries: %v, want %v", tt.err, got, tt.retry)
			}
		})
	}
}

func TestErrorReason(t *testing.T) {
	for err, want := range map[error]string{
		errors.New("boom"): "ReconcileFailed",
		fmt.Errorf("child: %w", &NameConflictError{Kind: "Service", Name: "web", Owner: "WebServer web"}):     "NameConflict",
		&NameConflictError{Kind: "Service", Name: "web", Controller: "WebServer web", Owner: "WebServer web"}: "ReconcileFailed",
		&InvalidSpecError{Message: "spec.memoryMB"}:                                                           "InvalidSpec",
	} {
		if got := Reason(err); got != want {
			t.Errorf("Reason(%v) = %s, want %s", err, got, want)
		}
	}
}
