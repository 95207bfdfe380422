package v1alpha1

import "testing"

// BenchmarkImageVersion parses the images a reconcile pass compares: a tag with a version, one
// behind a registry with a port and a digest, and one that names no version.
func BenchmarkImageVersion(b *testing.B) {
	images := []string{
		"mysql:8.4.6",
		"registry.local:5000/db/mysql:8.4-oracle@sha256:" + digestHex,
		"mysql:latest",
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, image := range images {
			ImageVersion(image)
		}
	}
}
