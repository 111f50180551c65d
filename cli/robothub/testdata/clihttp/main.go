// Command clihttp is the smallest urfave/cli program that speaks HTTP: the floor under robothub's
// front, reported beside it by BenchmarkVersionAgainstMinimal.
package main

import (
	"net/http"
	"os"

	"github.com/urfave/cli/v2"
)

var version = "dev"

func main() {
	app := &cli.App{Name: "clihttp", Version: version, Commands: []*cli.Command{{
		Name: "get",
		Action: func(c *cli.Context) error {
			resp, err := http.Get(c.Args().First())
			if err == nil {
				err = resp.Body.Close()
			}
			return err
		},
	}}}
	if err := app.Run(os.Args); err != nil {
		os.Exit(1)
	}
}
