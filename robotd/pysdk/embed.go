// Package pysdk embeds the Python SDK (robot_sdk) that apps import, so that the daemon can install
// the SDK matching its own version into the apps venv.
package pysdk

import "embed"

// Files holds pyproject.toml, README.md and the robot_sdk package.
//
//go:embed pyproject.toml README.md robot_sdk/*.py robot_sdk/py.typed robot_sdk/utils/*.py robot_sdk/motion/*.py robot_sdk/media/*.py
var Files embed.FS
