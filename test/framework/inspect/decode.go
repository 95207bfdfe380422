package inspect

import (
	"encoding/json"
	"testing"
)

// Decode turns an apply configuration into the typed object it describes, as the API server reads it.
func Decode[T any](t testing.TB, ac any) *T {
	t.Helper()
	raw, err := json.Marshal(ac)
	if err != nil {
		t.Fatal(err)
	}
	out := new(T)
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatal(err)
	}
	return out
}
