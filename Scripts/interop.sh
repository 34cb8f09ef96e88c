#!/usr/bin/env bash
# The interop suite's long form: the queries of Tests/Interop against Django REST Framework (plain,
# JSON:API, hyperlinked, HAL, OData; over SQLite and PostgreSQL) and Datasette over several
# generated catalogs, small and Chinook-sized. CI runs one small catalog.
#
#     SEEDS="1 2 3" bash Scripts/interop.sh
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --enable-all-traits --product storechain
for seed in ${SEEDS:-1 2 3 4 5}; do
    for scale in small chinook; do
        INTEROP_SEED=$seed INTEROP_SCALE=$scale python3 Tests/Interop/interop_test.py .build/debug/storechain
    done
done
