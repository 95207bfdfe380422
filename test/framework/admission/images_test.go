package admission

import (
	"errors"
	"testing"

	"github.com/distribution/reference"
)

// TestImageNameEdgesAreTheKubeletsLimit keeps the edges the admission tests use where the kubelet
// and the operator, which parse images with ParseNormalizedNamed, draw the line.
func TestImageNameEdgesAreTheKubeletsLimit(t *testing.T) {
	if MaxImagePathLength != reference.RepositoryNameTotalLengthMax {
		t.Fatalf("MaxImagePathLength = %d, want reference.RepositoryNameTotalLengthMax, %d", MaxImagePathLength, reference.RepositoryNameTotalLengthMax)
	}
	for _, e := range ImageNameEdges {
		_, err := reference.ParseNormalizedNamed(e.Image)
		if tooLong := errors.Is(err, reference.ErrNameTooLong); tooLong != e.TooLong || (err != nil && !tooLong) {
			t.Errorf("name %s (%d characters as written): ParseNormalizedNamed = %v, want too long %v", e.Shape, len(e.Image), err, e.TooLong)
		}
	}
}
