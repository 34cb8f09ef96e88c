#!/usr/bin/env python3
"""Run the benchmarks and print each one's median as a ratio to its same-run baseline.

Benchmarks are named "<group>: <subject>"; the one whose subject starts with "baseline" is the
group's baseline. Ratios are reported, never asserted: a slower machine slows both sides alike.
Where a benchmark has a target ratio (issue 16's table), it is printed beside the figure with
whether the figure meets it. A subject starting with "floor" measures the least any design could
cost for a figure's work (FLOORS); the figure's ratio to its floor follows the table. Groups named "Peak memory …" compare the growth of resident memory
instead of time; allocations per call and the growth of the scale groups from 1k to 100k objects
follow the table.
"""
import os
import pathlib
import re
import signal
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
TIME_UNITS = {"ns": 1, "μs": 1e3, "us": 1e3, "ms": 1e6, "s": 1e9}
COUNT_UNITS = {"K": 1e3, "M": 1e6, "G": 1e9}
# A run that takes longer than this has a benchmark that hangs (a short run takes about 10 minutes
# here): it is stopped, and the benchmark it was running is named.
LIMIT_MINUTES = float(os.environ.get("STORECHAIN_BENCHMARK_LIMIT_MINUTES", "30"))
# Groups measured by the peak growth of resident memory rather than by time.
MEMORY_METRIC = "peak_memory_growth_(bytes)"
# The highest ratio to its baseline each benchmark should reach.
TARGETS = {
    "Memory cache hit: object fault through the handler": 2.0,
    "Memory cache hit from main actor: object fault through the handler": 1.2,
    "Disk cache hit: object fault through the handler": 1.5,
    "Disk cache relationship fault: album.tracks from the complete collection": 2.0,
    "Hop: chain of 0 pass-through handlers": 1.1,
    "Hop: chain of 10 pass-through handlers": 2.0,
    "Context 10k: fetch and read through ObjectContext": 1.5,
    "Parse: predicate": 2.0,
    "Evaluate 100k: predicate": 1.3,
    "Map 10k records: JSON to nodes": 1.2,
    "Warm fetch of 50: memory + disk + remote": 0.005,
    "Peak memory 100k dataset: loaded by JSONFileStore": 5.0,
    "Peak memory 100k fetch: through the memory cache": 2.0,
    # Measured alternately within each sample (a custom metric, RATIO_METRIC): the two separate
    # benchmarks of the same hits ("Inspector attached: memory-cache hit through a chain" and its
    # baseline) are reported too, but their ratio drifts with the machine between runs.
    "Inspector attached: ratio to a hit without it, measured alternately": 1.5,
}
for size in ("1k", "10k", "100k"):
    TARGETS[f"Scale {size} from memory: filtered sorted fetch"] = 1.5
    TARGETS[f"Scale {size} from disk: filtered sorted fetch"] = 2.0
# The floor of each figure that has one: the least the same work costs done any way the library
# could do it (see each floor benchmark's comment), so a target below the floor's ratio is out of
# reach.
FLOORS = {
    "Memory cache hit: object fault through the handler":
        "Memory cache hit: floor, an object fault answered by InMemoryStore",
    "Hop: chain of 0 pass-through handlers": "Hop: floor, 1 async call through an existential",
    "Hop: chain of 10 pass-through handlers": "Hop: floor, 10 nested async calls through existentials",
    "Context 10k: fetch and read through ObjectContext":
        "Context 10k: floor, a bare table of rows and weakly held objects",
}
# Reported without a target: a 10k-object collection written to the disk cache against raw GRDB
# inserts of the same rows. Issues 17 and 18 ask for these figures: an acknowledged offline save
# against a durable SQLite insert of the same payload, and a replay of independent saves in 4
# lanes against one lane; a shared-cache hit against a bare postgres-nio SELECT of the row, and a
# shared rate-limit permit against a bare SELECT 1 (StoreChainPostgresBenchmarks, which needs
# STORECHAIN_POSTGRES_URL or starts a throwaway cluster).
# Reported with their 99th percentile too: the time from a save by one client to another
# chain's app seeing it, through the change feed and by polling.
PERCENTILES = ("Change delivery",)
# Groups whose figure is a count of upstream requests (a custom metric), not a time.
COUNTED = ("Churn",)
REQUESTS_METRIC = "upstream-requests"
# Benchmarks that measure a ratio themselves, in thousandths (both sides timed in each sample).
RATIO_METRIC = "ratio-per-mille"
# Allocations per call reported for these (package-benchmark's malloc counter).
ALLOCATIONS = ["Memory cache hit: object fault through the handler"]


def median(path: pathlib.Path, at: float = 50) -> float:
    """The file's 50th (or `at`) percentile, in nanoseconds for times and in units for counts."""
    lines = path.read_text(encoding="utf-8").splitlines()
    time_unit = re.search(r"\((ns|μs|us|ms|s)\)", lines[0])
    count_unit = re.search(r"\((K|M|G)\)", lines[0])
    scale = TIME_UNITS[time_unit.group(1)] if time_unit else COUNT_UNITS[count_unit.group(1)] if count_unit else 1
    for line in lines[1:]:
        percentile, value = line.split("\t")[:2]
        if float(percentile) >= at:
            return float(value) * scale
    raise SystemExit(f"{path.name}: no {at:g}th percentile")


