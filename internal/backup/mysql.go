package backup

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/go-sql-driver/mysql"
	"k8s.io/apimachinery/pkg/util/wait"
)

// Connection is how a subcommand reaches a server.
type Connection struct {
	Host     string
	Port     int
	User     string
	Password string
}

func (c Connection) address() string { return net.JoinHostPort(c.Host, strconv.Itoa(c.Port)) }

// open returns a pool for the server that keeps no idle connection: a connection given back is
// closed, so that a session's lock or transaction can never outlive its use.
func (c Connection) open() (*sql.DB, error) {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd = c.User, c.Password
	cfg.Net, cfg.Addr = "tcp", c.address()
	cfg.Timeout = 10 * time.Second
	// Encrypted when the server offers it, as the mysql clients do by default; MySQL 8's
	// caching_sha2_password then needs no RSA exchange either.
	cfg.TLSConfig = "preferred"
	// Checksums convert every column to bytes, TIMESTAMPs through the session's time zone: both
	// ends of a backup use UTC, so that servers in different zones agree.
	cfg.Params = map[string]string{"time_zone": "'+00:00'"}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(connector)
	db.SetMaxIdleConns(0)
	return db, nil
}

// connect opens a pool and checks that the server accepts the login.
func (c Connection) connect(ctx context.Context) (*sql.DB, error) {
	db, err := c.open()
	if err != nil {
		return nil, err
	}
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, c.describe(err)
	}
	return db, nil
}

// waitFor connects to a server that may still be starting, such as a restored one loading its
// data, until timeout. A refused login ends the wait: it will not pass by waiting.
func (c Connection) waitFor(ctx context.Context, timeout time.Duration) (*sql.DB, error) {
	var db *sql.DB
	var err error
	if wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		attempt, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		db, err = c.connect(attempt)
		return err == nil || isLoginRefused(err), nil
	}) != nil {
		return nil, fmt.Errorf("the server did not accept connections within %s: %w", timeout, err)
	}
	return db, err
}

// MySQL error numbers the messages name.
const (
	erAccessDenied          = 1045
	erDBAccessDenied        = 1044
	erSpecificAccessDenied  = 1227
	erTableAccessDenied     = 1142
	erLockWaitTimeout       = 1205
	erParseError            = 1064
	erUnknownSystemVariable = 1193
)

func isLoginRefused(err error) bool {
	var myErr *mysql.MySQLError
	return errors.As(err, &myErr) && myErr.Number == erAccessDenied
}

// describe turns a client error into a sentence that names what to fix; the password is never
// part of it (the driver does not include it).
func (c Connection) describe(err error) error {
	var myErr *mysql.MySQLError
	var netErr net.Error
	switch {
	case errors.As(err, &myErr) && myErr.Number == erAccessDenied:
		return fmt.Errorf("the server at %s refused the login of user %q: check its password in %s (%w)",
			c.address(), c.User, EnvMySQLPassword, err)
	case errors.As(err, &myErr) && (myErr.Number == erSpecificAccessDenied || myErr.Number == erDBAccessDenied ||
		myErr.Number == erTableAccessDenied):
		return fmt.Errorf("user %q lacks a privilege on the server at %s (it needs %s): %w",
			c.User, c.address(), AccountPrivileges, err)
	case errors.As(err, &netErr), errors.Is(err, mysql.ErrInvalidConn):
		return fmt.Errorf("cannot connect to the server at %s: %w", c.address(), err)
	}
	return fmt.Errorf("server at %s: %w", c.address(), err)
}

func quoteIdent(name string) string {
	out := make([]byte, 0, len(name)+2)
	out = append(out, '`')
	for i := 0; i < len(name); i++ {
		if name[i] == '`' {
			out = append(out, '`')
		}
		out = append(out, name[i])
	}
	return string(append(out, '`'))
}
