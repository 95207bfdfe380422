// Command bench measures the operator on the local cluster against the cluster's own speed: for
// each kind and size it times a plain client creating the same children (the floor) and the
// operator creating them from custom resources, and reads the operator's requests, idle writes,
// memory, CPU, reconcile latency and self-heal time. Its backup section times the backup data path
// (dump and restore between a real MariaDB and versitygw) against mysqldump, gzip and mysql alone,
// and reads what the operator spends on each backup. Its rollback section times, for every kind,
// how soon the operator puts the last good revision back once a new image's pods crash-loop.
// Before each part it samples what other processes take of the CPU, and writes a section's results
// only when they left the cores free (see maxOtherCores); otherwise it prints them alone. Run it
// with `make bench`.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/appkeeper/appkeeper/config/crd"
	"github.com/appkeeper/appkeeper/internal/localcluster"
	"github.com/appkeeper/appkeeper/internal/operator"
	"github.com/appkeeper/appkeeper/test/framework/testservers"
)

type options struct {
	sizes        []int
	kinds        map[string]bool
	idle         time.Duration
	selfHeals    int
	unrelated    int
	rivals       int
	nodes        int
	binary       string
	dir          string
	resultsDir   string
	profile      bool
	operatorArgs []string
	// sections are the parts to run: "kinds", "backup", "rollback", "pitr".
	sections        map[string]bool
	backupMB        int
	backups         int
	backupEncrypted bool
	backupRuns      int
	versitygw       string
	rollbacks       int
	rollbackKinds   map[string]bool
	pitrSeconds     int
}

func parseFlags() (options, error) {
	var o options
	sizes := flag.String("n", "100,1000", "comma-separated numbers of instances per kind")
	large := flag.Bool("large", false, "also run 3000 instances per kind (long)")
	kindList := flag.String("kinds", "WebServer,Memcached,PodSet,MySQL,WordPress", "comma-separated kinds to measure")
	flag.DurationVar(&o.idle, "idle", 60*time.Second, "how long to watch the converged operator for writes")
	flag.IntVar(&o.selfHeals, "self-heals", 20, "children deleted one at a time to time their return")
	flag.IntVar(&o.unrelated, "unrelated", 10000, "unrelated ConfigMaps, Secrets and Pods created in other namespaces first")
	flag.IntVar(&o.rivals, "rivals", 10, "instances given a resource of another kind that wants a child of the same name, which must wait without writes")
	flag.IntVar(&o.nodes, "nodes", 10, "simulated nodes")
	flag.StringVar(&o.binary, "operator", "bin/appkeeper", "the operator binary, run out of process")
	flag.StringVar(&o.dir, "dir", ".appkeeper/bench", "state directory of the local cluster")
	flag.StringVar(&o.resultsDir, "results", "test/bench/results", "where to write <date>.md and latest.json")
	flag.BoolVar(&o.profile, "profile", false, "save the operator's CPU profile during creation and heap profile after the idle period under <dir>/profiles")
	operatorArgs := flag.String("operator-args", "", "extra flags for the operator, space-separated")
	only := flag.String("only", "", "run only this section: kinds, backup, rollback or pitr")
	flag.IntVar(&o.pitrSeconds, "pitr-seconds", 60, "how long the point-in-time section writes while the binary log ships")
	flag.IntVar(&o.backupMB, "backup-mb", 200, "size of the backup section's dataset, in MB")
	flag.IntVar(&o.backups, "backups", 20, "on-demand backups the operator takes to measure its cost per backup")
	flag.BoolVar(&o.backupEncrypted, "backup-encrypted", true, "also time the encrypted dump")
	flag.IntVar(&o.backupRuns, "backup-runs", 2, "runs of each dump and restore, and of its floor, of which the fastest counts")
	flag.StringVar(&o.versitygw, "versitygw", testservers.VersityGW, "versitygw, the backup section's object store")
	flag.IntVar(&o.rollbacks, "rollbacks", 5, "instances of each kind the rollback section breaks, one at a time")
	rollbackKindList := flag.String("rollback-kinds", "WebServer,Memcached,PodSet,MySQL,WordPress", "comma-separated kinds the rollback section measures")
	flag.Parse()
	switch *only {
	case "":
		o.sections = map[string]bool{"kinds": true, "backup": true, "rollback": true, "pitr": true}
	case "kinds", "backup", "rollback", "pitr":
		o.sections = map[string]bool{*only: true}
	default:
		return o, fmt.Errorf("-only: %q is not kinds, backup, rollback or pitr", *only)
	}
	if o.backupMB < 1 || o.backups < 1 || o.backupRuns < 1 || o.rollbacks < 1 || o.pitrSeconds < 1 {
		return o, fmt.Errorf("-backup-mb, -backups, -backup-runs, -rollbacks and -pitr-seconds must be positive")
	}
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return o, fmt.Errorf("-n: %q is not a positive number", s)
		}
		o.sizes = append(o.sizes, n)
	}
	if *large {
		o.sizes = append(o.sizes, 3000)
	}
	var err error
	if o.kinds, err = kindSet("-kinds", *kindList, func(name string) bool { _, ok := kindNamed(name); return ok }); err != nil {
		return o, err
	}
	if o.rollbackKinds, err = kindSet("-rollback-kinds", *rollbackKindList, func(name string) bool {
		return slices.ContainsFunc(rollbackKinds, func(k rollbackKind) bool { return k.name == name })
	}); err != nil {
		return o, err
	}
	o.operatorArgs = strings.Fields(*operatorArgs)
	return o, nil
}

