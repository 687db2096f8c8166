# Two commands on a fresh machine with only Python 3.11+:
#   make serve   -- start the server on ./conteur.db with a demo chronicle
#                   (WIFI=name prints the network phones join; PUBLIC_URL=... the base of join links)
#   make test    -- run the whole test suite
#   make bench-report -- rebuild BENCHMARKS.md's tables from bench/results/*.json
#   make mutation -- mutmut's mutation score of the rules in events/, per module (CPU heavy, not
#                    in CI; MODULES="met v5" for some modules only, JOBS=2 runs two mutants at once)
PYTHON ?= python3
WIFI ?=
MODULES ?=
JOBS ?= 1
PUBLIC_URL ?=
VENV := .venv
BIN := $(VENV)/bin

.PHONY: serve test install bench-report mutation

$(BIN)/conteur: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	touch $(BIN)/conteur

install: $(BIN)/conteur

serve: $(BIN)/conteur
	$(BIN)/conteur serve --demo --db conteur.db $(if $(WIFI),--wifi "$(WIFI)") $(if $(PUBLIC_URL),--public-url "$(PUBLIC_URL)")

test: $(BIN)/conteur
	$(BIN)/python -m pytest -q -rs -p no:cacheprovider

bench-report:
	$(PYTHON) bench/results.py

mutation: $(BIN)/conteur
	$(BIN)/pip install -q -e '.[test,mutation]'
	nice -n 15 $(BIN)/python tools/mutation.py --jobs $(JOBS) --json test-artifacts/mutation.json $(MODULES)
