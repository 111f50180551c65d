//go:build !linux

package xvf3800

import "errors"

func openUSBFS(string) (controlPipe, error) {
	return nil, errors.New("USB control requests are made through Linux's usbfs only")
}
