# Two commands from a fresh clone: `make run` and `make test`. Each sets up .venv on its own.
# `make test` runs `make check` first: ruff (lint and format check) and mypy over the project's code.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
PORT   ?= 8501

.PHONY: run test check format venv sample bench clean screenshots

$(STAMP): requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -r requirements.txt
	touch $(STAMP)

venv: $(STAMP)

sample: $(STAMP)
	$(PY) -m engine sample ensure

# the sample corpora build in the background (about a minute): the app serves its first page at
# once and shows the build's progress until the sample corpus is there. scripts/serve.py is
# `streamlit run app.py` with the model and the default corpus warmed as the server starts.
run: $(STAMP)
	$(PY) -m engine sample ensure --background
	$(PY) scripts/serve.py --server.port $(PORT) --server.headless true

#: the project's code: what `make check` lints, formats and type-checks (tests/project/test_code_shape.py
#: measures the same folders)
CODE := engine components pages app.py tests bench scripts examples

check: $(STAMP)
	$(PY) -m ruff check $(CODE)
	$(PY) -m ruff format --check $(CODE)
	$(PY) -m mypy

# rewrite the project's code in ruff's format (what `make check` then expects)
format: $(STAMP)
	$(PY) -m ruff format $(CODE)
	$(PY) -m ruff check --fix $(CODE)

# The browser tests need Debian's Chromium: installed here when this runs as root with apt-get;
# otherwise they are skipped (the suite still passes) and a banner says which and why, before and
# after pytest (-rs lists each skip). .ci/run sets TRIPLET_LENS_REQUIRE_BROWSER=1: no skipping there.
test: check
	@scripts/test_browser_setup.sh
	$(PY) -m pytest -q -rs tests
	@scripts/test_browser_setup.sh report

# every page at 1440x900 and 390x844 into screenshots/ (git-ignored); needs Chromium
screenshots: sample
	OMP_NUM_THREADS=1 $(PY) scripts/screenshots.py

bench: $(STAMP)
	$(PY) bench/run_all.py

clean:
	rm -rf $(VENV) workspace .mypy_cache .ruff_cache
