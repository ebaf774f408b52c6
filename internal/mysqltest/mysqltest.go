// Package mysqltest gives tests a MySQL-protocol server: the one named by
// MYSQL_HOST, MYSQL_PORT, MYSQL_USER and MYSQL_PASSWORD when they are set
// (CI runs MariaDB), otherwise an in-process go-mysql-server on loopback.
//
//	srv := mysqltest.Start(t)
//	srv.Exec(t, "CREATE DATABASE IF NOT EXISTS conformance; ...")
//	dsn := srv.DSN("conformance")
package mysqltest

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/memory"
	"github.com/dolthub/go-mysql-server/server"
	gms "github.com/dolthub/go-mysql-server/sql"
	mysqldriver "github.com/go-sql-driver/mysql"
	"github.com/sirupsen/logrus"
)

// Server is where a MySQL-protocol server listens and how to log in.
type Server struct {
	Host     string
	Port     int
	User     string
	Password string
	// InProcess is set when the server is this process's go-mysql-server.
	InProcess bool
}

var (
	once   sync.Once
	shared *Server
	err0   error
	// stop closes the in-process server; nil when there is none.
	stop func() error
)

// Stop closes the in-process server, if Start started one, so that leak
// checks at the end of a test binary pass. Call it after every test.
func Stop() {
	if stop != nil {
		_ = stop()
		stop = nil
	}
}

// Start returns the environment's server, or starts one in-process server
// shared by the whole test binary (it stops when the process exits). It
// fails the test when no server can be had.
func Start(t testing.TB) *Server {
	t.Helper()
	once.Do(func() { shared, err0 = start() })
	if err0 != nil {
		t.Fatalf("mysqltest: %v", err0)
	}
	return shared
}

func start() (*Server, error) {
	if h := os.Getenv("MYSQL_HOST"); h != "" {
		port := 3306
		if p := os.Getenv("MYSQL_PORT"); p != "" {
			n, err := strconv.Atoi(p)
			if err != nil {
				return nil, fmt.Errorf("MYSQL_PORT=%q: %v", p, err)
			}
			port = n
		}
		return &Server{Host: h, Port: port, User: os.Getenv("MYSQL_USER"), Password: os.Getenv("MYSQL_PASSWORD")}, nil
	}
	// NB: go-mysql-server logs every connection through logrus's
	// standard logger.
	logrus.SetLevel(logrus.ErrorLevel)
	pro := memory.NewDBProvider()
	engine := sqle.NewDefault(pro)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	// NB: without a mysql.user table go-mysql-server accepts any user
	// and password; the tests still log in with both, as against MySQL.
	s, err := server.NewServer(server.Config{Protocol: "tcp", Listener: l}, engine, gms.NewContext, memory.NewSessionBuilder(pro), nil)
	if err != nil {
		return nil, err
	}
	go func() { _ = s.Start() }()
	stop = s.Close
	addr := l.Addr().(*net.TCPAddr)
	return &Server{Host: "127.0.0.1", Port: addr.Port, User: "braid", Password: "braid-test", InProcess: true}, nil
}

// Addr is host:port.
func (s *Server) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// DSN is the go-sql-driver data source name of database db.
func (s *Server) DSN(db string) string {
	c := mysqldriver.NewConfig()
	c.Net, c.Addr, c.User, c.Passwd, c.DBName = "tcp", s.Addr(), s.User, s.Password, db
	c.Timeout = 10 * time.Second
	return c.FormatDSN()
}

// Env returns the MYSQL_* variables naming this server, for a child process
// or for substituting ${MYSQL_HOST} and the like into SQL.
func (s *Server) Env() map[string]string {
	return map[string]string{"MYSQL_HOST": s.Host, "MYSQL_PORT": strconv.Itoa(s.Port), "MYSQL_USER": s.User, "MYSQL_PASSWORD": s.Password}
}

// Exec runs script, statements separated by ';' at the ends of lines, on
// the server outside any database.
func (s *Server) Exec(t testing.TB, script string) {
	t.Helper()
	db, err := sql.Open("mysql", s.DSN(""))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, stmt := range Statements(script) {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("mysqltest: %s: %v", stmt, err)
		}
	}
}

// Statements splits a script into its statements: each ends with ';' at the
// end of a line; lines starting with "--" are comments.
func Statements(script string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(script, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "--") {
			continue
		}
		cur.WriteString(line)
		cur.WriteString("\n")
		if strings.HasSuffix(strings.TrimSpace(line), ";") {
			stmt := strings.TrimSuffix(strings.TrimSpace(cur.String()), ";")
			if stmt != "" {
				out = append(out, stmt)
			}
			cur.Reset()
		}
	}
	if stmt := strings.TrimSpace(cur.String()); stmt != "" {
		out = append(out, stmt)
	}
	return out
}
