"""A corpus's documents: chunking, page scans, pending work, the sample corpora, the graph view."""
