package webhook

import "sync"

// Default returns the package-level server that Handle and HandleFunc register on. It is created on
// first use, reading WEBHOOK_SECRET then. The simplest receiver is:
//
//	func main() {
//		webhook.Handle("say-hello", func(ctx context.Context, p *webhook.Payload, _ http.Header) (any, error) {
//			return "hello " + p.Repo.Name, nil
//		})
//		log.Fatal(nethttp.Run(webhook.Default()))
//	}
var Default = sync.OnceValue(func() *Server { return NewServer() })

// Handle registers fn on the Default server at /webhooks/<name>. Like http.HandleFunc, it panics on
// an invalid or duplicate name, a programming error that should stop the program at start.
func Handle(name string, fn HandlerFunc) {
	if err := Default().Add(name, fn); err != nil {
		panic(err)
	}
}

// HandleFunc registers fn on the Default server under its Go name (/webhooks/<funcName>). It panics
// on an anonymous function or a duplicate name.
func HandleFunc(fn HandlerFunc) {
	if err := Default().AddFunc(fn); err != nil {
		panic(err)
	}
}
