"""The statistics, measured by simulation."""
