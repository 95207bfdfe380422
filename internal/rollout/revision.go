package rollout

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
)

// Hash names a revision after what the operator builds for it: the pods' template and anything
// else the pods read at start (a configuration's content), as JSON. Ten hex digits, as a
// Deployment's pod-template-hash is about that long.
func Hash(parts ...any) string {
	h := sha256.New()
	for _, part := range parts {
		data, err := json.Marshal(part)
		if err != nil {
			// Apply configurations and strings always marshal; a failure is a programming error.
			panic(fmt.Sprintf("hash a revision: %v", err))
		}
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))[:10]
}

// Snapshot keeps spec, so that a rollback can rebuild the pods from it.
func Snapshot(spec any) runtime.RawExtension {
	data, err := json.Marshal(spec)
	if err != nil {
		panic(fmt.Sprintf("snapshot a spec: %v", err))
	}
	return runtime.RawExtension{Raw: data}
}

// Target is the spec a pass builds the pods from: spec itself, or, when d rolls back, spec with
// the fields that make the pods (podFields copies them) taken from the last good revision's spec.
// The other fields (replicas, Service, storage, backups, policies) stay as the spec says, so that
// a person can still scale, expose or back up a rolled back instance.
func Target[S any](d Decision, spec S, podFields func(into *S, good *S)) (S, error) {
	if !d.RollBack || d.Status.LastGood == nil {
		return spec, nil
	}
	var good S
	if err := json.Unmarshal(d.Status.LastGood.Spec.Raw, &good); err != nil {
		return spec, fmt.Errorf("read the spec of the last good revision %s: %w", d.Status.LastGood.Name, err)
	}
	podFields(&spec, &good)
	return spec, nil
}