# A progress line ends with ":<benchmark name>"; it is redrawn with terminal escapes.
PROGRESS = re.compile(r"\x1b\[1A\x1b\[K.*\| :(.*)$")


def running(output: str) -> str:
    """The benchmark the last progress line names."""
    names = [match.group(1) for match in map(PROGRESS.match, output.splitlines()) if match]
    return names[-1] if names else "(none had started)"


def without_progress(output: str) -> str:
    """The output without its progress lines."""
    return "\n".join(line for line in output.splitlines() if not PROGRESS.match(line)) + "\n"


def without_postgres(options: list) -> list:
    """The options, limited to the benchmarks that need no PostgreSQL server when none is named
    and no target is chosen (with one line saying how to include them)."""
    if "--target" in options or os.environ.get("STORECHAIN_POSTGRES_URL"):
        return options
    print("skipping StoreChainPostgresBenchmarks: they need a PostgreSQL server; to include them, run "
          "`eval \"$(bash Scripts/postgres.sh start)\"` (or set STORECHAIN_POSTGRES_URL) first", flush=True)
    return [*options, "--target", "StoreChainBenchmarks"]


def main(options: list) -> int:
    """`options` go to `swift package benchmark` (for example `--target StoreChainBenchmarks`)."""
    options = without_postgres(options)
    with tempfile.TemporaryDirectory() as out:
        command = [
            "swift", "package", "--disable-sandbox", "benchmark",
            "--format", "histogramPercentiles", "--path", out, *options,
        ]
        # Its own session, so that a stopped run takes the benchmark executable with it.
        run = subprocess.Popen(
            command, cwd=ROOT / "Benchmarks", stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, start_new_session=True)
        try:
            output, _ = run.communicate(timeout=LIMIT_MINUTES * 60)
        except subprocess.TimeoutExpired:
            os.killpg(run.pid, signal.SIGKILL)
            output, _ = run.communicate()
            print(f"error: the benchmarks did not finish within {LIMIT_MINUTES:g} minutes; "
                  f"the one running was '{running(output)}'. Run it alone to see where it waits: "
                  "(cd Benchmarks && swift package benchmark --filter 'NAME')", file=sys.stderr)
            return 1
        if run.returncode != 0:
            sys.stderr.write(without_progress(output))
            return run.returncode
        medians = {}
        tails = {}
        suffix = ".histogram.percentiles.tsv"
        for path in pathlib.Path(out).glob("*" + suffix):
            # "<run>.<target>.<name>.<metric>.histogram.percentiles.tsv": a name may hold dots
            # ("album.tracks"), a run, a target and a metric do not.
            stem, metric = path.name[: -len(suffix)].rsplit(".", 1)
            _, _, name = stem.split(".", 2)
            name = name.replace("_", " ")
            medians.setdefault(metric, {})[name] = median(path)
            if name.startswith(PERCENTILES) and metric == "wallClock":
                tails[name] = median(path, 99)
    return report(medians, tails)


def report(medians: dict, tails: dict) -> int:
    """Prints each benchmark's median, its ratio to its group's baseline and its target; then
    allocations per call, and how the scale groups grow from 1k to 100k objects."""
    # Each benchmark's figure: its peak memory growth when it measures that, else its time.
    figures = {**medians.get("wallClock", {}), **medians.get(MEMORY_METRIC, {})}
    # Groups that count requests: their time is the length of the run, not a figure.
    figures = {name: value for name, value in figures.items() if not name.startswith(COUNTED)}
    groups = {}
    for name, value in figures.items():
        group, _, subject = name.partition(": ")
        groups.setdefault(group, {})[subject] = value
    if not any(medians.values()):
        print("no benchmark results were written", file=sys.stderr)
        return 1
    print(f"{'benchmark':<70} {'median':>12} {'ratio':>8} {'target':>8}  meets")
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
            shown = f"{value / 1e6:>10.1f}MB" if group.startswith("Peak memory") else f"{value / 1e3:>10.1f}µs"
            print(f"{name:<70} {shown} {ratio:>8} {goal:>8}  {meets}")
    for name, floor in FLOORS.items():
        if name in figures and figures.get(floor):
            print(f"ratio to the floor, {name}: {figures[name] / figures[floor]:.2f}x")
    for name in sorted(tails):
        print(f"{name}: p50 {figures.get(name, 0) / 1e6:.1f} ms, p99 {tails[name] / 1e6:.1f} ms")
    for name, per_mille in sorted(medians.get(RATIO_METRIC, {}).items()):
        ratio = per_mille / 1000
        target = TARGETS.get(name)
        goal = f" (target ≤{target:g}x: {'meets' if ratio <= target else 'does not meet'})" if target else ""
        print(f"{name}: {ratio:.2f}x{goal}")
    for name, count in sorted(medians.get(REQUESTS_METRIC, {}).items()):
        print(f"{name}: {count:g} upstream requests")
    allocations = medians.get("mallocCountTotal", {})
    for name in ALLOCATIONS:
        if name in allocations:
            print(f"allocations per call, {name}: {allocations[name]:g}")
    for place in ("memory", "disk"):
        small = groups.get(f"Scale 1k from {place}", {})
        large = groups.get(f"Scale 100k from {place}", {})
        for subject in sorted(set(small) & set(large)):
            print(f"growth from 1k to 100k objects, from {place}, {subject}: {large[subject] / small[subject]:.0f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
