// Command minimal is the smallest function aws-lambda-go makes: the baseline the bootstrap's size
// and cold start are measured against (BenchmarkBootstrapAgainstMinimal), built with its flags.
package main

import (
	"context"
	"encoding/json"

	"github.com/aws/aws-lambda-go/lambda"
)

func main() {
	lambda.Start(func(context.Context, json.RawMessage) (string, error) { return "ok", nil })
}
