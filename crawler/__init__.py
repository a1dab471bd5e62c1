"""Turn a Python library's source, pinned at a commit, into a catalogue of its raise sites."""

__version__ = "0.1.0"
