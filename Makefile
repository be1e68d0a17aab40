# Entry points for people: `make run` sets up and runs a scale-16 benchmark, `make test`
# sets up and runs every test. Both start with scripts/bootstrap (Debian packages).
BUILD_DIR ?= build
SCALE ?= 16
JOBS ?= $(shell nproc)

SMPI_DIR ?= build-smpi

.PHONY: all bootstrap configure build smpi run test format format-check bench clean

all: build

bootstrap:
	scripts/bootstrap

configure: bootstrap
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release -DZBFS_WERROR=ON

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# The zbfs command built against SimGrid's SMPI, for simulated clusters (docs/simulation.md).
smpi: bootstrap
	cmake -S . -B $(SMPI_DIR) -DCMAKE_BUILD_TYPE=Release -DZBFS_WERROR=ON -DZBFS_SIMGRID=ON
	cmake --build $(SMPI_DIR) --target zbfs_cli zbfs_smpi_checks -j $(JOBS)

run: build
	$(BUILD_DIR)/bin/zbfs run --scale $(SCALE)

test: build smpi format-check
	cd $(BUILD_DIR) && ctest -j $(JOBS) --output-on-failure

# The sources git tracks or would track (new files too: a new file once landed unformatted).
SOURCES = $$(git ls-files --cached --others --exclude-standard '*.cpp' '*.hpp' '*.cu' '*.cuh')

format:
	clang-format -i $(SOURCES)

format-check:
	clang-format --dry-run --Werror $(SOURCES)

bench: build
	python3 bench/scale_sweep.py --binary $(BUILD_DIR)/bin/zbfs

clean:
	rm -rf $(BUILD_DIR) $(SMPI_DIR)
