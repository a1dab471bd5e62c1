class _Mixin:
    def __init__(self, message):
        error_page = "https://example.com/errors.html"
        super().__init__(f"{message}\nSee {error_page}#{type(self).__name__}")


class Leaked(_Mixin, Exception):
    pass
