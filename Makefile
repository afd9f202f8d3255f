# The two commands of the README:
#   make demo    builds weft and runs the RMA comparison on this machine
#   make check   builds weft and runs every test
# Both install missing system packages first (scripts/setup.sh) and keep the
# build in build/ and the Python toolkit in .venv/.

BUILD  ?= build
VENV   ?= .venv
JOBS   ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all setup build python check demo install clean

all: build

setup:
	@bash scripts/setup.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

build: setup $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

python: setup
	@bash scripts/python-env.sh $(VENV)

check: build python
	cd $(BUILD) && ctest --output-on-failure -j 2
	WEFT_BUILD_DIR=$(abspath $(BUILD)) $(VENV)/bin/python -m pytest -q python/tests

demo: build python
	WEFT_BUILD_DIR=$(abspath $(BUILD)) $(VENV)/bin/weft bench rma

install: build
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD)
