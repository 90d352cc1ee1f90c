"""The states a map's entry in the game's resource list can be given (`resources`), in a module of their own: the
command line offers them without loading the resource list's reader and writer at every start."""

# keep: an existing entry keeps its state, a new one gets none; none: loaded on first use (the engine's UNLOADED)
STATES = ("KEEP", "NONE", "LOAD", "LOCK")
