// Package kubesim does what kube-controller-manager and the kubelet would, for the envtest API
// server that runs neither: it readies Deployments and StatefulSets, gives pods and Jobs the status
// a test needs and collects garbage, so that a controller test drives its children step by step.
package kubesim
