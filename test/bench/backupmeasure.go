package main

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/appkeeper/appkeeper/internal/backup"
	"github.com/appkeeper/appkeeper/test/framework/operatorproc"
	"github.com/appkeeper/appkeeper/test/framework/testservers"
)

// backupOp is one operation of the backup data path against its floor, from the same run.
type backupOp struct {
	Operation       string  `json:"operation"`
	Floor           string  `json:"floor"`
	FloorS          float64 `json:"floor_s"`
	S               float64 `json:"s"`
	Ratio           float64 `json:"ratio"`
	FloorArtifactMB float64 `json:"floor_artifact_mb"`
	ArtifactMB      float64 `json:"artifact_mb"`
	// The MB/s of the dataset and of the artifact.
	FloorDatasetMBps  float64 `json:"floor_dataset_mbps"`
	DatasetMBps       float64 `json:"dataset_mbps"`
	FloorArtifactMBps float64 `json:"floor_artifact_mbps"`
	ArtifactMBps      float64 `json:"artifact_mbps"`
	// Client CPU is the benchmark's and its children's (mysqldump, gzip, gunzip, mysql): what the
	// Job's or the server's containers would use. Server CPU is mariadbd's and versitygw's.
	FloorClientCPUS float64 `json:"floor_client_cpu_s"`
	ClientCPUS      float64 `json:"client_cpu_s"`
	FloorServerCPUS float64 `json:"floor_server_cpu_s"`
	ServerCPUS      float64 `json:"server_cpu_s"`
	// Detail splits appkeeper's time.
	Detail string `json:"detail,omitempty"`
}

// backupData is the data path's rows.
type backupData struct {
	Dataset dataset `json:"dataset"`
	// Runs of each operation and of its floor; the fastest of each counts.
	Runs int `json:"runs"`
	// SQLMB is mysqldump's output, uncompressed.
	SQLMB float64    `json:"sql_mb"`
	Ops   []backupOp `json:"operations"`
	// VerifyS is how long verify took to compare every table of appkeeper's restore with the
	// manifest, which it must pass.
	VerifyS float64 `json:"verify_s"`
	// result is what appkeeper's plain dump reported: the operator rows replay it.
	result backup.Result
}

const (
	plainKey     = "bench/shop/db/plain"
	encryptedKey = "bench/shop/db/encrypted"
)

// measureBackupData fills a source server, then times appkeeper's dump and restore against their
// floors, each on the same servers.
func measureBackupData(ctx context.Context, o options) (*backupData, error) {
	env, err := startBackupEnvBeside(ctx, o)
	if err != nil {
		return nil, err
	}
	defer env.stop()
	progress("backup: filling the source with about %d MB", o.backupMB)
	root := env.root(env.source)
	d := &backupData{Runs: o.backupRuns}
	d.Dataset, err = fillDataset(ctx, root, o.backupMB)
	_ = root.Close()
	if err != nil {
		return nil, fmt.Errorf("fill the dataset: %w", err)
	}
	progress("backup: %.0f MB in %d tables, %d rows, filled in %.1f s", d.Dataset.MB, d.Dataset.Tables, d.Dataset.Rows, d.Dataset.FillS)
	floorFile := filepath.Join(env.dir, "floor.sql.gz")
	if err := d.dumps(ctx, env, floorFile, o); err != nil {
		return nil, err
	}
	if d.SQLMB, err = gunzippedMB(floorFile); err != nil {
		return nil, err
	}
	// The restores load other servers; the source would only take memory.
	env.source.Stop()
	env.source = nil
	if err := d.restores(ctx, env, floorFile, o.backupRuns); err != nil {
		return nil, err
	}
	return d, nil
}

// dumpVariant is one way appkeeper dumps: plain or encrypted.
type dumpVariant struct {
	name, key, passphrase string
}

// dumps times the floor and appkeeper's dumps in turn, runs times, and keeps the fastest run of
// each: on shared cores, the run least disturbed by other work.
func (d *backupData) dumps(ctx context.Context, env *backupEnv, floorFile string, o options) error {
	servers := []int{env.source.Pid(), env.store.Pid()}
	variants := []dumpVariant{{name: "dump", key: plainKey}}
	if o.backupEncrypted {
		variants = append(variants, dumpVariant{name: "dump, encrypted", key: encryptedKey, passphrase: benchPassphrase})
	}
	var floor measured
	best, sizes := make([]measured, len(variants)), make([]float64, len(variants))
	for run := range o.backupRuns {
		progress("backup: dumps, run %d of %d", run+1, o.backupRuns)
		m, err := timed(servers, func() error { return floorDump(ctx, env.backupConnection(), floorFile) })
		if err != nil {
			return fmt.Errorf("floor dump: %w", err)
		}
		floor = faster(floor, m)
		for i, v := range variants {
			options := backup.DumpOptions{Target: env.target(v.key), Credentials: env.credentials(), Connection: env.backupConnection(),
				CompressLevel: backup.DefaultCompressLevel, EncryptionKey: v.passphrase}
			var res backup.Result
			m, err := timed(servers, func() (err error) {
				res, err = backup.Dump(ctx, options)
				return err
			})
			if err != nil {
				return fmt.Errorf("%s: %w", v.name, err)
			}
			best[i], sizes[i] = faster(best[i], m), float64(res.Size)/1e6
			if v.key == plainKey {
				d.result = res
			}
		}
	}
	floorMB, err := fileMB(floorFile)
	if err != nil {
		return err
	}
	for i, v := range variants {
		d.add(backupOp{Operation: v.name, Floor: "mysqldump --single-transaction … | gzip -1 > file",
			FloorArtifactMB: floorMB, ArtifactMB: sizes[i]}, floor, best[i])
	}
	return nil
}

