package v1alpha1

import "testing"

func TestImageVersion(t *testing.T) {
	tests := []struct {
		image        string
		major, minor int
		ok           bool
	}{
		{"mysql:8.4.6", 8, 4, true},
		{"mysql:8.0", 8, 0, true},
		{"mysql:9.1.0-oraclelinux9", 9, 1, true},
		{"registry.local:5000/db/mysql:8.4-oracle", 8, 4, true},
		{"mysql:8.4.6@sha256:0123", 8, 4, true},
		{"registry.local:5000/mysql", 0, 0, false},
		{"mysql:latest", 0, 0, false},
		{"mysql", 0, 0, false},
		{"mysql:lts", 0, 0, false},
	}
	for _, tt := range tests {
		major, minor, ok := ImageVersion(tt.image)
		if major != tt.major || minor != tt.minor || ok != tt.ok {
			t.Errorf("ImageVersion(%q) = %d, %d, %v; want %d, %d, %v", tt.image, major, minor, ok, tt.major, tt.minor, tt.ok)
		}
	}
}
