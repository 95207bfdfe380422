package localcluster

import (
	"bytes"
	_ "embed"
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
	readyStage,
	completeStage,
	"pod/fast/pod-delete.yaml",
	// Claims of the storage class storageClassName get a volume and bind; deletion releases it.
	claimStage,
	"volume/fast/pv-bind.yaml",
	"volume/fast/pv-delete.yaml",
	"volume/fast/pvc-delete.yaml",
}

// claimStage provisions claims.
const claimStage = "volume/fast/pvc-provision.yaml"

// readyStage and completeStage make pods ready and Job pods complete; pods with a broken image
// are excluded from them (brokenImages).
const (
	readyStage    = "pod/fast/pod-ready.yaml"
	completeStage = "pod/fast/pod-complete.yaml"
)

// crashLoopStage makes the containers whose image is tagged "broken" crash-loop, so that a failed
// rollout can be shown and tested without a real node. It is ours: kwok's chaos stages fail pods
// by label or annotation, which a rollout cannot set on the pods of a new revision.
//
//go:embed stages/pod-crash-loop.yaml
var crashLoopStage []byte

// brokenTag matches an image tagged exactly "broken", with or without a digest: nginx:broken and
// registry:5000/nginx:broken@sha256:… are broken, nginx:1.27-broken and broken/nginx:1.27 are not.
// A registry's port cannot match, as a path always follows it. The crash-loop stage's template
// holds the same expression.
const brokenTag = `:broken(@.*)?$`

// brokenImages is a kwok selector key (a jq expression) whose values are a pod's broken images.
// An expression that fails counts as no value in kwok, so a pod it cannot read is not broken.
const brokenImages = `.spec.initContainers[]?.image, .spec.containers[]?.image | select(test("` + brokenTag + `"))`

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

// writeStages concatenates stageFiles and the crash-loop stage into one multi-document file for
// kwok --config, checking that each one is a Stage so that a changed kwok layout fails here,
// clearly. With realNodeVolumes, claims are provisioned there, as folders the real node can mount.
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
		switch {
		case name == claimStage && realNodeVolumes != "":
			data, err = realNodeStage(data, realNodeVolumes)
		case name == readyStage || name == completeStage:
			data, err = selectBroken(data, "DoesNotExist")
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		writeDocument(&out, data)
	}
	crashLoop, err := selectBroken(crashLoopStage, "Exists")
	if err != nil {
		return fmt.Errorf("the crash-loop stage: %w", err)
	}
	writeDocument(&out, crashLoop)
	if err := os.WriteFile(dest, out.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", dest, err)
	}
	return nil
}

func writeDocument(out *bytes.Buffer, data []byte) {
	out.WriteString("---\n")
	out.Write(bytes.TrimSpace(data))
	out.WriteString("\n")
}

// selectBroken adds to a Stage's selector that the pod has (operator Exists) or has not
// (DoesNotExist) a container image tagged "broken".
func selectBroken(data []byte, operator string) ([]byte, error) {
	var stage map[string]any
	if err := yaml.Unmarshal(data, &stage); err != nil {
		return nil, fmt.Errorf("not a kwok stage: %w", err)
	}
	spec, _ := stage["spec"].(map[string]any)
	selector, _ := spec["selector"].(map[string]any)
	expressions, ok := selector["matchExpressions"].([]any)
	if !ok {
		return nil, fmt.Errorf("the stage has no spec.selector.matchExpressions to select broken images by")
	}
	selector["matchExpressions"] = append(expressions, map[string]any{"key": brokenImages, "operator": operator})
	return yaml.Marshal(stage)
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
