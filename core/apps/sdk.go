package apps

import (
	"context"
	"fmt"
	"io"
)

// SDKDistribution is the Python distribution name of the embedded SDK.
const SDKDistribution = "robot-sdk"

// ensureSDK installs the embedded SDK at its version unless it is there; it reports whether it did.
func (m *Manager) ensureSDK(ctx context.Context, log io.Writer) (bool, error) {
	version := m.SDKVersion()
	have := m.py.InstalledVersion(SDKDistribution)
	if have == version {
		return false, nil
	}
	if have == "" {
		fmt.Fprintf(log, "Installing robot_sdk %s into the apps venv\n", version)
	} else {
		fmt.Fprintf(log, "Replacing robot_sdk %s with %s in the apps venv\n", have, version)
	}
	if err := m.py.InstallSDK(ctx, log, m.cfg.SDK, version); err != nil {
		return false, fmt.Errorf("installing robot_sdk %s: %w", version, err)
	}
	if got := m.py.InstalledVersion(SDKDistribution); got != version {
		return false, fmt.Errorf("installed robot_sdk but the venv reports version %q, want %q", got, version)
	}
	return true, nil
}
