"""Where things are. SRC: the source tree this package is in (its node_modules hold snarkjs;
build/bin/cuzk-daemon is the daemon's usual place). HERE: the launcher's folder, where a
cuzk-daemon beside a build/bin copy of cuzk-bench is found; scripts/cuzk-bench sets it."""
import os

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
HERE = os.path.join(SRC, "scripts")
