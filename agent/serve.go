package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// ServeOptions are the timeouts of Serve; a zero field takes its default.
type ServeOptions struct {
	// ReadHeaderTimeout bounds reading a request's headers (default 10s).
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included (default
	// 5m: a 64 MiB model over a slow link).
	ReadTimeout time.Duration
	// IdleTimeout closes keep-alive connections idle this long (default 2m).
	IdleTimeout time.Duration
	// ShutdownGrace is how long running measurements may finish after the
	// context ends before they are cancelled (default 30s).
	ShutdownGrace time.Duration
}

func (o ServeOptions) withDefaults() ServeOptions {
	if o.ReadHeaderTimeout <= 0 {
		o.ReadHeaderTimeout = 10 * time.Second
	}
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = 5 * time.Minute
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 2 * time.Minute
	}
	if o.ShutdownGrace <= 0 {
		o.ShutdownGrace = 30 * time.Second
	}
	return o
}

// Serve serves h on ln until ctx ends, then shuts down gracefully: it stops
// accepting, waits up to the grace period for running requests, cancels
// those still running and closes. No write timeout is set, since a
// measurement may legitimately take minutes; a request's context ends when
// its client goes away. Serve returns nil after a shutdown that ctx asked
// for, else the listener's error.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, opt ServeOptions) error {
	opt = opt.withDefaults()
	base, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: opt.ReadHeaderTimeout,
		ReadTimeout:       opt.ReadTimeout,
		IdleTimeout:       opt.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return base },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("agent: serve: %w", err)
	case <-ctx.Done():
	}
	sctx, scancel := context.WithTimeout(context.Background(), opt.ShutdownGrace)
	defer scancel()
	err := srv.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		// Cancel the measurements still running, then give their handlers
		// a moment to answer before closing the connections.
		cancel()
		c2, c2cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer c2cancel()
		err = srv.Shutdown(c2)
		if err != nil {
			err = srv.Close()
		}
	}
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return fmt.Errorf("agent: serve: %w", serr)
	}
	if err != nil {
		return fmt.Errorf("agent: shutdown: %w", err)
	}
	return nil
}
