"""The Compare page: columns, verdict, timelines, what-if re-runs."""
