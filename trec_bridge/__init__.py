"""trec-bridge: trustworthy, portable IR evaluation numbers."""
__version__ = "0.1.0"
