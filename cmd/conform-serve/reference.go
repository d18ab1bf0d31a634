package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/conform-spi/conform/procstore/serve"
	"github.com/conform-spi/conform/reference"
)

// The reference store keeps a realm in memory, so the processes of one
// realm cannot each hold it. conform-serve reference therefore keeps the
// realm in a daemon, one per realm directory, that the first process of the
// realm starts; every process is a proxy that copies its standard input and
// output to a connection of the daemon's socket, and the daemon serves each
// connection as one handle of the realm's reference.Factory (serve.Serve).
// A SIGKILL of a process closes its connection: the daemon ends that
// handle's calls in flight, as a killed reference handle does, and a
// commit held at an in-store site is abandoned there.
//
// The daemon leaves when the realm's directory is removed, or after
// daemonIdle without a connection. A daemon killed from outside loses the
// realm: the reference store is not durable.
const (
	sockName   = "reference.sock"
	lockName   = "reference.lock"
	daemonArg  = "reference-daemon"
	daemonIdle = 10 * time.Minute
	realmCheck = 2 * time.Second
)

// proxyReference is the process side: it finds or starts the realm's
// daemon and copies the protocol both ways until the daemon closes the
// connection.
func proxyReference(realm string) error {
	conn, err := dialDaemon(realm)
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(stdout, conn)
		done <- err
	}()
	if _, err := io.Copy(conn, os.Stdin); err != nil {
		return err
	}
	if err := conn.(*net.UnixConn).CloseWrite(); err != nil {
		return err
	}
	return <-done
}

// dialDaemon connects to the realm's daemon, starting it first if none
// listens. The realm's lock file keeps two processes from starting two.
func dialDaemon(realm string) (net.Conn, error) {
	sock := filepath.Join(realm, sockName)
	if c, err := net.Dial("unix", sock); err == nil {
		return c, nil
	}
	lock, err := os.OpenFile(filepath.Join(realm, lockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return nil, err
	}
	if c, err := net.Dial("unix", sock); err == nil {
		return c, nil
	}
	_ = os.Remove(sock) // a daemon that died left it
	if err := startDaemon(realm); err != nil {
		return nil, err
	}
	return net.Dial("unix", sock)
}

// startDaemon starts the daemon in a session of its own (a SIGKILL of a
// process's group must not reach it), with no descriptor of the process's
// but a pipe on which it says it listens.
func startDaemon(realm string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	logf, err := os.OpenFile(filepath.Join(realm, "reference-daemon.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		w.Close()
		return err
	}
	defer logf.Close()
	cmd := exec.Command(self, daemonArg, realm)
	cmd.Stderr = logf
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	w.Close()
	if err != nil {
		return err
	}
	ready, _ := io.ReadAll(r) // the daemon writes "ready" and closes it, or dies
	if string(ready) != "ready" {
		_ = cmd.Wait()
		return fmt.Errorf("the reference daemon did not start; see %s", logf.Name())
	}
	return cmd.Process.Release()
}

// runDaemon serves the realm's reference store on its socket, one handle
// per connection.
func runDaemon(realm string) error {
	ln, err := net.Listen("unix", filepath.Join(realm, sockName))
	if err != nil {
		return err
	}
	ready := os.NewFile(3, "ready")
	_, _ = ready.WriteString("ready")
	ready.Close()
	f := reference.NewFactory()
	ctx := context.Background()
	var mu sync.Mutex
	conns, last := 0, time.Now()
	go func() {
		for range time.Tick(realmCheck) {
			mu.Lock()
			idle := conns == 0 && time.Since(last) > daemonIdle
			mu.Unlock()
			if _, err := os.Stat(realm); err != nil || idle {
				os.Exit(0)
			}
		}
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		mu.Lock()
		conns++
		mu.Unlock()
		go func() {
			if err := serve.Serve(ctx, "reference", f, c, c); err != nil {
				fmt.Fprintln(os.Stderr, "conform-serve reference:", err)
			}
			c.Close()
			mu.Lock()
			conns--
			last = time.Now()
			mu.Unlock()
		}()
	}
}
