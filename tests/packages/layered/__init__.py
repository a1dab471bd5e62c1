from layered.errors import ParseFailed, ShowsHint

__all__ = ["ParseFailed", "ShowsHint"]
