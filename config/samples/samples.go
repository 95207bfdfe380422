// Package samples embeds one example of each appkeeper kind, applied by `appkeeper local up
// --samples`.
package samples

import (
	"embed"
	"fmt"
	"io/fs"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

//go:embed *.yaml
var files embed.FS

// Objects returns the samples, in file name order.
func Objects() ([]*unstructured.Unstructured, error) {
	names, err := fs.Glob(files, "*.yaml")
	if err != nil {
		return nil, err
	}
	objects := make([]*unstructured.Unstructured, 0, len(names))
	for _, name := range names {
		raw, err := files.ReadFile(name)
		if err != nil {
			return nil, err
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(raw, &obj.Object); err != nil {
			return nil, fmt.Errorf("decode %s: %w", name, err)
		}
		objects = append(objects, obj)
	}
	return objects, nil
}
