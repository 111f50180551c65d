// Package nethttp serves a webhook receiver with the standard library's HTTP server: local runs,
// graceful shutdown, printed addresses, and an optional public tunnel so the hub can reach a laptop.
package nethttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/robothub/robothub/core/webhook"
)

// DefaultAddr is where a receiver listens unless told otherwise: loopback only.
const DefaultAddr = "127.0.0.1:7860"

// Options configure Launch. The zero value serves on DefaultAddr (or PORT, or a Space's address)
// without a tunnel.
type Options struct {
	Addr   string              // listen address; empty: see ResolveAddr
	Getenv func(string) string // default os.Getenv
	Logger *slog.Logger        // default slog.Default()
	Out    io.Writer           // where the addresses are printed; default os.Stdout

	// Tunnel, when set, is opened once the server listens; its public URL is printed and set on
	// the receiver's landing page.
	Tunnel Tunnel
	// OnPublicURL is called with the public base URL once known (a tunnel's, or a Space's). A
	// public address that changes between runs must be updated on the hub webhook: this is where.
	OnPublicURL func(ctx context.Context, publicURL string)

	// ShutdownTimeout bounds the wait for in-flight requests on shutdown. Default: the
	// receiver's handler timeout plus 5 seconds, so a handler that started may finish.
	ShutdownTimeout time.Duration
	// Ready, if set, is called with the listening address once the server serves and its public
	// URL, if any, is known.
	Ready func(addr net.Addr)
}

// Run serves srv (webhook.Default() if nil) on the address from the environment until SIGINT or
// SIGTERM, then shuts down gracefully. It is the one call that starts the simplest receiver.
func Run(srv *webhook.Server) error {
	if srv == nil {
		srv = webhook.Default()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var opts Options
	if token := os.Getenv(NgrokAuthtokenEnv); token != "" {
		opts.Tunnel = &NgrokTunnel{Authtoken: token, Domain: os.Getenv(NgrokDomainEnv)}
	}
	return Launch(ctx, srv, opts)
}

// Launch listens on the resolved address and serves srv until ctx is done.
func Launch(ctx context.Context, srv *webhook.Server, opts Options) error {
	opts.defaults()
	addr := ResolveAddr(opts.Addr, opts.Getenv)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	return Serve(ctx, ln, srv, opts)
}

// Serve serves srv on ln until ctx is done, then stops accepting, lets in-flight requests finish
// (up to ShutdownTimeout) and closes the tunnel. It returns nil after a clean shutdown.
func Serve(ctx context.Context, ln net.Listener, srv *webhook.Server, opts Options) error {
	opts.defaults()
	ht := srv.HandlerTimeout()
	hs := &http.Server{
		Handler:           srv,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      ht + 30*time.Second, // longer than any handler may run
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(opts.Logger.Handler(), slog.LevelWarn),
	}
	if opts.ShutdownTimeout <= 0 {
		opts.ShutdownTimeout = ht + 5*time.Second
	}

	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	local := localURL(ln.Addr())
	printAddresses(opts.Out, "Webhook receiver listening on", local, srv.Routes())

	public := spaceURL(opts.Getenv)
	if opts.Tunnel != nil {
		tctx, cancel := context.WithTimeout(ctx, tunnelStartTimeout)
		u, err := opts.Tunnel.Open(tctx, local)
		cancel()
		if err != nil {
			_ = hs.Close()
			<-served
			return fmt.Errorf("public tunnel (%s): %w", opts.Tunnel.Name(), err)
		}
		defer opts.Tunnel.Close()
		public = u
	}
	if public != "" {
		srv.SetPublicURL(public)
		printAddresses(opts.Out, "Public URL:", public, srv.Routes())
		if opts.OnPublicURL != nil {
			opts.OnPublicURL(ctx, public)
		}
	}
	if opts.Ready != nil {
		opts.Ready(ln.Addr())
	}

	select {
	case err := <-served:
		return fmt.Errorf("server stopped: %w", err)
	case <-ctx.Done():
	}
	opts.Logger.Info("shutting down: waiting for in-flight requests", "timeout", opts.ShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), opts.ShutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		_ = hs.Close()
		return fmt.Errorf("shutdown: requests still running after %s: %w", opts.ShutdownTimeout, err)
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	opts.Logger.Info("receiver stopped")
	return nil
}

func (o *Options) defaults() {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Out == nil {
		o.Out = os.Stdout
	}
}
