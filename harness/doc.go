// Package harness runs the mutation harness: the baseline on the correct
// sandbox, then each planted defect, probe by probe (a check, or an attack
// at one level), each probe in a worker process of its own with that
// defect switched on, and diffs what failed against predictions.yaml into
// a report.Mutation with each suite's share, its gate and exit code. It
// also re-judges an earlier run's facts against edited predictions
// (Rejudge), merges the reports of shards (Merge), reuses an earlier
// run's verdicts whose inputs are unchanged (Runner.Previous, keyed on
// ComputeInputs' digests of the sources built into the binary and the
// host's Fingerprint), runs only what a diff touches (Runner.Since), and
// confines each worker to a control group so that nothing it forked
// outlives it.
//
// The worker is this package too (WorkerCommand): the binary that runs
// the harness is started again as a reexec helper that runs one probe of
// the checks or the attacks and prints its result. So the package imports
// checks and attacks, the sandbox they drive, mutants (the registry and
// the switch), report and verdict, the YAML decoder, and
// sandbox/procfs, sandbox/cgroup and sandbox/reexec. It is the top of the
// tree: only cmd/sandboxlab imports it, and gives it flags, progress and
// exit codes. Its mutation tests (TestMutate and its kin) run the real
// harness with the test binary as the worker.
package harness
