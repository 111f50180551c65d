package main

import (
	"testing"

	"github.com/robothub/robothub/core/hub/card"
)

func TestCardFieldAndKind(t *testing.T) {
	n, err := card.Parse("title: x\n\ntags:\n  - robot\n", 2)
	if err != nil {
		t.Fatal(err)
	}
	if cardField(n, "title").Line != 2 || cardField(n, "tags").Line != 5 || cardField(n, "tags").Content[0].Line != 5 {
		t.Fatalf("lines: title %d tags %d", cardField(n, "title").Line, cardField(n, "tags").Line)
	}
	if cardField(n, "missing") != nil || cardField(cardField(n, "title"), "x") != nil {
		t.Fatal("cardField of a missing key or on a scalar is not nil")
	}
	if cardKind(n) != "mapping" || cardKind(cardField(n, "tags")) != "list" || cardKind(cardField(n, "title")) != "scalar" {
		t.Fatal("cardKind")
	}
}
