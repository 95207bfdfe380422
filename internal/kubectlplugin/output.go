package kubectlplugin

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// output is the -o flag: empty for the plugin's own text, json or yaml for the objects themselves,
// as kubectl get prints them.
type output struct {
	format string
}

func (o *output) addFlag(cmd *cobra.Command, what string) {
	cmd.Flags().StringVarP(&o.format, "output", "o", "", "print "+what+" as json or yaml instead of text")
}

// check refuses a format before any work is done.
func (o *output) check() error {
	if o.format == "" {
		return nil
	}
	flags := genericclioptions.NewJSONYamlPrintFlags()
	if _, err := flags.ToPrinter(o.format); err != nil {
		return usagef("-o %s: the formats are json and yaml", o.format)
	}
	return nil
}

func (o *output) text() bool { return o.format == "" }

// print writes one object as itself and several as a List, with their kind and apiVersion.
func (o *output) print(out io.Writer, objects ...client.Object) error {
	printer, err := genericclioptions.NewJSONYamlPrintFlags().ToPrinter(o.format)
	if err != nil {
		return usagef("-o %s: the formats are json and yaml", o.format)
	}
	items := make([]unstructured.Unstructured, 0, len(objects))
	for _, obj := range objects {
		u, err := toUnstructured(obj)
		if err != nil {
			return err
		}
		items = append(items, *u)
	}
	if len(items) == 1 {
		return printer.PrintObj(&items[0], out)
	}
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List"}, Items: items}
	list.SetResourceVersion("")
	return printer.PrintObj(list, out)
}

func toUnstructured(obj client.Object) (*unstructured.Unstructured, error) {
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return nil, fmt.Errorf("kind of %s: %w", obj.GetName(), err)
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", gvk.Kind, obj.GetName(), err)
	}
	u := &unstructured.Unstructured{Object: content}
	u.SetGroupVersionKind(gvk)
	return u, nil
}
