// Package aws holds the tests of the SAM template that deploys the Lambda function.
package aws

import (
	"archive/zip"
	"bytes"
	"debug/elf"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// lockLambdaBuild waits for the build lock of the Lambda bootstrap, which functions/lambda's tests
// take too: go test may run the two packages at the same time, and two cold builds of the same
// linux/arm64 packages cost twice the CPU of one build and a build-cache hit.
func lockLambdaBuild(t *testing.T) (unlock func()) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "robothub-lambda-build.lock"), os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatal(err)
	}
	return func() { f.Close() }
}

func cfnLint(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("cfn-lint")
	if err != nil {
		t.Skip("cfn-lint is not installed (pip install cfn-lint): the SAM template is not linted")
	}
	return path
}

func TestTemplatePassesCfnLint(t *testing.T) {
	out, err := exec.Command(cfnLint(t), "template.yaml").CombinedOutput()
	if err != nil {
		t.Fatalf("cfn-lint template.yaml: %v\n%s", err, out)
	}
}

// TestCfnLintCatchesMistakes makes sure the lint above is a real check: a template with a runtime
// that does not exist must fail it.
func TestCfnLintCatchesMistakes(t *testing.T) {
	lint := cfnLint(t)
	src, err := os.ReadFile("template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	broken := bytes.Replace(src, []byte("Runtime: provided.al2023"), []byte("Runtime: provided.al2099"), 1)
	if bytes.Equal(broken, src) {
		t.Fatal("the template has no 'Runtime: provided.al2023' line")
	}
	path := filepath.Join(t.TempDir(), "template.yaml")
	if err := os.WriteFile(path, broken, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(lint, path).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "provided.al2099") {
		t.Fatalf("cfn-lint accepted an unknown runtime: %v\n%s", err, out)
	}
}

// TestTemplateDeclaresTheFunction checks what the deployment relies on, which a lint cannot know.
func TestTemplateDeclaresTheFunction(t *testing.T) {
	src, err := os.ReadFile("template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`(?m)^Transform: AWS::Serverless-2016-10-31$`,
		`(?m)^    Type: AWS::Serverless::Function$`,
		`(?m)^      Handler: bootstrap$`,
		`(?m)^      Runtime: provided\.al2023$`,
		`(?m)^      Architectures:\n        - arm64$`,
		`(?m)^      FunctionUrlConfig:\n        AuthType: NONE$`,
		`(?m)^  WebhookSecret:\n    Type: String\n    NoEcho: true$`,
		`(?m)^          WEBHOOK_SECRET: !Ref WebhookSecret$`,
		`(?m)^          ROBOTHUB_ROUTES: !Ref Routes$`,
		`(?m)^      CodeUri: \.\./\.\./bin/lambda/bootstrap-arm64\.zip$`,
	} {
		if !regexp.MustCompile(want).Match(src) {
			t.Errorf("template.yaml does not match %s", want)
		}
	}
}

// TestLambdaZip builds the package the template deploys with the Makefile target and checks it
// is what provided.al2023 runs: one executable linux/arm64 file named bootstrap at the root.
func TestLambdaZip(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	defer lockLambdaBuild(t)()
	bin := t.TempDir()
	cmd := exec.Command("make", "-C", "../..", "lambda-zip", "BIN="+bin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make lambda-zip: %v\n%s", err, out)
	}
	// The template's CodeUri is ../../bin/lambda/bootstrap-arm64.zip: the same place under BIN.
	zr, err := zip.OpenReader(filepath.Join(bin, "lambda", "bootstrap-arm64.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	if len(zr.File) != 1 || zr.File[0].Name != "bootstrap" {
		var names []string
		for _, f := range zr.File {
			names = append(names, f.Name)
		}
		t.Fatalf("zip holds %v, want just bootstrap", names)
	}
	f := zr.File[0]
	if f.Mode()&0o111 == 0 {
		t.Errorf("bootstrap mode %v: Lambda needs it executable", f.Mode())
	}
	rc, err := f.Open()
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	ef, err := elf.NewFile(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("bootstrap is not an ELF binary: %v", err)
	}
	if ef.Machine != elf.EM_AARCH64 {
		t.Errorf("bootstrap is for %v, want arm64 (EM_AARCH64)", ef.Machine)
	}
}
