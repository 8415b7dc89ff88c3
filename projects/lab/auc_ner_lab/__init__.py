"""Study machinery: specs of run grids, a resumable parallel runner, aggregation and reports."""
