// Package lambda serves a webhook receiver (any http.Handler, normally a *webhook.Server) as an AWS
// Lambda function. It wraps github.com/akrylysov/algnhsa, so every HTTP event shape Lambda delivers
// works: API Gateway REST APIs (payload v1), HTTP APIs (v2), Application Load Balancers (with
// multi-value headers on) and function URLs. Bodies may be base64; header names may be lower-case;
// a stage or a custom-domain base path in front of /webhooks/<name> is removed (see WithBasePath).
//
// A function is one call:
//
//	func main() {
//		srv := webhook.NewServer()
//		srv.Add("say-hello", sayHello)
//		lambda.Start(srv)
//	}
//
// built for provided.al2023 with CGO_ENABLED=0 go build -tags lambda.norpc -o bootstrap.
package lambda