// restores times, runs times, the floor loading its own dump into an empty server, then appkeeper
// fetching its artifact and loading it into another, and keeps the fastest run of each. The last
// restore must pass verify.
func (d *backupData) restores(ctx context.Context, env *backupEnv, floorFile string, runs int) error {
	var floor, best measured
	for run := range runs {
		progress("backup: restores, run %d of %d", run+1, runs)
		m, err := d.floorRestore(ctx, env, floorFile, run)
		if err != nil {
			return fmt.Errorf("floor restore: %w", err)
		}
		floor = faster(floor, m)
		if m, err = d.restore(ctx, env, run, run == runs-1); err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		best = faster(best, m)
	}
	floorMB, err := fileMB(floorFile)
	if err != nil {
		return err
	}
	d.add(backupOp{Operation: "restore", Floor: "gunzip -c file | mysql", FloorArtifactMB: floorMB,
		ArtifactMB: float64(d.result.Size) / 1e6, Detail: best.detail}, floor, best)
	return nil
}

func (d *backupData) floorRestore(ctx context.Context, env *backupEnv, floorFile string, run int) (measured, error) {
	server, err := env.startServer(ctx, fmt.Sprintf("restore-floor-%d", run))
	if err != nil {
		return measured{}, err
	}
	defer env.removeServer(server)
	m, err := timed([]int{server.Pid()}, func() error { return load(ctx, floorFile, server) })
	if err != nil {
		return m, err
	}
	return m, d.checkRows(ctx, env, server)
}

// restore is what a MySQL restored from a backup does: its init container fetches the artifact,
// then the server's entrypoint loads it.
func (d *backupData) restore(ctx context.Context, env *backupEnv, run int, verify bool) (measured, error) {
	server, err := env.startServer(ctx, fmt.Sprintf("restore-%d", run))
	if err != nil {
		return measured{}, err
	}
	defer env.removeServer(server)
	out := filepath.Join(env.dir, "restore.sql.gz")
	defer os.Remove(out)
	var fetchS float64
	m, err := timed([]int{server.Pid(), env.store.Pid()}, func() error {
		start := time.Now()
		if _, err := backup.Fetch(ctx, backup.FetchOptions{Target: env.target(plainKey), Credentials: env.credentials(), Out: out}); err != nil {
			return err
		}
		fetchS = time.Since(start).Seconds()
		return load(ctx, out, server)
	})
	if err != nil {
		return m, err
	}
	m.detail = fmt.Sprintf("fetch %.1f s, gunzip | mysql %.1f s", fetchS, m.s-fetchS)
	if !verify {
		return m, nil
	}
	start := time.Now()
	res, err := backup.Verify(ctx, backup.VerifyOptions{Target: env.target(plainKey), Credentials: env.credentials(),
		Connection: rootConnection(server)})
	if err != nil {
		return m, fmt.Errorf("verify: %w", err)
	}
	if res.Verified == nil || !*res.Verified {
		return m, fmt.Errorf("verify: the restore differs from the backup: %v", res.Mismatches)
	}
	d.VerifyS = round2(time.Since(start).Seconds())
	return m, nil
}

// checkRows fails unless server holds as many rows as the source: a floor that loaded nothing
// would be fast.
func (d *backupData) checkRows(ctx context.Context, env *backupEnv, server *testservers.MariaDB) error {
	root := env.root(server)
	defer root.Close()
	rows, err := countRows(ctx, root)
	if err != nil {
		return err
	}
	if rows != d.Dataset.Rows {
		return fmt.Errorf("the restored server holds %d rows, the source %d", rows, d.Dataset.Rows)
	}
	return nil
}

