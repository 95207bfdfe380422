package kubectlplugin

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// scheme knows the built-in kinds and appkeeper's.
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(appsv1alpha1.AddToScheme(s))
	return s
}()

// environment is what every subcommand shares: the kubeconfig flags, the streams and the client
// they lead to.
type environment struct {
	configFlags *genericclioptions.ConfigFlags
	streams     genericiooptions.IOStreams
	client      client.WithWatch
}

// connect builds the client from the kubeconfig flags, once.
func (e *environment) connect() (client.WithWatch, error) {
	if e.client != nil {
		return e.client, nil
	}
	cfg, err := e.configFlags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", cfg.Host, err)
	}
	e.client = c
	return c, nil
}

// session is the client and the namespace every subcommand starts from.
func (e *environment) session() (client.WithWatch, string, error) {
	c, err := e.connect()
	if err != nil {
		return nil, "", err
	}
	ns, err := e.namespace()
	return c, ns, err
}

// namespace is the namespace of -n, or else of the kubeconfig's context, as kubectl picks it.
func (e *environment) namespace() (string, error) {
	ns, _, err := e.configFlags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", fmt.Errorf("kubeconfig: %w", err)
	}
	return ns, nil
}
