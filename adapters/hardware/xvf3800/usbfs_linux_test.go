package xvf3800

import (
	"testing"
	"unsafe"
)

// The ioctl's struct must be the kernel's: 24 bytes with the data pointer at 16 on 64-bit
// targets, 16 bytes with it at 12 on 32-bit ones; the request number follows from the size.
func TestUSBFSControlMatchesTheKernel(t *testing.T) {
	var ct usbCtrlTransfer
	size, off := unsafe.Sizeof(ct), unsafe.Offsetof(ct.Data)
	if unsafe.Sizeof(uintptr(0)) == 8 {
		if size != 24 || off != 16 || usbdevfsControl != 0xC0185500 {
			t.Fatalf("size %d, data at %d, request %#x; want 24, 16, 0xc0185500", size, off, usbdevfsControl)
		}
	} else if size != 16 || off != 12 || usbdevfsControl != 0xC0105500 {
		t.Fatalf("size %d, data at %d, request %#x; want 16, 12, 0xc0105500", size, off, usbdevfsControl)
	}
	if unsafe.Offsetof(ct.Timeout) != 8 || unsafe.Offsetof(ct.Length) != 6 {
		t.Fatal("the timeout or length is not where the kernel reads it")
	}
}
