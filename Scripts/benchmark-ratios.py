#!/usr/bin/env python3
"""Run the benchmarks and print each one's median as a ratio to its same-run baseline.

Benchmarks are named "<group>: <subject>"; the one whose subject starts with "baseline" is the
group's baseline. Ratios are reported, never asserted: a slower machine slows both sides alike.
Where a benchmark has a target ratio (issue 16's table), it is printed beside the figure with
whether the figure meets it.
"""
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
UNITS = {"ns": 1, "μs": 1e3, "us": 1e3, "ms": 1e6, "s": 1e9}
# The highest ratio to its baseline each benchmark should reach.
TARGETS = {
    "Memory cache hit: object fault through the handler": 2.0,
    "Disk cache hit: object fault through the handler": 1.5,
    "Hop: chain of 0 pass-through handlers": 1.1,
    "Hop: chain of 10 pass-through handlers": 2.0,
    "Context 10k: fetch and read through ObjectContext": 1.5,
    "Parse: predicate": 2.0,
    "Evaluate 100k: predicate": 1.3,
    "Map 10k records: JSON to nodes": 1.2,
    "Warm fetch of 50: memory + disk + remote": 0.005,
}


def median_nanoseconds(path: pathlib.Path) -> float:
    lines = path.read_text(encoding="utf-8").splitlines()
    unit = re.search(r"\((ns|μs|us|ms|s)\)", lines[0])
    if not unit:
        raise SystemExit(f"{path.name}: no time unit in header {lines[0]!r}")
    for line in lines[1:]:
        percentile, value = line.split("\t")[:2]
        if float(percentile) >= 50:
            return float(value) * UNITS[unit.group(1)]
    raise SystemExit(f"{path.name}: no 50th percentile")


def main() -> int:
    with tempfile.TemporaryDirectory() as out:
        command = [
            "swift", "package", "--disable-sandbox", "benchmark", "--no-progress",
            "--format", "histogramPercentiles", "--metric", "wallClock", "--path", out,
        ]
        run = subprocess.run(command, cwd=ROOT / "Benchmarks", capture_output=True, text=True)
        if run.returncode != 0:
            sys.stderr.write(run.stdout + run.stderr)
            return run.returncode
        medians = {}
        for path in pathlib.Path(out).glob("*.wallClock.histogram.percentiles.tsv"):
            name = path.name.split(".")[2].replace("_", " ")
            medians[name] = median_nanoseconds(path)
    return report(medians)


def report(medians: dict) -> int:
    """Prints each benchmark's median, its ratio to its group's baseline and its target."""
    groups = {}
    for name, value in medians.items():
        group, _, subject = name.partition(": ")
        groups.setdefault(group, {})[subject] = value
    if not groups:
        print("no benchmark results were written", file=sys.stderr)
        return 1
    print(f"{'benchmark':<58} {'median':>12} {'ratio':>8} {'target':>8}  meets")
    for group in sorted(groups):
        subjects = groups[group]
        baseline = next((v for k, v in subjects.items() if k.startswith("baseline")), None)
        for subject in sorted(subjects, key=lambda s: s.startswith("baseline")):
            name = group + ": " + subject
            value = subjects[subject]
            ratio = f"{value / baseline:.2f}x" if baseline else "-"
            target = TARGETS.get(name)
            if target is None or not baseline:
                goal, meets = "", ""
            else:
                goal, meets = f"≤{target:g}x", "yes" if value / baseline <= target else "no"
            print(f"{name:<58} {value / 1e3:>10.1f}µs {ratio:>8} {goal:>8}  {meets}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
