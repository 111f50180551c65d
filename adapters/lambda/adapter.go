package lambda

import (
	"context"
	"net/http"

	"github.com/akrylysov/algnhsa"
	awslambda "github.com/aws/aws-lambda-go/lambda"
)

// NewHandler returns the Lambda handler that serves h: it turns each HTTP event into an
// *http.Request, lets h answer it, and returns h's response in the shape the event's source expects.
// An event that is not an HTTP request (an S3 notification, a test event of the console) fails the
// invocation with an error saying so.
func NewHandler(h http.Handler, opts ...Option) awslambda.Handler {
	a := &adapter{next: h}
	for _, o := range opts {
		o(a)
	}
	// One algnhsa handler per event shape, each with its own Options (algnhsa's shared default
	// would be written by every New call); RequestTypeAuto tries every shape.
	for kind := range a.byKind {
		a.byKind[kind] = algnhsa.New(http.HandlerFunc(a.serveRouted), &algnhsa.Options{RequestType: algnhsa.RequestType(kind)})
	}
	return a
}

// Start serves h as the function: it blocks, taking invocations from the Lambda Runtime API
// (AWS_LAMBDA_RUNTIME_API), and exits the process if that API cannot be reached.
func Start(h http.Handler, opts ...Option) {
	awslambda.Start(NewHandler(h, opts...))
}

type adapter struct {
	next     http.Handler
	basePath string
	byKind   [algnhsa.RequestTypeALB + 1]awslambda.Handler
}

// Invoke answers one event.
func (a *adapter) Invoke(ctx context.Context, event []byte) ([]byte, error) {
	if kind := eventKind(event); kind != algnhsa.RequestTypeAuto {
		// algnhsa fails before serving the request when the event is not of the kind it was told.
		if out, err := a.byKind[kind].Invoke(ctx, event); err == nil {
			return out, nil
		}
	}
	out, err := a.byKind[algnhsa.RequestTypeAuto].Invoke(ctx, event)
	if err != nil {
		return nil, &EventError{Err: err}
	}
	return out, nil
}

// EventError fails an invocation whose event is not an HTTP request the adapter can serve. Lambda
// reports it with errorType "EventError".
type EventError struct {
	Err error // algnhsa's reason
}

func (e *EventError) Error() string {
	return "the webhook receiver cannot serve this Lambda event (it serves HTTP requests from API Gateway, an ALB or a function URL): " + e.Err.Error()
}

func (e *EventError) Unwrap() error { return e.Err }
