package testcluster

import (
	"testing"

	"github.com/appkeeper/appkeeper/internal/localcluster"
)

// HostState reads what a real node changes on the host, failing the test when it cannot.
func HostState(t testing.TB) *localcluster.HostState {
	t.Helper()
	s, err := localcluster.ReadHostState()
	if err != nil {
		t.Fatal(err)
	}
	return s
}
