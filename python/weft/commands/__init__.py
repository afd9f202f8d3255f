"""The top-level commands, one module each (`weft info`, `topo`, `model`,
`resources`, `project`, `report`): each registers its parser and holds
what only it shows.  Imports from weft.bench, weft.models and weft.core."""
