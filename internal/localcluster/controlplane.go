package localcluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

const (
	// A loaded two-core machine can take tens of seconds to start kube-apiserver.
	apiServerStartTimeout = 60 * time.Second
	stopGrace             = 10 * time.Second
)

var binaries = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"}

func checkBinaries(binDir string) error {
	for _, name := range binaries {
		if err := checkExists(filepath.Join(binDir, name)); err != nil {
			return err
		}
	}
	return nil
}

func checkExists(path string) error {
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("%s not found: run \"make controlplane\"", path)
	}
	return nil
}

// startAPIServer starts etcd and kube-apiserver through envtest and writes the files the
// other components need: the kubeconfig and the serving CA.
func (c *Cluster) startAPIServer() error {
	etcdLog, err := os.Create(c.logPath("etcd"))
	if err != nil {
		return fmt.Errorf("local cluster state directory %s is not writable: %w", c.Dir, err)
	}
	apiLog, err := os.Create(c.logPath("kube-apiserver"))
	if err != nil {
		_ = etcdLog.Close()
		return fmt.Errorf("local cluster state directory %s is not writable: %w", c.Dir, err)
	}
	c.envLogs = []*os.File{etcdLog, apiLog}

	api := &envtest.APIServer{
		Path:    filepath.Join(c.binDir, "kube-apiserver"),
		CertDir: c.certDir(),
		Out:     apiLog,
		Err:     apiLog,
	}
	// envtest turns the ServiceAccount admission plugin off because it runs no controllers;
	// here kube-controller-manager creates the accounts, so pods get what a real cluster gives.
	api.Configure().Disable("disable-admission-plugins")
	// envtest's /24 holds 254 Services; benchmarks create thousands. Clear of kwok's pod CIDR.
	api.Configure().Set("service-cluster-ip-range", "10.96.0.0/16")
	if c.real != nil {
		c.real.configureAPIServer(api)
	}
	c.env = &envtest.Environment{
		ControlPlane: envtest.ControlPlane{
			APIServer: api,
			Etcd: &envtest.Etcd{
				Path:    filepath.Join(c.binDir, "etcd"),
				DataDir: c.etcdDir(),
				Out:     etcdLog,
				Err:     etcdLog,
			},
			KubectlPath: filepath.Join(c.binDir, "kubectl"),
		},
		BinaryAssetsDirectory:    c.binDir,
		ControlPlaneStartTimeout: apiServerStartTimeout,
		ControlPlaneStopTimeout:  stopGrace,
	}
	for _, d := range []string{c.certDir(), c.etcdDir()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("local cluster state directory %s is not writable: %w", c.Dir, err)
		}
	}
	cfg, err := c.env.Start()
	if err != nil {
		return fmt.Errorf("starting etcd and kube-apiserver: %w: see %s and %s",
			err, etcdLog.Name(), apiLog.Name())
	}
	c.Config = cfg
	c.KubeconfigPath = filepath.Join(c.Dir, "kubeconfig")
	if err := writeKubeconfig(c.KubeconfigPath, cfg); err != nil {
		return fmt.Errorf("writing %s: %w", c.KubeconfigPath, err)
	}
	if err := os.WriteFile(c.servingCAPath(), api.CA, 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", c.servingCAPath(), err)
	}
	return nil
}

// writeKubeconfig writes cfg under a context name that tells this cluster apart in kubectl,
// where envtest's own kubeconfig calls every cluster "envtest".
func writeKubeconfig(path string, cfg *rest.Config) error {
	const name = "appkeeper-local"
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{
		ClientCertificateData: cfg.CertData,
		ClientKeyData:         cfg.KeyData,
		Token:                 cfg.BearerToken,
	}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	kc.CurrentContext = name
	return clientcmd.WriteToFile(*kc, path)
}

// installCRDs creates the CRDs and waits for them in discovery. It runs once the other
// components are starting, so that the time custom resources need to settle overlaps theirs.
func (c *Cluster) installCRDs(crds []*apiextensionsv1.CustomResourceDefinition) error {
	if len(crds) == 0 {
		return nil
	}
	// envtest fills in the objects it creates; copies keep the caller's CRDs reusable.
	copies := make([]*apiextensionsv1.CustomResourceDefinition, len(crds))
	for i, crd := range crds {
		copies[i] = crd.DeepCopy()
	}
	if _, err := envtest.InstallCRDs(c.Config, envtest.CRDInstallOptions{CRDs: copies}); err != nil {
		return fmt.Errorf("installing CRDs: %w: see %s", err, c.logPath("kube-apiserver"))
	}
	return nil
}

// servingCAPath holds the CA of kube-apiserver's serving certificate, which envtest keeps
// only in memory; kube-controller-manager publishes it to pods as kube-root-ca.crt.
func (c *Cluster) servingCAPath() string { return filepath.Join(c.certDir(), "serving-ca.crt") }

// saKeyPath is the key envtest generates to sign service-account tokens.
func (c *Cluster) saKeyPath() string { return filepath.Join(c.certDir(), "sa-signer.key") }

// component is a control-plane process with an HTTPS /healthz endpoint, or none when
// port is zero.
type component struct {
	name string
	args []string
	env  []string
	port int
}

// startComponents starts kube-controller-manager, kube-scheduler and kwok without waiting
// for them; waitReady does that, so that they come up side by side.
func (c *Cluster) startComponents() error {
	comps, err := c.components()
	if err != nil {
		return err
	}
	for _, comp := range comps {
		ch, err := startChild(comp.name, filepath.Join(c.binDir, comp.name), comp.args, comp.env, c.logPath(comp.name))
		if err != nil {
			return err
		}
		ch.healthPort = comp.port
		c.children = append(c.children, ch)
	}
	return nil
}

func (c *Cluster) components() ([]component, error) {
	kcmPort, err := FreePort()
	if err != nil {
		return nil, err
	}
	schedPort, err := FreePort()
	if err != nil {
		return nil, err
	}
	kubeconfig := "--kubeconfig=" + c.KubeconfigPath
	return []component{{
		name: "kube-controller-manager",
		port: kcmPort,
		args: []string{
			kubeconfig, "--controllers=*", "--leader-elect=false",
			"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(kcmPort),
			"--service-account-private-key-file=" + c.saKeyPath(),
			"--root-ca-file=" + c.servingCAPath(),
			"--use-service-account-credentials=false",
			// The default client limits (20/30) make bulk work about ten times slower.
			"--kube-api-qps=100", "--kube-api-burst=1000",
		},
	}, {
		name: "kube-scheduler",
		port: schedPort,
		args: []string{
			kubeconfig, "--leader-elect=false",
			"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(schedPort),
		},
	}, {
		name: "kwok",
		args: kwokArgs(c.KubeconfigPath, c.stagesPath()),
		// kwok also reads ~/.kwok/kwok.yaml when it exists; a user's file must not change this cluster.
		env: append(os.Environ(), "HOME="+c.Dir),
	}}, nil
}
