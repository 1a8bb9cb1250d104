# The module "pktables" of the table shapes' instances (scripts/bench.d/tables.sh
# makes the files with it; tables.sh and wholetree.sh load them with it), so
# that pickle.load really loads every file. Run before pickle.dump/load.
import sys, types
mod = types.ModuleType("pktables")
exec("class Row:\n    pass\n", mod.__dict__)
sys.modules["pktables"] = mod
