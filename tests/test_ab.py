#!/usr/bin/python3
"""test_ab.py: tools/ab.py runs a tiny grid with the same build as A and B, interleaved.

Checks what does not depend on the machine's speed: every chunk's points are paired and
compared (a count above 0 in the round's line), and the non-timing columns of the two builds
come out identical at every point (one build, one seed: they must). The timing verdict itself is
not checked: on a busy machine the same build may read slower in a round.
Usage: /usr/bin/python3 tests/test_ab.py path/to/bench
"""
import os
import re
import subprocess
import sys

bench = sys.argv[1]
ab = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools", "ab.py")
done = subprocess.run([sys.executable, ab, bench, bench, "--kinds", "full,window", "--rounds",
                       "1", "--", "--n", "64", "--reps", "3"], stdout=subprocess.PIPE,
                      stderr=subprocess.PIPE, text=True)
out = done.stdout
print(out)
if done.returncode not in (0, 1):
    sys.exit(f"FAIL: ab.py exited {done.returncode}: {done.stderr[-2000:]}")
m = re.search(r"round 1: (\d+) points compared", out)
if not m or int(m.group(1)) == 0:
    sys.exit("FAIL: no points compared")
m = re.search(r"identical at all (\d+) points", out)
if not m or int(m.group(1)) != int(re.search(r"round 1: (\d+)", out).group(1)):
    sys.exit("FAIL: the non-timing columns of one build differ, or not every point was paired")
print("PASS")
