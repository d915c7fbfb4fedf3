# strom — the two commands a fresh clone needs: `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SPARK_STAMP := $(VENV)/.spark-installed

.PHONY: demo test test-fast check-pyflink check lint typecheck api-docs bench bench-windows bench-checkpoints bench-state bench-state-10g bench-instructions bench-spark bench-spark-tables bench-files bench-typed bench-sql bench-jdbc bench-service bench-startup clean

PYFLINK ?= /work/pyflink-venv/bin/python

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

# the Spark target's tests need pyspark and a Java runtime (scripts/ensure-java.sh installs one when missing)
$(SPARK_STAMP): $(STAMP)
	$(BIN)/pip install --quiet -e '.[dev,spark]'
	scripts/ensure-java.sh
	touch $(SPARK_STAMP)

demo: $(STAMP)
	$(BIN)/python examples/click_stream.py

docs/configuration.md: $(wildcard strom/config*.py)
	$(BIN)/python -m strom.config > $@

# everything: unit, integration (on TaskManager threads unless marked `processes`), the process, kill, HA, TLS,
# Spark, PostgreSQL/Redis/S3 and browser tests (markers: tests/conftest.py), on three pytest-xdist workers (most tests
# wait on TaskManager processes and servers; Spark and the browser tests keep to one worker: --dist loadgroup)
test: $(SPARK_STAMP)
	scripts/ensure-postgres.sh
	scripts/ensure-redis.sh
	scripts/ensure-chromium.sh
	$(BIN)/python -m pytest -q -n 3 --dist loadgroup

# the fast tier (< 3 min on 2 cores): unit tests and integration tests on a MiniCluster whose TaskManagers are threads
# of the test process; no TaskManager processes, no Java, PostgreSQL, Redis or Chromium
FAST_TIER := not (processes or services or spark or browser or e2e)
check-pyflink: $(STAMP)  # PyFlink's own example programs on strom vs what PyFlink printed; needs an installed apache-flink 2.3 (PYFLINK=its python)
	$(BIN)/python -m pytest -q -m pyflink tests --pyflink-examples="$$($(PYFLINK) -c 'import os, pyflink; print(os.path.join(os.path.dirname(pyflink.__file__), "examples"))')"

test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -m "$(FAST_TIER)" --taskmanager-mode=thread

lint: $(STAMP)
	$(BIN)/ruff check strom tests examples $(wildcard benchmarks/*.py)
	$(BIN)/ruff format --check strom tests examples $(wildcard benchmarks/*.py)

typecheck: $(SPARK_STAMP)
	$(BIN)/mypy

# the API reference, generated from the docstrings by pdoc (reST docstrings) into build/api/ (not checked in; open
# build/api/index.html); -W error: a module that fails to import fails the build. tests/unit/test_api_reference.py
# builds part of it and checks that every public DataStream/KeyedStream method has a docstring with an example
API_MODULES := strom strom.datastream strom.datastream.connectors strom.datastream.formats strom.common strom.state \
	strom.connectors strom.exceptions strom.config strom.table strom.table.expressions strom.table.udf strom.table.window strom.table.types
api-docs: $(STAMP)
	rm -rf build/api
	$(BIN)/python -W error -m pdoc --docformat restructuredtext -o build/api $(API_MODULES)

check: lint typecheck api-docs test  # exactly what .ci/run runs

bench: $(STAMP)  # data-plane benchmarks; rewrites docs/benchmarks.md (a few minutes; run on a quiet machine)
	$(BIN)/python benchmarks/bench.py --write-docs

bench-startup: $(STAMP)  # a tiny job's start-up split and wall time (issue 33); BASELINE=DIR pairs it with another checkout (~1 min)
	$(BIN)/python benchmarks/startup.py $(if $(BASELINE),--baseline $(BASELINE))

bench-windows: $(STAMP)  # event-time windows W2/W3 vs the plain loop; its section of docs/benchmarks.md (~8 min: five rounds)
	$(BIN)/python benchmarks/windows.py --write-docs

bench-typed: $(STAMP)  # W1/W2 with PyFlink's declared types vs untyped and the plain loop; its section of docs/benchmarks.md (~4 min)
	$(BIN)/python benchmarks/typed.py --write-docs

bench-sql: $(STAMP)  # strom SQL vs the DataStream form vs the plain loop (issue 34), PYFLINK=… adds Flink's JVM SQL; its section (~15 min)
	cd benchmarks && ../$(BIN)/python sql_window_count.py --fixed-rows 20000 $(if $(filter command line environment,$(origin PYFLINK)),--pyflink $(PYFLINK)) --write-docs

.PHONY: bench-sql-batch
bench-sql-batch: $(STAMP)  # BATCH GROUP BY + join over 1 M and 10 M Parquet rows: strom (Arrow operators) vs DuckDB vs Spark SQL local[2] (issue 34; ~15 min)
	$(BIN)/python benchmarks/sql_batch_join.py --rows 1000000 --rounds 3 --spark --row-path
	$(BIN)/python benchmarks/sql_batch_join.py --rows 10000000 --rounds 3 --spark

bench-jdbc: $(STAMP)  # JdbcSink into a throw-away PostgreSQL vs psycopg's executemany/COPY loops; its section of docs/benchmarks.md (~4 min)
	scripts/ensure-postgres.sh
	$(BIN)/python benchmarks/jdbc.py --write-docs

bench-service: $(STAMP)  # W2 with the dashboard's REST polling and Prometheus scrapes every second vs without; its section (~7 min)
	$(BIN)/python benchmarks/service_overhead.py --write-docs

bench-checkpoints: $(STAMP)  # checkpoint overhead, large state, recovery; its section of docs/benchmarks.md (~5 min)
	$(BIN)/python benchmarks/checkpoints.py --write-docs

bench-state: $(STAMP)  # 1 GB of keyed state on both backends (pauses, checkpoint times), BIG_GB (2) on RocksDB in 2g TaskManagers with a kill; its section (~20 min; BIG_GB=10: ~70 GB of disk, ~25 GB of RAM with full snapshots)
	$(BIN)/python benchmarks/state_at_scale.py --big-gb $(or $(BIG_GB),2) --write-docs

bench-state-10g: $(STAMP)  # issue 28's 10 GB run: 10 M keys × 1 KiB on RocksDB at p=2 in 2g TaskManagers, one SIGKILLed: RSS, exactly-once, restore time (~15 min, ~25 GB of disk under /tmp; run it alone)
	$(BIN)/python benchmarks/state_at_scale.py --only big --big-gb 10 --save $(or $(SAVE),/tmp/strom-state-10g.json)

bench-instructions: $(STAMP)  # W2 work per event in CPU instructions (valgrind): noise-free p=1 vs p=2; its section (~4 min)
	scripts/ensure-valgrind.sh
	$(BIN)/python benchmarks/instructions.py --write-docs

bench-spark: $(SPARK_STAMP)  # Spark local mode: TaskManager startup, W2 vs the MiniCluster; its section of docs/benchmarks.md (~3 min)
	$(BIN)/python benchmarks/spark.py --write-docs

bench-spark-tables: $(SPARK_STAMP)  # SparkSource reading a Spark Parquet table (p=1, p=2) vs Spark's collect()/toArrow(); its section (~4 min)
	$(BIN)/python benchmarks/spark_tables.py --write-docs

bench-files: $(STAMP)  # FileSource reads (CSV, JSON lines, Parquet) and the Parquet sink vs plain reads; its section (~3 min)
	$(BIN)/python benchmarks/files.py --write-docs

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
