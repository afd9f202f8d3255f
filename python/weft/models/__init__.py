"""Models and their reference data: the Breaking Band breakdown
(breakdown_model, the measured documents: breakdown_document,
breakdown_measured, breakdown_direct), what-if speedups (whatif), the mlx5
resource model (mlx5) and the SimGrid platforms of the projection (smpi).
Package data: data/<preset>.json (breakdown_model).  Imports from
weft.core only."""
