package robotd_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/robothub/robothub/internal/daemonclient"
	"github.com/robothub/robothub/robotd"
	"github.com/robothub/robothub/robotd/access"
)

// openAPIDoc is docs/robot-api.openapi.json, loaded and validated once.
var openAPIDoc = sync.OnceValues(func() (*openapi3.T, error) {
	doc, err := openapi3.NewLoader().LoadFromFile("../docs/robot-api.openapi.json")
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, err
	}
	doc.Servers = nil // the tests' daemons listen on ports of their own
	return doc, nil
})

var openAPIRouter = sync.OnceValues(func() (routers.Router, error) {
	doc, err := openAPIDoc()
	if err != nil {
		return nil, err
	}
	for _, ct := range []string{"text/event-stream", "image/x-portable-pixmap", "image/jpeg", "model/stl"} {
		openapi3filter.RegisterBodyDecoder(ct, openapi3filter.FileBodyDecoder)
	}
	return legacy.NewRouter(doc)
})

// checkOpenAPI validates a response of the daemon against docs/robot-api.openapi.json: its route
// must be documented, its status documented (or covered by the default error response), and its
// body match the schema. Requests to routes that do not exist must be answered with the error body.
func checkOpenAPI(t testing.TB, req *http.Request, status int, header http.Header, body []byte) {
	t.Helper()
	if err := openAPIError(req, status, header, body); err != nil {
		t.Error(err)
	}
}

func openAPIError(req *http.Request, status int, header http.Header, body []byte) error {
	router, err := openAPIRouter()
	if err != nil {
		return fmt.Errorf("docs/robot-api.openapi.json: %v", err)
	}
	doc, _ := openAPIDoc()
	route, params, err := router.FindRoute(withDatasetInOneSegment(req))
	if err != nil {
		// A request to a path the API does not have: the answer is still the API's error body.
		if status != http.StatusNotFound && status != http.StatusMethodNotAllowed && status != http.StatusForbidden &&
			status != http.StatusMisdirectedRequest && status != http.StatusUnauthorized {
			return fmt.Errorf("OpenAPI: %s %s answered %d but the route is not in docs/robot-api.openapi.json: %v", req.Method, req.URL.Path, status, err)
		}
		route = &routers.Route{Spec: doc, Path: "/healthz", PathItem: &openapi3.PathItem{}, Method: req.Method,
			Operation: &openapi3.Operation{Responses: openapi3.NewResponses(openapi3.WithName("default", doc.Components.Responses["Error"].Value))}}
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{ExcludeRequestBody: true, ExcludeRequestQueryParams: true}},
		Status: status, Header: header, Body: io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return fmt.Errorf("OpenAPI: %s %s answered %d %s, which docs/robot-api.openapi.json does not allow:\n%v", req.Method, req.URL.Path, status, truncateBody(body), err)
	}
	return nil
}

// The validator refuses what the document does not allow: a wrong shape, an undocumented
// status, an undocumented route.
func TestOpenAPIValidatorRefusesWrongAnswers(t *testing.T) {
	get := func(path string) *http.Request {
		r, _ := http.NewRequest("GET", "http://127.0.0.1:1"+path, nil)
		return r
	}
	json := http.Header{"Content-Type": {"application/json"}}
	for _, c := range []struct {
		req    *http.Request
		status int
		body   string
		ok     bool
	}{
		{get("/api/apps/current-app-status"), 200, `null`, true},
		{get("/api/apps/current-app-status"), 200, `{"info": {"name": "a", "source_kind": "installed", "extra": {}}, "state": "running", "error": null}`, true},
		{get("/api/apps/current-app-status"), 200, `{"state": 3}`, false},
		{get("/api/apps/job-status/x"), 200, `{"id": "x", "command": "install", "status": "running", "logs": []}`, false},
		{get("/api/apps/job-status/x"), 404, `{"detail": "Job x not found"}`, true},
		{get("/api/apps/job-status/x"), 404, `{"error": "not found"}`, false},
		{get("/api/not-a-route"), 200, `{}`, false},
		{get("/api/not-a-route"), 404, `{"detail": "Not found: /api/not-a-route"}`, true},
	} {
		err := openAPIError(c.req, c.status, json, []byte(c.body))
		if (err == nil) != c.ok {
			t.Errorf("%s %d %s: %v, want ok=%v", c.req.URL.Path, c.status, c.body, err, c.ok)
		}
	}
}

