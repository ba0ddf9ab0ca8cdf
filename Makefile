# Thin wrapper over CMake so a newcomer types `make`, `make test`, `make run`.
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=

.PHONY: all build test asan run cluster-demo bench clean gpu-check format

all: build

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

build: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j$(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

# The tests again under AddressSanitizer + UndefinedBehaviorSanitizer (CUDA off), less the host
# emulation tests (tests/gpu/*_emu*_test.sh): tests/gpu/host_emu.sh builds each with its own g++
# flags, not the sanitizers, so here they would only repeat make test's runs (~300 s of CI).
# max_memory_test compares a proof's peak resident memory with cuzk's estimate: under ASan the
# shadow memory and quarantine are the sanitizer's bytes, not the prover's (make test runs it).
ASAN_SKIP = (_emu_test|^max_memory_test)$$
asan:
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUZK_SANITIZE=address,undefined -DCUZK_CUDA=OFF
	cmake --build build-asan -j$(JOBS)
	cd build-asan && ctest --output-on-failure -j$(JOBS) -E '$(ASAN_SKIP)'

run: build
	./scripts/run-demo

# A local two-node cluster on a throwaway PostgreSQL, nginx in front when installed
# (docs/CLUSTER.md).
cluster-demo: build
	./scripts/cluster-demo

bench: build
	$(BUILD)/bin/cuzk-bench-core

gpu-check:
	./scripts/gpu-check

format:
	clang-format -i $$(git ls-files '*.c' '*.h' '*.cu' '*.cuh')

clean:
	rm -rf $(BUILD) build-asan
