package localcluster

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"sync"

	"k8s.io/client-go/tools/clientcmd"
)

// apiRelay passes one kubelet's connections to kube-apiserver through a port of its own, so that
// a partition can cut that kubelet off from the API server, and the API server from it, while the
// other kubelets keep talking. It only copies bytes: TLS runs end to end, and the kubelet checks
// the API server's certificate for 127.0.0.1 as it would without the relay.
type apiRelay struct {
	listener net.Listener
	target   string
	mu       sync.Mutex
	conns    map[net.Conn]struct{}
	closed   bool
}

// startAPIRelay listens on a free port of 127.0.0.1 and passes every connection on to target.
func startAPIRelay(target string) (*apiRelay, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &apiRelay{listener: l, target: target, conns: map[net.Conn]struct{}{}}
	go r.serve()
	return r, nil
}

// address is where the kubelet connects: https://address.
func (r *apiRelay) address() string { return r.listener.Addr().String() }

func (r *apiRelay) serve() {
	for {
		in, err := r.listener.Accept()
		if err != nil {
			return
		}
		go r.pass(in)
	}
}

// pass copies in to the API server and back until either side ends the connection.
func (r *apiRelay) pass(in net.Conn) {
	out, err := net.Dial("tcp", r.target)
	if err != nil {
		_ = in.Close()
		return
	}
	if !r.track(in, out) {
		_, _ = in.Close(), out.Close()
		return
	}
	done := make(chan struct{}, 2)
	copyThenClose := func(to, from net.Conn) {
		_, _ = io.Copy(to, from)
		_, _ = to.Close(), from.Close()
		done <- struct{}{}
	}
	go copyThenClose(out, in)
	go copyThenClose(in, out)
	<-done
	<-done
	r.untrack(in, out)
}

func (r *apiRelay) track(conns ...net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	for _, c := range conns {
		r.conns[c] = struct{}{}
	}
	return true
}

func (r *apiRelay) untrack(conns ...net.Conn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range conns {
		delete(r.conns, c)
	}
}

// close stops listening and ends every connection passed on.
func (r *apiRelay) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	_ = r.listener.Close()
	for c := range r.conns {
		_ = c.Close()
	}
}

// kubeletRelayPort is the port of the relay the node's kubelet connects to, read from its
// kubeconfig, so that a process other than the cluster's can cut it.
func kubeletRelayPort(n *realNode) (int, error) {
	cfg, err := clientcmd.LoadFromFile(n.paths.kubeletKubeconfig())
	if err != nil {
		return 0, err
	}
	for _, cluster := range cfg.Clusters {
		u, err := url.Parse(cluster.Server)
		if err != nil {
			return 0, err
		}
		port, err := strconv.Atoi(u.Port())
		if err != nil {
			return 0, fmt.Errorf("kubeconfig of node %s: server %s has no port", n.name, cluster.Server)
		}
		return port, nil
	}
	return 0, errors.New("kubeconfig of node " + n.name + " names no server")
}