func truncateBody(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

// datasetRoutes are the routes whose {dataset_name} holds slashes, as the anchor's
// {dataset_name:path}: OpenAPI 3.0's templates cannot say so, and ServeMux can take many segments
// only at a pattern's end, so routes.go serves {dataset_name...} or {dataset_and_move...} where the
// document names the dataset and the move.
var datasetRoutes = map[string]string{
	"GET /api/move/recorded-move-datasets/list/{dataset_name...}":     "/api/move/recorded-move-datasets/list/{dataset_name}",
	"POST /api/move/play/recorded-move-dataset/{dataset_and_move...}": "/api/move/play/recorded-move-dataset/{dataset_name}/{move_name}",
	"GET /api/move/recorded-move-datasets/move/{dataset_and_move...}": "/api/move/recorded-move-datasets/move/{dataset_name}/{move_name}",
}

// withDatasetInOneSegment returns req with the slashes of a dataset's name in datasetRoutes
// replaced, so that the document's one-segment {dataset_name} finds the route.
func withDatasetInOneSegment(req *http.Request) *http.Request {
	for key, template := range datasetRoutes {
		prefix := strings.TrimSuffix(template[:strings.Index(template, "{")], "/") + "/"
		rest, ok := strings.CutPrefix(req.URL.Path, prefix)
		if !ok || !strings.HasPrefix(key, req.Method+" ") {
			continue
		}
		if strings.HasSuffix(template, "{move_name}") {
			i := strings.LastIndexByte(rest, '/')
			if i < 0 {
				return req
			}
			rest = strings.ReplaceAll(rest[:i], "/", "~") + rest[i:]
		} else {
			rest = strings.ReplaceAll(rest, "/", "~")
		}
		clone := req.Clone(req.Context())
		clone.URL.Path, clone.URL.RawPath = prefix+rest, ""
		return clone
	}
	return req
}

var routePattern = regexp.MustCompile(`mux\.HandleFunc\("(GET|POST|PUT|DELETE) (/api/[^"]*)"`)

// Every route of routes.go is in the OpenAPI document, and the document has no route the daemon
// does not serve.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	doc, err := openAPIDoc()
	if err != nil {
		t.Fatalf("docs/robot-api.openapi.json: %v", err)
	}
	src, err := os.ReadFile("routes.go")
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]bool{}
	for _, m := range routePattern.FindAllStringSubmatch(string(src), -1) {
		key := m[1] + " " + m[2]
		path := m[2]
		if template, ok := datasetRoutes[key]; ok {
			path = template
		}
		served[m[1]+" "+path] = true
		item := doc.Paths.Find(path)
		if item == nil || item.GetOperation(m[1]) == nil {
			t.Errorf("%s is served but not in docs/robot-api.openapi.json", key)
		}
	}
	for path, item := range doc.Paths.Map() {
		if !strings.HasPrefix(path, "/api/") {
			continue
		}
		for method := range item.Operations() {
			if !served[method+" "+path] {
				t.Errorf("docs/robot-api.openapi.json has %s %s, which the daemon does not serve", method, path)
			}
		}
	}
}

// recordingDoer keeps the requests a client sends and answers none.
type recordingDoer struct{ sent []*http.Request }

var errNotSent = errors.New("recorded, not sent")

func (d *recordingDoer) Do(req *http.Request) (*http.Response, error) {
	d.sent = append(d.sent, req)
	return nil, errNotSent
}

// Every method of the generated daemon client (internal/daemonclient) sends a request that
// routes.go's mux serves with a route of its own, and every /api/ route of routes.go has a method:
// each method is called with placeholder arguments and its request matched against the mux.
func TestDaemonClientCallsServedRoutes(t *testing.T) {
	mux := robotd.RouteMux()
	doer := &recordingDoer{}
	client, err := daemonclient.NewClient("http://127.0.0.1:8000", daemonclient.WithHTTPClient(doer))
	if err != nil {
		t.Fatal(err)
	}
	ctxType := reflect.TypeFor[context.Context]()
	readerType := reflect.TypeFor[io.Reader]()
	called := map[string]string{} // mux pattern -> a method that reaches it
	v := reflect.ValueOf(client)
	methods := 0
	for i := range v.NumMethod() {
		name, m := v.Type().Method(i).Name, v.Method(i)
		mt := m.Type()
		if mt.NumOut() != 2 || mt.Out(0) != reflect.TypeFor[*http.Response]() {
			continue // not an operation
		}
		methods++
		var args []reflect.Value
		for j := range mt.NumIn() {
			in := mt.In(j)
			if mt.IsVariadic() && j == mt.NumIn()-1 {
				break // the request editors
			}
			arg := reflect.New(in).Elem()
			switch {
			case in == ctxType:
				arg = reflect.ValueOf(context.Background())
			case in == readerType:
				arg = reflect.ValueOf(io.Reader(http.NoBody))
			case in.Kind() == reflect.String:
				arg.SetString("x") // a path parameter, or a body's content type
			case in.Kind() == reflect.Int || in.Kind() == reflect.Int64:
				arg.SetInt(1)
			}
			args = append(args, arg)
		}
		before := len(doer.sent)
		out := m.Call(args)
		if len(doer.sent) != before+1 {
			t.Errorf("daemonclient.Client.%s sent no request: %v", name, out[1].Interface())
			continue
		}
		req := doer.sent[before]
		_, pattern := mux.Handler(req)
		if pattern == "" || pattern == "/api/" {
			t.Errorf("daemonclient.Client.%s sends %s %s, which the daemon does not serve (routes.go)", name, req.Method, req.URL.Path)
			continue
		}
		called[pattern] = name
	}
	if methods < 100 {
		t.Fatalf("daemonclient.Client has %d operations: is it generated from docs/robot-api.openapi.json?", methods)
	}
	src, err := os.ReadFile("routes.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range routePattern.FindAllStringSubmatch(string(src), -1) {
		if pattern := m[1] + " " + m[2]; called[pattern] == "" {
			t.Errorf("routes.go serves %s, which no method of daemonclient.Client calls: add it to docs/robot-api.openapi.json and run go generate ./internal/daemonclient", pattern)
		}
	}
	if daemonclient.SocketName != access.SocketFileName {
		t.Errorf("daemonapi dials %s, the daemon listens on %s", daemonclient.SocketName, access.SocketFileName)
	}
}
