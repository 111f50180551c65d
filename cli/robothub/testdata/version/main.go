// Command version only prints a version: the baseline `robothub --version` is measured against
// (BenchmarkVersionAgainstMinimal), built with the same flags.
package main

import (
	"fmt"
	"os"
)

var version = "dev"

func main() {
	if len(os.Args) > 1 && os.Args[1] == "--version" {
		fmt.Println("version version " + version)
	}
}
