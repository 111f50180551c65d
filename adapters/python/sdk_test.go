package python

import (
	"regexp"
	"testing"
	"testing/fstest"
)

// pep440 is the canonical public version grammar of PEP 440 plus a local label.
var pep440 = regexp.MustCompile(`^([1-9][0-9]*!)?(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*))*((a|b|rc)(0|[1-9][0-9]*))?(\.post(0|[1-9][0-9]*))?(\.dev(0|[1-9][0-9]*))?(\+[a-z0-9]+(\.[a-z0-9]+)*)?$`)

func TestSDKVersionIsPEP440(t *testing.T) {
	sdk := fstest.MapFS{"pyproject.toml": {Data: []byte("version = \"0.0.0\"\n")}}
	h := "sdk" + sdkDigest(sdk)[:10]
	for _, tc := range []struct{ daemon, want string }{
		{"v1.2.3", "1.2.3"},
		{"1.2.3rc1", "1.2.3rc1"},
		{"v1.2.3-4-gabc1234", "1.2.3+4.gabc1234." + h},
		{"v1.2.3-4-gabc1234-dirty", "1.2.3+4.gabc1234.dirty." + h},
		{"v1.2.3-dirty", "1.2.3+dirty." + h},
		{"dev", "0.0.0.dev0+" + h},
		{"dev-0123456789ab", "0.0.0.dev0+0123456789ab." + h},
		{"f89c9b6", "0.0.0.dev0+f89c9b6." + h},
		{"f89c9b6-dirty", "0.0.0.dev0+f89c9b6.dirty." + h},
		{"Weird_Build/Name!", "0.0.0.dev0+weird.build.name." + h},
		{"", "0.0.0.dev0+" + h},
	} {
		got := SDKVersion(tc.daemon, sdk)
		if got != tc.want {
			t.Errorf("SDKVersion(%q) = %q, want %q", tc.daemon, got, tc.want)
		}
		if !pep440.MatchString(got) {
			t.Errorf("SDKVersion(%q) = %q is not a canonical PEP 440 version", tc.daemon, got)
		}
	}
	changed := fstest.MapFS{"pyproject.toml": {Data: []byte("version = \"0.0.0\"\n# changed\n")}}
	if SDKVersion("dev", changed) == SDKVersion("dev", sdk) {
		t.Error("a dev daemon whose SDK changed keeps the same SDK version, so the venv would not be updated")
	}
}