// kindSet reads a comma-separated list of kinds, refusing a name that known does not know: a
// misspelt kind would otherwise leave its section with nothing to measure.
func kindSet(flagName, list string, known func(string) bool) (map[string]bool, error) {
	set := map[string]bool{}
	for _, k := range strings.Split(list, ",") {
		k = strings.TrimSpace(k)
		if !known(k) {
			return nil, fmt.Errorf("%s: %q is not a kind it measures", flagName, k)
		}
		set[k] = true
	}
	return set, nil
}

func main() {
	o, err := parseFlags()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	if err := run(context.Background(), o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	crds, err := crd.Definitions()
	if err != nil {
		return err
	}
	dir, err := filepath.Abs(o.dir)
	if err != nil {
		return err
	}
	b := &bench{o: o, dir: dir}
	// The data path needs no cluster: it runs first, on a machine without one.
	var backups *backupResult
	if o.sections["backup"] {
		if backups, err = b.runBackupData(ctx); err != nil {
			return err
		}
	}
	if o.sections["pitr"] {
		if err := b.runPITR(ctx); err != nil {
			return err
		}
	}
	if !o.sections["kinds"] && !o.sections["rollback"] && backups == nil {
		return refusedError(b.refused)
	}
	progress("starting the local cluster with %d nodes in %s", o.nodes, dir)
	cluster, err := localcluster.Start(ctx, localcluster.Options{Dir: dir, Nodes: o.nodes, CRDs: crds})
	if err != nil {
		return err
	}
	defer func() { _ = cluster.Stop() }()
	if err := b.connect(cluster); err != nil {
		return err
	}
	if o.sections["kinds"] {
		if err := b.runKinds(ctx); err != nil {
			return err
		}
	}
	if o.sections["rollback"] {
		if err := b.runRollback(ctx); err != nil {
			return err
		}
	}
	if backups != nil {
		if err := b.runBackupOverhead(ctx, backups); err != nil {
			return err
		}
	}
	return refusedError(b.refused)
}

func refusedError(refused []string) error {
	if len(refused) > 0 {
		return fmt.Errorf("the machine was busy: %d report(s) printed but not written", len(refused))
	}
	return nil
}

// connect gives the benchmark its clients of cluster.
func (b *bench) connect(cluster *localcluster.Cluster) error {
	c, err := client.New(cluster.Config, client.Options{Scheme: operator.Scheme()})
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cluster.Config)
	if err != nil {
		return err
	}
	b.cluster, b.c, b.cs = cluster, c, cs
	return nil
}

// runBackupData times the backup data path against its floors and writes what it has so far.
func (b *bench) runBackupData(ctx context.Context) (*backupResult, error) {
	r := &backupResult{loads: []loadSample{sampleLoad("the backup data path")}}
	progress("backup: the data path against its floors")
	data, err := measureBackupData(ctx, b.o)
	if err != nil {
		return nil, fmt.Errorf("backup data path: %w", err)
	}
	r.Data = data
	return r, b.writeBackupResults(r, false)
}

// runBackupOverhead reads what the operator spends on each backup and writes the backup section.
func (b *bench) runBackupOverhead(ctx context.Context, r *backupResult) error {
	r.loads = append(r.loads, sampleLoad("the operator's backups"))
	progress("backup: the operator's cost of %d on-demand backups", b.o.backups)
	var err error
	if r.Operator, err = b.measureBackupOverhead(ctx, b.o.backups, r.Data.result); err != nil {
		return fmt.Errorf("backup overhead: %w", err)
	}
	return b.writeBackupResults(r, true)
}

// runKinds measures every kind at every size, after filling the cluster with unrelated objects.
func (b *bench) runKinds(ctx context.Context) error {
	progress("creating %d unrelated objects", b.o.unrelated)
	if err := b.createUnrelated(ctx); err != nil {
		return err
	}
	var (
		results []result
		loads   []loadSample
	)
	// The peer operator is timed after each Memcached size, on the same cluster.
	peer := b.o.kinds["Memcached"]
	if peer {
		if err := installPeerCRD(ctx, b.cluster.Config); err != nil {
			return err
		}
	}
	for _, k := range kinds {
		if !b.o.kinds[k.name] {
			continue
		}
		for _, n := range b.o.sizes {
			label := fmt.Sprintf("%s × %d", k.name, n)
			loads = append(loads, sampleLoad(label))
			progress("%s", label)
			r, err := b.measure(ctx, k, n)
			if err != nil {
				return fmt.Errorf("%s: %w", label, err)
			}
			results = append(results, r)
			progress("%s", r.row())
			if peer && k.name == "Memcached" {
				loads = append(loads, sampleLoad(label+" (peer)"))
				progress("%s × %d", peerRowKind, n)
				p, err := b.measurePeer(ctx, n, &results[len(results)-1])
				if err != nil {
					return fmt.Errorf("%s × %d: %w", peerRowKind, n, err)
				}
				results = append(results, p)
				progress("%s", p.row())
			}
			// Written after each row, so that a run cut short keeps what it measured.
			if err := b.writeResults(results, loads, false); err != nil {
				return err
			}
		}
	}
	return b.writeResults(results, loads, true)
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s  %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
