"""anyp._dfx — PyPTO's DFX switches, anyp::RunConfig fields of the same
names: a run with one on writes its task records under
<output_dir>/dfx_outputs/rank<r>/d<k>/ (docs/task-records.md)."""

SWITCHES = ("enable_dep_gen", "enable_scope_stats", "enable_chip_swimlane")
