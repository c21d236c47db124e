package cleanup

import (
	"errors"
	"slices"
	"sync"
	"testing"
)

func TestCleanRunsLastFirstOnce(t *testing.T) {
	var s Stack
	var ran []int
	for i := range 3 {
		s.Add(func() { ran = append(ran, i) })
	}
	if err := s.Clean(); err != nil {
		t.Fatalf("Clean: %v", err)
	}
	if want := []int{2, 1, 0}; !slices.Equal(ran, want) {
		t.Fatalf("ran %v, want %v", ran, want)
	}
	if err := s.Clean(); err != nil {
		t.Fatalf("second Clean: %v", err)
	}
	if len(ran) != 3 {
		t.Fatalf("a second Clean ran the steps again: %v", ran)
	}
}

func TestCleanJoinsErrorsAndRunsEveryStep(t *testing.T) {
	var s Stack
	errA, errB := errors.New("a"), errors.New("b")
	var ran []string
	s.AddErr(func() error { ran = append(ran, "a"); return errA })
	s.Add(func() { ran = append(ran, "plain") })
	s.AddErr(func() error { ran = append(ran, "ok"); return nil })
	s.AddErr(func() error { ran = append(ran, "b"); return errB })
	err := s.Clean()
	if want := []string{"b", "ok", "plain", "a"}; !slices.Equal(ran, want) {
		t.Fatalf("ran %v, want %v: a failed step must not stop the rest", ran, want)
	}
	if !errors.Is(err, errA) || !errors.Is(err, errB) {
		t.Fatalf("Clean returned %v, want both a and b", err)
	}
	if got, want := err.Error(), "b\na"; got != want {
		t.Fatalf("Clean's error %q, want %q (in the order the steps ran)", got, want)
	}
}

func TestReleaseForgetsTheSteps(t *testing.T) {
	var s Stack
	ran := false
	s.Add(func() { ran = true })
	s.Release()
	if err := s.Clean(); err != nil || ran {
		t.Fatalf("after Release, Clean ran a step (ran %v, err %v)", ran, err)
	}
	s.Add(func() { ran = true }) // a released stack is usable again
	s.Clean()
	if !ran {
		t.Fatal("a step added after Release did not run")
	}
}

func TestStepAddedDuringCleanWaitsForTheNext(t *testing.T) {
	var s Stack
	var ran []string
	s.Add(func() {
		ran = append(ran, "outer")
		s.Add(func() { ran = append(ran, "inner") })
	})
	s.Clean()
	if !slices.Equal(ran, []string{"outer"}) {
		t.Fatalf("first Clean ran %v, want [outer]", ran)
	}
	s.Clean()
	if !slices.Equal(ran, []string{"outer", "inner"}) {
		t.Fatalf("second Clean ran %v, want [outer inner]", ran)
	}
}

func TestAddFromManyGoroutines(t *testing.T) {
	var s Stack
	var mu sync.Mutex
	n := 0
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			s.Add(func() { mu.Lock(); n++; mu.Unlock() })
		})
	}
	wg.Wait()
	s.Clean()
	if n != 50 {
		t.Fatalf("ran %d steps of 50", n)
	}
}
