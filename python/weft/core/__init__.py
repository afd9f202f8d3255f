"""What every room of the toolkit shares: finding weft's build and running
its programs (runner), result files (results), number formats, tables and
charts (report).  Imports nothing of the other rooms."""
