"""Start `dtrace` serving its aggregations to Prometheus, for the benchmarks of
`-x prometheus` (bench/prometheus_scrape.py, bench/soak.py)."""

import re
import subprocess
import sys


def serve(cmd, who):
    """Start `cmd` (a dtrace command line with `-x prometheus=127.0.0.1:0`); return the
    process and the URL it serves, read from its stderr. Exit with `who`'s message if it
    stops before saying where it serves."""
    dt = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in dt.stderr:
        m = re.search(r"serving aggregations at (http://\S+)", line)
        if m:
            return dt, m.group(1)
    sys.exit(f"{who}: dtrace did not serve")
