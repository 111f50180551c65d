package robotd

import "net/http"

// RouteMux is routes.go's route table on a ServeMux, with a Server that serves nothing: for tests
// that ask which route a request would reach (mux.Handler) without starting a daemon.
func RouteMux() *http.ServeMux {
	mux := http.NewServeMux()
	(&Server{}).routes(mux)
	return mux
}
