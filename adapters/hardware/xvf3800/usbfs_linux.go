package xvf3800

import (
	"fmt"
	"os"
	"runtime"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// usbCtrlTransfer is the kernel's struct usbdevfs_ctrltransfer (linux/usbdevice_fs.h); Go lays
// it out as C does on 32- and 64-bit targets (usbfs_linux_test.go checks).
type usbCtrlTransfer struct {
	RequestType uint8
	Request     uint8
	Value       uint16
	Index       uint16
	Length      uint16
	Timeout     uint32 // milliseconds
	Data        unsafe.Pointer
}

// usbdevfsControl is _IOWR('U', 0, struct usbdevfs_ctrltransfer): request number 0, so no low bits.
var usbdevfsControl = uintptr(3<<30 | uint32(unsafe.Sizeof(usbCtrlTransfer{}))<<16 | 'U'<<8)

type usbfs struct{ f *os.File }

func openUSBFS(node string) (controlPipe, error) {
	f, err := os.OpenFile(node, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	return &usbfs{f}, nil
}

func (u *usbfs) Control(requestType, request uint8, value, index uint16, data []byte, timeout time.Duration) (int, error) {
	if len(data) > 4096 {
		return 0, fmt.Errorf("a control transfer of %d bytes: at most 4096", len(data))
	}
	ct := usbCtrlTransfer{RequestType: requestType, Request: request, Value: value, Index: index,
		Length: uint16(len(data)), Timeout: uint32(timeout.Milliseconds())}
	if len(data) > 0 {
		ct.Data = unsafe.Pointer(&data[0])
	}
	n, _, errno := unix.Syscall(unix.SYS_IOCTL, u.f.Fd(), usbdevfsControl, uintptr(unsafe.Pointer(&ct)))
	runtime.KeepAlive(data)
	runtime.KeepAlive(u.f)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

func (u *usbfs) Close() error { return u.f.Close() }
