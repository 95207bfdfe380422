package localcluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRealNodeStageMountsFoldersTheClusterMakes(t *testing.T) {
	path := filepath.Join(DefaultBinDir(), "kwok-stages", claimStage)
	kwokStage, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("no kwok stages: run \"make controlplane\": %v", err)
	}
	stage, err := realNodeStage(kwokStage, "/state/node/volumes")
	if err != nil {
		t.Fatal(err)
	}
	s := string(stage)
	if !strings.Contains(s, "path: /state/node/volumes/pvc-{{ .metadata.uid }}") || !strings.Contains(s, "type: Directory\n") {
		t.Errorf("stage does not provision folders under the node's volumes, required to exist:\n%s", s)
	}
	if strings.Contains(s, "/tmp/kwok-local-path-provisioner") || strings.Contains(s, "DirectoryOrCreate") {
		t.Errorf("stage keeps kwok's folder, which the kubelet would make for root alone:\n%s", s)
	}
	if _, err := realNodeStage([]byte("kind: Stage\n"), "/x"); err == nil {
		t.Error("a stage without kwok's path was accepted: a changed kwok would go unnoticed")
	}
}

func TestHostStateDiffNamesEveryChange(t *testing.T) {
	was := &HostState{
		Sysctls: map[string]string{"net.ipv4.ip_forward": "0"},
		Ruleset: "",
		Links:   []string{"lo", "eth0"},
		Paths:   []string{"/run/netns"},
		Cgroups: []string{"memory/user.slice"},
		Mounts:  []string{"/", "/proc"},
	}
	if d := was.Diff(was); len(d) != 0 {
		t.Errorf("a state differs from itself: %v", d)
	}
	now := &HostState{
		Sysctls: map[string]string{"net.ipv4.ip_forward": "1"},
		Ruleset: "table ip nat {\n}\n",
		Links:   []string{"lo", "eth0", "cni0"},
		Paths:   []string{"/run/netns", "/var/lib/cni"},
		Cgroups: []string{"memory/user.slice", "memory/kubepods"},
		Mounts:  []string{"/", "/proc", "/run/netns/cni-1"},
	}
	diff := strings.Join(was.Diff(now), "\n")
	for _, want := range []string{"net.ipv4.ip_forward", "ruleset", "cni0", "/var/lib/cni", "memory/kubepods", "/run/netns/cni-1"} {
		if !strings.Contains(diff, want) {
			t.Errorf("diff does not name %s:\n%s", want, diff)
		}
	}
}

func TestMountPointsUnescaped(t *testing.T) {
	if got := unescapeMount(`/mnt/with\040space`); got != "/mnt/with space" {
		t.Errorf("unescapeMount = %q", got)
	}
}
