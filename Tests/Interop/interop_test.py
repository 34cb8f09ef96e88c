#!/usr/bin/env python3
"""StoreChain against stock third-party server software: Django REST Framework with django-filter,
the same project as JSON:API (Django REST Framework JSON:API), hyperlinked (relationships as URLs),
as HAL (drf-hal-json),
as OData collections (`$filter` parsed by odata-query) and over PostgreSQL (whose ORDER BY puts
NULLs last), and Datasette, each serving the same generated catalog (Tests/Interop/catalog.py)
on loopback,
through the pipelines kept in Examples/Interop. Every query of Tests/Interop/queries.py runs cold
through `storechain query` against each backend and is compared with the answer computed from the
catalog's SQLite file. Prints, per backend, the requests the queries cost (counted by the client
and in the server's own access log) and fails on any wrong answer, error, redirect, or a request
the client did not count.

The servers come from PyPI into a virtual environment of the suite's own (INTEROP_VENV, by
default .build/interop-venv), created on first use; the PostgreSQL run starts a throwaway cluster
with Scripts/postgres.sh (Debian's `postgresql`, which .ci/run installs).

    python3 Tests/Interop/interop_test.py .build/debug/storechain

INTEROP_VERBOSE=1 prints each query's requests; INTEROP_ONLY=odata,odata-uncached runs those pipelines only; INTEROP_SEED picks another catalog, and
INTEROP_SCALE=chinook makes it as large as the Chinook sample (Scripts/interop.sh runs both).
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import catalog  # noqa: E402
import queries  # noqa: E402

# Warnings the client logged (a cache that could not be written, say), shown at the end.
WARNINGS = []

PACKAGES = ["Django==5.2.19", "djangorestframework==3.18.3", "django-filter==26.2",
            "djangorestframework-jsonapi==8.1.0", "inflection==0.5.1", "datasette==0.65.5",
            "psycopg==3.2.10", "psycopg-binary==3.2.10", "odata-query==0.10.0", "sly==0.4", "drf-hal-json==0.10.0", "drf-nested-fields==0.9.5"]


def venv():
    """The suite's virtual environment, with the servers installed; its python."""
    folder = os.environ.get("INTEROP_VENV", os.path.join(ROOT, ".build", "interop-venv"))
    python = os.path.join(folder, "bin", "python")
    marker = os.path.join(folder, "installed.txt")
    if not os.path.exists(marker) or open(marker).read() != "\n".join(PACKAGES):
        subprocess.run([sys.executable, "-m", "venv", "--clear", folder], check=True)
        subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *PACKAGES],
                       check=True)
        with open(marker, "w") as done:
            done.write("\n".join(PACKAGES))
    return python


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Server:
    """A server process on loopback whose output (its access log) is collected."""

    def __init__(self, name, command, port, env, ready):
        self.name = name
        self.port = port
        self.lines = []
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                        env=env)
        self.reader = threading.Thread(target=self.read, daemon=True)
        self.reader.start()
        deadline = time.time() + 60
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(f"{name} ended: {''.join(self.lines)}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    pass
            except OSError:
                time.sleep(0.2)
                continue
            # Something answers on the port; it must be this process (a port another run took
            # would make this run talk to that run's server).
            time.sleep(0.5)
            if self.process.poll() is not None:
                raise SystemExit(f"{name} ended: {''.join(self.lines)}")
            break
        else:
            raise SystemExit(f"{name} did not start: {''.join(self.lines)}")
        self.ready_lines = len(self.lines)
        self.requests_pattern = ready

    def read(self):
        for line in self.process.stdout:
            self.lines.append(line)

    def requests(self):
        """The access-log lines so far: (method and path, status)."""
        found = []
        for line in self.lines:
            match = self.requests_pattern.search(line)
            if match:
                found.append((match.group(1), int(match.group(2))))
        return found

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()


def postgres_catalog(python, database):
    """A throwaway PostgreSQL cluster (stopped when this process ends) holding the catalog; its URL."""
    started = subprocess.run(["bash", os.path.join(ROOT, "Scripts", "postgres.sh"), "start", "--stop-with",
                              str(os.getpid())], capture_output=True, text=True)
    if started.returncode != 0:
        raise SystemExit(f"PostgreSQL did not start: {started.stderr}")
    url = re.search(r"STORECHAIN_POSTGRES_URL=(\S+)", started.stdout).group(1)
    subprocess.run([python, os.path.join(HERE, "postgres_catalog.py"), database, url], check=True)
    return url


def django(name, python, env):
    port = free_port()
    server = Server(name, [python, "-m", "django", "runserver", "--noreload", "--nothreading",
                           f"127.0.0.1:{port}"], port, env, re.compile(r'"(GET [^"]*) HTTP/1\.1" (\d{3})'))
    return server, f"http://127.0.0.1:{port}"


def start_servers(python, database):
    env = dict(os.environ, INTEROP_CATALOG=database, DJANGO_SETTINGS_MODULE="interop_drf.settings",
               PYTHONPATH=os.path.join(HERE, "drf"))
    drf = django("Django REST Framework", python, env)
    postgres = django("Django REST Framework over PostgreSQL", python,
                      dict(env, INTEROP_POSTGRES_URL=postgres_catalog(python, database)))
    datasette_port = free_port()
    datasette_bin = os.path.join(os.path.dirname(python), "datasette")
    datasette = Server("Datasette", [datasette_bin, "serve", database, "--host", "127.0.0.1", "--port",
                                     str(datasette_port)], datasette_port, os.environ.copy(),
                       re.compile(r'"(GET [^"]*) HTTP/1\.1" (\d{3})'))
    return {"drf": drf, "drf-postgres": postgres, "datasette": (datasette, f"http://127.0.0.1:{datasette_port}")}


def run_query(binary, pipeline, url, query):
    entity, where, sort, limit, offset, count, _ = query
    command = [binary, "query", "--pipeline", pipeline, "--entity", entity, "--format", "json", "--stats"]
    if where:
        command += ["--where", where]
    if sort:
        command += ["--sort", sort]
    if limit is not None:
        command += ["--limit", str(limit)]
    if offset:
        command += ["--offset", str(offset)]
    if count:
        command += ["--count"]
    # The disk caches' relative paths are in the cache folder: this run's own, so they start
    # empty and no other run (or an earlier one) shares them.
    env = dict(os.environ, STORECHAIN_DRF_URL=url, STORECHAIN_DATASETTE_URL=url,
               STORECHAIN_CACHE_DIR=os.path.join(os.path.dirname(pipeline), "cache-folder"))
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    for line in result.stderr.splitlines():
        if " warning " in line or " error " in line:
            WARNINGS.append(f"{os.path.basename(pipeline)}: {describe(query)}: {line.strip()}")
    if result.returncode != 0:
        return None, 0, result.stderr.strip()
    stats = re.search(r"upstream (\d+) request", result.stderr)
    requests = int(stats.group(1)) if stats else 0
    if count:
        return int(result.stdout.strip()), requests, None
    return [record["id"] for record in json.loads(result.stdout)], requests, None


def describe(query):
    entity, where, sort, limit, offset, count, _ = query
    parts = [entity, where or "TRUEPREDICATE"]
    if sort:
        parts.append(f"sort {sort}")
    if limit is not None:
        parts.append(f"limit {limit}")
    if offset:
        parts.append(f"offset {offset}")
    if count:
        parts.append("count")
    return " · ".join(parts)


def main():
    binary = os.path.abspath(sys.argv[1])
    python = venv()
    work = tempfile.mkdtemp(prefix="storechain-interop-")
    database = os.path.join(work, "catalog.sqlite")
    seed = int(os.environ.get("INTEROP_SEED", "7"))
    sizes = catalog.CHINOOK if os.environ.get("INTEROP_SCALE") == "chinook" else catalog.SMALL
    catalog.generate(database, seed, *sizes)
    print(f"catalog: seed {seed}, {sizes[0]} artists, {sizes[1]} albums, {sizes[2]} tracks")
    data = queries.Catalog(database)
    servers = start_servers(python, database)
    failures = []
    try:
        for name in ("catalog.model.yml", "drf.pipeline.yml", "jsonapi.pipeline.yml", "odata.pipeline.yml",
                     "datasette.pipeline.yml"):
            # Copies in the run's folder, edited below into the variants.
            shutil.copy(os.path.join(ROOT, "Examples", "Interop", name), work)
        # The Django pipeline without its paging facts: pages end by guess, and a page past the
        # last is asked for and answered 404 (which must end the listing, not fail the fetch).
        with open(os.path.join(work, "drf.pipeline.yml")) as source:
            plain = source.read().replace(", next: next, total: count", "").replace("cache/drf.sqlite",
                                                                                     "cache/drf-plain.sqlite")
        with open(os.path.join(work, "drf-plain.pipeline.yml"), "w") as copy:
            copy.write(plain)
        # The Django pipeline against the same API hyperlinked (stock HyperlinkedModelSerializer):
        # relationships are the related objects' URLs, read through each entity's get endpoint.
        with open(os.path.join(work, "drf.pipeline.yml")) as source:
            linked = source.read().replace("${STORECHAIN_DRF_URL}", "${STORECHAIN_DRF_URL}/hyperlinked").replace(
                "{ foreign-key: ", "{ link: ").replace("cache/drf.sqlite", "cache/hyperlinked.sqlite")
            linked = re.sub(r"\n      (\w+):\n        records: results\n",
                            lambda m: f"{m.group(0)}        get: GET /{m.group(1).lower()}s/{{id}}/\n", linked)
        with open(os.path.join(work, "hyperlinked.pipeline.yml"), "w") as copy:
            copy.write(linked)
        # And against the same API as HAL (drf-hal-json): records under `_embedded`, the next page
        # and the relationships under `_links`, served only as application/hal+json.
        hal = linked.replace("/hyperlinked", "/hal").replace("cache/hyperlinked.sqlite", "cache/hal.sqlite").replace(
            "records: results", "records: _embedded").replace("next: next", "next: _links.next").replace(
            "{ link: ", "{ link: _links.").replace("    entities:\n", "    headers: { Accept: application/hal+json }\n"
                                                  "    entities:\n", 1)
        with open(os.path.join(work, "hal.pipeline.yml"), "w") as copy:
            copy.write(hal)
        # The Django pipeline over PostgreSQL, which sorts NULLs last: `nils: largest`, so a sort by
        # the years some albums lack is done in memory (pushed as the fetch's order, its windows
        # would hold the wrong albums).
        with open(os.path.join(work, "drf.pipeline.yml")) as source:
            postgres = source.read().replace("nils: smallest", "nils: largest").replace("cache/drf.sqlite",
                                                                                      "cache/drf-postgres.sqlite")
        with open(os.path.join(work, "drf-postgres.pipeline.yml"), "w") as copy:
            copy.write(postgres)
        # And each pipeline without its disk cache: every query is then cold in a process of its
        # own, so windows, counts and key paths are answered from the backend, not the caches.
        for backend in ("drf", "jsonapi", "odata", "hyperlinked", "hal", "datasette", "drf-postgres"):
            with open(os.path.join(work, f"{backend}.pipeline.yml")) as source:
                uncached = re.sub(r"\n  - disk-cache:[^\n]*", "", source.read())
            with open(os.path.join(work, f"{backend}-uncached.pipeline.yml"), "w") as copy:
                copy.write(uncached)
        runs = [("drf", "drf"), ("jsonapi", "drf"), ("odata", "drf"), ("hyperlinked", "drf"), ("hal", "drf"),
                ("datasette", "datasette"), ("drf-plain", "drf"), ("drf-uncached", "drf"), ("jsonapi-uncached", "drf"),
                ("odata-uncached", "drf"), ("hyperlinked-uncached", "drf"), ("hal-uncached", "drf"),
                ("datasette-uncached", "datasette"),
                ("drf-postgres", "drf-postgres"), ("drf-postgres-uncached", "drf-postgres")]
        only = os.environ.get("INTEROP_ONLY")
        for pipeline_name, backend in runs:
            if only and pipeline_name not in only.split(","):
                continue
            server, url = servers[backend]
            pipeline = os.path.join(work, f"{pipeline_name}.pipeline.yml")
            before = len(server.requests())
            cold = check(binary, pipeline, server, url, pipeline_name, data, failures)
            cached = not pipeline_name.endswith("-uncached")
            warm = check(binary, pipeline, server, url, pipeline_name + " (warm)", data, failures) if cached else 0
            past_end = sum(1 for _, status in server.requests()[before:] if status == 404)
            print(f"{pipeline_name}.pipeline.yml against {server.name}: {len(queries.QUERIES)} queries, "
                  f"{cold} requests cold" + (f", {warm} warm" if cached else " (each query cold)")
                  + f", {past_end} answered 404 (pages past the end)")
            if warm:
                failures.append(f"{pipeline_name}: the warm run sent {warm} requests (every answer is cached)")
            if pipeline_name == "drf-plain" and past_end == 0:
                failures.append("drf-plain: no page past the end was asked for, so that path went untested")
    finally:
        for server, _ in servers.values():
            server.stop()
        shutil.rmtree(work, ignore_errors=True)
    if WARNINGS:
        print(f"{len(WARNINGS)} warning(s) the client logged; the first 20:")
        print("\n".join(WARNINGS[:20]))
    if failures:
        print("\n".join(failures))
        raise SystemExit(f"{len(failures)} problem(s) against stock servers")
    print("interop: every answer right against Django REST Framework (over SQLite and PostgreSQL; as JSON:API, "
          "hyperlinked, HAL and OData) and Datasette")


def check(binary, pipeline, server, url, backend, data, failures):
    """Runs every query once, in order, each in a process of its own; returns the requests sent."""
    before = len(server.requests())
    counted = 0
    for query in queries.QUERIES:
        want = queries.expected(data, query)
        got, requests, error = run_query(binary, pipeline, url, query)
        counted += requests
        if os.environ.get("INTEROP_VERBOSE"):
            print(f"  {backend}: {requests:4d} requests  {describe(query)}")
        if error is not None:
            failures.append(f"{backend}: {describe(query)}: failed: {error}")
        elif got != want:
            failures.append(f"{backend}: {describe(query)}: answered {got}, expected {want}")
    time.sleep(0.5)  # the server writes its access log after answering
    seen = server.requests()[before:]
    redirects = [line for line in seen if 300 <= line[1] < 400]
    if redirects:
        failures.append(f"{backend}: {len(redirects)} redirect(s), first {redirects[0]}")
    if len(seen) != counted:
        failures.append(f"{backend}: the server logged {len(seen)} requests, the client counted {counted}")
    return counted


if __name__ == "__main__":
    main()
