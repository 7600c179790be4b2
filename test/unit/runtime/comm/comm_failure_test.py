#!/usr/bin/env python3
"""Runs a job whose rank 1 fails and checks that the whole job ends in time.

    comm_failure_test.py --limit 10 [--expect TEXT] -- mpirun ... probe MODE

Passes when the command exits non-zero within --limit seconds and, with
--expect, its output contains TEXT. A job still running at the limit is
killed (its whole process group) and fails the test: that is the hang the
watchdog exists to prevent. EMBC_COMM_TIMEOUT comes from the environment
(ctest sets it).
"""
import argparse
import os
import signal
import subprocess
import sys
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=float, required=True,
                        help="seconds the job may take to end")
    parser.add_argument("--expect", action="append", default=[],
                        help="text the job's output must contain")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command to run")

    start = time.monotonic()
    job = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, start_new_session=True)
    try:
        output, _ = job.communicate(timeout=args.limit)
    except subprocess.TimeoutExpired:
        os.killpg(job.pid, signal.SIGKILL)
        output, _ = job.communicate()
        print(output)
        print(f"FAIL: the job was still running after {args.limit:.0f} s (killed)")
        return 1
    elapsed = time.monotonic() - start
    print(output)
    print(f"exit code {job.returncode} after {elapsed:.1f} s")
    failures = []
    if job.returncode == 0:
        failures.append("the job exited with 0; a failed rank must fail the job")
    for text in args.expect:
        if text not in output:
            failures.append(f"the output lacks '{text}'")
    for failure in failures:
        print("FAIL: " + failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
