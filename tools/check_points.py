"""check_points.py — what the check scripts (tools/check_*.sh) share: a results file's points,
refusing a file with a failed point, and a column as text."""
import sys

import h5py
import numpy as np


def load(path):
    """the /points table of the HDF5 results file at path; exits naming every failed point"""
    with h5py.File(path, "r") as f:
        pts = f["points"][:]
    bad = pts[pts["status"] != b"ok"]
    if len(bad):
        sys.exit("points failed: " + "; ".join(m.decode() for m in bad["message"]))
    return pts


def column(pts, col):
    """column col of pts, decoded to str when it holds bytes"""
    return np.char.decode(pts[col]) if pts[col].dtype.kind == "S" else pts[col]
