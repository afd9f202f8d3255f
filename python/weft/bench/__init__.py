"""One module per `weft bench X` (it measures, saves, and renders what it
saved: tables and charts, its RENDERERS), and the breakdown measurement of
`weft model breakdown` (breakdown).  Imports from weft.models and
weft.core."""
