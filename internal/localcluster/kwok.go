package localcluster

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"
)

// stageFiles are the kwok stages the cluster needs, relative to <BinDir>/kwok-stages (a copy of
// the kwok module's kustomize/stage folder). They are named one by one because the folder's
// kustomizations also list non-Stage objects (a StorageClass, RBAC), and the kwok binary has no
// stages of its own.
var stageFiles = []string{
	// Nodes become Ready at once and keep their lease renewed.
	"node/fast/node-initialize.yaml",
	"node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
	// Pods run as soon as they are scheduled; Job pods complete; deleted pods go away.
	"pod/fast/pod-ready.yaml",
	"pod/fast/pod-complete.yaml",
	"pod/fast/pod-delete.yaml",
	// Claims of the storage class storageClassName get a volume and bind; deletion releases it.
	claimStage,
	"volume/fast/pv-bind.yaml",
	"volume/fast/pv-delete.yaml",
	"volume/fast/pvc-delete.yaml",
}

// claimStage provisions claims.
const claimStage = "volume/fast/pvc-provision.yaml"

// storageClassName is the only class the kwok volume stages act on.
const storageClassName = "kwok-volume"

// kwokCIDR is where kwok takes pod IPs from; its default collides with envtest's Service range.
const kwokCIDR = "10.244.0.0/16"

func kwokArgs(kubeconfig, stages string) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--config=" + stages,
		// The fake nodes carry this annotation; a real node beside them is the kubelet's alone.
		"--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
		"--cidr=" + kwokCIDR,
		// Anything that dials a node (kubectl logs, exec) is refused at once instead of hanging.
		"--node-ip=127.0.0.1",
		"--node-lease-duration-seconds=40",
	}
}

// writeStages concatenates stageFiles into one multi-document file for kwok --config,
// checking that each one is a Stage so that a changed kwok layout fails here, clearly. With
// realNodeVolumes, claims are provisioned there, as folders the real node can mount.
func writeStages(binDir, dest, realNodeVolumes string) error {
	dir := filepath.Join(binDir, "kwok-stages")
	var out bytes.Buffer
	for _, name := range stageFiles {
		path := filepath.Join(dir, name)
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("%s not found: run \"make controlplane\"", path)
		}
		if err := checkStage(data); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if name == claimStage && realNodeVolumes != "" {
			if data, err = realNodeStage(data, realNodeVolumes); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
		}
		out.WriteString("---\n")
		out.Write(bytes.TrimSpace(data))
		out.WriteString("\n")
	}
	if err := os.WriteFile(dest, out.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", dest, err)
	}
	return nil
}

func checkStage(data []byte) error {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(data, &head); err != nil {
		return fmt.Errorf("not a kwok stage: %w", err)
	}
	if head.APIVersion != "kwok.x-k8s.io/v1alpha1" || head.Kind != "Stage" {
		return fmt.Errorf("not a kwok stage: apiVersion %q kind %q", head.APIVersion, head.Kind)
	}
	return nil
}
