// Package harness runs the mutation harness: the baseline on the correct
// sandbox, then each planted defect in a worker process of its own (the
// checks and the attack matrix of the defect's suite with that defect
// switched on), and diffs what failed against predictions.yaml into a
// report.Mutation with each suite's share, its gate and exit code. It also re-judges an earlier run's facts against
// edited predictions (Rejudge), and confines each worker to a control
// group so that nothing it forked outlives it.
//
// It imports mutants (the registry), report and verdict, the YAML
// decoder and sandbox/procfs. It does not import the checks or the
// attacks: the CLI gives it a Worker that runs them.
package harness
