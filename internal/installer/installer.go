// Package installer renders the two ways of installing appkeeper on a cluster: the kustomize
// configuration in config/default, written by "make build-installer" to dist/install.yaml, and
// the Helm chart in charts/appkeeper.
package installer

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/distribution/reference"
	"helm.sh/helm/v4/pkg/chart/common"
	chartutil "helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/appkeeper/appkeeper/internal/backup"
)

// ImageName is the placeholder image of the manager container in config/manager.
const ImageName = "appkeeper"

// Build runs kustomize on the kustomization in dir (config/default) and sets the manager's image,
// for example "ghcr.io/appkeeper/appkeeper:v0.1.0". It returns the objects as one YAML stream,
// ordered so that kubectl can apply them in one pass.
func Build(dir, image string) ([]byte, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	name, tag, digest, err := splitImage(image)
	if err != nil {
		return nil, err
	}
	// An overlay in a scratch directory sets the image, so that config/ stays untouched.
	overlay, err := os.MkdirTemp("", "appkeeper-installer-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(overlay) }()
	// kustomize takes no absolute path as a resource.
	rel, err := filepath.Rel(overlay, abs)
	if err != nil {
		return nil, err
	}
	kustomization := fmt.Sprintf("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nsortOptions:\n  order: legacy\n"+
		"resources:\n  - %q\nimages:\n  - name: %s\n    newName: %q\n", filepath.ToSlash(rel), ImageName, name)
	if tag != "" {
		kustomization += fmt.Sprintf("    newTag: %q\n", tag)
	}
	if digest != "" {
		kustomization += fmt.Sprintf("    digest: %q\n", digest)
	}
	// The backup Jobs run the operator's own binary: the manager learns its image from this variable.
	kustomization += fmt.Sprintf("patches:\n  - target: {kind: Deployment}\n    patch: |-\n"+
		"      - op: add\n        path: /spec/template/spec/containers/0/env\n        value: [{name: %s, value: %q}]\n",
		backup.EnvImage, image)
	if err := os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), []byte(kustomization), 0o644); err != nil {
		return nil, err
	}
	options := krusty.MakeDefaultOptions()
	options.Reorder = krusty.ReorderOptionUnspecified // the kustomization's sortOptions decide
	resources, err := krusty.MakeKustomizer(options).Run(filesys.MakeFsOnDisk(), overlay)
	if err != nil {
		return nil, fmt.Errorf("kustomize %s: %w", dir, err)
	}
	return resources.AsYaml()
}

// splitImage splits "registry:5000/repo/name:tag@sha256:…" into name, tag and digest. The name
// stays as given (no docker.io/library/ added): kustomize writes it into the manifests.
func splitImage(image string) (name, tag, digest string, err error) {
	ref, err := reference.Parse(image)
	if err != nil {
		return "", "", "", fmt.Errorf("image %q: %w", image, err)
	}
	named, ok := ref.(reference.Named)
	if !ok {
		return "", "", "", fmt.Errorf("image %q has no name", image)
	}
	if tagged, ok := ref.(reference.Tagged); ok {
		tag = tagged.Tag()
	}
	if digested, ok := ref.(reference.Digested); ok {
		digest = digested.Digest().String()
	}
	return named.Name(), tag, digest, nil
}

// RenderChart renders the Helm chart in dir as `helm install appkeeper dir --namespace namespace`
// would with the given values, checked against the chart's values.schema.json, and returns its
// objects. Nothing is looked up in a cluster, as when the namespace does not exist yet
// (`--create-namespace`): the chart renders the namespace too.
func RenderChart(dir, namespace string, values map[string]any) ([]*unstructured.Unstructured, error) {
	chart, err := loader.Load(dir)
	if err != nil {
		return nil, err
	}
	options := common.ReleaseOptions{Name: "appkeeper", Namespace: namespace, Revision: 1, IsInstall: true}
	renderValues, err := chartutil.ToRenderValuesWithSchemaValidation(chart, values, options, nil, false)
	if err != nil {
		return nil, err
	}
	files, err := engine.Render(chart, renderValues)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		if strings.HasSuffix(name, ".yaml") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var objects []*unstructured.Unstructured
	for _, name := range names {
		decoded, err := Decode([]byte(files[name]))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		objects = append(objects, decoded...)
	}
	return objects, nil
}

// Decode splits a YAML stream into objects, skipping empty documents.
func Decode(data []byte) ([]*unstructured.Unstructured, error) {
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objects []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		if err := decoder.Decode(&obj.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return objects, nil
			}
			return nil, err
		}
		if len(obj.Object) > 0 {
			objects = append(objects, obj)
		}
	}
}
