package await

import (
	"testing"
	"time"
)

// RequireUnchanged requires versions, the resourceVersions of some objects, to stay the same for
// five seconds: nothing wrote to them. It first lets a second pass, for the status write that
// readiness causes to settle.
func RequireUnchanged(t *testing.T, what string, versions func() string) {
	t.Helper()
	time.Sleep(time.Second)
	before := versions()
	for range 5 {
		time.Sleep(time.Second)
		if after := versions(); after != before {
			t.Fatalf("%s changed: %s -> %s", what, before, after)
		}
	}
}
