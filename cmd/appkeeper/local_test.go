package main

import (
	"strings"
	"testing"
)

// Flags that contradict each other are refused before anything starts, naming the one to drop.
func TestLocalUpRefusesContradictoryFlags(t *testing.T) {
	for _, tt := range []struct {
		options localUpOptions
		want    string
	}{
		{localUpOptions{nodes: 0}, "--nodes"},
		{localUpOptions{nodes: 3, noCRDs: true, samples: true}, "--samples needs the CRDs"},
		{localUpOptions{nodes: 3, noCRDs: true, showSamples: true}, "--show-samples needs the CRDs"},
	} {
		if err := tt.options.validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: error %v, want one saying %q", tt.options, err, tt.want)
		}
	}
	for _, ok := range []localUpOptions{{nodes: 3, noCRDs: true}, {nodes: 3, noCRDs: true, noOperator: true}, {nodes: 1, samples: true, showSamples: true}} {
		if err := ok.validate(); err != nil {
			t.Errorf("%+v: %v", ok, err)
		}
	}
}
