# need_python.sh — sourced by the check scripts before they measure. They read their results with
# Debian's numpy and h5py under /usr/bin/python3 (./bench test installs them); without those the
# verdicts would fail only after minutes of measuring, so say what to install and stop at once.
if ! /usr/bin/python3 -c 'import numpy, h5py' 2>/dev/null; then
    echo "$(basename "$0"): its verdicts need numpy and h5py for /usr/bin/python3 (Debian's" \
        "python3-h5py): run ./bench test once (it installs them), or apt-get install -y" \
        "python3-h5py" >&2
    exit 2
fi
