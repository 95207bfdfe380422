package backup

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// dumpTool is the mysqldump of the server's image.
type dumpTool struct {
	path string
	// mariadb is true for MariaDB's mysqldump, which has no --set-gtid-purged.
	mariadb bool
}

// findDumpTool looks for the dump program of the image: mariadb-dump first, which only MariaDB
// ships (its newer images have no mysqldump), then mysqldump, whose vendor its version tells.
func findDumpTool(ctx context.Context, override string) (dumpTool, error) {
	candidates := []string{"mariadb-dump", "mysqldump"}
	if override != "" {
		candidates = []string{override}
	}
	for _, name := range candidates {
		path, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		versionCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		out, err := exec.CommandContext(versionCtx, path, "--version").CombinedOutput()
		cancel()
		if err != nil {
			return dumpTool{}, fmt.Errorf("%s --version: %w: %s", path, err, bytes.TrimSpace(out))
		}
		return dumpTool{path: path, mariadb: strings.Contains(string(out), "MariaDB")}, nil
	}
	return dumpTool{}, fmt.Errorf("neither mariadb-dump nor mysqldump is on the PATH (%s): the dump must run in the MySQL server's image",
		strings.Join(candidates, ", "))
}

// args are mysqldump's flags for a consistent, complete and restorable dump of databases:
// one transaction (--single-transaction, no lock), rows streamed rather than buffered (--quick),
// every routine, event and trigger, binary data as hex so the file survives any character set.
// The password comes from MYSQL_PWD in the environment, never from the command line.
func (d dumpTool) args(conn Connection, databases []string) []string {
	args := []string{
		"--host=" + conn.Host, "--port=" + strconv.Itoa(conn.Port), "--user=" + conn.User,
		"--protocol=TCP",
		"--single-transaction", "--quick", "--routines", "--events", "--triggers", "--hex-blob",
		"--default-character-set=utf8mb4",
		// A row is sent as one packet; the largest the protocol allows avoids failing on a big
		// BLOB. The server's own limit still bounds what it holds.
		"--max-allowed-packet=1G",
	}
	if !d.mariadb {
		// The dump loads into a new server of its own: GTIDs of the source must not be imposed
		// on it (and setting gtid_purged needs privileges the backup account lacks).
		args = append(args, "--set-gtid-purged=OFF")
	}
	args = append(args, "--databases")
	return append(args, databases...)
}

// DumpArgs are the flags Dump gives mysqldump (MariaDB's when mariadb is set) to dump databases of
// the server at conn; the benchmark runs its floor with the same.
func DumpArgs(conn Connection, databases []string, mariadb bool) []string {
	return dumpTool{mariadb: mariadb}.args(conn, databases)
}

// dumpProcess is a running mysqldump: its standard output is the dump.
type dumpProcess struct {
	io.Reader
	cmd    *exec.Cmd
	cancel context.CancelFunc
	stderr *tailBuffer
	done   chan struct{}
	once   sync.Once
	err    error
}

func startDump(ctx context.Context, tool dumpTool, conn Connection, databases []string) (*dumpProcess, error) {
	ctx, cancel := context.WithCancel(ctx)
	cmd := exec.CommandContext(ctx, tool.path, tool.args(conn, databases)...)
	cmd.Env = append(cmd.Environ(), EnvMySQLPassword+"="+conn.Password)
	stderr := &tailBuffer{max: 64 << 10}
	cmd.Stderr = stderr
	// Once mysqldump is killed, a child it left holding the pipes must not hang the backup.
	cmd.WaitDelay = 10 * time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, fmt.Errorf("cannot start %s: %w", tool.path, err)
	}
	p := &dumpProcess{Reader: stdout, cmd: cmd, cancel: cancel, stderr: stderr, done: make(chan struct{})}
	return p, nil
}

// wait waits for mysqldump to exit, once its output is drained, and reports a failure with the
// last line it wrote on its standard error, which says why.
func (p *dumpProcess) wait() error {
	p.once.Do(func() {
		defer close(p.done)
		defer p.cancel()
		if err := p.cmd.Wait(); err != nil {
			p.err = fmt.Errorf("mysqldump failed (%w): %s", err, p.stderr.lastLine())
		}
	})
	return p.err
}

// abort kills mysqldump; wait still must be called.
func (p *dumpProcess) abort() { p.cancel() }

// exited is closed once wait returned.
func (p *dumpProcess) exited() <-chan struct{} { return p.done }

// tailBuffer keeps the last bytes written to it: mysqldump's standard error, which ends with
// the reason of a failure, without letting a flood of warnings grow the memory.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) lastLine() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(t.buf)), "\n")
	line := strings.TrimSpace(lines[len(lines)-1])
	if line == "" {
		return "it wrote no error"
	}
	const maxLine = 1000
	if len(line) > maxLine {
		line = line[:maxLine] + "…"
	}
	return line
}
