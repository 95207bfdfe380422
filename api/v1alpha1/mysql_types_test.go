package v1alpha1

import "testing"

// digestHex is a well-formed sha256 digest's hex part.
const digestHex = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestImageVersion(t *testing.T) {
	tests := []struct {
		image        string
		major, minor uint64
		ok           bool
	}{
		{"mysql:8.4.6", 8, 4, true},
		{"mysql:8.4", 8, 4, true},
		{"mysql:8.0", 8, 0, true},
		{"mysql:v8.4.6", 8, 4, true},
		{"mysql:8.4.6-oracle", 8, 4, true},
		{"mysql:9.1.0-oraclelinux9", 9, 1, true},
		{"percona/percona-server:8.0.36-28", 8, 0, true},
		{"mariadb:11.4", 11, 4, true},
		{"docker.io/library/mariadb:11.4.5-noble", 11, 4, true},
		{"registry:5000/mysql:8.4", 8, 4, true},
		{"registry.local:5000/db/mysql:8.4-oracle", 8, 4, true},
		{"[fd00::1]:5000/mysql:8.4.6", 8, 4, true},
		{"mysql:8.4.6@sha256:" + digestHex, 8, 4, true},
		{"registry:5000/mysql:8.4@sha256:" + digestHex, 8, 4, true},
		// No version, or none a downgrade can be judged by.
		{"mysql@sha256:" + digestHex, 0, 0, false},
		{"registry.local:5000/mysql", 0, 0, false},
		{"mysql:latest", 0, 0, false},
		{"mysql", 0, 0, false},
		{"mysql:lts", 0, 0, false},
		{"mysql:8", 0, 0, false},
		{"mysql:8-oracle", 0, 0, false},
		{"mysql:innovation", 0, 0, false},
		// Not image references at all.
		{"", 0, 0, false},
		{"MySQL:8.4", 0, 0, false},
		{"mysql:8.4:1", 0, 0, false},
		{"mysql:8.4@sha256:0123", 0, 0, false},
		{"mysql:", 0, 0, false},
	}
	for _, tt := range tests {
		major, minor, ok := ImageVersion(tt.image)
		if major != tt.major || minor != tt.minor || ok != tt.ok {
			t.Errorf("ImageVersion(%q) = %d, %d, %v; want %d, %d, %v", tt.image, major, minor, ok, tt.major, tt.minor, tt.ok)
		}
	}
}
