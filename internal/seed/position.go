package seed

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
)

// serverTimeout bounds the start and the stop of the server that records a copy's position.
const serverTimeout = 2 * time.Minute

// Server runs the member's server briefly on a copied data folder, with no network and no binary
// log, to record where replication resumes: mysql.gtid_slave_pos is a table, written only by the
// server itself.
type Server struct {
	// Command is the server program and the flags it runs with besides those of this brief start.
	Command []string
	// RootPassword logs root in over the socket.
	RootPassword string
	// Scratch holds the socket and the pid file.
	Scratch string
}

// Position starts the server on dir, sets gtid_slave_pos to gtid and stops it.
func (s Server) Position(ctx context.Context, dir, gtid string) (err error) {
	scratch, err := os.MkdirTemp(s.Scratch, "seed-server-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	socket := filepath.Join(scratch, "mysqld.sock")
	args := append(append([]string{}, s.Command[1:]...), "--datadir="+dir, "--skip-networking", "--socket="+socket,
		"--pid-file="+filepath.Join(scratch, "mysqld.pid"), "--skip-log-bin", "--skip-slave-start")
	server := exec.Command(s.Command[0], args...)
	var output tail
	server.Stdout, server.Stderr = &output, &output
	server.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := server.Start(); err != nil {
		return fmt.Errorf("start %s: %w", s.Command[0], err)
	}
	exited := make(chan error, 1)
	go func() { exited <- server.Wait() }()
	defer func() {
		if err != nil {
			_ = server.Process.Kill()
			<-exited //nolint:errcheck // killed on purpose: its exit status says nothing more
			err = fmt.Errorf("%w\n%s", err, lastLines(output.Bytes(), 10))
		}
	}()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = "root", s.RootPassword, "unix", socket
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	startCtx, cancel := context.WithTimeout(ctx, serverTimeout)
	defer cancel()
	for db.PingContext(startCtx) != nil {
		select {
		case err := <-exited:
			exited <- err
			return fmt.Errorf("the server stopped before it answered: %w", err)
		case <-startCtx.Done():
			return fmt.Errorf("the server did not answer within %s", serverTimeout)
		case <-time.After(200 * time.Millisecond):
		}
	}
	if _, err := db.ExecContext(startCtx, "SET GLOBAL gtid_slave_pos = ?", gtid); err != nil {
		return fmt.Errorf("set gtid_slave_pos: %w", err)
	}
	if _, err := db.ExecContext(startCtx, "SHUTDOWN"); err != nil {
		return fmt.Errorf("stop the server: %w", err)
	}
	select {
	case err := <-exited:
		if err != nil {
			exited <- err
			return fmt.Errorf("the server stopped with %w", err)
		}
		return nil
	case <-startCtx.Done():
		return errors.New("the server did not stop")
	}
}
