package serve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Run checks the address (CheckListen), listens on it and serves the
// server of cfg until ctx ends, then shuts down within 5 s; the requests'
// context ends with ctx, which cancels the running searches. started,
// when not nil, gets the address to open in a browser (with the token).
func Run(ctx context.Context, listen string, cfg Config, started func(url string)) error {
	if err := CheckListen(listen, cfg.Token); err != nil {
		return err
	}
	srv, err := New(cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	url := "http://" + ln.Addr().String() + "/"
	if cfg.Token != "" {
		url += "?token=" + cfg.Token
	}
	if started != nil {
		started(url)
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(shut); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}