// add completes op with the floor's and appkeeper's measures and the rates they give.
func (d *backupData) add(op backupOp, floor, m measured) {
	op.FloorS, op.S, op.Ratio = round2(floor.s), round2(m.s), round2(m.s/floor.s)
	op.FloorArtifactMB, op.ArtifactMB = round2(op.FloorArtifactMB), round2(op.ArtifactMB)
	op.FloorDatasetMBps, op.DatasetMBps = round2(d.Dataset.MB/floor.s), round2(d.Dataset.MB/m.s)
	op.FloorArtifactMBps, op.ArtifactMBps = round2(op.FloorArtifactMB/floor.s), round2(op.ArtifactMB/m.s)
	op.FloorClientCPUS, op.ClientCPUS = round2(floor.clientCPU), round2(m.clientCPU)
	op.FloorServerCPUS, op.ServerCPUS = round2(floor.serverCPU), round2(m.serverCPU)
	d.Ops = append(d.Ops, op)
}

// floorDump is the plainest backup: mysqldump, with the flags appkeeper gives it, into gzip at
// appkeeper's level, into a local file.
func floorDump(ctx context.Context, conn backup.Connection, out string) error {
	tool, err := exec.LookPath("mariadb-dump")
	if err != nil {
		if tool, err = exec.LookPath("mysqldump"); err != nil {
			return err
		}
	}
	file, err := os.Create(out)
	if err != nil {
		return err
	}
	// The source is MariaDB, and so is its mysqldump.
	dump := exec.CommandContext(ctx, tool, backup.DumpArgs(conn, benchDatabases, true)...)
	dump.Env = append(os.Environ(), backup.EnvMySQLPassword+"="+conn.Password)
	gz := exec.CommandContext(ctx, "gzip", fmt.Sprintf("-%d", backup.DefaultCompressLevel))
	gz.Stdout = file
	if err := pipeline(dump, gz); err != nil {
		_ = file.Close()
		return err
	}
	return file.Close()
}

// load restores a gzip-compressed dump as the MySQL images' entrypoints do: gunzip -c FILE | mysql,
// as root.
func load(ctx context.Context, file string, server *testservers.MariaDB) error {
	gunzip := exec.CommandContext(ctx, "gunzip", "-c", file)
	client := exec.CommandContext(ctx, "mysql", "--no-defaults", "--protocol=TCP", "-h127.0.0.1",
		fmt.Sprintf("-P%d", server.Port), "-uroot", "--max-allowed-packet=64M")
	client.Env = append(os.Environ(), backup.EnvMySQLPassword+"="+benchRootPassword)
	return pipeline(gunzip, client)
}

// pipeline runs first | second, an operating system pipe between them, and reports a failure with
// what the failed program wrote on its standard error.
func pipeline(first, second *exec.Cmd) error {
	pipe, err := first.StdoutPipe()
	if err != nil {
		return err
	}
	second.Stdin = pipe
	var firstErr, secondErr strings.Builder
	first.Stderr, second.Stderr = &firstErr, &secondErr
	if err := first.Start(); err != nil {
		return err
	}
	if err := second.Run(); err != nil {
		_ = first.Process.Kill()
		_ = first.Wait()
		return fmt.Errorf("%s: %w: %s", filepath.Base(second.Path), err, strings.TrimSpace(secondErr.String()))
	}
	if err := first.Wait(); err != nil {
		return fmt.Errorf("%s: %w: %s", filepath.Base(first.Path), err, strings.TrimSpace(firstErr.String()))
	}
	return nil
}

// measured is an operation's wall time, and the CPU time spent meanwhile by the benchmark and its
// children (client) and by the servers.
type measured struct {
	s, clientCPU, serverCPU float64
	// detail splits the time, when the operation has parts.
	detail string
}

// faster is the faster of two measures, b when a is not set.
func faster(a, b measured) measured {
	if a.s == 0 || b.s < a.s {
		return b
	}
	return a
}

func timed(servers []int, f func() error) (measured, error) {
	clientBefore, serverBefore := clientCPU(), serversCPU(servers)
	start := time.Now()
	if err := f(); err != nil {
		return measured{}, err
	}
	return measured{s: time.Since(start).Seconds(), clientCPU: clientCPU() - clientBefore,
		serverCPU: serversCPU(servers) - serverBefore}, nil
}

// clientCPU is the CPU time of this process and of its children that ended.
func clientCPU() float64 {
	var self, children syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	seconds := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return seconds(self.Utime) + seconds(self.Stime) + seconds(children.Utime) + seconds(children.Stime)
}

func serversCPU(pids []int) float64 {
	total := 0.0
	for _, pid := range pids {
		if _, cpu, err := operatorproc.ProcessUsage(pid); err == nil {
			total += cpu
		}
	}
	return total
}

func fileMB(path string) (float64, error) {
	info, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return float64(info.Size()) / 1e6, nil
}

// gunzippedMB is the size of a gzip file's content.
func gunzippedMB(path string) (float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r, err := gzip.NewReader(f)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(io.Discard, r)
	return round2(float64(n) / 1e6), err
}
