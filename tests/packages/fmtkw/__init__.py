"""Classes whose message is a class attribute used as a format string that keywords fill."""
