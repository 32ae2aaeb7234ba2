#!/usr/bin/env python3
"""Runs one command and reports its wall time, CPU time and peak memory (standard library only;
the GPU host may lack /usr/bin/time).

  measure.py [--label L] [--tsv FILE] [--stdout FILE] [--stdin FILE] [--timeout S] -- CMD ARGS...

Prints `measure: <label> wall_s=<s> max_rss_mb=<MiB> rc=<rc> cpu_s=<s>` on stderr and, with
--tsv, appends `label TAB wall_s TAB max_rss_mb TAB rc TAB cpu_s` to FILE. CPU time is the user
and system time of the command and of every descendant that was waited for
(getrusage(RUSAGE_CHILDREN)). Peak RSS is getrusage(RUSAGE_CHILDREN).ru_maxrss: the largest
resident set of any process of the command that was waited for (for `bash -c 'a | b'` the larger
of a and b, not their sum).
Exits with the command's exit status (124 on timeout).
"""
import argparse
import os
import resource
import subprocess
import sys
import time


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--label", default=None)
    p.add_argument("--tsv", default=None)
    p.add_argument("--stdout", default=None)
    p.add_argument("--stdin", default=None)
    p.add_argument("--timeout", type=float, default=None)
    p.add_argument("cmd", nargs=argparse.REMAINDER)
    a = p.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    if not cmd:
        p.error("no command")
    label = a.label or os.path.basename(cmd[0])
    out = open(a.stdout, "wb") if a.stdout else None
    inp = open(a.stdin, "rb") if a.stdin else None
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=out, stdin=inp, start_new_session=a.timeout is not None)
    try:
        rc = proc.wait(timeout=a.timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        proc.wait()
        rc = 124
    wall = time.monotonic() - t0
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    rss_mb = usage.ru_maxrss / 1024.0
    cpu_s = usage.ru_utime + usage.ru_stime
    print(f"measure: {label} wall_s={wall:.3f} max_rss_mb={rss_mb:.1f} rc={rc} cpu_s={cpu_s:.3f}", file=sys.stderr)
    if a.tsv:
        with open(a.tsv, "a") as f:
            f.write(f"{label}\t{wall:.3f}\t{rss_mb:.1f}\t{rc}\t{cpu_s:.3f}\n")
    sys.exit(rc if rc >= 0 else 128 - rc)


if __name__ == "__main__":
    main()
